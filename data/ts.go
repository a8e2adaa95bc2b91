package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Missing-value policies for LoadTS.
const (
	// MissingDropStep keeps one token per time step (C = dimensions, D = 1)
	// and drops every step where any dimension is missing. Positions keep
	// the original step index (or time stamp), so the model still sees the gap.
	MissingDropStep = "drop-step"
	// MissingChannelAxis emits one token per observed (step, dimension)
	// value: C = 1, D = 2, positions (step, dimension index). This is the
	// paper's "dimensional index trick"; nothing observed is thrown away.
	MissingChannelAxis = "channel-axis"
)

// TSOptions controls LoadTS. The zero value gives the paper's UEA token
// layout; its protocol also drops 30% of steps, which is
// DropRandomSteps(ds, 0.3, 0, rng) after loading.
type TSOptions struct {
	// Missing is MissingDropStep (default when empty) or MissingChannelAxis.
	Missing string
	// NaN is the policy for missing values ('?' and NaN): NaNMissing
	// (default when empty: Missing decides which tokens go), NaNDrop or
	// NaNError.
	NaN string
	// Time maps the time stamps (or step indices) to positions.
	Time TimeMap
}

// tsHeader holds the @-tags of a .ts file.
type tsHeader struct {
	problem     string
	timeStamps  bool
	univariate  bool
	dims        int // 0 = not given
	equalLength bool
	seriesLen   int // 0 = not given
	classLabel  bool
	classes     []string
	classIndex  map[string]int // classes[i] → i
	target      bool
}

// LoadTS reads a UEA/UCR .ts file. Each case becomes one Sample; without
// missing values that is one token per time step with C = number of
// dimensions, D = 1 and position = step index (or the time stamp when
// @timeStamps is true, written as "(t,v),(t,v),..." per dimension). Cases may
// have different lengths. '?' and "NaN" mark missing values, handled by
// opt.NaN and opt.Missing; Inf, unparsable numbers, unknown labels and shape
// mismatches are errors of the form "file:line: ...". Classes come from the
// @classLabel list in its order; with @targetLabel true the last field is a
// real target (TargetDim 1). Sample IDs are the case's 0-based index.
func LoadTS(path string, opt TSOptions) (*Dataset, error) {
	if opt.Missing == "" {
		opt.Missing = MissingDropStep
	}
	if opt.Missing != MissingDropStep && opt.Missing != MissingChannelAxis {
		return nil, fmt.Errorf("%s: unknown TSOptions.Missing %q (want %q or %q)", path, opt.Missing, MissingDropStep, MissingChannelAxis)
	}
	if err := checkNaNPolicy(opt.NaN); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &lineReader{r: bufio.NewReaderSize(f, 1<<16)}
	h, err := readTSHeader(lr)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	ds := &Dataset{Name: h.problem, C: 1, D: 1, Classes: h.classes, TimeStamps: h.timeStamps}
	if ds.Name == "" {
		ds.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if h.target {
		ds.TargetDim = 1
	}
	if opt.Missing == MissingChannelAxis {
		ds.D, ds.ChannelAxes = 2, true
	}
	firstLen := -1
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, lr.n, err)
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		index := len(ds.Samples) + ds.DroppedSamples
		s, missing, err := h.caseSample(line, strconv.Itoa(index), opt, &firstLen)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: case %d: %w", path, lr.n, index, err)
		}
		ds.MissingValues += missing
		if missing > 0 && opt.NaN == NaNDrop {
			ds.DroppedSamples++
			continue
		}
		ds.Samples = append(ds.Samples, s)
	}
	if len(ds.Samples) == 0 {
		if ds.DroppedSamples > 0 {
			return nil, fmt.Errorf("%s: every case has a missing value: data.nan drop leaves none", path)
		}
		return nil, fmt.Errorf("%s:%d: no cases after @data", path, lr.n)
	}
	if opt.Missing == MissingDropStep {
		ds.C = h.dims // the first case fixes it when the header does not
		for d := range ds.C {
			ds.ValueNames = append(ds.ValueNames, "dim"+strconv.Itoa(d))
		}
	}
	return ds, nil
}

// caseSample parses one data line and converts it to tokens, returning how
// many of its values are missing. firstLen carries the first case's length
// for the @equalLength check (-1 before it). Under NaNDrop a case with a
// missing value is not converted (the caller drops it); under NaNError it
// is an error naming the first.
func (h *tsHeader) caseSample(line, id string, opt TSOptions, firstLen *int) (Sample, int, error) {
	c, err := parseTSCase(line, h)
	if err != nil {
		return Sample{}, 0, err
	}
	var origin float64
	if !opt.Time.Identity() {
		origin = opt.Time.Origin(id, c.times...)
		for _, ts := range c.times {
			for i, t := range ts {
				ts[i] = float64(opt.Time.Position(t, origin)) // exact in float64: rounded to float32 once
			}
		}
	}
	if h.equalLength {
		if *firstLen < 0 {
			*firstLen = c.length()
		} else if c.length() != *firstLen {
			return Sample{}, 0, fmt.Errorf("@equalLength true but series has %d steps, earlier ones %d", c.length(), *firstLen)
		}
	}
	missing := 0
	for d, vals := range c.vals {
		for i, v := range vals {
			if !math.IsNaN(v) {
				continue
			}
			if opt.NaN == NaNError {
				return Sample{}, 0, fmt.Errorf("dimension %d value %d is missing ('?' or NaN), refused under data.nan error %s", d, i, nanHint)
			}
			missing++
		}
	}
	if missing > 0 && opt.NaN == NaNDrop {
		return Sample{}, missing, nil
	}
	s, err := c.sample(opt.Missing, h.dims)
	s.ID, s.TimeOrigin = id, origin // the case's index in the file, dropped ones counted
	return s, missing, err
}

// lineReader yields lines without their terminator (LF or CRLF) and counts
// them, without bufio.Scanner's token-size limit: UEA lines can be megabytes.
type lineReader struct {
	r *bufio.Reader
	n int // 1-based number of the line last returned
}

func (lr *lineReader) next() (string, error) {
	line, err := lr.r.ReadString('\n')
	if err == io.EOF && line == "" {
		return "", io.EOF
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	lr.n++
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if lr.n == 1 {
		line = strings.TrimPrefix(line, "\ufeff")
	}
	return line, nil
}

// readTSHeader consumes lines up to and including @data. Errors start with
// the line number so the caller only prefixes the path.
func readTSHeader(lr *lineReader) (tsHeader, error) {
	var h tsHeader
	seen := map[string]bool{}
	for {
		line, err := lr.next()
		if err == io.EOF {
			return h, fmt.Errorf("%d: no @data line (file truncated?)", max(lr.n, 1))
		}
		if err != nil {
			return h, fmt.Errorf("%d: %w", lr.n, err)
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] != '@' {
			return h, fmt.Errorf("%d: data before @data: %.40q", lr.n, line)
		}
		fields := strings.Fields(line)
		tag := strings.ToLower(fields[0])
		args := fields[1:]
		if seen[tag] {
			return h, fmt.Errorf("%d: duplicate %s", lr.n, fields[0])
		}
		seen[tag] = true
		if tag == "@data" {
			if h.classLabel && h.target {
				return h, fmt.Errorf("%d: both @classLabel and @targetLabel are true", lr.n)
			}
			if h.univariate {
				if h.dims > 1 {
					return h, fmt.Errorf("%d: @univariate true but @dimensions %d", lr.n, h.dims)
				}
				h.dims = 1
			}
			return h, nil
		}
		if err := h.setTag(tag, args); err != nil {
			return h, fmt.Errorf("%d: %s: %w", lr.n, fields[0], err)
		}
	}
}

func (h *tsHeader) setTag(tag string, args []string) error {
	var err error
	switch tag {
	case "@problemname":
		h.problem = strings.Join(args, " ")
	case "@timestamps":
		h.timeStamps, err = tsBool(args)
	case "@missing":
		_, err = tsBool(args) // '?' is accepted either way; only the syntax is checked
	case "@univariate":
		h.univariate, err = tsBool(args)
	case "@equallength":
		h.equalLength, err = tsBool(args)
	case "@dimensions":
		if h.dims, err = tsPositiveInt(args); err == nil && h.dims > MaxChannels {
			err = limitErr("dimensions", h.dims, "MaxChannels", MaxChannels)
		}
	case "@serieslength":
		h.seriesLen, err = tsPositiveInt(args)
	case "@targetlabel":
		h.target, err = tsBool(args)
	case "@classlabel":
		if len(args) == 0 {
			return errors.New("want true <labels...> or false")
		}
		if h.classLabel, err = tsBool(args[:1]); err != nil {
			return err
		}
		if !h.classLabel {
			if len(args) > 1 {
				return errors.New("false followed by labels")
			}
			return nil
		}
		if len(args) == 1 {
			return errors.New("true but no labels listed")
		}
		h.classes = args[1:]
		if len(h.classes) > MaxClasses {
			return limitErr("labels", len(h.classes), "MaxClasses", MaxClasses)
		}
		// A map, not a scan per label: a header line of 10⁵ labels would
		// otherwise take 10¹⁰ comparisons.
		h.classIndex = make(map[string]int, len(h.classes))
		for i, c := range h.classes {
			if _, dup := h.classIndex[c]; dup {
				return fmt.Errorf("label %q listed twice", c)
			}
			h.classIndex[c] = i
		}
	default:
		return errors.New("unknown header tag")
	}
	return err
}

func tsBool(args []string) (bool, error) {
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("want true or false, got %q", strings.Join(args, " "))
}

func tsPositiveInt(args []string) (int, error) {
	if len(args) == 1 {
		if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a positive integer, got %q", strings.Join(args, " "))
}

// tsCase is one parsed data line: per dimension, its observation times and
// values (NaN = missing). Without time stamps times[d][i] = i.
type tsCase struct {
	times, vals [][]float64
	stamped     bool // times come from the file rather than step indices
	label       int
	hasTarget   bool
	target      float64
}

// length is the number of time steps of the longest dimension.
func (c *tsCase) length() int {
	n := 0
	for _, v := range c.vals {
		n = max(n, len(v))
	}
	return n
}

// parseTSCase splits one data line into dimensions and the trailing
// label/target. The first case fixes the dimension count when the header
// did not give one.
func parseTSCase(line string, h *tsHeader) (*tsCase, error) {
	parts := strings.Split(line, ":")
	c := &tsCase{label: -1, stamped: h.timeStamps}
	last := ""
	if h.classLabel || h.target {
		last = strings.TrimSpace(parts[len(parts)-1])
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		if h.classLabel {
			return nil, fmt.Errorf("no class label: the header says @classLabel true, so a case is values:label (this line has %q)", line)
		}
		return nil, fmt.Errorf("no regression target: the header says @targetLabel true, so a case is values:target (this line has %q)", line)
	}
	if h.dims == 0 {
		if len(parts) > MaxChannels {
			return nil, limitErr("dimensions", len(parts), "MaxChannels", MaxChannels)
		}
		h.dims = len(parts)
	}
	// Count dimensions before reading the label: on a truncated line the
	// "label" is really a value, and the count is the useful message.
	if len(parts) != h.dims {
		want := "no label"
		if h.classLabel {
			want = "label"
		} else if h.target {
			want = "target"
		}
		return nil, fmt.Errorf("%d dimensions, want %d (+ %s)", len(parts), h.dims, want)
	}
	if h.classLabel {
		var ok bool
		if c.label, ok = h.classIndex[last]; !ok {
			return nil, fmt.Errorf("unknown class label %.40q (header lists %d labels: %s)", last, len(h.classes), abbrev(h.classes))
		}
	} else if h.target {
		t, err := parseDecimal(last)
		if err != nil || !finite32(t) {
			return nil, fmt.Errorf("target %q is not a finite float32 number", last)
		}
		c.target, c.hasTarget = t, true
	}
	for d, p := range parts {
		var ts, vs []float64
		var err error
		if h.timeStamps {
			ts, vs, err = parseTSStamped(p)
		} else {
			vs, err = parseTSValues(p)
		}
		if err != nil {
			return nil, fmt.Errorf("dimension %d: %w", d, err)
		}
		if len(vs) == 0 {
			return nil, fmt.Errorf("dimension %d: empty series", d)
		}
		if h.seriesLen > 0 && !h.timeStamps && len(vs) != h.seriesLen {
			return nil, fmt.Errorf("dimension %d: %d values, @seriesLength is %d", d, len(vs), h.seriesLen)
		}
		if ts == nil {
			ts = make([]float64, len(vs))
			for i := range ts {
				ts[i] = float64(i)
			}
		}
		c.times = append(c.times, ts)
		c.vals = append(c.vals, vs)
	}
	return c, nil
}

func parseTSValues(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	fields := strings.Split(s, ",")
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := parseTSValue(f)
		if err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// parseTSValue returns NaN for a missing value ('?' or NaN) and rejects
// anything else that is not a finite number.
func parseTSValue(f string) (float64, error) {
	f = strings.TrimSpace(f)
	if f == "?" {
		return math.NaN(), nil
	}
	v, err := parseDecimal(f)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", f)
	}
	if math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
		return 0, fmt.Errorf("%q is infinite or outside float32 range", f)
	}
	return v, nil
}

// parseTSStamped parses "(t,v),(t,v),..." with numeric, strictly increasing
// time stamps. Date-time stamps are rejected: positions must be numbers.
func parseTSStamped(s string) (times, vals []float64, err error) {
	s = strings.TrimSpace(s)
	for i := 0; s != ""; i++ {
		if s[0] != '(' {
			return nil, nil, fmt.Errorf("pair %d: want '(' in %.20q", i, s)
		}
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return nil, nil, fmt.Errorf("pair %d: missing ')'", i)
		}
		tStr, vStr, ok := strings.Cut(s[1:end], ",")
		if !ok {
			return nil, nil, fmt.Errorf("pair %d: want (time,value), got %q", i, s[:end+1])
		}
		t, err := parseDecimal(strings.TrimSpace(tStr))
		if err != nil || !finite32(t) {
			return nil, nil, fmt.Errorf("pair %d: time stamp %q is not a finite float32 number (date stamps are not supported)", i, tStr)
		}
		if len(times) > 0 && t <= times[len(times)-1] {
			return nil, nil, fmt.Errorf("pair %d: time stamp %v not after %v", i, t, times[len(times)-1])
		}
		v, err := parseTSValue(vStr)
		if err != nil {
			return nil, nil, fmt.Errorf("pair %d: %w", i, err)
		}
		times = append(times, t)
		vals = append(vals, v)
		s = strings.TrimSpace(s[end+1:])
		if rest, ok := strings.CutPrefix(s, ","); ok {
			s = strings.TrimSpace(rest)
			if s == "" {
				return nil, nil, fmt.Errorf("pair %d: trailing ','", i)
			}
		} else if s != "" {
			return nil, nil, fmt.Errorf("pair %d: want ',' after ')'", i)
		}
	}
	return times, vals, nil
}

// sample converts a parsed case into tokens under the missing-value policy.
func (c *tsCase) sample(missing string, dims int) (Sample, error) {
	s := Sample{Label: c.label}
	if c.hasTarget {
		s.Target = []float32{float32(c.target)}
	}
	if missing == MissingChannelAxis {
		for d := range c.vals {
			for i, v := range c.vals[d] {
				if !math.IsNaN(v) {
					s.Values = append(s.Values, float32(v))
					s.Positions = append(s.Positions, float32(c.times[d][i]), float32(d))
				}
			}
		}
		if len(s.Values) == 0 {
			return s, errors.New("every value is missing")
		}
		sortTokens(&s, 1, 2, 0)
		return s, nil
	}
	if err := c.completeSteps(dims, &s); err != nil {
		return s, err
	}
	if len(s.Positions) == 0 {
		return s, errors.New("every time step has a missing value (drop-step leaves an empty series)")
	}
	return s, nil
}

// completeSteps appends to s one token per complete step: a step at which
// every dimension has a value that is not missing. Without time stamps the
// steps are indices and every dimension must have the same length; with
// time stamps they are the stamps all dimensions share (a stamp some
// dimension lacks is a missing value there). The work and memory are
// bounded by the case's own values: the candidate steps start as dimension
// 0's and only shrink, and the tokens hold at most one value per value
// read. (Laying the union of all stamps out against every dimension, as an
// earlier version did, costs stamps × dimensions: quadratic in the line.)
func (c *tsCase) completeSteps(dims int, s *Sample) error {
	if !c.stamped {
		for d := 1; d < dims; d++ {
			if len(c.vals[d]) != len(c.vals[0]) {
				return fmt.Errorf("dimension %d has %d values but dimension 0 has %d; ragged dimensions need data.missing = %s (--data.missing %s)", d, len(c.vals[d]), len(c.vals[0]), MissingChannelAxis, MissingChannelAxis)
			}
		}
	}
	// cand[k] is an index into dimension 0 of a step still complete.
	var cand []int
	for i, v := range c.vals[0] {
		if !math.IsNaN(v) {
			cand = append(cand, i)
		}
	}
	// at[d][k] is the index into dimension d of candidate k.
	at := make([][]int, dims)
	at[0] = cand
	for d := 1; d < dims && len(cand) > 0; d++ {
		keep := cand[:0:0]
		idx := make([]int, 0, len(cand))
		for k, i := range cand {
			j := i
			if c.stamped {
				var found bool
				if j, found = slices.BinarySearch(c.times[d], c.times[0][i]); !found {
					continue
				}
			}
			if math.IsNaN(c.vals[d][j]) {
				continue
			}
			keep = append(keep, i)
			idx = append(idx, j)
			// Keep the earlier dimensions' indices aligned with keep.
			for e := 1; e < d; e++ {
				at[e][len(keep)-1] = at[e][k]
			}
		}
		for e := 1; e < d; e++ {
			at[e] = at[e][:len(keep)]
		}
		cand, at[0], at[d] = keep, keep, idx
	}
	if len(cand) == 0 {
		return nil
	}
	s.Values = make([]float32, 0, len(cand)*dims)
	s.Positions = make([]float32, 0, len(cand))
	for k, i := range cand {
		for d := range dims {
			s.Values = append(s.Values, float32(c.vals[d][at[d][k]]))
		}
		s.Positions = append(s.Positions, float32(c.times[0][i]))
	}
	return nil
}

// abbrev lists names for an error message, at most ten of them.
func abbrev(names []string) string {
	if len(names) <= 10 {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v …", names[:10])
}
