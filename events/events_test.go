package events

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadSortsAndIndexes(t *testing.T) {
	l, err := Load("testdata/events.csv", Options{Categorical: []string{"device"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Vocab.Items.Values; !reflect.DeepEqual(got, []string{"", "1", "2", "3", "9", "10"}) {
		t.Errorf("item vocabulary %q, want natural order with the unknown slot first", got)
	}
	if got := l.Vocab.EventCats[0].Values; !reflect.DeepEqual(got, []string{"", "app", "web"}) {
		t.Errorf("device vocabulary %q", got)
	}
	if !l.HasLabel || l.Unknown != 0 || l.NumEvents() != 7 {
		t.Errorf("HasLabel %v, Unknown %d, %d events", l.HasLabel, l.Unknown, l.NumEvents())
	}
	type ev struct {
		item  string
		label int8
		time  float64
		dev   string
		line  int32
	}
	want := map[string][]ev{
		// Sorted by time, then item id; the two (200, "2") events keep file order.
		"u1": {{"1", 1, 150, "web", 6}, {"2", 1, 200, "app", 4}, {"2", 0, 200, "web", 7}, {"3", 0, 200, "app", 3}},
		"u2": {{"9", 0, 50, "app", 5}, {"10", 1, 100, "web", 2}, {"10", 1, 300, "web", 8}},
	}
	if l.Users[0].ID != "u2" || l.Users[1].ID != "u1" {
		t.Errorf("users %q, %q: want order of first appearance", l.Users[0].ID, l.Users[1].ID)
	}
	for _, u := range l.Users {
		var got []ev
		for _, e := range u.Events {
			got = append(got, ev{l.Vocab.Items.Values[e.Item], e.Label, e.Time, l.Vocab.EventCats[0].Values[e.Cats[0]], e.Line})
		}
		if !reflect.DeepEqual(got, want[u.ID]) {
			t.Errorf("user %s: %+v\nwant %+v", u.ID, got, want[u.ID])
		}
	}
}

func TestLoadLabelRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "e.csv")
	os.WriteFile(path, []byte("user,item,time,clicked,rating\na,x,1,1,2\na,y,2,0,5\n"), 0o644)
	l, err := Load(path, Options{Label: "clicked"})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := l.Users[0].Events[0].Label, l.Users[0].Events[1].Label; a != 1 || b != 0 {
		t.Errorf("label column: got %d, %d, want 1, 0", a, b)
	}
	l, err = Load(path, Options{Rating: "rating", LabelThreshold: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := l.Users[0].Events[0].Label, l.Users[0].Events[1].Label; a != 0 || b != 1 {
		t.Errorf("rating ≥ 3: got %d, %d, want 0, 1", a, b)
	}
	// With no column named, a label column ("clicked") wins over a rating.
	if l, err = Load(path, Options{}); err != nil || l.Users[0].Events[0].Label != 1 {
		t.Errorf("default outcome: label %d, err %v; want the clicked column's 1", l.Users[0].Events[0].Label, err)
	}
	os.WriteFile(path, []byte("user,item,time\na,x,1\n"), 0o644)
	if l, err = Load(path, Options{}); err != nil || l.HasLabel || l.Users[0].Events[0].Label != -1 {
		t.Errorf("no outcome column: HasLabel %v, label %d, err %v", l.HasLabel, l.Users[0].Events[0].Label, err)
	}
}

// Every malformed input is refused with the file, the line and the column.
func TestLoadErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"empty", "", "e.csv:1: empty file"},
		{"header only", "user,item,time\n", "e.csv: no events"},
		{"no user column", "who,item,time\na,x,1\n", `e.csv:1: header has no user column`},
		{"bad time", "user,item,time\na,x,1\na,y,soon\n", `e.csv:3: column "time": "soon" is not a finite number`},
		{"infinite time", "user,item,time\na,x,inf\n", `e.csv:2: column "time": "inf" is not a finite number`},
		{"empty item", "user,item,time\na,,1\n", `e.csv:2: column "item": empty`},
		{"field count", "user,item,time\na,x,1\nb,y\n", "e.csv:3: 2 fields, header has 3"},
		{"bad rating", "user,item,time,rating\na,x,1,good\n", `e.csv:2: column "rating": "good" is not a finite number`},
		{"bad label", "user,item,time,label\na,x,1,yes\n", `e.csv:2: column "label": "yes" is not a 0/1 label`},
		{"quote", "user,item,time\na,\"x,1\n", "e.csv:2: column"},
		{"duplicate header", "user,item,item,time\na,x,y,1\n", `e.csv:1: duplicate header column "item"`},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "e.csv")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := Load("testdata/events.csv", Options{Categorical: []string{"os"}}); err == nil || !strings.Contains(err.Error(), `no categorical column "os"`) {
		t.Errorf("missing categorical column: %v", err)
	}
}

// A fixed vocabulary (a trained model's) maps what it lacks to 0 and counts it.
func TestLoadFixedVocab(t *testing.T) {
	v := &Vocab{Items: NewIndex("movieId", []string{"1", "2", "10"})}
	l, err := Load("testdata/events.csv", Options{Vocab: v})
	if err != nil {
		t.Fatal(err)
	}
	if l.Unknown != 2 { // items 3 and 9
		t.Errorf("Unknown = %d, want 2", l.Unknown)
	}
	if got := l.Users[0].Events[0].Item; got != 0 {
		t.Errorf("item 9 maps to %d, want 0", got)
	}
}

func TestLoadItemFeatures(t *testing.T) {
	l, err := Load("testdata/events.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := LoadItemFeatures("testdata/movies.csv", l.Vocab.Items, ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Horror belongs to an item without events: not in the vocabulary.
	if got := f.Values.Values; !reflect.DeepEqual(got, []string{"", "(no genres listed)", "Action", "Comedy", "Drama"}) {
		t.Errorf("genres %q", got)
	}
	names := func(item string) []string {
		var out []string
		for _, c := range f.Of[l.Vocab.Items.Lookup(item)] {
			out = append(out, f.Values.Values[c])
		}
		return out
	}
	for item, want := range map[string][]string{"1": {"Comedy", "Drama"}, "2": {"Drama"}, "9": {"Action", "Comedy"}, "10": nil} {
		if got := names(item); !reflect.DeepEqual(got, want) {
			t.Errorf("item %s: %q, want %q", item, got, want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "items.csv")
	os.WriteFile(path, []byte("movieId,genres\n1,A\n2,B\n1,C\n"), 0o644)
	if _, err := LoadItemFeatures(path, l.Vocab.Items, ItemOptions{}); err == nil || !strings.Contains(err.Error(), `items.csv:4: item "1" already listed on line 2`) {
		t.Errorf("duplicate item: %v", err)
	}
	if _, err := LoadItemFeatures(path, l.Vocab.Items, ItemOptions{Column: "tags"}); err == nil || !strings.Contains(err.Error(), `items.csv:1: header has no column "tags"`) {
		t.Errorf("missing column: %v", err)
	}
}

func TestSplitRules(t *testing.T) {
	l := &Log{Users: []User{{Events: make([]Event, 10)}, {Events: make([]Event, 3)}, {Events: make([]Event, 2)}}}
	sp, err := SplitRule{Rule: LeaveOneOut}.Apply(l)
	if err != nil {
		t.Fatal(err)
	}
	want := Split{{0, 0, 0, 0, 0, 0, 0, 0, Val, Test}, {Train, Val, Test}, {Train, Train}}
	if !reflect.DeepEqual(sp, want) {
		t.Errorf("leave-one-out %v, want %v", sp, want)
	}
	sp, err = SplitRule{Rule: LastFraction, Val: 0.1, Test: 0.25}.Apply(l)
	if err != nil {
		t.Fatal(err)
	}
	want = Split{{0, 0, 0, 0, 0, 0, Val, Test, Test, Test}, {Train, Val, Test}, {Train, Train}}
	if !reflect.DeepEqual(sp, want) {
		t.Errorf("last-fraction %v, want %v", sp, want)
	}
	if _, err := (SplitRule{Rule: LastFraction, Val: 0.5, Test: 0.5}).Apply(l); err == nil {
		t.Error("fractions summing to 1 accepted")
	}
	if _, err := (SplitRule{Rule: "random"}).Apply(l); err == nil {
		t.Error("unknown rule accepted")
	}
}

func TestWindows(t *testing.T) {
	n := 23
	l := &Log{Users: []User{{Events: make([]Event, n)}, {Events: make([]Event, 4)}}}
	sp := Split{make([]Role, n), {Train, Train, Test, Test}}
	for i := 15; i < n; i++ {
		sp[0][i] = Test
	}
	cases := []struct {
		role                     Role
		shift, maxLen, minCtx    int
		targets0, targets1, minC int
	}{
		{Train, 0, 6, 0, 15, 2, 0},
		{Train, 1, 6, 0, 14, 1, 0},
		{Test, 0, 6, 3, 8, 2, 3},
		{Test, 1, 5, 2, 8, 2, 2},
	}
	for _, c := range cases {
		ws := Windows(l, sp, c.role, c.shift, c.maxLen, c.minCtx)
		seen := map[[2]int]int{}
		var prevEnd [2]int
		for _, w := range ws {
			if w.End-w.Start > c.maxLen || w.Start < 0 || w.End > len(l.Users[w.User].Events) {
				t.Fatalf("%+v: window %+v out of bounds", c, w)
			}
			if c.minCtx == 0 && w.Start < prevEnd[w.User] {
				// Training windows overlap only where the last one was
				// extended backwards; its targets still start after prevEnd.
				if w.Targets[0]-c.shift < prevEnd[w.User] {
					t.Errorf("%+v: window %+v re-scores tokens before %d", c, w, prevEnd[w.User])
				}
			}
			prevEnd[w.User] = w.End
			for _, j := range w.Targets {
				tok := j - c.shift
				if tok < w.Start || tok >= w.End || sp[w.User][j] != c.role {
					t.Fatalf("%+v: target %d outside window %+v or of the wrong role", c, j, w)
				}
				if ctx := tok - w.Start; ctx < min(c.minC, tok) {
					t.Errorf("%+v: target %d sees %d tokens, want ≥ %d", c, j, ctx, min(c.minC, tok))
				}
				seen[[2]int{w.User, j}]++
			}
		}
		count := [2]int{}
		for k, v := range seen {
			if v != 1 {
				t.Errorf("%+v: target %v scored %d times", c, k, v)
			}
			count[k[0]]++
		}
		if count != [2]int{c.targets0, c.targets1} {
			t.Errorf("%+v: %v targets per user, want %d, %d", c, count, c.targets0, c.targets1)
		}
	}
	// One test target at the end of a long history gets a full window.
	loo := Split{make([]Role, n)}
	loo[0][n-1] = Test
	ws := Windows(&Log{Users: l.Users[:1]}, loo, Test, 1, 8, 4)
	if len(ws) != 1 || ws[0].Start != n-9 || ws[0].End != n-1 {
		t.Errorf("leave-one-out window %+v, want events [%d, %d)", ws, n-9, n-1)
	}
}

// The shared MovieLens file loads with its documented counts.
func TestLoadMovieLens(t *testing.T) {
	dir := "../../shared/data/movielens-small"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared data not present: %v", err)
	}
	l, err := Load(filepath.Join(dir, "ratings.csv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Users) != 610 || l.NumEvents() != 100836 || l.Vocab.Items.Len() != 9724+1 {
		t.Errorf("%d users, %d events, %d items", len(l.Users), l.NumEvents(), l.Vocab.Items.Len()-1)
	}
	f, err := LoadItemFeatures(filepath.Join(dir, "movies.csv"), l.Vocab.Items, ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Values.Len()-1 != 20 {
		t.Errorf("%d genres, want 20 (19 and '(no genres listed)')", f.Values.Len()-1)
	}
}
