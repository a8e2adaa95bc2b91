// Package events reads event logs — who interacted with which item, when,
// and how it went — into per-user sequences sorted by (time, item): the
// input of romae's sequential recommenders (package recsys).
//
// The layout is one CSV row per event with a header row:
//
//	user,item,time[,label][,rating][,categorical columns...]
//
// under the column names of Options (each defaults to the first of a few
// usual spellings present: userId, movieId, timestamp, …). Times are
// seconds since 1970 (UTC); fractions are kept. A 0/1 label column, or a
// numeric rating thresholded at Options.LabelThreshold, gives each event a
// binary outcome. Item-side categorical features (a movie's genres) come
// from a second file (LoadItemFeatures).
package events

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Column spellings tried, in order, when Options leaves a name empty.
var (
	UserAliases   = []string{"user", "user_id", "userId", "userid", "uid"}
	ItemAliases   = []string{"item", "item_id", "itemId", "itemid", "movieId", "movie_id", "iid"}
	TimeAliases   = []string{"time", "timestamp", "ts", "t"}
	LabelAliases  = []string{"label", "clicked", "click"}
	RatingAliases = []string{"rating", "score"}
)

// Options says how to read an events CSV.
type Options struct {
	User, Item, Time string // column names ("": the first alias present)
	// Label names a 0/1 outcome column (default: the first of
	// LabelAliases present). Without one, Rating (default: the first of
	// RatingAliases present) thresholded at LabelThreshold gives the
	// label; with neither, events have no label (Label = −1).
	Label, Rating  string
	LabelThreshold float64 // label = rating ≥ threshold (0: 4, MovieLens' "liked")
	// Categorical lists event-side categorical columns (device, context).
	Categorical []string
	// Vocab fixes the item and category indices (a trained model's): an
	// unknown item or category maps to index 0 and is counted in
	// Log.Unknown. nil builds the vocabularies from the file.
	Vocab *Vocab
}

// Event is one interaction. Item and Cats are indices into the log's
// vocabularies; index 0 is reserved for "unknown" (and padding).
type Event struct {
	Item  int32
	Label int8 // 1, 0, or −1 when the log has no outcome
	Time  float64
	Cats  []int32 // one per Options.Categorical column
	Line  int32   // source line, for messages
}

// User is one entity's events, sorted by (time, item id), file order
// breaking exact ties.
type User struct {
	ID     string
	Events []Event
}

// Log is a loaded events file.
type Log struct {
	Path     string
	Users    []User // in order of first appearance
	Vocab    *Vocab
	HasLabel bool
	// Unknown counts events whose item (or a category) was missing from a
	// fixed Options.Vocab.
	Unknown int
}

// Vocab maps ids and category values to indices (0: unknown).
type Vocab struct {
	Items     *Index   `json:"items"`
	EventCats []*Index `json:"event_cats,omitempty"` // per categorical column
}

// Index is one vocabulary: Values[i] is the name of index i ≥ 1; Values[0]
// is "" (unknown).
type Index struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	pos    map[string]int32
}

// NewIndex builds an index of the distinct values, sorted naturally
// (numerically when all are numbers), so indices do not depend on row order.
func NewIndex(name string, values []string) *Index {
	ix := &Index{Name: name, Values: append([]string{""}, sortNatural(values)...)}
	ix.build()
	return ix
}

func (ix *Index) build() {
	ix.pos = make(map[string]int32, len(ix.Values))
	for i, v := range ix.Values[1:] {
		ix.pos[v] = int32(i + 1)
	}
}

// Lookup returns the index of v, 0 when unknown.
func (ix *Index) Lookup(v string) int32 {
	if ix.pos == nil {
		ix.build()
	}
	return ix.pos[v]
}

// Len counts the indices, the unknown slot included.
func (ix *Index) Len() int { return len(ix.Values) }

// Check validates an index read from a checkpoint.
func (ix *Index) Check() error {
	if ix == nil || len(ix.Values) == 0 || ix.Values[0] != "" {
		return fmt.Errorf("vocabulary %q: want a leading empty (unknown) entry", ix.nameOrEmpty())
	}
	seen := make(map[string]bool, len(ix.Values))
	for _, v := range ix.Values[1:] {
		if seen[v] || v == "" {
			return fmt.Errorf("vocabulary %q: value %q empty or repeated", ix.Name, v)
		}
		seen[v] = true
	}
	ix.build()
	return nil
}

func (ix *Index) nameOrEmpty() string {
	if ix == nil {
		return ""
	}
	return ix.Name
}

// NumEvents counts all events.
func (l *Log) NumEvents() int {
	n := 0
	for _, u := range l.Users {
		n += len(u.Events)
	}
	return n
}

// rawEvent is an event before the vocabularies exist.
type rawEvent struct {
	user, item string
	time       float64
	label      int8
	cats       []string
	line       int
}

// Load reads an events CSV. Errors name the file, the line and the column:
// "ratings.csv:17: column "timestamp": "x" is not a number".
func Load(path string, opt Options) (*Log, error) {
	t, err := openTable(path)
	if err != nil {
		return nil, err
	}
	defer t.close()
	header, cols := t.header, t.cols
	if opt.LabelThreshold == 0 {
		opt.LabelThreshold = 4
	}
	pick := func(name string, aliases []string, what string, required bool) (string, error) {
		if name != "" {
			if _, ok := cols[name]; !ok {
				return "", fmt.Errorf("%s:1: header has no %s column %q (columns: %v)", path, what, name, header)
			}
			return name, nil
		}
		for _, a := range aliases {
			if _, ok := cols[a]; ok {
				return a, nil
			}
		}
		if required {
			return "", fmt.Errorf("%s:1: header has no %s column (tried %v; columns: %v)", path, what, aliases, header)
		}
		return "", nil
	}
	if opt.User, err = pick(opt.User, UserAliases, "user", true); err != nil {
		return nil, err
	}
	if opt.Item, err = pick(opt.Item, ItemAliases, "item", true); err != nil {
		return nil, err
	}
	if opt.Time, err = pick(opt.Time, TimeAliases, "time", true); err != nil {
		return nil, err
	}
	if opt.Label == "" && opt.Rating == "" {
		opt.Label, _ = pick("", LabelAliases, "label", false)
	}
	if opt.Label != "" {
		if _, err = pick(opt.Label, nil, "label", true); err != nil {
			return nil, err
		}
	} else if opt.Rating, err = pick(opt.Rating, RatingAliases, "rating", false); err != nil {
		return nil, err
	}
	for _, c := range opt.Categorical {
		if _, err := pick(c, nil, "categorical", true); err != nil {
			return nil, err
		}
	}
	if v := opt.Vocab; v != nil && len(v.EventCats) != len(opt.Categorical) {
		return nil, fmt.Errorf("%s: the vocabulary has %d categorical columns, the options name %d", path, len(v.EventCats), len(opt.Categorical))
	}

	var raw []rawEvent
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		field := func(name string) string { return strings.TrimSpace(rec[cols[name]]) }
		nonEmpty := func(name string) (string, error) {
			s := field(name)
			if s == "" {
				return "", fmt.Errorf("%s:%d: column %q: empty", path, line, name)
			}
			return s, nil
		}
		number := func(name string) (float64, error) {
			s := field(name)
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s:%d: column %q: %q is not a finite number", path, line, name, s)
			}
			return v, nil
		}
		ev := rawEvent{label: -1, line: line}
		if ev.user, err = nonEmpty(opt.User); err != nil {
			return nil, err
		}
		if ev.item, err = nonEmpty(opt.Item); err != nil {
			return nil, err
		}
		if ev.time, err = number(opt.Time); err != nil {
			return nil, err
		}
		switch {
		case opt.Label != "":
			switch s := field(opt.Label); s {
			case "0", "1":
				ev.label = int8(s[0] - '0')
			default:
				return nil, fmt.Errorf("%s:%d: column %q: %q is not a 0/1 label", path, line, opt.Label, s)
			}
		case opt.Rating != "":
			v, err := number(opt.Rating)
			if err != nil {
				return nil, err
			}
			ev.label = 0
			if v >= opt.LabelThreshold {
				ev.label = 1
			}
		}
		for _, c := range opt.Categorical {
			s, err := nonEmpty(c)
			if err != nil {
				return nil, err
			}
			ev.cats = append(ev.cats, s)
		}
		raw = append(raw, ev)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: no events after the header", path)
	}
	return build(path, raw, opt), nil
}

// build indexes the raw events and groups them into sorted user sequences.
func build(path string, raw []rawEvent, opt Options) *Log {
	l := &Log{Path: path, Vocab: opt.Vocab, HasLabel: opt.Label != "" || opt.Rating != ""}
	if l.Vocab == nil {
		items := make([]string, len(raw))
		cats := make([][]string, len(opt.Categorical))
		for i, e := range raw {
			items[i] = e.item
			for c := range cats {
				cats[c] = append(cats[c], e.cats[c])
			}
		}
		l.Vocab = &Vocab{Items: NewIndex(opt.Item, items)}
		for c, name := range opt.Categorical {
			l.Vocab.EventCats = append(l.Vocab.EventCats, NewIndex(name, cats[c]))
		}
	}
	byUser := map[string]int{}
	for _, e := range raw {
		u, ok := byUser[e.user]
		if !ok {
			u = len(l.Users)
			byUser[e.user] = u
			l.Users = append(l.Users, User{ID: e.user})
		}
		ev := Event{Item: l.Vocab.Items.Lookup(e.item), Label: e.label, Time: e.time, Line: int32(e.line)}
		unknown := ev.Item == 0
		for c, s := range e.cats {
			k := l.Vocab.EventCats[c].Lookup(s)
			unknown = unknown || k == 0
			ev.Cats = append(ev.Cats, k)
		}
		if unknown {
			l.Unknown++
		}
		l.Users[u].Events = append(l.Users[u].Events, ev)
	}
	items := l.Vocab.Items.Values
	for _, u := range l.Users {
		// Stable: file order breaks exact (time, item) ties.
		slices.SortStableFunc(u.Events, func(a, b Event) int {
			return cmp.Or(cmp.Compare(a.Time, b.Time), compareNatural(items[a.Item], items[b.Item]))
		})
	}
	return l
}

// compareNatural orders two ids numerically when both are numbers.
func compareNatural(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}

// sortNatural returns the distinct values sorted numerically when every
// one is a number ("2" before "10"), lexically otherwise.
func sortNatural(values []string) []string {
	out := slices.Clone(values)
	numeric := true
	for _, v := range out {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			numeric = false
			break
		}
	}
	if numeric {
		slices.SortFunc(out, compareNatural)
	} else {
		slices.Sort(out)
	}
	return slices.Compact(out)
}
