package data

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ragged is a small irregular labelled dataset with per-sample targets.
func ragged() *Dataset {
	ds := &Dataset{Name: "r", C: 2, D: 2, TimeAxis: 1, Classes: []string{"a", "b"}, TargetDim: 1}
	for i := range 5 {
		s := Sample{ID: string(rune('p' + i)), Label: i % 2, Target: []float32{float32(i)}}
		for t := range 3 + i {
			s.Values = append(s.Values, float32(i+t), float32(t)*0.5)
			s.Positions = append(s.Positions, float32(t%2), float32(t)+0.25)
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

func TestSpecMetaRoundTrip(t *testing.T) {
	spec := &Spec{Source: Source{Format: "ts", DropFraction: 0.3, DropSeed: 7, SeriesPatch: 4},
		Stats: &Stats{Mean: []float64{1, 2}, Std: []float64{3, 4}}, Classes: []string{"x", "y"},
		TargetStats: &Stats{Mean: []float64{5}, Std: []float64{6}}, Train: "a.ts"}
	got, found, err := SpecFromMeta(spec.Meta())
	if err != nil || !found || !reflect.DeepEqual(got, spec) {
		t.Fatalf("round trip: %+v, %v, %v", got, found, err)
	}
	if _, found, err := SpecFromMeta(map[string]string{}); found || err != nil {
		t.Errorf("no spec: found %v, %v", found, err)
	}
	legacy := map[string]string{legacySource: `{"format":"csv"}`, legacyStats: `{"mean":[0],"std":[2]}`, legacyClasses: `["u","v"]`}
	if got, found, err := SpecFromMeta(legacy); err != nil || !found || got.Source.Format != "csv" || got.Stats.Std[0] != 2 || len(got.Classes) != 2 {
		t.Errorf("legacy keys: %+v, %v, %v", got, found, err)
	}
	bad := []struct{ name, meta, want string }{
		{"unknown field", `{"source":{},"colour":1}`, "colour"},
		{"zero std", `{"stats":{"mean":[0],"std":[0]}}`, "stats"},
		{"ragged stats", `{"stats":{"mean":[0,1],"std":[1]}}`, "stats"},
		{"repeated class", `{"classes":["a","a"]}`, "repeated"},
	}
	for _, b := range bad {
		if _, _, err := SpecFromMeta(map[string]string{MetaSpec: b.meta}); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: got %v, want an error containing %q", b.name, err, b.want)
		}
	}
	if err := spec.CheckModel(2, 3, 0); err == nil || !strings.Contains(err.Error(), "2 class names for a classifier with 3 outputs") {
		t.Errorf("classes vs outputs: %v", err)
	}
}

func TestDatasetFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.safetensors")
	for _, ds := range []*Dataset{ragged(), func() *Dataset {
		d := ragged()
		d.Classes, d.TargetPerToken = nil, true
		for i := range d.Samples {
			s := &d.Samples[i]
			s.Label, s.Target = -1, slices.Clone(s.Values[:s.Len(2)])
		}
		return d
	}()} {
		if err := SaveDataset(path, ds); err != nil {
			t.Fatal(err)
		}
		got, err := (Source{}).Load(path) // format from the extension
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ds) {
			t.Errorf("round trip differs:\n got %+v\nwant %+v", got, ds)
		}
	}
}

func TestPatchSeries(t *testing.T) {
	ds := ragged() // sample i: 3+i tokens alternating between channels 0 and 1
	p, err := PatchSeries(ds, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.C != 2*2+2 {
		t.Fatalf("C = %d, want 6", p.C)
	}
	// Sample 2 has 5 tokens: channel 0 at t = .25, 2.25, 4.25, channel 1
	// at 1.25, 3.25 → tokens (ch0: 2), (ch0: 1 + pad), (ch1: 2).
	s := p.Samples[2]
	if got := s.Len(p.C); got != 3 {
		t.Fatalf("sample 2: %d tokens, want 3", got)
	}
	wantPos := []float32{0, 0.25, 0, 4.25, 1, 1.25}
	if !slices.Equal(s.Positions, wantPos) {
		t.Errorf("positions %v, want %v", s.Positions, wantPos)
	}
	// Second token: one observation (values 2+4, 4·0.5) then padding, offsets 0 and −1.
	if got, want := s.Values[6:12], []float32{6, 2, 0, 0, 0, -1}; !slices.Equal(got, want) {
		t.Errorf("padded token %v, want %v", got, want)
	}
	if got, want := s.Values[0:6], []float32{2, 0, 4, 1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("first token %v, want %v (values of t=.25 and t=2.25, offsets 0 and 2)", got, want)
	}
	if q, err := PatchSeries(ds, 1); err != nil || q != ds {
		t.Errorf("P = 1 must return the dataset itself: %v", err)
	}
	if _, err := PatchSeries(ds, 0); err == nil {
		t.Error("P = 0 accepted")
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
}

func TestPatchSeriesShifted(t *testing.T) {
	ds := ragged()
	p, err := PatchSeriesShifted(ds, 2)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := PatchSeries(ds, 2)
	for i := range p.Samples {
		s := p.Samples[i]
		if !slices.Equal(s.Values, plain.Samples[i].Values) || !slices.Equal(s.Positions, plain.Samples[i].Positions) {
			t.Errorf("sample %d: the unshifted tokens differ from PatchSeries's", i)
		}
		if len(s.Shifts) != 1 {
			t.Fatalf("sample %d: %d shifts, want P−1 = 1", i, len(s.Shifts))
		}
	}
	// Sample 2, grid moved by one: each channel's first token holds one
	// observation, then pairs: (ch0: .25), (ch0: 2.25, 4.25), (ch1: 1.25), (ch1: 3.25).
	sh := p.Samples[2].Shifts[0]
	if want := []float32{0, 0.25, 0, 2.25, 1, 1.25, 1, 3.25}; !slices.Equal(sh.Positions, want) {
		t.Errorf("shifted positions %v, want %v", sh.Positions, want)
	}
	if got, want := sh.Values[:12], []float32{2, 0, 0, 0, 0, -1, 4, 1, 6, 2, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("shifted channel-0 tokens %v, want %v", got, want)
	}
	if sh.Label != p.Samples[2].Label || sh.ID != p.Samples[2].ID {
		t.Error("a shift must keep its sample's label and ID")
	}
	// Normalising the dataset normalises every shift, once.
	st := Stats{Mean: make([]float64, p.C), Std: make([]float64, p.C)}
	for k := range st.Mean {
		st.Mean[k], st.Std[k] = 1, 2
	}
	before := slices.Clone(sh.Values)
	if err := st.Apply(p); err != nil {
		t.Fatal(err)
	}
	for j, v := range p.Samples[2].Shifts[0].Values {
		if want := (before[j] - 1) / 2; v != want {
			t.Fatalf("shift value %d: %v after Apply, want %v", j, v, want)
		}
	}
	// The targets a shift shares with its sample are scaled once.
	tgt := p.Samples[2].Target[0]
	if err := (Stats{Mean: []float64{1}, Std: []float64{2}}).ApplyTargets(p); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Samples[2].Shifts[0].Target[0], (tgt-1)/2; got != want {
		t.Errorf("shifted sample's target %v after ApplyTargets, want %v", got, want)
	}
	if q, err := PatchSeriesShifted(ds, 1); err != nil || q != ds {
		t.Errorf("P = 1 must return the dataset itself: %v", err)
	}
}

// Over the memory bound, fewer shifts are kept, evenly spaced; none when
// one would not fit.
func TestPatchSeriesShiftedBound(t *testing.T) {
	defer func(v int) { maxShiftFloats = v }(maxShiftFloats)
	ds := ragged()
	plain, _ := PatchSeries(ds, 4)
	size := 0
	for _, s := range plain.Samples {
		size += len(s.Values) + len(s.Positions)
	}
	for _, tc := range []struct{ budget, shifts int }{{3 * size, 3}, {2*size + size/2, 2}, {size, 1}, {size - 1, 0}} {
		maxShiftFloats = tc.budget
		p, err := PatchSeriesShifted(ds, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(p.Samples[4].Shifts); got != tc.shifts {
			t.Errorf("budget %d floats (%d per tokenisation): %d shifts, want %d", tc.budget, size, got, tc.shifts)
		}
		if tc.shifts == 2 {
			// Shifts 1 and 2 of 1..3 (1 + k·3/2): each channel's first
			// token holds that many observations (offsets ≥ 0).
			for k, want := range []int{1, 2} {
				first := p.Samples[4].Shifts[k].Values[4*2 : 4*2+4]
				held := 0
				for _, o := range first {
					if o >= 0 {
						held++
					}
				}
				if held != want {
					t.Errorf("shift %d: first token holds %d observations, want %d", k, held, want)
				}
			}
		}
	}
}

func TestCollateShifted(t *testing.T) {
	p, err := PatchSeriesShifted(ragged(), 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int]int{} // how often sample 2 came as its own tokens (0) or shift k
	var b *Batch
	for range 600 {
		b = CollateShifted(b, p, []int{2, 0}, rng)
		if b.B != 2 || b.Labels[0] != p.Samples[2].Label {
			t.Fatalf("batch of %d, label %d", b.B, b.Labels[0])
		}
		row := b.Positions[:b.Lengths[0]*b.D]
		k := -1
		for j, alt := range append([]Sample{p.Samples[2]}, p.Samples[2].Shifts...) {
			if slices.Equal(row, alt.Positions) {
				k = j
			}
		}
		if k < 0 {
			t.Fatalf("row 0 %v is neither sample 2 nor one of its shifts", row)
		}
		seen[k]++
	}
	for k := range 3 {
		if seen[k] < 150 { // 200 expected each
			t.Errorf("tokenisation %d drawn %d times of 600: %v", k, seen[k], seen)
		}
	}
}

// Step dropping depends on each series alone: reordering the file or
// reading one series by itself drops the same steps.
func TestDropRandomStepsPerSample(t *testing.T) {
	ds := ragged()
	a, err := DropRandomSteps(ds, 0.4, ds.TimeAxis, 3)
	if err != nil {
		t.Fatal(err)
	}
	rev := Subset(ds, []int{4, 3, 2, 1, 0})
	b, err := DropRandomSteps(rev, 0.4, ds.TimeAxis, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Samples {
		if !reflect.DeepEqual(a.Samples[i], b.Samples[4-i]) {
			t.Errorf("sample %d dropped differently after reordering", i)
		}
	}
	c, _ := DropRandomSteps(ds, 0.4, ds.TimeAxis, 4)
	same := true
	for i := range a.Samples {
		same = same && reflect.DeepEqual(a.Samples[i], c.Samples[i])
	}
	if same {
		t.Error("another seed dropped the same steps everywhere")
	}
}

func TestAugment(t *testing.T) {
	ds := ragged()
	b := Collate(nil, ds, []int{0, 1, 2, 3, 4})
	orig := slices.Clone(b.Values)
	Augment{Drop: 0.99, Jitter: 0.1, Scale: 0.2}.Apply(b, rand.New(rand.NewPCG(1, 2)))
	for s := range b.B {
		kept := 0
		for j := range b.Lengths[s] {
			if !b.Pad[s*b.L+j] {
				kept++
			}
		}
		if kept != 1 {
			t.Errorf("sample %d keeps %d tokens, want exactly 1 at drop 0.99", s, kept)
		}
	}
	if slices.Equal(orig, b.Values) {
		t.Error("values unchanged")
	}
	c := Collate(nil, ds, []int{0, 1, 2, 3, 4})
	Augment{Drop: 0.99, Jitter: 0.1, Scale: 0.2}.Apply(c, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(c.Values, b.Values) || !slices.Equal(c.Pad, b.Pad) {
		t.Error("the same generator state augmented differently")
	}
}

// Warp stretches each sample's times by one positive factor and leaves the
// other position axes, the values and the padding alone.
func TestAugmentWarp(t *testing.T) {
	ds := ragged()
	b := Collate(nil, ds, []int{0, 1, 2, 3, 4})
	orig, vals := slices.Clone(b.Positions), slices.Clone(b.Values)
	Augment{Warp: 0.3, TimeAxis: ds.TimeAxis}.Apply(b, rand.New(rand.NewPCG(3, 4)))
	if !slices.Equal(vals, b.Values) {
		t.Error("warp changed values")
	}
	factors := map[float64]bool{}
	for s := range b.B {
		f := math.NaN()
		for j := range b.L {
			for k := range b.D {
				i := (s*b.L+j)*b.D + k
				o, w := float64(orig[i]), float64(b.Positions[i])
				switch {
				case k != ds.TimeAxis || j >= b.Lengths[s]:
					if o != w {
						t.Fatalf("sample %d token %d axis %d: %v → %v, want unchanged", s, j, k, o, w)
					}
				case o != 0:
					if r := w / o; math.IsNaN(f) {
						f = r
					} else if math.Abs(r-f) > 1e-6*f {
						t.Fatalf("sample %d: factors %v and %v", s, f, r)
					}
				}
			}
		}
		if !(f > 0) || f == 1 {
			t.Errorf("sample %d: stretch %v, want a positive factor ≠ 1", s, f)
		}
		factors[f] = true
	}
	if len(factors) < 2 {
		t.Error("every sample stretched alike")
	}
}

// A resumed run on other data names the settings that made it other.
func TestSpecDifferences(t *testing.T) {
	base := Spec{Train: "a.ts", Stats: &Stats{Mean: []float64{1}, Std: []float64{2}}, Source: Source{Format: "auto", SeriesPatch: 4}}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want []string
	}{
		{"same", func(*Spec) {}, nil},
		{"other file", func(s *Spec) { s.Train = "b.ts" }, []string{"data.train a.ts → b.ts"}},
		{"normalize off", func(s *Spec) { s.Stats = nil }, []string{"data.normalize true → false"}},
		{"other statistics", func(s *Spec) { s.Stats = &Stats{Mean: []float64{0}, Std: []float64{2}} }, []string{"data.normalize's statistics (another file's values)"}},
		{"patch and drop", func(s *Spec) { s.Source.SeriesPatch, s.Source.DropFraction = 8, 0.3 }, []string{"data.drop_fraction 0 → 0.3", "data.series_patch 4 → 8"}},
	} {
		o := base
		o.Stats = &Stats{Mean: []float64{1}, Std: []float64{2}}
		tc.edit(&o)
		if got := base.Differences(&o); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Channel coordinates the commands and the server accept: the indices
// 0..n−1 and nothing else.
func TestIsChannelIndex(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		want bool
	}{{0, true}, {2, true}, {3, false}, {-1, false}, {0.5, false}, {math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false}} {
		if got := IsChannelIndex(tc.c, 3); got != tc.want {
			t.Errorf("IsChannelIndex(%v, 3) = %v", tc.c, got)
		}
	}
}
