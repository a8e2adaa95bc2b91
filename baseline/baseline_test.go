package baseline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"romae/data"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func TestInterpolators(t *testing.T) {
	line := func(ts ...float32) []float32 { // y = 2t + 1
		v := make([]float32, len(ts))
		for i, x := range ts {
			v[i] = 2*x + 1
		}
		return v
	}
	for _, tc := range []struct {
		name       string
		f          Interpolator
		vals, pos  []float32
		c, d       int
		qPos, want []float32
		tol        float64
	}{
		{"linear line exact, ends held", Linear, line(0, 1, 3), []float32{0, 1, 3}, 1, 1,
			[]float32{0.5, 2, 3, -1, 5}, []float32{2, 5, 7, 1, 7}, 0},
		{"linear unsorted input", Linear, []float32{7, 1, 3}, []float32{3, 0, 1}, 1, 1,
			[]float32{2}, []float32{5}, 0},
		{"linear duplicate times averaged", Linear, []float32{0, 2, 4}, []float32{0, 0, 1}, 1, 1,
			[]float32{0, 0.5}, []float32{1, 2.5}, 0},
		{"linear two slots separately", Linear, []float32{0, 10, 2, 30}, []float32{0, 2}, 2, 1,
			[]float32{1}, []float32{1, 20}, 0},
		// channel-axis as LoadTS writes it: (time, channel)
		{"linear per channel, time axis 0", Linear,
			[]float32{0, 100, 4, 200}, []float32{0, 0, 0, 1, 4, 0, 4, 1}, 1, 2,
			[]float32{1, 0, 1, 1, 9, 1}, []float32{1, 125, 200}, 0},
		{"missing channel takes series mean", Linear,
			[]float32{0, 100, 4, 200}, []float32{0, 0, 0, 1, 4, 0, 4, 1}, 1, 2,
			[]float32{1, 7}, []float32{76}, 0},
		// CSV channel-axis layout: (channel, time)
		{"LinearOn last axis", LinearOn(1),
			[]float32{0, 100, 4, 200}, []float32{0, 0, 1, 0, 0, 4, 1, 4}, 1, 2,
			[]float32{0, 1, 1, 1}, []float32{1, 125}, 0},
		{"nothing observed gives 0", Linear, nil, nil, 2, 1,
			[]float32{3}, []float32{0, 0}, 0},
		{"spline of a line is exact", Spline, line(0, 1, 3, 4), []float32{0, 1, 3, 4}, 1, 1,
			[]float32{0.5, 2, 3.5, -2, 9}, []float32{2, 5, 8, 1, 9}, 1e-6},
		// (0,0),(1,1),(2,0): M1 = -3, S(0.5) = 0.5 + (0.125-0.5)(-3)/6
		{"spline natural by hand", Spline, []float32{0, 1, 0}, []float32{0, 1, 2}, 1, 1,
			[]float32{0.5, 1.5, 1}, []float32{0.6875, 0.6875, 1}, 1e-6},
		{"spline two points is linear", Spline, []float32{0, 4}, []float32{0, 2}, 1, 1,
			[]float32{0.5}, []float32{1}, 1e-6},
		{"spline one point is constant", Spline, []float32{3}, []float32{5}, 1, 1,
			[]float32{0, 9}, []float32{3, 3}, 0},
		{"spline per channel", SplineOn(0), []float32{0, 5, 1, 5, 0, 5}, []float32{0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1}, 1, 2,
			[]float32{0.5, 0, 0.5, 1}, []float32{0.6875, 5}, 1e-6},
		{"channel mean", ChannelMean, []float32{0, 100, 4, 200, 8}, []float32{0, 0, 0, 1, 4, 0, 4, 1, 4, 0}, 1, 2,
			[]float32{1, 0, 9, 1, 2, 3}, []float32{4, 150, 62.4}, 1e-6},
		{"channel mean counts duplicate tokens", ChannelMean, []float32{0, 0, 6}, []float32{1, 1, 2}, 1, 1,
			[]float32{0}, []float32{2}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.f(tc.vals, tc.pos, tc.c, tc.d, tc.qPos)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d values, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !near(float64(got[i]), float64(tc.want[i]), tc.tol) {
					t.Errorf("value %d = %v, want %v (all %v)", i, got[i], tc.want[i], got)
				}
			}
		})
	}
}

// A smooth curve sampled densely: the spline must be far closer than the
// straight lines, which is the point of offering it.
func TestSplineBeatsLinearOnSmoothCurve(t *testing.T) {
	var ts, vs, qs []float32
	for i := range 21 {
		x := float32(i) * 0.3
		ts = append(ts, x)
		vs = append(vs, float32(math.Sin(float64(x))))
		qs = append(qs, x+0.15)
	}
	qs = qs[:20]
	errOf := func(f Interpolator) float64 {
		worst := 0.0
		for i, v := range f(vs, ts, 1, 1, qs) {
			worst = max(worst, math.Abs(float64(v)-math.Sin(float64(qs[i]))))
		}
		return worst
	}
	lin, spl := errOf(Linear), errOf(Spline)
	if spl > 2e-3 || spl > lin/5 {
		t.Errorf("spline max error %.2g, linear %.2g", spl, lin)
	}
}

func TestInterpolationMSE(t *testing.T) {
	obs := &data.Dataset{C: 1, D: 1, Samples: []data.Sample{
		{Values: []float32{0, 2}, Positions: []float32{0, 2}, Label: -1},
		{Values: []float32{5}, Positions: []float32{0}, Label: -1},
	}}
	hid := &data.Dataset{C: 1, D: 1, Samples: []data.Sample{
		{Values: []float32{1, 3}, Positions: []float32{1, 3}, Label: -1}, // linear: 1, 2 → errors 0, 1
		{Values: []float32{7}, Positions: []float32{4}, Label: -1},       // 5 → error 2
	}}
	for _, tc := range []struct {
		name string
		f    Interpolator
		want float64
	}{
		{"linear", Linear, (0 + 1 + 4) / 3.0},
		{"mean", ChannelMean, (0 + 4 + 4) / 3.0}, // means 1, 5
	} {
		got, err := InterpolationMSE(tc.f, obs, hid)
		if err != nil || !near(got, tc.want, 1e-12) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := InterpolationMSE(Linear, obs, &data.Dataset{C: 1, D: 1}); err == nil {
		t.Error("mismatched sample counts accepted")
	}
}

func TestTrainingMean(t *testing.T) {
	train := &data.Dataset{C: 1, D: 1, TargetDim: 2, Samples: []data.Sample{
		{Target: []float32{1, 10}}, {Target: []float32{3, 30}},
	}}
	test := &data.Dataset{C: 1, D: 1, TargetDim: 2, Samples: []data.Sample{{Target: []float32{4, 20}}}}
	got, err := TrainingMean(train, test) // means 2, 20: errors 2, 0
	if err != nil || got != 2 {
		t.Errorf("per sample: %v, %v; want 2", got, err)
	}
	train.TargetPerToken, test.TargetPerToken = true, true
	train.TargetDim, test.TargetDim = 1, 1 // tokens 1, 10, 3, 30: mean 11
	got, err = TrainingMean(train, test)   // errors 7, 9
	if err != nil || got != (49+81)/2.0 {
		t.Errorf("per token: %v, %v; want %v", got, err, (49+81)/2.0)
	}
	if _, err := TrainingMean(&data.Dataset{}, test); err == nil {
		t.Error("dataset without targets accepted")
	}
}

// univariate builds an equal-step univariate dataset.
func univariate(labels []int, series ...[]float32) *data.Dataset {
	ds := &data.Dataset{C: 1, D: 1, Classes: []string{"a", "b", "c"}}
	for i, s := range series {
		pos := make([]float32, len(s))
		for j := range pos {
			pos[j] = float32(j)
		}
		ds.Samples = append(ds.Samples, data.Sample{Values: s, Positions: pos, Label: labels[i]})
	}
	return ds
}

func TestMajority(t *testing.T) {
	train := univariate([]int{1, 0, 1, 2, -1, -1, -1}, []float32{0}, []float32{0}, []float32{0}, []float32{0}, []float32{0}, []float32{0}, []float32{0})
	test := univariate([]int{1, 1, 0, 2}, []float32{0}, []float32{0}, []float32{0}, []float32{0})
	r, err := Majority(train, test)
	if err != nil || r.Accuracy != 0.5 || r.Correct != 2 || r.N != 4 || !slices.Equal(r.Predictions, []int{1, 1, 1, 1}) {
		t.Errorf("Majority = %+v, %v", r, err)
	}
	tie := univariate([]int{2, 0}, []float32{0}, []float32{0})
	if r, _ := Majority(tie, test); r.Predictions[0] != 0 {
		t.Errorf("tie went to class %d, want the lowest index 0", r.Predictions[0])
	}
	test.Samples[0].Label = -1
	if _, err := Majority(train, test); err == nil {
		t.Error("unlabelled test sample accepted")
	}
	if _, err := NearestNeighbor(train, test, ED()); err == nil {
		t.Error("unlabelled test sample accepted by NearestNeighbor")
	}
}

func TestNearestNeighborToy(t *testing.T) {
	up := []float32{0, 1, 2, 3, 4, 5}
	down := []float32{5, 4, 3, 2, 1, 0}
	bump := []float32{0, 0, 5, 5, 0, 0}
	train := univariate([]int{0, 1, 2}, up, down, bump)
	test := univariate([]int{0, 1, 2, 2},
		[]float32{0, 1, 2, 3, 4, 6},
		[]float32{6, 4, 3, 2, 1, 0},
		[]float32{0, 0, 4, 5, 0, 0},
		[]float32{0, 0, 5, 4, 0, 0},
	)
	for _, d := range []Distance{ED(), DTW(1), DTW(0.2)} {
		r, err := NearestNeighbor(train, test, d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Accuracy != 1 || !slices.Equal(r.Neighbors, []int{0, 1, 2, 2}) {
			t.Errorf("%s: %+v", d.Name(), r)
		}
	}
}

// The textbook case for warping: a shifted copy is at DTW distance 0 and at
// a positive ED, so a 1-NN ED picks the wrong neighbour and DTW the right one.
func TestDTWShiftIsFree(t *testing.T) {
	a := []float64{0, 0, 1, 3, 1, 0, 0, 0}
	b := []float64{0, 0, 0, 0, 1, 3, 1, 0} // a shifted by two
	flat := []float64{0, 0, 0, 0, 0, 0, 0, 0}
	buf := make([]float64, 2*(len(b)+2))
	if d := dtwSq(a, b, len(a), len(b), 1, -1, math.Inf(1), buf); d != 0 {
		t.Errorf("DTW(a, shifted a) = %v, want 0", d)
	}
	if d := sqSum(a, b, 1, len(a), math.Inf(1)); d != 20 {
		t.Errorf("ED²(a, shifted a) = %v, want 20", d)
	}
	f32 := func(x []float64) []float32 {
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(v)
		}
		return out
	}
	train := univariate([]int{0, 1}, f32(flat), f32(b))
	test := univariate([]int{1}, f32(a))
	ed, _ := NearestNeighbor(train, test, ED())
	dtw, _ := NearestNeighbor(train, test, DTW(1))
	if ed.Neighbors[0] != 0 || dtw.Neighbors[0] != 1 {
		t.Errorf("neighbours ED %v DTW %v, want [0] and [1]", ed.Neighbors, dtw.Neighbors)
	}
	// A window of one cell cannot absorb a shift of two.
	if d := dtwSq(a, b, len(a), len(b), 1, 1, math.Inf(1), buf); d == 0 {
		t.Error("DTW with a 1-cell window absorbed a 2-step shift")
	}
}

// refDTW is the textbook full-matrix DTW with |i-j| <= w (w < 0: none).
func refDTW(a, b []float64, la, lb, m, w int) float64 {
	D := make([][]float64, la+1)
	for i := range D {
		D[i] = make([]float64, lb+1)
		for j := range D[i] {
			D[i][j] = math.Inf(1)
		}
	}
	D[0][0] = 0
	for i := 1; i <= la; i++ {
		for j := 1; j <= lb; j++ {
			if w >= 0 && abs(i-j) > w {
				continue
			}
			c := 0.0
			for k := range m {
				d := a[(i-1)*m+k] - b[(j-1)*m+k]
				c += float64(d * d) // unfused, as cost: arm64 would fuse it into an FMA, an ulp off dtwSq
			}
			D[i][j] = c + min(D[i-1][j-1], D[i-1][j], D[i][j-1])
		}
	}
	return D[la][lb]
}

func randSeries(rng *rand.Rand, n, m int) []float64 {
	x := make([]float64, n*m)
	v := 0.0
	for i := range x {
		v += rng.NormFloat64()
		x[i] = v
	}
	return x
}

func TestDTWMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		la, lb := 1+rng.IntN(30), 1+rng.IntN(30)
		if trial%3 == 0 {
			lb = la
		}
		m := 1 + rng.IntN(3)
		window := []float64{1, 0, 0.1, 0.3, rng.Float64()}[trial%5]
		a, b := randSeries(rng, la, m), randSeries(rng, lb, m)
		w := bandWidth(window, la, lb)
		want := refDTW(a, b, la, lb, m, w)
		if math.IsInf(want, 0) {
			t.Fatalf("reference DTW infinite for la=%d lb=%d w=%d: the band must reach the end", la, lb, w)
		}
		buf := make([]float64, 2*(lb+2))
		for i := range buf {
			buf[i] = rng.Float64() // stale garbage must never be read
		}
		for _, ub := range []float64{math.Inf(1), want, want * 1.5, want*2 + 1} {
			if got := dtwSq(a, b, la, lb, m, w, ub, buf); !near(got, want, 1e-12) {
				t.Fatalf("trial %d (la=%d lb=%d m=%d w=%d) ub=%v: dtwSq = %v, reference %v", trial, la, lb, m, w, ub, got, want)
			}
		}
		if want > 0 {
			if got := dtwSq(a, b, la, lb, m, w, want*(1-1e-9), buf); !math.IsInf(got, 1) {
				t.Fatalf("trial %d: ub just below the distance gave %v, want +Inf (abandoned)", trial, got)
			}
		}
		if lb := lbKim(a, b, la, lb, m); lb > want*(1+1e-12) {
			t.Fatalf("trial %d: LB_Kim %v > DTW %v", trial, lb, want)
		}
		if la == lb && w >= 0 {
			up, lo := make([]float64, lb*m), make([]float64, lb*m)
			envelope(up, lo, b, lb, m, w, make([]int, lb))
			for i := range lb {
				for k := range m {
					hi, low := math.Inf(-1), math.Inf(1)
					for j := max(0, i-w); j <= min(lb-1, i+w); j++ {
						hi, low = max(hi, b[j*m+k]), min(low, b[j*m+k])
					}
					if up[i*m+k] != hi || lo[i*m+k] != low {
						t.Fatalf("trial %d: envelope[%d,%d] = %v..%v, want %v..%v", trial, i, k, lo[i*m+k], up[i*m+k], low, hi)
					}
				}
			}
			if k := lbKeogh(a, up, lo, math.Inf(1)); k > want*(1+1e-12) {
				t.Fatalf("trial %d: LB_Keogh %v > DTW %v", trial, k, want)
			}
			if ed := sqSum(a, b, m, la, math.Inf(1)); ed < want {
				t.Fatalf("trial %d: ED² %v < DTW %v: the diagonal is a warping path", trial, ed, want)
			}
		}
	}
}

// randomDataset draws random-walk series of lengths in [minLen, maxLen]
// whose class shifts their drift, with positions on a dropped-step grid
// when irregular.
func randomDataset(rng *rand.Rand, n, minLen, maxLen, c int, irregular bool) *data.Dataset {
	ds := &data.Dataset{C: c, D: 1, Classes: []string{"x", "y", "z"}}
	for range n {
		l := minLen + rng.IntN(maxLen-minLen+1)
		label := rng.IntN(3)
		s := data.Sample{Label: label}
		t := 0
		v := make([]float32, c)
		for len(s.Positions) < l {
			if irregular {
				t += 1 + rng.IntN(2)
			} else {
				t++
			}
			s.Positions = append(s.Positions, float32(t))
			for k := range v {
				v[k] += float32(rng.NormFloat64() + 0.3*float64(label-1))
				s.Values = append(s.Values, v[k])
			}
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

// Lower bounds, the ED upper bound, abandoning, pruning and the candidate
// order must not change a single neighbour: compare with the plain scan.
func TestNearestNeighborMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name           string
		minLen, maxLen int
		c              int
		irregular      bool
	}{
		{"equal length", 40, 40, 1, false},
		{"equal length multivariate", 25, 25, 3, false},
		{"unequal length", 15, 45, 1, false},
		{"irregular unequal multivariate", 10, 30, 2, true},
	} {
		train := randomDataset(rng, 60, tc.minLen, tc.maxLen, tc.c, tc.irregular)
		test := randomDataset(rng, 40, tc.minLen, tc.maxLen, tc.c, tc.irregular)
		// Exact duplicates of training series make ties that the search
		// must break towards the lower index, as the plain scan does.
		test.Samples[0].Values = train.Samples[5].Values
		test.Samples[0].Positions = train.Samples[5].Positions
		train.Samples[9] = train.Samples[5]
		for _, d := range []Distance{ED(), {UniformScaling: true}, DTW(1), DTW(0), DTW(0.1), DTW(0.5)} {
			fallbacks.Store(0)
			fast, err := NearestNeighbor(train, test, d)
			if err != nil {
				t.Fatal(err)
			}
			d.exhaustive = true
			slow, err := NearestNeighbor(train, test, d)
			if err != nil {
				t.Fatal(err)
			}
			if n := fallbacks.Load(); n != 0 {
				t.Fatalf("%s, %s: the DTW search fell back to a full scan %d times", tc.name, d.Name(), n)
			}
			if !slices.Equal(fast.Neighbors, slow.Neighbors) {
				t.Errorf("%s, %s: neighbours %v, exhaustive scan %v", tc.name, d.Name(), fast.Neighbors, slow.Neighbors)
			}
			if fast.Neighbors[0] != 5 {
				t.Errorf("%s, %s: duplicate of training sample 5 matched %d", tc.name, d.Name(), fast.Neighbors[0])
			}
		}
	}
}

// The same data as one token per step (D = 1, C = 3) and as one token per
// observed value with the channel as a second position axis must give the
// same neighbours, with time on either axis.
func TestChannelAxisLayoutMatchesDropStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	toAxis := func(ds *data.Dataset, timeAxis int) *data.Dataset {
		out := &data.Dataset{C: 1, D: 2, Classes: ds.Classes}
		for _, s := range ds.Samples {
			ns := data.Sample{Label: s.Label}
			for i, t := range s.Positions {
				for k := range ds.C {
					ns.Values = append(ns.Values, s.Values[i*ds.C+k])
					if timeAxis == 0 {
						ns.Positions = append(ns.Positions, t, float32(k))
					} else {
						ns.Positions = append(ns.Positions, float32(k), t)
					}
				}
			}
			out.Samples = append(out.Samples, ns)
		}
		return out
	}
	train := randomDataset(rng, 30, 10, 30, 3, true)
	test := randomDataset(rng, 20, 10, 30, 3, true)
	for _, d := range []Distance{ED(), DTW(1), DTW(0.1)} {
		want, err := NearestNeighbor(train, test, d)
		if err != nil {
			t.Fatal(err)
		}
		for timeAxis := range 2 {
			d.TimeAxis = timeAxis
			got, err := NearestNeighbor(toAxis(train, timeAxis), toAxis(test, timeAxis), d)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Neighbors, want.Neighbors) {
				t.Errorf("%s, time axis %d: channel-axis neighbours %v, drop-step %v", d.Name(), timeAxis, got.Neighbors, want.Neighbors)
			}
		}
		d.TimeAxis = 0
	}
}

// ED between series on different grids: resampled in absolute time by
// default, each stretched over its own span with UniformScaling.
func TestEDResampling(t *testing.T) {
	// b is a sampled at twice the rate over the same span: same curve.
	a := &series{t: []float64{0, 2, 4}, x: []float64{0, 2, 4}, n: 3}
	b := &series{t: []float64{0, 1, 2, 3, 4}, x: []float64{0, 1, 2, 3, 4}, n: 5}
	// c is the same ramp played twice as fast (half the span).
	c := &series{t: []float64{0, 1, 2}, x: []float64{0, 2, 4}, n: 3}
	w := (&search{m: 1}).newWorker()
	if d := w.ed(a, b, math.Inf(1)); d != 0 {
		t.Errorf("ED(ramp, denser ramp) = %v, want 0", d)
	}
	// absolute grid 0..4 in 3 points: a = 0, 2, 4; c held at 4 = 0, 4, 4.
	if d := w.ed(a, c, math.Inf(1)); !near(d, 4.0/3, 1e-12) {
		t.Errorf("ED(ramp, fast ramp) = %v, want 4/3", d)
	}
	w.s.dist.UniformScaling = true
	if d := w.ed(a, c, math.Inf(1)); d != 0 {
		t.Errorf("uniform-scaling ED(ramp, fast ramp) = %v, want 0", d)
	}
}

// Equal distances go to the lower training index even when the search
// visits the higher one first (candidate 1 has the smaller LB_Kim).
func TestTieGoesToLowerIndex(t *testing.T) {
	train := univariate([]int{0, 1}, []float32{1, 0, 0}, []float32{0, 1, 0})
	test := univariate([]int{0}, []float32{0, 0, 0})
	for _, d := range []Distance{ED(), DTW(1), DTW(0)} {
		fallbacks.Store(0)
		r, err := NearestNeighbor(train, test, d)
		if err != nil || r.Neighbors[0] != 0 || fallbacks.Load() != 0 {
			t.Errorf("%s: neighbour %v, %v (fallbacks %d), want 0", d.Name(), r.Neighbors, err, fallbacks.Load())
		}
	}
}

func TestClassNamesMatchedAcrossFiles(t *testing.T) {
	train := univariate([]int{0, 1}, []float32{0, 0}, []float32{5, 5})
	test := univariate([]int{0}, []float32{5, 4})
	test.Classes = []string{"b", "a"} // test's class 0 is train's class 1
	r, err := NearestNeighbor(train, test, ED())
	if err != nil || r.Accuracy != 1 {
		t.Errorf("%+v, %v", r, err)
	}
}

func TestClassificationTable(t *testing.T) {
	train := univariate([]int{0, 0, 1}, []float32{0, 1, 2}, []float32{0, 1, 3}, []float32{3, 2, 1})
	test := univariate([]int{1, 1}, []float32{3, 2, 0}, []float32{4, 2, 1})
	rows, err := ClassificationTable(train, test, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var accs []float64
	for _, r := range rows {
		names = append(names, r.Name)
		accs = append(accs, r.Accuracy)
	}
	if !slices.Equal(names, []string{"majority", "1-NN ED", "1-NN DTW (full window)"}) || !slices.Equal(accs, []float64{0, 1, 1}) {
		t.Errorf("rows %v", rows)
	}
	if _, err := ClassificationTable(train, test, 1); err == nil {
		t.Error("time axis 1 with D = 1 accepted")
	}
}

// The 1-NN regressor picks the classifier's neighbours (the same search,
// unlabelled series as candidates) and scores their targets; the table has
// the training mean beside it, and bad inputs are errors.
func TestNearestNeighborRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	train := randomDataset(rng, 50, 10, 30, 2, true)
	test := randomDataset(rng, 30, 10, 30, 2, true)
	withTargets := func(ds *data.Dataset) *data.Dataset {
		out := *ds
		out.Classes, out.TargetDim = nil, 2
		out.Samples = slices.Clone(ds.Samples)
		for i := range out.Samples {
			out.Samples[i].Label = -1
			out.Samples[i].Target = []float32{float32(rng.NormFloat64()), float32(ds.Samples[i].Label)}
		}
		return &out
	}
	rtrain, rtest := withTargets(train), withTargets(test)
	for _, d := range []Distance{ED(), DTW(1)} {
		cls, err := NearestNeighbor(train, test, d)
		if err != nil {
			t.Fatal(err)
		}
		mse, nb, err := NearestNeighborRegression(rtrain, rtest, d)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(nb, cls.Neighbors) {
			t.Errorf("%s: neighbours %v, the classifier's %v", d.Name(), nb, cls.Neighbors)
		}
		want := 0.0
		for q, i := range nb {
			for k := range 2 {
				e := float64(rtest.Samples[q].Target[k]) - float64(rtrain.Samples[i].Target[k])
				want += e * e
			}
		}
		if want /= float64(2 * len(nb)); !near(mse, want, 1e-12) {
			t.Errorf("%s: MSE %v, want %v", d.Name(), mse, want)
		}
	}
	table, err := RegressionTable(rtrain, rtest, 0)
	if err != nil {
		t.Fatal(err)
	}
	mean, _ := TrainingMean(rtrain, rtest)
	if len(table) != 3 || table["training_mean_mse"] != mean || table["1nn_ed_mse"] <= 0 || table["1nn_dtw_mse"] <= 0 {
		t.Errorf("RegressionTable = %v", table)
	}

	perToken := *rtrain
	perToken.TargetPerToken = true
	noTarget := *rtest
	noTarget.Samples = slices.Clone(rtest.Samples)
	noTarget.Samples[3].Target = nil
	for name, tc := range map[string][2]*data.Dataset{
		"no targets":         {train, test},
		"per-token":          {&perToken, rtest},
		"a test target gone": {rtrain, &noTarget},
		"empty test set":     {rtrain, {C: 2, D: 1, TargetDim: 2}},
	} {
		if _, _, err := NearestNeighborRegression(tc[0], tc[1], ED()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Past MaxFullDTW both tables leave full-window DTW out (it would run for
// hours) and keep the rest: two training series and one test series of a
// million steps are 2·10¹² cells (6·10¹² in FullDTWCost's units), while ED
// on them takes milliseconds.
func TestTablesLeaveOutDTWPastBound(t *testing.T) {
	long := func(phase float32) []float32 {
		s := make([]float32, 1_000_000)
		for i := range s {
			s[i] = float32(math.Sin(float64(i)/1000 + float64(phase)))
		}
		return s
	}
	train := univariate([]int{0, 1}, long(0), long(2))
	test := univariate([]int{1}, long(2.1))
	if c := FullDTWCost(train, test); c != 6e12 {
		t.Fatalf("FullDTWCost = %g, want 6e12", c)
	}
	rows, err := ClassificationTable(train, test, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"majority", "1-NN ED"}) || rows[1].Accuracy != 1 {
		t.Errorf("classification rows %v, want majority and a correct 1-NN ED only", rows)
	}
	for _, ds := range []*data.Dataset{train, test} {
		ds.Classes, ds.TargetDim = nil, 1
		for i := range ds.Samples {
			ds.Samples[i].Target = []float32{float32(i)}
			ds.Samples[i].Label = -1
		}
	}
	reg, err := RegressionTable(train, test, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg["1nn_dtw_mse"]; ok || len(reg) != 2 || reg["1nn_ed_mse"] != 1 {
		t.Errorf("regression table %v, want the training mean and 1-NN ED (MSE 1: the nearest is target 1, the test's is 0) only", reg)
	}
}
