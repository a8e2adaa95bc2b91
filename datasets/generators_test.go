package datasets

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"romae/data"
)

// generators lists every generator with small sizes, for the checks that
// apply to all of them.
var generators = []struct {
	name string
	gen  func(n int, seed uint64) *data.Dataset
}{
	{"position", func(n int, seed uint64) *data.Dataset { return Position(n, 10, 0, 50, seed) }},
	{"synthetic", Synthetic},
	{"spiral-train", func(n int, seed uint64) *data.Dataset { tr, _ := Spiral(3*n, seed); return tr }},
	{"spiral-test", func(n int, seed uint64) *data.Dataset { _, te := Spiral(3*n, seed); return te }},
	{"pendulum", Pendulum},
	{"sines-1", func(n int, seed uint64) *data.Dataset { return Sines(n, 1, seed) }},
	{"sines-2", func(n int, seed uint64) *data.Dataset { return Sines(n, 2, seed) }},
	{"lightcurves", LightCurves},
	{"oscillator", Oscillator},
}

func TestGeneratorsDeterministicAndValid(t *testing.T) {
	for _, g := range generators {
		t.Run(g.name, func(t *testing.T) {
			a, b := g.gen(12, 7), g.gen(12, 7)
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatal("same seed gave different data")
			}
			if c := g.gen(12, 8); reflect.DeepEqual(a.Samples[0], c.Samples[0]) {
				t.Fatal("different seeds gave the same first sample")
			}
			// Prefix property (spiral-train/test excluded: n changes the split).
			if !strings.HasPrefix(g.name, "spiral") {
				if p := g.gen(5, 7); !reflect.DeepEqual(p.Samples, a.Samples[:5]) {
					t.Fatal("Gen(5) is not a prefix of Gen(12)")
				}
			}
			ids := map[string]bool{}
			for _, s := range a.Samples {
				if ids[s.ID] {
					t.Fatalf("duplicate ID %q", s.ID)
				}
				ids[s.ID] = true
			}
		})
	}
}

// meanStd returns the mean and (population) standard deviation of xs.
func meanStd(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

func TestPositionStatistics(t *testing.T) {
	tests := []struct {
		n, tokens int
		lo, hi    float64
	}{
		{4000, 10, 0, 50},   // Sec. 5.1
		{20000, 1, 0, 100},  // App. B.1
		{20000, 1, 0, 1000}, // App. B.1
		{2000, 5, -3, 7},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.tokens)+"x"+strconv.FormatFloat(tc.hi, 'g', -1, 64), func(t *testing.T) {
			ds := Position(tc.n, tc.tokens, tc.lo, tc.hi, 1)
			if ds.C != 1 || ds.D != 1 || ds.TargetDim != 1 || !ds.TargetPerToken || len(ds.Samples) != tc.n {
				t.Fatalf("layout C=%d D=%d TargetDim=%d perToken=%v n=%d", ds.C, ds.D, ds.TargetDim, ds.TargetPerToken, len(ds.Samples))
			}
			const bins = 10
			var counts [bins]int
			var all []float64
			for _, s := range ds.Samples {
				if len(s.Values) != tc.tokens {
					t.Fatalf("%s: %d tokens", s.ID, len(s.Values))
				}
				for j, p := range s.Positions {
					if s.Values[j] != 1 || s.Target[j] != p {
						t.Fatalf("%s token %d: value %v target %v position %v", s.ID, j, s.Values[j], s.Target[j], p)
					}
					x := float64(p)
					if x < tc.lo || x > tc.hi {
						t.Fatalf("position %v outside [%v, %v]", x, tc.lo, tc.hi)
					}
					counts[min(int((x-tc.lo)/(tc.hi-tc.lo)*bins), bins-1)]++
					all = append(all, x)
				}
			}
			w := tc.hi - tc.lo
			m, sd := meanStd(all)
			n := float64(len(all))
			if want := (tc.lo + tc.hi) / 2; math.Abs(m-want) > 4*w/math.Sqrt(12*n) {
				t.Errorf("mean %v, want %v", m, want)
			}
			if want := w / math.Sqrt(12); math.Abs(sd-want)/want > 0.03 {
				t.Errorf("std %v, want %v", sd, want)
			}
			// Chi-square-like: every bin within 5 sigma of n/bins.
			exp := n / bins
			for b, c := range counts {
				if math.Abs(float64(c)-exp) > 5*math.Sqrt(exp) {
					t.Errorf("bin %d has %d positions, want about %.0f", b, c, exp)
				}
			}
		})
	}
}

func TestSyntheticRecipe(t *testing.T) {
	ds := Synthetic(2000, 3)
	if ds.C != 1 || ds.D != 1 || ds.TargetDim != 1 || !ds.TargetPerToken {
		t.Fatalf("layout %+v", ds)
	}
	var noise, clean []float64
	for _, s := range ds.Samples {
		if len(s.Values) != SyntheticPoints {
			t.Fatalf("%s: %d points", s.ID, len(s.Values))
		}
		for j := range SyntheticPoints {
			if want := float32(float64(j) / 49); s.Positions[j] != want {
				t.Fatalf("position %d = %v, want %v", j, s.Positions[j], want)
			}
			f := float64(s.Target[j])
			// A convex combination of 10 N(0,1) draws: |f| beyond 6 has
			// negligible probability.
			if math.Abs(f) > 6 {
				t.Fatalf("%s: clean value %v not bounded", s.ID, f)
			}
			clean = append(clean, f)
			noise = append(noise, float64(s.Values[j])-f)
		}
		// The clean curve is smooth: neighbouring points differ much less
		// than the noise does.
		for j := 1; j < SyntheticPoints; j++ {
			if d := math.Abs(float64(s.Target[j] - s.Target[j-1])); d > 1.5 {
				t.Fatalf("%s: clean curve jumps by %v", s.ID, d)
			}
		}
	}
	m, sd := meanStd(noise)
	if math.Abs(m) > 0.002 || math.Abs(sd-SyntheticNoise) > 0.002 {
		t.Errorf("noise mean %v std %v, want 0 and %v", m, sd, SyntheticNoise)
	}
	cm, csd := meanStd(clean)
	if math.Abs(cm) > 0.1 || csd < 0.4 || csd > 1 {
		t.Errorf("clean values mean %v std %v, want about 0 and between 0.4 and 1", cm, csd)
	}
}

func TestObserveSplits(t *testing.T) {
	base := Synthetic(200, 1)
	_, spiralTest := Spiral(30, 1)
	tests := []struct {
		name     string
		ds       *data.Dataset
		split    func(*data.Dataset) (*data.Dataset, *data.Dataset)
		min, max int
	}{
		{"random-3-10", base, func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveRandom(d, 3, 10, 9) }, 3, 10},
		{"fixed-20", base, func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveFixed(d, 20, 9) }, 20, 20},
		{"fixed-capped", base, func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveFixed(d, 500, 9) }, 49, 49},
		{"fraction-0.2", base, func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveFraction(d, 0.2, 9) }, 40, 40},
		{"spiral-30", spiralTest, func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveFixed(d, 30, 9) }, 30, 30},
		{"lightcurves", LightCurves(50, 1), func(d *data.Dataset) (*data.Dataset, *data.Dataset) { return ObserveRandom(d, 5, 30, 9) }, 5, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.ds
			obs, hid := tc.split(ds)
			obs2, hid2 := tc.split(ds)
			if !reflect.DeepEqual(obs, obs2) || !reflect.DeepEqual(hid, hid2) {
				t.Fatal("split is not deterministic")
			}
			for _, part := range []*data.Dataset{obs, hid} {
				if err := part.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[int]bool{}
			c, d, td := ds.C, ds.D, ds.TargetDim
			for i, s := range ds.Samples {
				o, h := obs.Samples[i], hid.Samples[i]
				if o.ID != s.ID || h.ID != s.ID || o.Label != s.Label || h.Label != s.Label {
					t.Fatalf("sample %d: IDs/labels %q %q %d %d, want %q %d", i, o.ID, h.ID, o.Label, h.Label, s.ID, s.Label)
				}
				k := o.Len(c)
				seen[k] = true
				if k < tc.min || k > tc.max || k+h.Len(c) != s.Len(c) {
					t.Fatalf("sample %d: %d observed + %d hidden of %d", i, k, h.Len(c), s.Len(c))
				}
				// Merging the two parts by original token order recovers the sample.
				var vals, pos, tgt []float32
				oi, hi := 0, 0
				for j := range s.Len(c) {
					src, at := &o, oi
					if oi < k && slices.Equal(o.Positions[oi*d:(oi+1)*d], s.Positions[j*d:(j+1)*d]) &&
						slices.Equal(o.Values[oi*c:(oi+1)*c], s.Values[j*c:(j+1)*c]) {
						oi++
					} else {
						src, at = &h, hi
						hi++
					}
					vals = append(vals, src.Values[at*c:(at+1)*c]...)
					pos = append(pos, src.Positions[at*d:(at+1)*d]...)
					if ds.TargetPerToken {
						tgt = append(tgt, src.Target[at*td:(at+1)*td]...)
					}
				}
				if !slices.Equal(vals, s.Values) || !slices.Equal(pos, s.Positions) || !slices.Equal(tgt, s.Target) {
					t.Fatalf("sample %d: observed ∪ hidden is not the original in order", i)
				}
			}
			if tc.max-tc.min >= 3 && len(seen) < 3 {
				t.Errorf("observed counts %v: expected variety in [%d, %d]", seen, tc.min, tc.max)
			}
		})
	}
}

func TestSpiral(t *testing.T) {
	train, test := Spiral(300, 5)
	if len(train.Samples) != 200 || len(test.Samples) != 100 {
		t.Fatalf("split %d/%d, want 200/100", len(train.Samples), len(test.Samples))
	}
	var noise []float64
	chir := map[string]int{}
	for _, part := range []*data.Dataset{train, test} {
		if part.C != 2 || part.D != 1 || part.TargetDim != 2 || !part.TargetPerToken {
			t.Fatalf("%s layout C=%d D=%d", part.Name, part.C, part.D)
		}
		for _, s := range part.Samples {
			if s.Len(2) != SpiralSteps {
				t.Fatalf("%s: %d steps", s.ID, s.Len(2))
			}
			sign := 1.0
			if strings.HasSuffix(s.ID, " cw") {
				sign = -1
			}
			chir[s.ID[strings.LastIndexByte(s.ID, ' ')+1:]]++
			prevR := 0.0
			for j := range SpiralSteps {
				if s.Positions[j] != float32(j) {
					t.Fatalf("position %d = %v", j, s.Positions[j])
				}
				x, y := float64(s.Target[2*j]), float64(s.Target[2*j+1])
				r := math.Hypot(x, y)
				if j >= 2 && r <= prevR {
					t.Fatalf("%s: radius shrinks at step %d (%v -> %v)", s.ID, j, prevR, r)
				}
				prevR = r
				if j >= 2 { // the angle of the clean point is θ_j (r > 0 there)
					th := 6 * math.Pi * float64(j) / 74
					got := math.Atan2(sign*y, x)
					if d := math.Remainder(got-th, 2*math.Pi); math.Abs(d) > 1e-4 {
						t.Fatalf("%s step %d: angle %v, want %v mod 2π", s.ID, j, got, th)
					}
				}
				if part == test {
					if s.Values[2*j] != s.Target[2*j] || s.Values[2*j+1] != s.Target[2*j+1] {
						t.Fatalf("test spiral %s is noisy", s.ID)
					}
				} else {
					noise = append(noise, float64(s.Values[2*j]-s.Target[2*j]), float64(s.Values[2*j+1]-s.Target[2*j+1]))
				}
			}
			// Final radius a + 6πb ≈ 5.65 with b ~ N(0.3, 0.02).
			if prevR < 4 || prevR > 7.5 {
				t.Fatalf("%s: final radius %v", s.ID, prevR)
			}
		}
	}
	if _, sd := meanStd(noise); math.Abs(sd-0.1) > 0.005 {
		t.Errorf("training noise std %v, want 0.1", sd)
	}
	if chir["cw"] < 100 || chir["ccw"] < 100 {
		t.Errorf("chirality counts %v, want both about 150", chir)
	}
}

func TestSines(t *testing.T) {
	for _, freqs := range []int{1, 2} {
		ds := Sines(2000, freqs, 11)
		seen := map[int]bool{}
		var noise []float64
		for _, s := range ds.Samples {
			fs, err := SineFrequencies(s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != freqs || !slices.IsSorted(fs) || (freqs == 2 && fs[0] == fs[1]) {
				t.Fatalf("%s: frequencies %v", s.ID, fs)
			}
			for _, f := range fs {
				if f < 0 || f > SinesMaxFreq {
					t.Fatalf("%s: frequency %d", s.ID, f)
				}
				seen[f] = true
			}
			if s.Len(1) != SinesPoints || s.Positions[SinesPoints-1] != 1 {
				t.Fatalf("%s: %d points ending at %v", s.ID, s.Len(1), s.Positions[SinesPoints-1])
			}
			// The clean curve is exactly the sum of sines with some phases:
			// check |y| <= freqs and, for one frequency, that the curve is a
			// unit-amplitude sinusoid (y(t)² + (y'(t)/(2πf))² = 1).
			for j := range SinesPoints {
				y := float64(s.Target[j])
				if math.Abs(y) > float64(freqs)+1e-5 {
					t.Fatalf("%s: |y| = %v", s.ID, y)
				}
				noise = append(noise, float64(s.Values[j])-y)
			}
			if freqs == 1 && fs[0] > 0 {
				w := 2 * math.Pi * float64(fs[0])
				// Recover the phase from two points and re-predict all.
				y0 := float64(s.Target[0])
				phase := math.Asin(max(-1, min(1, y0)))
				for _, ph := range []float64{phase, math.Pi - phase} {
					ok := true
					for j := range SinesPoints {
						tt := float64(s.Positions[j])
						if math.Abs(math.Sin(w*tt+ph)-float64(s.Target[j])) > 1e-3 {
							ok = false
							break
						}
					}
					if ok {
						phase = math.NaN()
						break
					}
				}
				if !math.IsNaN(phase) {
					t.Fatalf("%s: clean curve is not sin(2π·%d·t + φ)", s.ID, fs[0])
				}
			}
		}
		if len(seen) != SinesMaxFreq+1 {
			t.Errorf("freqs=%d: only %d of %d frequencies drawn", freqs, len(seen), SinesMaxFreq+1)
		}
		if _, sd := meanStd(noise); math.Abs(sd-0.1) > 0.003 {
			t.Errorf("noise std %v, want 0.1", sd)
		}
	}
	if _, err := SineFrequencies("sines-000001"); err == nil {
		t.Error("SineFrequencies accepted an ID without frequencies")
	}
}

func TestLightCurves(t *testing.T) {
	ds := LightCurves(1200, 2)
	if ds.C != 2 || ds.D != 2 || len(ds.Classes) != len(LightCurveClasses) || ds.TargetDim != 0 {
		t.Fatalf("layout C=%d D=%d classes=%v", ds.C, ds.D, ds.Classes)
	}
	counts := make([]int, len(ds.Classes))
	for _, s := range ds.Samples {
		counts[s.Label]++
		n := s.Len(2)
		if n < lcMinObs || n > lcMaxObs {
			t.Fatalf("%s: %d observations", s.ID, n)
		}
		class := ds.Classes[s.Label]
		if !strings.Contains(s.ID, " "+class+" ") {
			t.Fatalf("ID %q does not name class %q", s.ID, class)
		}
		_, pstr, _ := strings.Cut(s.ID, "P=")
		p, err := strconv.ParseFloat(pstr, 64)
		if err != nil {
			t.Fatal(err)
		}
		var lo, hi float64
		switch {
		case strings.HasSuffix(class, "-short"):
			lo, hi = lcShortLo, lcShortHi
		case strings.HasSuffix(class, "-long"):
			lo, hi = lcLongLo, lcLongHi
		case class == "eclipsing":
			lo, hi = lcEBLo, lcEBHi
		}
		if p < lo*0.999 || p > hi*1.001 {
			t.Fatalf("%s: period %v outside [%v, %v]", s.ID, p, lo, hi)
		}
		maxGap, prev := 0.0, -1.0
		for k := range n {
			band, tm := s.Positions[2*k], float64(s.Positions[2*k+1])
			if band != float32(int(band)) || band < 0 || band >= LightCurveBands {
				t.Fatalf("%s: band %v", s.ID, band)
			}
			if tm < 0 || tm > lcSurvey || tm < prev {
				t.Fatalf("%s: time %v after %v", s.ID, tm, prev)
			}
			if prev >= 0 {
				maxGap = max(maxGap, tm-prev)
			}
			prev = tm
			if s.Values[2*k+1] <= 0 {
				t.Fatalf("%s: flux error %v", s.ID, s.Values[2*k+1])
			}
		}
		// Six-month seasonal gaps: some gap exceeds ~5 months.
		if maxGap < 150 {
			t.Fatalf("%s: largest gap %v days, want a seasonal gap", s.ID, maxGap)
		}
	}
	for c, k := range counts {
		if k < 150 || k > 250 {
			t.Errorf("class %s has %d of 1200 objects", ds.Classes[c], k)
		}
	}
}

func TestScalePositions(t *testing.T) {
	ds := LightCurves(3, 1)
	sc := ScalePositions(ds, 1, 0.5)
	for i, s := range ds.Samples {
		for j, p := range s.Positions {
			want := p
			if j%2 == 1 {
				want = float32(float64(p) * 0.5)
			}
			if sc.Samples[i].Positions[j] != want {
				t.Fatalf("position %d: %v, want %v", j, sc.Samples[i].Positions[j], want)
			}
		}
	}
	if ds.Samples[0].Positions[1] == sc.Samples[0].Positions[1] && ds.Samples[0].Positions[1] != 0 {
		t.Fatal("ScalePositions modified its input or did nothing")
	}
}

func TestPanicsOnBadArguments(t *testing.T) {
	tests := map[string]func(){
		"position-n":      func() { Position(0, 10, 0, 50, 1) },
		"position-range":  func() { Position(1, 10, 5, 5, 1) },
		"spiral-n":        func() { Spiral(1, 1) },
		"sines-freqs":     func() { Sines(1, 3, 1) },
		"observe-range":   func() { ObserveRandom(Synthetic(1, 1), 5, 3, 1) },
		"observe-1-token": func() { ObserveFixed(Position(1, 1, 0, 1, 1), 1, 1) },
		"scale-too-many":  func() { ScalePositions(Synthetic(1, 1), 1, 2) },
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			fn()
		})
	}
}

// TestOscillator checks the recipe: 20-80 sorted times in [0, 10], three
// channels, noise of std 0.05 around the clean target, every class present,
// and class-dependent frequency content (more sign changes of the clean
// curve per time unit from damped to driven to beats).
func TestOscillator(t *testing.T) {
	ds := Oscillator(600, 3)
	if ds.C != 3 || ds.D != 1 || ds.TargetDim != 3 || !ds.TargetPerToken || len(ds.Classes) != 3 {
		t.Fatalf("shape: C %d D %d target %d/%v classes %v", ds.C, ds.D, ds.TargetDim, ds.TargetPerToken, ds.Classes)
	}
	var noise []float64
	counts := make([]int, 3)
	crossings, span := make([]float64, 3), make([]float64, 3)
	for _, s := range ds.Samples {
		n := len(s.Positions)
		if n < OscillatorMinObs || n > OscillatorMaxObs {
			t.Fatalf("%s: %d observations", s.ID, n)
		}
		if !slices.IsSorted(s.Positions) || s.Positions[0] < 0 || s.Positions[n-1] > OscillatorT {
			t.Fatalf("%s: times not sorted in [0, %v]", s.ID, OscillatorT)
		}
		if !strings.HasSuffix(s.ID, " "+ds.Classes[s.Label]) {
			t.Fatalf("%s: label %d", s.ID, s.Label)
		}
		counts[s.Label]++
		for i, v := range s.Values {
			noise = append(noise, float64(v-s.Target[i]))
		}
		for c := 0; c < 3; c++ {
			for j := 1; j < n; j++ {
				if (s.Target[(j-1)*3+c] < 0) != (s.Target[j*3+c] < 0) {
					crossings[s.Label]++
				}
			}
		}
		span[s.Label] += 3 * float64(s.Positions[n-1]-s.Positions[0])
	}
	m, sd := meanStd(noise)
	if math.Abs(m) > 0.005 || math.Abs(sd-OscillatorNoise) > 0.005 {
		t.Errorf("noise mean %.4f std %.4f, want 0 and %v", m, sd, OscillatorNoise)
	}
	rate := make([]float64, 3)
	for k := range rate {
		if counts[k] < 150 {
			t.Errorf("class %s: %d of 600 samples", ds.Classes[k], counts[k])
		}
		rate[k] = crossings[k] / span[k]
	}
	t.Logf("sign changes per time unit by class: %.3f", rate)
	if !(rate[0] < rate[1] && rate[1] < rate[2]) {
		t.Errorf("sign changes per time unit %v, want increasing from damped to beats", rate)
	}
}
