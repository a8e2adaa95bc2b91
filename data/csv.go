package data

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Channel layouts for LoadLongCSV.
const (
	// ChannelAxis makes every row one token: C = len(ValueColumns), D = 2,
	// positions (channel index, time) — the paper's ELAsTiCC layout, where
	// bands observed at different times need no alignment. Without a channel
	// column D = 1, position (time).
	ChannelAxis = "axis"
	// ChannelSlot merges the rows of one (id, time) into one token holding
	// every channel's values, channel-major: C = nChannels·len(ValueColumns),
	// D = 1, position (time). Suited to synchronously sampled channels.
	ChannelSlot = "slot"
)

// CSVOptions describes a long-format CSV (one observation per row). Zero
// fields take the defaults noted, so CSVOptions{} reads columns id, time,
// channel (if present) and value.
type CSVOptions struct {
	IDColumn   string // default "id"
	TimeColumn string // default "time"
	// ChannelColumn names the channel/band column. Empty means "channel"
	// when the header has such a column and a single channel otherwise.
	ChannelColumn string
	ValueColumns  []string // default ["value"]
	// Channels fixes the channel order (and so the channel index); a row
	// with a channel not listed is an error. Default: the distinct names
	// sorted, numerically when all are numbers ("2" before "10").
	Channels    []string
	ChannelMode string // ChannelAxis (default) or ChannelSlot
	// LabelColumn, when set, holds each object's class; it must be the same
	// on all rows of an object. Classes fixes the class order as Channels
	// does for channels (default: sorted distinct labels).
	LabelColumn string
	Classes     []string
	// TargetColumns are per-object regression targets (e.g. redshift),
	// constant over an object's rows; TargetDim = len(TargetColumns).
	TargetColumns []string
	// NaN is the policy for missing values: a NaN or empty value cell, and
	// in ChannelSlot mode an (id, time, channel) slot with no row.
	// NaNMissing (default when empty) leaves out the row, or in
	// ChannelSlot mode the time whose token lacks a value; NaNDrop leaves
	// out the object; NaNError refuses the file naming the line or slot.
	NaN string
	// FillMissing lets ChannelSlot fill a slot with no row with FillValue
	// instead (whatever NaN says).
	FillMissing bool
	FillValue   float32
	// Time maps the time column to positions (default: as read).
	Time TimeMap
}

// ColumnError is a column the options name (or default to: id, time,
// value) that the file's header lacks. Option is the setting that names
// it, as Source spells it (id_column, time_column, channel_column,
// label_column, value_columns or target_columns), and Role what that
// column holds, so a caller can say which one to set.
type ColumnError struct {
	Path, Column, Option, Role string
	Header                     []string
}

func (e *ColumnError) Error() string {
	return fmt.Sprintf("%s:1: header has no column %q (columns: %v)", e.Path, e.Column, e.Header)
}

// csvObject accumulates one object's rows in file order.
type csvObject struct {
	id       string
	line     int // first row, for error messages
	times    []float64
	earliest float64 // earliest time of any row, missing values included
	channels []int
	values   []float32 // [rows*len(ValueColumns)]
	label    string
	target   []float32
	rows     int // rows read, those left out for a missing value included
	missing  int // missing value cells
}

// LoadLongCSV reads irregular multivariate series stored one observation per
// row (the PLAsTiCC/ELAsTiCC light-curve layout). A header row is required.
// Rows of one object need not be contiguous; samples appear in order of each
// object's first row and their tokens are sorted by time (file order breaks
// ties). Times and targets must be finite numbers; a NaN or empty value
// cell is a missing value, handled by opt.NaN (an absent row is one too).
// Errors read
// "file:line: column "name": ..."; problems with a whole object (a hole in
// ChannelSlot mode, a label outside opt.Classes) cite its first row.
func LoadLongCSV(path string, opt CSVOptions) (*Dataset, error) {
	opt = withCSVDefaults(opt)
	if opt.ChannelMode != ChannelAxis && opt.ChannelMode != ChannelSlot {
		return nil, fmt.Errorf("%s: unknown ChannelMode %q (want %q or %q)", path, opt.ChannelMode, ChannelAxis, ChannelSlot)
	}
	if err := checkNaNPolicy(opt.NaN); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, r, header, cols, err := OpenCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opt.ChannelColumn == "" {
		if _, ok := cols["channel"]; ok {
			opt.ChannelColumn = "channel"
		} else if opt.Channels != nil {
			return nil, fmt.Errorf("%s:1: channels %s given (data.channels, or a model's training channels) but the header has no channel column", path, strings.Join(opt.Channels, ", "))
		}
	}
	need := []ColumnError{
		{Column: opt.IDColumn, Option: "id_column", Role: "column naming each series"},
		{Column: opt.TimeColumn, Option: "time_column", Role: "time column"},
	}
	if opt.ChannelColumn != "" {
		need = append(need, ColumnError{Column: opt.ChannelColumn, Option: "channel_column", Role: "channel (band) column"})
	}
	if opt.LabelColumn != "" {
		need = append(need, ColumnError{Column: opt.LabelColumn, Option: "label_column", Role: "label column"})
	}
	for _, c := range opt.ValueColumns {
		need = append(need, ColumnError{Column: c, Option: "value_columns", Role: "value column(s), comma-separated"})
	}
	for _, c := range opt.TargetColumns {
		need = append(need, ColumnError{Column: c, Option: "target_columns", Role: "target column(s), comma-separated"})
	}
	for _, e := range need {
		if _, ok := cols[e.Column]; !ok {
			e.Path, e.Header = path, header
			return nil, &e
		}
	}

	var objects []*csvObject
	byID := map[string]*csvObject{}
	channelIdx := map[string]int{}
	for i, ch := range opt.Channels {
		if _, dup := channelIdx[ch]; dup || ch == "" {
			return nil, fmt.Errorf("%s: channels %q: channel %d %q is empty or repeated", path, opt.Channels, i, ch)
		}
		channelIdx[ch] = i
	}
	var channelNames []string // discovered, when opt.Channels is nil
	nv := len(opt.ValueColumns)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, CSVError(path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, line, len(rec), len(header))
		}
		field := func(name string) string { return rec[cols[name]] }
		num := func(name string) (float64, error) {
			s := strings.TrimSpace(field(name))
			v, err := parseDecimal(s)
			if err != nil || !finite32(v) {
				return 0, fmt.Errorf("%s:%d: column %q: %q is not a finite float32 number", path, line, name, s)
			}
			return v, nil
		}
		id := field(opt.IDColumn)
		if id == "" {
			return nil, fmt.Errorf("%s:%d: column %q: empty id", path, line, opt.IDColumn)
		}
		obj := byID[id]
		if obj == nil {
			obj = &csvObject{id: strings.Clone(id), line: line}
			byID[id] = obj
			objects = append(objects, obj)
		}
		t, err := num(opt.TimeColumn)
		if err != nil {
			return nil, err
		}
		if obj.rows == 0 || t < obj.earliest {
			obj.earliest = t
		}
		ch := 0
		if opt.ChannelColumn != "" {
			name := field(opt.ChannelColumn)
			var ok bool
			if ch, ok = channelIdx[name]; !ok {
				if opt.Channels != nil {
					return nil, fmt.Errorf("%s:%d: column %q: channel %q is not one of the channels %s (data.channels: a model's are those of the file it was trained on)",
						path, line, opt.ChannelColumn, name, strings.Join(opt.Channels, ", "))
				}
				ch = len(channelNames)
				if ch >= MaxChannels {
					return nil, fmt.Errorf("%s:%d: column %q: %w", path, line, opt.ChannelColumn, limitErr("distinct channels", ch+1, "MaxChannels", MaxChannels))
				}
				channelIdx[name] = ch
				channelNames = append(channelNames, strings.Clone(name))
			}
		}
		// A token needs all its value columns: a row with a missing one is
		// left out (its values are appended, then cut).
		complete := true
		for _, name := range opt.ValueColumns {
			var v float64
			if cell := strings.TrimSpace(field(name)); cell == "" || strings.EqualFold(cell, "nan") {
				if opt.NaN == NaNError {
					return nil, fmt.Errorf("%s:%d: column %q: %q is not a finite number but a missing value, refused under data.nan error %s", path, line, name, cell, nanHint)
				}
				complete = false
				obj.missing++
			} else if v, err = num(name); err != nil {
				return nil, err
			}
			obj.values = append(obj.values, float32(v))
		}
		obj.rows++
		if !complete {
			obj.values = obj.values[:len(obj.values)-nv]
		} else {
			obj.times = append(obj.times, t)
			obj.channels = append(obj.channels, ch)
		}
		first := obj.rows == 1
		if opt.LabelColumn != "" {
			lab := strings.TrimSpace(field(opt.LabelColumn))
			switch {
			case lab == "":
				return nil, fmt.Errorf("%s:%d: column %q: empty label", path, line, opt.LabelColumn)
			case first:
				obj.label = strings.Clone(lab)
			case lab != obj.label:
				return nil, fmt.Errorf("%s:%d: column %q: object %q has label %q here but %q on line %d", path, line, opt.LabelColumn, id, lab, obj.label, obj.line)
			}
		}
		for k, name := range opt.TargetColumns {
			v, err := num(name)
			if err != nil {
				return nil, err
			}
			if first {
				obj.target = append(obj.target, float32(v))
			} else if obj.target[k] != float32(v) {
				return nil, fmt.Errorf("%s:%d: column %q: object %q has target %v here but %v on line %d", path, line, name, id, v, obj.target[k], obj.line)
			}
		}
	}
	if len(objects) == 0 {
		return nil, fmt.Errorf("%s:2: no data rows after the header", path)
	}

	// remap takes channel indices in order of discovery to final indices.
	var remap []int
	switch {
	case opt.ChannelColumn == "":
		remap = []int{0}
	case opt.Channels != nil:
		remap = identity(len(opt.Channels))
	default:
		remap = make([]int, len(channelNames))
		for i, name := range sortNatural(channelNames) {
			remap[channelIdx[name]] = i
		}
	}
	nch := len(remap)

	ds := &Dataset{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), TargetDim: len(opt.TargetColumns), TimeStamps: true}
	switch {
	case opt.ChannelColumn == "":
	case opt.Channels != nil:
		ds.Channels = slices.Clone(opt.Channels)
	default:
		ds.Channels = sortNatural(channelNames)
	}
	if opt.ChannelMode == ChannelSlot && ds.Channels != nil {
		for _, ch := range ds.Channels {
			for _, v := range opt.ValueColumns {
				ds.ValueNames = append(ds.ValueNames, ch+"_"+v)
			}
		}
	} else {
		ds.ValueNames = slices.Clone(opt.ValueColumns)
	}
	if opt.LabelColumn != "" {
		ds.Classes = opt.Classes
		if ds.Classes == nil {
			var labels []string
			for _, o := range objects {
				labels = append(labels, o.label)
			}
			ds.Classes = sortNatural(labels)
		}
		if len(ds.Classes) > MaxClasses {
			return nil, fmt.Errorf("%s: %w", path, limitErr("classes", len(ds.Classes), "MaxClasses", MaxClasses))
		}
	}
	classIdx := indexOf(ds.Classes)
	switch {
	case opt.ChannelMode == ChannelSlot:
		ds.C, ds.D = nch*nv, 1
	case opt.ChannelColumn == "":
		ds.C, ds.D = nv, 1
	default:
		ds.C, ds.D, ds.ChannelAxes = nv, 2, true
	}
	ds.TimeAxis = ds.D - 1 // positions are (time) or (channel, time)
	for _, o := range objects {
		for i := range o.channels {
			o.channels[i] = remap[o.channels[i]]
		}
		s := Sample{ID: o.id, Label: -1, Target: o.target}
		if !opt.Time.Identity() {
			s.TimeOrigin = opt.Time.Origin(o.id, []float64{o.earliest})
			for i, t := range o.times {
				o.times[i] = float64(opt.Time.Position(t, s.TimeOrigin)) // rounded to float32 once
			}
		}
		if opt.LabelColumn != "" {
			var ok bool
			if s.Label, ok = classIdx[o.label]; !ok {
				return nil, fmt.Errorf("%s:%d: object %q: label %q not in CSVOptions.Classes %v", path, o.line, o.id, o.label, ds.Classes)
			}
		}
		missing := o.missing
		drop := missing > 0 && opt.NaN == NaNDrop
		switch {
		case drop:
		case len(o.times) == 0:
			return nil, fmt.Errorf("%s:%d: object %q: every row has a missing value", path, o.line, o.id)
		case opt.ChannelMode == ChannelSlot:
			holes, err := o.slotTokens(&s, nch, nv, opt)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, o.line, err)
			}
			// A row left out for a missing value is a slot without a row:
			// count the slots.
			missing, drop = holes, holes > 0 && opt.NaN == NaNDrop
		default:
			s.Values = o.values
			for i, t := range o.times {
				if ds.D == 2 {
					s.Positions = append(s.Positions, float32(o.channels[i]))
				}
				s.Positions = append(s.Positions, float32(t))
			}
			sortTokens(&s, ds.C, ds.D, ds.D-1)
		}
		ds.MissingValues += missing
		if drop {
			ds.DroppedSamples++
			continue
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds, nil
}

// slotTokens builds one token per distinct time of the object and returns
// how many (time, channel) slots had no row. The tokens have room for every
// channel at every time, so their size is distinct times × channels — a
// product of two counts, not the object's rows — and is checked before it
// is allocated. A slot without a row is a missing value: with FillMissing
// it holds FillValue; under NaNMissing its time is left out (the token
// lacks a value); under NaNDrop nothing is built (the caller drops the
// object); under NaNError it is an error naming the slot, found without
// allocating the slots.
func (o *csvObject) slotTokens(s *Sample, nch, nv int, opt CSVOptions) (int, error) {
	times := slices.Clone(o.times)
	slices.Sort(times)
	times = slices.Compact(times)
	c := nch * nv
	if len(times) > MaxTokens {
		return 0, fmt.Errorf("object %q: %w", o.id, limitErr("distinct times", len(times), "MaxTokens", MaxTokens))
	}
	slots := len(times) * nch
	if len(o.times) < slots && !opt.FillMissing {
		switch opt.NaN {
		case NaNError:
			return 0, o.firstHole(times, nch)
		case NaNDrop:
			return slots - len(o.times), nil // at least this many: the rows are fewer than the slots
		}
	}
	if slots*nv > MaxSampleValues {
		return 0, fmt.Errorf("object %q: %d times × %d channels × %d values: %w", o.id, len(times), nch, nv,
			limitErr("values", slots*nv, "MaxSampleValues", MaxSampleValues))
	}
	s.Values = make([]float32, len(times)*c)
	s.Positions = make([]float32, len(times))
	filled := make([]bool, len(times)*nch)
	for i, t := range o.times {
		step, _ := slices.BinarySearch(times, t)
		slot := step*nch + o.channels[i]
		if filled[slot] {
			return 0, fmt.Errorf("object %q: two rows for time %v channel %d", o.id, t, o.channels[i])
		}
		filled[slot] = true
		copy(s.Values[slot*nv:(slot+1)*nv], o.values[i*nv:(i+1)*nv])
	}
	for i, t := range times {
		s.Positions[i] = float32(t)
	}
	holes := 0
	for slot, ok := range filled {
		if ok {
			continue
		}
		holes++
		for k := range nv {
			s.Values[slot*nv+k] = opt.FillValue
		}
	}
	if holes == 0 || opt.FillMissing {
		return 0, nil
	}
	// NaNMissing: keep the times every channel has.
	vals, pos := s.Values[:0], s.Positions[:0]
	for step := range times {
		if !slices.Contains(filled[step*nch:(step+1)*nch], false) {
			vals = append(vals, s.Values[step*c:(step+1)*c]...)
			pos = append(pos, s.Positions[step])
		}
	}
	if len(pos) == 0 {
		return 0, fmt.Errorf("object %q: no time has a row for every channel (ChannelSlot needs one; --data.channel_mode axis keeps every row)", o.id)
	}
	s.Values, s.Positions = vals, pos
	return holes, nil
}

// holeErr is the error for a slot without a row under NaNError.
func (o *csvObject) holeErr(t float64, ch int) error {
	return fmt.Errorf("object %q: no row for time %v channel %d (--data.nan missing leaves out the times a channel lacks, --data.nan drop the object; --data.channel_mode axis needs no alignment)", o.id, t, ch)
}

// firstHole reports the first (time, channel) slot without a row, for an
// object with fewer rows than slots, without allocating the slots: its rows
// sorted by (time, channel) are walked against the slot order. A duplicate
// row found first is reported as such.
func (o *csvObject) firstHole(times []float64, nch int) error {
	order := identity(len(o.times))
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(o.times[a], o.times[b]), cmp.Compare(o.channels[a], o.channels[b]))
	})
	slot := 0 // next slot expected, step*nch + channel
	for _, r := range order {
		step, _ := slices.BinarySearch(times, o.times[r])
		got := step*nch + o.channels[r]
		switch {
		case got < slot:
			return fmt.Errorf("object %q: two rows for time %v channel %d", o.id, o.times[r], o.channels[r])
		case got > slot:
			return o.holeErr(times[slot/nch], slot%nch)
		}
		slot++
	}
	return o.holeErr(times[slot/nch], slot%nch)
}

// indexOf maps each name to its index.
func indexOf(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := m[n]; !dup {
			m[n] = i
		}
	}
	return m
}

func withCSVDefaults(opt CSVOptions) CSVOptions {
	if opt.IDColumn == "" {
		opt.IDColumn = "id"
	}
	if opt.TimeColumn == "" {
		opt.TimeColumn = "time"
	}
	if len(opt.ValueColumns) == 0 {
		opt.ValueColumns = []string{"value"}
	}
	if opt.ChannelMode == "" {
		opt.ChannelMode = ChannelAxis
	}
	return opt
}

// OpenCSV opens path and reads its header row: the file (for the caller to
// close), the reader positioned on line 2 (records of any length, reused:
// the caller checks each against the header), the header and its column
// index (CSVHeader). Errors name the file and line.
func OpenCSV(path string) (*os.File, *csv.Reader, []string, map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	r := newCSVReader(f)
	header, err := r.Read()
	if err == io.EOF {
		err = fmt.Errorf("%s:1: empty file, want a header row", path)
	} else if err != nil {
		err = CSVError(path, err)
	}
	if err != nil {
		f.Close()
		return nil, nil, nil, nil, err
	}
	header = slices.Clone(header) // ReuseRecord would overwrite it
	cols, err := CSVHeader(header)
	if err != nil {
		f.Close()
		return nil, nil, nil, nil, fmt.Errorf("%s:1: %w", path, err)
	}
	return f, r, header, cols, nil
}

// CSVColumns is the header of the CSV file at path, names trimmed (a
// leading byte-order mark dropped).
func CSVColumns(path string) ([]string, error) {
	f, _, header, cols, err := OpenCSV(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	names := make([]string, len(header))
	for name, i := range cols {
		names[i] = name
	}
	return names, nil
}

func newCSVReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked by the caller, with a better message
	cr.ReuseRecord = true
	return cr
}

// CSVError puts the file name in front of an encoding/csv error, which
// already carries line and column for syntax errors.
func CSVError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %w", path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// CSVHeader maps trimmed column names (a leading byte-order mark dropped) to
// their index; a duplicate name is an error.
func CSVHeader(header []string) (map[string]int, error) {
	cols := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if _, dup := cols[h]; dup {
			return nil, fmt.Errorf("duplicate header column %q", h)
		}
		cols[h] = i
	}
	return cols, nil
}

// sortNatural returns the distinct names sorted numerically when every one
// parses as a number, lexically otherwise, so band "10" follows band "9".
func sortNatural(names []string) []string {
	out := slices.Clone(names)
	numeric := true
	for _, n := range out {
		if _, err := strconv.ParseFloat(n, 64); err != nil {
			numeric = false
			break
		}
	}
	if numeric {
		slices.SortFunc(out, func(a, b string) int {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
		})
	} else {
		slices.Sort(out)
	}
	return slices.Compact(out)
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// LoadLabelsCSV reads a per-object table (e.g. PLAsTiCC metadata) into
// id → label. An id listed twice or an empty id/label is an error, since
// either would make the label an object gets depend on row order.
func LoadLabelsCSV(path, idCol, labelCol string) (map[string]string, error) {
	f, r, header, cols, err := OpenCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	for _, name := range []string{idCol, labelCol} {
		if _, ok := cols[name]; !ok {
			return nil, fmt.Errorf("%s:1: header has no column %q (columns: %v)", path, name, header)
		}
	}
	labels := map[string]string{}
	lines := map[string]int{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, CSVError(path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, line, len(rec), len(header))
		}
		id, lab := rec[cols[idCol]], strings.TrimSpace(rec[cols[labelCol]])
		switch {
		case id == "":
			return nil, fmt.Errorf("%s:%d: column %q: empty id", path, line, idCol)
		case lab == "":
			return nil, fmt.Errorf("%s:%d: column %q: empty label for %q", path, line, labelCol, id)
		case lines[id] != 0:
			return nil, fmt.Errorf("%s:%d: column %q: id %q already listed on line %d", path, line, idCol, id, lines[id])
		}
		labels[id], lines[id] = lab, line
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("%s:2: no data rows after the header", path)
	}
	return labels, nil
}

// AttachLabels sets ds.Classes and every sample's Label from an id → label
// map such as LoadLabelsCSV returns. classes fixes the class order; nil means
// the distinct labels sorted as LoadLongCSV sorts them. Every sample must
// have a label and every id in labels must be a sample, because a mismatch
// almost always means the two files do not belong together. ds is left
// unchanged on error.
func AttachLabels(ds *Dataset, labels map[string]string, classes []string) error {
	if classes == nil {
		var all []string
		for _, l := range labels {
			all = append(all, l)
		}
		classes = sortNatural(all)
	}
	if len(classes) > MaxClasses {
		return fmt.Errorf("dataset %q: %w", ds.Name, limitErr("classes", len(classes), "MaxClasses", MaxClasses))
	}
	classIdx := indexOf(classes)
	idx := make([]int, len(ds.Samples))
	seen := make(map[string]bool, len(ds.Samples))
	for i := range ds.Samples {
		id := ds.Samples[i].ID
		lab, ok := labels[id]
		if !ok {
			return fmt.Errorf("dataset %q: sample %d (id %q) has no label", ds.Name, i, id)
		}
		if idx[i], ok = classIdx[lab]; !ok {
			return fmt.Errorf("dataset %q: sample %d (id %q): label %q not in classes %v", ds.Name, i, id, lab, classes)
		}
		seen[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		if !seen[id] {
			return fmt.Errorf("dataset %q: labels name id %q, which is not in the dataset", ds.Name, id)
		}
	}
	ds.Classes = classes
	for i := range ds.Samples {
		ds.Samples[i].Label = idx[i]
	}
	return nil
}
