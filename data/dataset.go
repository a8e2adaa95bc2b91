package data

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sample is one series / image: N tokens, each with C values and D position
// coordinates. C and D live on the Dataset so every sample of a dataset
// agrees on them; a Sample on its own only knows its flat buffers.
type Sample struct {
	ID        string
	Values    []float32 // [N*C], token-major
	Positions []float32 // [N*D], token-major
	Label     int       // class index into Dataset.Classes, -1 when unlabelled
	// Target is the regression target: [TargetDim] per sample, or
	// [N*TargetDim] when Dataset.TargetPerToken; nil when the dataset has none.
	Target []float32
	// TimeOrigin is the file time at position 0 of the time axis: what the
	// loader subtracted from this series' times (Source.TimeOrigin series),
	// 0 when times are as read.
	TimeOrigin float64
	// Shifts are other tokenisations of the same object (the series
	// patched on a shifted grid, PatchSeriesShifted) that training may
	// draw instead of Values and Positions; nil for most data.
	Shifts []Sample
}

// Len is the number of tokens N given the dataset's values per token c.
func (s *Sample) Len(c int) int {
	if c <= 0 {
		return 0
	}
	return len(s.Values) / c
}

// Fingerprint identifies the series by its values and positions (FNV-1a
// over their float32 bits), not its ID or labels: the same series read
// through the same Spec from any file gets the same fingerprint, so an
// interpolation can tell which of a file's series pre-training saw.
func (s *Sample) Fingerprint() uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[:4], uint32(len(s.Values)))
	binary.LittleEndian.PutUint32(buf[4:], uint32(len(s.Positions)))
	h.Write(buf[:])
	for _, part := range [][]float32{s.Values, s.Positions} {
		for _, v := range part {
			binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
			h.Write(buf[:4])
		}
	}
	return h.Sum64()
}

// Fingerprint identifies the dataset as a training run sees it: every
// sample's series (Sample.Fingerprint), label and target, in order. A
// checkpoint's step count means something only over the same training set.
func (ds *Dataset) Fingerprint() uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for i := range ds.Samples {
		s := &ds.Samples[i]
		binary.LittleEndian.PutUint64(buf[:], s.Fingerprint())
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(int64(s.Label)))
		h.Write(buf[:])
		for _, v := range s.Target {
			binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
			h.Write(buf[:4])
		}
	}
	return h.Sum64()
}

// Dataset is a list of samples sharing one token layout.
type Dataset struct {
	Name           string
	C, D           int      // values per token, position axes
	Classes        []string // label names; index = Sample.Label
	TargetDim      int      // 0 when there are no regression targets
	TargetPerToken bool     // targets are per token ([N*TargetDim]) rather than per sample
	// TimeAxis is the position axis that is time (step dropping and the
	// interpolation baselines work along it): 0 for .ts ((step[, channel]))
	// and array series, D−1 for long CSV ((channel, time)).
	TimeAxis int
	// TimeStamps is set when the file gave the times (a CSV time column, a
	// .ts file with @timeStamps true) rather than step indices.
	TimeStamps bool
	// ChannelAxes is set when the position axes other than TimeAxis index
	// channels (bands, dimensions: long CSV's axis mode, .ts channel-axis),
	// so a token's values do not say which channel they are; ComputeStats
	// then standardises each channel on its own.
	ChannelAxes bool
	Samples     []Sample
	// Names from the file, when it gives them (empty otherwise):
	// ValueNames[c] names value slot c (CSV value columns; .ts dimensions
	// dim0, dim1, ...), Channels[k] the channel whose index on a channel
	// position axis is k (CSV channel names).
	ValueNames, Channels []string
	// What the loader found missing: the missing values the file held (NaN,
	// '?' in .ts, an empty CSV value cell, a CSV slot without a row) and
	// the samples its NaN policy (Source.NaN) left out for holding one.
	MissingValues, DroppedSamples int
}

// Validate checks every invariant the model and Collate rely on, so that a
// bad dataset fails once with a precise message instead of producing NaN
// losses or index panics deep inside training. The error names the sample
// (index and ID) and the offending field.
func (d *Dataset) Validate() error {
	if d.C < 1 {
		return fmt.Errorf("dataset %q: C = %d, want >= 1", d.Name, d.C)
	}
	if d.D < 1 {
		return fmt.Errorf("dataset %q: D = %d, want >= 1", d.Name, d.D)
	}
	if d.TargetDim < 0 {
		return fmt.Errorf("dataset %q: TargetDim = %d, want >= 0", d.Name, d.TargetDim)
	}
	if d.TargetPerToken && d.TargetDim == 0 {
		return fmt.Errorf("dataset %q: TargetPerToken set but TargetDim = 0", d.Name)
	}
	if d.TimeAxis < 0 || d.TimeAxis >= d.D {
		return fmt.Errorf("dataset %q: TimeAxis = %d outside [0, %d)", d.Name, d.TimeAxis, d.D)
	}
	if len(d.Samples) == 0 {
		return fmt.Errorf("dataset %q: no samples", d.Name)
	}
	for i := range d.Samples {
		if err := d.validateSample(&d.Samples[i]); err != nil {
			return fmt.Errorf("dataset %q: sample %d (id %q): %w", d.Name, i, d.Samples[i].ID, err)
		}
	}
	return nil
}

func (d *Dataset) validateSample(s *Sample) error {
	if len(s.Values) == 0 {
		return fmt.Errorf("no tokens")
	}
	if len(s.Values)%d.C != 0 {
		return fmt.Errorf("len(Values) = %d is not a multiple of C = %d", len(s.Values), d.C)
	}
	n := len(s.Values) / d.C
	if len(s.Positions) != n*d.D {
		return fmt.Errorf("len(Positions) = %d, want N*D = %d*%d", len(s.Positions), n, d.D)
	}
	if s.Label < -1 || s.Label >= len(d.Classes) {
		return fmt.Errorf("Label = %d out of range [-1, %d)", s.Label, len(d.Classes))
	}
	want := d.TargetDim
	if d.TargetPerToken {
		want = n * d.TargetDim
	}
	if len(s.Target) != want {
		return fmt.Errorf("len(Target) = %d, want %d", len(s.Target), want)
	}
	if err := checkFinite("Values", s.Values); err != nil {
		return err
	}
	if err := checkFinite("Positions", s.Positions); err != nil {
		return err
	}
	return checkFinite("Target", s.Target)
}

func checkFinite(field string, xs []float32) error {
	for i, x := range xs {
		if !isFinite(x) {
			return fmt.Errorf("%s[%d] = %v", field, i, x)
		}
	}
	return nil
}

func isFinite(x float32) bool {
	f := float64(x)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Subset returns a dataset holding the samples at idx, in that order. The
// Sample structs are copied but their slices are shared with ds, so subsets
// are cheap; modify values (e.g. Stats.Apply) before splitting, or on one
// side only if that is what you mean.
func Subset(ds *Dataset, idx []int) *Dataset {
	out := *ds
	out.Samples = make([]Sample, len(idx))
	for j, i := range idx {
		out.Samples[j] = ds.Samples[i]
	}
	return &out
}

// Concat returns one dataset holding the parts' samples in order, with the
// first part's metadata; like Subset, the samples' slices are shared.
func Concat(parts ...*Dataset) *Dataset {
	out := *parts[0]
	out.Samples = nil
	for _, p := range parts {
		out.Samples = append(out.Samples, p.Samples...)
	}
	return &out
}

// parseDecimal is strconv.ParseFloat for the numbers of a data file:
// decimal only. ParseFloat also takes Go's literal spellings, 1_000 and
// 0x1p4, which no CSV or .ts writer produces: a file holding them is more
// likely damaged than meant, so they are refused like any other non-number.
func parseDecimal(s string) (float64, error) {
	digits := strings.TrimLeft(s, "+-")
	if strings.ContainsRune(s, '_') || strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0X") {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	return strconv.ParseFloat(s, 64)
}

// finite32 reports whether v is a number that survives conversion to
// float32 without becoming ±Inf.
func finite32(v float64) bool {
	return !math.IsNaN(v) && math.Abs(v) <= math.MaxFloat32
}

// sortTokens reorders a sample's tokens by position coordinate axis, keeping
// the existing order among equal coordinates, so loaders can collect tokens
// in file order and still hand the model time-sorted sequences.
func sortTokens(s *Sample, c, d, axis int) {
	n := len(s.Values) / c
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		return cmp.Compare(s.Positions[a*d+axis], s.Positions[b*d+axis])
	})
	vals := make([]float32, 0, len(s.Values))
	pos := make([]float32, 0, len(s.Positions))
	for _, i := range perm {
		vals = append(vals, s.Values[i*c:(i+1)*c]...)
		pos = append(pos, s.Positions[i*d:(i+1)*d]...)
	}
	s.Values, s.Positions = vals, pos
}
