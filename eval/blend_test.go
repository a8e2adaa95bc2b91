package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"romae/baseline"
	"romae/data"
	"romae/datasets"
	"romae/model"
)

// best must find the least squared error over the weight triangle: checked
// against a fine grid on random sums and on the three pure cases.
func TestMixSumsBest(t *testing.T) {
	pure := []struct {
		name string
		m, s float64 // the model's and spline's offsets from linear when the truth is...
		a, b float64 // ...the weights that reproduce it exactly
	}{
		{"model is the truth", 1, 0, 1, 0},
		{"spline is the truth", 0, 1, 0, 1},
		{"linear is the truth", 0, 0, 0, 0},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range pure {
		var g SlotSums
		for range 50 {
			dm, ds := rng.NormFloat64(), rng.NormFloat64()
			g.add(dm, ds, tc.m*dm+tc.s*ds)
		}
		if a, b := g.best(); math.Abs(a-tc.a) > 1e-9 || math.Abs(b-tc.b) > 1e-9 {
			t.Errorf("%s: weights %v, %v, want %v, %v", tc.name, a, b, tc.a, tc.b)
		}
	}
	for trial := range 200 {
		var g SlotSums
		cm, cs := rng.NormFloat64(), rng.NormFloat64()
		for range 5 + trial%20 {
			dm, ds := rng.NormFloat64(), cm*rng.NormFloat64()
			g.add(dm, ds, cm*dm+cs*ds+rng.NormFloat64())
		}
		a, b := g.best()
		if a < 0 || b < 0 || a+b > 1+1e-12 {
			t.Fatalf("trial %d: weights %v, %v outside the triangle", trial, a, b)
		}
		grid := math.Inf(1)
		for i := 0; i <= 200; i++ {
			for j := 0; i+j <= 200; j++ {
				grid = min(grid, g.sse(float64(i)/200, float64(j)/200))
			}
		}
		if got := g.sse(a, b); got > grid+1e-9*math.Abs(grid) {
			t.Fatalf("trial %d: best's squared error %v above the grid's %v", trial, got, grid)
		}
	}
}

// smoothSeries are sines sampled at irregular times, 2 values per token:
// data on which an untrained model is far worse than linear interpolation.
func smoothSeries(n, length int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	ds := &data.Dataset{Name: "sines", C: 2, D: 1}
	for i := range n {
		s := data.Sample{ID: string(rune('a'+i%26)) + string(rune('a'+i/26)), Label: -1}
		f, ph := 0.2+0.3*rng.Float64(), 6*rng.Float64()
		tm := 0.0
		for range length {
			tm += 0.5 + rng.Float64()
			s.Positions = append(s.Positions, float32(tm))
			s.Values = append(s.Values, float32(math.Sin(f*tm+ph)), float32(2*math.Cos(0.5*f*tm+ph)))
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

func tinyPretrainModel(t *testing.T) *model.Model[float32] {
	t.Helper()
	return tinyPretrainModelFor(t, 2, 1)
}

// tinyPretrainModelFor is an untrained tiny pre-training model for tokens
// of values values and posDims position axes.
func tinyPretrainModelFor(t *testing.T, values, posDims int) *model.Model[float32] {
	t.Helper()
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Decoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Values, c.PosDims, c.Task = values, posDims, model.TaskPretrain
	m, err := model.New[float32](c, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// FitBlend's weights stay in the triangle, are reproducible, give the
// untrained model (worse than the line) little weight, and its reported
// MSEs are the ones of the mixes it names.
func TestFitBlend(t *testing.T) {
	m := tinyPretrainModel(t)
	ds := smoothSeries(40, 30, 1)
	stats := &data.Stats{Mean: []float64{0, 1}, Std: []float64{2, 0.5}}
	b, err := FitBlend(m, ds, stats, BlendOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	again, err := FitBlend(m, ds, stats, BlendOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if b.Model[k] != again.Model[k] || b.Spline[k] != again.Spline[k] {
			t.Errorf("slot %d: weights %v, %v, then %v, %v from the same seed", k, b.Model[k], b.Spline[k], again.Model[k], again.Spline[k])
		}
		if wm, ws := b.Model[k], b.Spline[k]; wm < 0 || ws < 0 || wm+ws > 1+1e-12 {
			t.Errorf("slot %d: weights %v, %v outside the triangle", k, wm, ws)
		}
		if b.Model[k] > 0.2 {
			t.Errorf("slot %d: an untrained model got weight %v on smooth sines", k, b.Model[k])
		}
	}
	if b.Series != 40 || b.Tokens != 6*40*3 || b.Draws != 6 || b.Holdout != 0.1 || b.Hide != HideIsolated {
		t.Errorf("fitted on %d series, %d tokens, %d draws, holdout %v, hide %q; want 40, 720, 6, 0.1, %q", b.Series, b.Tokens, b.Draws, b.Holdout, b.Hide, HideIsolated)
	}
	// The gate bins split each slot's hidden values between them.
	if !slices.Equal(b.Edges, GateEdges) {
		t.Errorf("edges %v, want GateEdges %v", b.Edges, GateEdges)
	}
	for k := range 2 {
		var sum SlotSums
		for i := range b.BinSums[k] {
			sum.addSums(&b.BinSums[k][i])
		}
		if sum.N != b.Sums[k].N || math.Abs(sum.EE-b.Sums[k].EE) > 1e-9*b.Sums[k].EE || math.Abs(sum.ME-b.Sums[k].ME) > 1e-9*math.Abs(b.Sums[k].ME) {
			t.Errorf("slot %d: bins sum to %+v, the slot's sums are %+v", k, sum, b.Sums[k])
		}
	}
	if !(b.BlendMSE <= min(b.ModelMSE, b.LinearMSE, b.SplineMSE)) || !(b.ModelMSE > 2*b.LinearMSE) {
		t.Errorf("MSE blend %v, model %v, linear %v, spline %v: want the blend best and the untrained model far behind",
			b.BlendMSE, b.ModelMSE, b.LinearMSE, b.SplineMSE)
	}
	// The reported linear MSE is what baseline.InterpolationMSE measures on
	// the same splits of the data in its own units.
	units := *ds
	units.Samples = nil
	for _, s := range ds.Samples {
		s.Values = slices.Clone(s.Values)
		if err := stats.Invert(s.Values, s.Positions, ds.D); err != nil {
			t.Fatal(err)
		}
		units.Samples = append(units.Samples, s)
	}
	var linear float64
	for draw := range 6 {
		obs, hid := datasets.ObserveIsolated(&units, 0.1, 0, 5+uint64(draw))
		mse, err := baseline.InterpolationMSE(baseline.LinearOn(0), obs, hid)
		if err != nil {
			t.Fatal(err)
		}
		linear += mse / 6
	}
	if math.Abs(linear-b.LinearMSE) > 1e-6*linear {
		t.Errorf("reported linear MSE %v, baseline.InterpolationMSE on the same splits %v", b.LinearMSE, linear)
	}
}

// On the long CSV layout (positions channel, time; one value per token)
// the fit hides tokens per channel along the time axis: channels of 2
// tokens are never hidden, and its linear MSE is baseline's on the same
// splits with time on axis 1, in data units: values scaled per channel
// are mapped back with their own channel's constants.
func TestFitBlendLongLayout(t *testing.T) {
	m := tinyPretrainModelFor(t, 1, 2)
	rng := rand.New(rand.NewPCG(4, 4))
	ds := &data.Dataset{C: 1, D: 2, TimeAxis: 1}
	for i := range 20 {
		s := data.Sample{ID: fmt.Sprint(i), Label: -1}
		for ch, n := range []int{12, 2, 8} {
			tm := 0.0
			for range n {
				tm += 0.5 + rng.Float64()
				s.Positions = append(s.Positions, float32(ch), float32(tm))
				s.Values = append(s.Values, float32(math.Sin(tm+float64(ch))))
			}
		}
		ds.Samples = append(ds.Samples, s)
	}
	for _, tc := range []struct {
		name  string
		stats *data.Stats
	}{
		{"unscaled", nil},
		{"per channel", &data.Stats{Mean: []float64{0}, Std: []float64{1}, ChannelAxis: 0, ChannelMean: []float64{5, -1, 0.5}, ChannelStd: []float64{10, 0.5, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := FitBlend(m, ds, tc.stats, BlendOptions{Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			// 10% of 22 tokens: 2 a series and draw, from the channels of 12 and 8.
			if b.Tokens != 6*20*2 {
				t.Errorf("fitted on %d tokens, want %d", b.Tokens, 6*20*2)
			}
			units := *ds
			units.Samples = nil
			for _, s := range ds.Samples {
				s.Values = slices.Clone(s.Values)
				if tc.stats != nil {
					if err := tc.stats.Invert(s.Values, s.Positions, ds.D); err != nil {
						t.Fatal(err)
					}
				}
				units.Samples = append(units.Samples, s)
			}
			var linear float64
			for draw := range 6 {
				obs, hid := datasets.ObserveIsolated(&units, 0.1, 1, 2+uint64(draw))
				for _, h := range hid.Samples {
					for j := 0; j < len(h.Positions); j += 2 {
						if h.Positions[j] == 1 {
							t.Fatalf("draw %d: a token of the 2-token channel hidden", draw)
						}
					}
				}
				mse, err := baseline.InterpolationMSE(baseline.LinearOn(1), obs, hid)
				if err != nil {
					t.Fatal(err)
				}
				linear += mse / 6
			}
			if math.Abs(linear-b.LinearMSE) > 1e-6*linear {
				t.Errorf("reported linear MSE %v, baseline.InterpolationMSE on the same splits %v", b.LinearMSE, linear)
			}
		})
	}
}

// A fit with a Prior is the fit on both sets of series at once: the
// sums add, and the weights are those of the pooled sums. Excluded series
// (by fingerprint) take no part.
func TestFitBlendPooled(t *testing.T) {
	m := tinyPretrainModel(t)
	stats := &data.Stats{Mean: []float64{0, 1}, Std: []float64{2, 0.5}}
	val, more := smoothSeries(12, 30, 1), smoothSeries(30, 30, 2)
	prior, err := FitBlend(m, val, stats, BlendOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := FitBlend(m, more, stats, BlendOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// more with val's series and its own first 10 in it, all excluded:
	// only the other 20 are fitted on, as with smoothSeries 2's last 20.
	mixed := *more
	mixed.Samples = append(slices.Clone(val.Samples), more.Samples...)
	seen := Fingerprints(val, &data.Dataset{C: 2, D: 1, Samples: more.Samples[:10]})
	if len(seen) != 22 {
		t.Fatalf("%d fingerprints of 22 distinct series", len(seen))
	}
	rest := *more
	rest.Samples = more.Samples[10:]
	restAlone, err := FitBlend(m, &rest, stats, BlendOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pooled, err := FitBlend(m, &mixed, stats, BlendOptions{Seed: 1, Exclude: seen, Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if pooled.Series != 12+20 || pooled.Tokens != prior.Tokens+restAlone.Tokens {
		t.Errorf("pooled fit on %d series, %d tokens; want 32, %d", pooled.Series, pooled.Tokens, prior.Tokens+restAlone.Tokens)
	}
	want := &Blend{Sums: slices.Clone(restAlone.Sums)}
	for k := range want.Sums {
		want.Sums[k].addSums(&prior.Sums[k])
	}
	if err := want.solve(); err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if pooled.Sums[k] != want.Sums[k] || pooled.Model[k] != want.Model[k] || pooled.Spline[k] != want.Spline[k] {
			t.Errorf("slot %d: pooled %+v weights %v, %v; want %+v, %v, %v", k, pooled.Sums[k], pooled.Model[k], pooled.Spline[k], want.Sums[k], want.Model[k], want.Spline[k])
		}
		for i := range pooled.BinSums[k] {
			w := restAlone.BinSums[k][i]
			w.addSums(&prior.BinSums[k][i])
			if pooled.BinSums[k][i] != w {
				t.Errorf("slot %d, gate bin %d: pooled sums %+v, want %+v", k, i, pooled.BinSums[k][i], w)
			}
		}
	}
	if pooled.Model[0] == alone.Model[0] && pooled.Spline[0] == alone.Spline[0] {
		t.Errorf("pooling changed nothing: %v, %v", pooled.Model, pooled.Spline)
	}
	// Every series excluded: the prior's weights, or too few without one.
	all := Fingerprints(&mixed)
	if b, err := FitBlend(m, &mixed, stats, BlendOptions{Exclude: all, Prior: prior}); err != nil || b.Model[1] != prior.Model[1] || b.Spline[1] != prior.Spline[1] {
		t.Errorf("all excluded with a prior: %+v, %v; want the prior's weights %v, %v", b, err, prior.Model, prior.Spline)
	}
	if _, err := FitBlend(m, &mixed, stats, BlendOptions{Exclude: all}); !errors.Is(err, ErrBlendTooFew) {
		t.Errorf("all excluded, no prior: %v, want ErrBlendTooFew", err)
	}
	if _, err := FitBlend(m, &mixed, stats, BlendOptions{Prior: &Blend{Hide: HideIsolated, Sums: make([]SlotSums, 3), Edges: GateEdges, BinSums: make([][]SlotSums, 3)}}); err == nil {
		t.Error("a prior with 3 value slots accepted for 2")
	}
	// A prior whose tokens were hidden in runs (romae before HideIsolated)
	// is not pooled: the fit is the one without it.
	old := *prior
	old.Hide = ""
	if old.Poolable() || !prior.Poolable() {
		t.Errorf("poolable: %v without the hiding recorded, %v with it", old.Poolable(), prior.Poolable())
	}
	notPooled, err := FitBlend(m, &mixed, stats, BlendOptions{Seed: 1, Exclude: seen, Prior: &old})
	if err != nil {
		t.Fatal(err)
	}
	if notPooled.Series != restAlone.Series || notPooled.Sums[0] != restAlone.Sums[0] || notPooled.Model[0] != restAlone.Model[0] {
		t.Errorf("with an earlier romae's prior: %d series, sums %+v; want the fit alone's %d, %+v", notPooled.Series, notPooled.Sums[0], restAlone.Series, restAlone.Sums[0])
	}
}

// Fingerprints survive the metadata round trip; a damaged list is refused.
func TestFingerprintsMeta(t *testing.T) {
	ds := smoothSeries(9, 5, 3)
	fp := Fingerprints(ds, ds) // duplicates collapse
	if len(fp) != 9 || !slices.IsSorted(fp) {
		t.Fatalf("fingerprints %v: want 9 sorted", fp)
	}
	changed := *ds
	changed.Samples = slices.Clone(ds.Samples)
	changed.Samples[0].Values = slices.Clone(ds.Samples[0].Values)
	changed.Samples[0].Values[3] += 1e-6
	changed.Samples[1].Positions = slices.Clone(ds.Samples[1].Positions)
	changed.Samples[1].Positions[0] += 1e-6
	changed.Samples[2].ID, changed.Samples[2].Label = "renamed", 4
	for i, want := range []bool{false, false, true} {
		if _, found := slices.BinarySearch(fp, changed.Samples[i].Fingerprint()); found != want {
			t.Errorf("series %d after a change: found %v, want %v", i, found, want)
		}
	}
	got, ok, err := FingerprintsFromMeta(map[string]string{MetaPretrainSeries: EncodeFingerprints(fp)})
	if err != nil || !ok || !slices.Equal(got, fp) {
		t.Errorf("round trip: %v, %v, %v; want %v", got, ok, err, fp)
	}
	if got, ok, err := FingerprintsFromMeta(map[string]string{}); got != nil || ok || err != nil {
		t.Errorf("none recorded: %v, %v, %v", got, ok, err)
	}
	unsorted := EncodeFingerprints([]uint64{3, 1})
	for name, enc := range map[string]string{"not base64": "%%%", "7 bytes": "AAAAAAAAAA==", "unsorted": unsorted} {
		if _, ok, err := FingerprintsFromMeta(map[string]string{MetaPretrainSeries: enc}); err == nil || !ok {
			t.Errorf("%s: %v, %v; want an error", name, ok, err)
		}
	}
}

func TestFitBlendTooFew(t *testing.T) {
	m := tinyPretrainModel(t)
	if _, err := FitBlend(m, smoothSeries(5, 2, 1), nil, BlendOptions{}); !errors.Is(err, ErrBlendTooFew) {
		t.Errorf("series of 2 tokens: %v, want ErrBlendTooFew", err)
	}
	if _, err := FitBlend(m, smoothSeries(1, 5, 1), nil, BlendOptions{}); !errors.Is(err, ErrBlendTooFew) {
		t.Errorf("1 series of 5 tokens (12 hidden values): %v, want ErrBlendTooFew", err)
	}
	for _, h := range []float64{1.5, 0.4, -0.1} {
		if _, err := FitBlend(m, smoothSeries(5, 5, 1), nil, BlendOptions{Holdout: h}); err == nil {
			t.Errorf("holdout %v accepted", h)
		}
	}
}

// Mix with pure weights reproduces the model, linear or spline
// interpolation; any other mix lies between them value by value.
func TestBlendMix(t *testing.T) {
	ds := smoothSeries(3, 12, 2)
	q := [][]float32{{1.5, 4, 7.25}, {2}, {0.1, 30}}
	modelValues := func() [][]float32 {
		p := make([][]float32, len(q))
		for i := range q {
			for j := range len(q[i]) * ds.C {
				p[i] = append(p[i], float32(i+j))
			}
		}
		return p
	}
	at := func(f baseline.Interpolator) [][]float32 {
		p := make([][]float32, len(q))
		for i, s := range ds.Samples {
			p[i] = f(s.Values, s.Positions, ds.C, ds.D, q[i])
		}
		return p
	}
	cases := []struct {
		name          string
		model, spline float64
		want          [][]float32
	}{
		{"model", 1, 0, modelValues()},
		{"linear", 0, 0, at(baseline.LinearOn(0))},
		{"spline", 0, 1, at(baseline.SplineOn(0))},
	}
	for _, tc := range cases {
		b := &Blend{Model: []float64{tc.model, tc.model}, Spline: []float64{tc.spline, tc.spline}}
		got := modelValues()
		if err := b.Mix(ds, q, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			for j := range got[i] {
				if math.Abs(float64(got[i][j]-tc.want[i][j])) > 1e-5 {
					t.Errorf("%s: sample %d value %d = %v, want %v", tc.name, i, j, got[i][j], tc.want[i][j])
				}
			}
		}
	}
	// Each value slot has its own weights: the first value from the model,
	// the second from the spline.
	b := &Blend{Model: []float64{1, 0}, Spline: []float64{0, 1}}
	got, spl := modelValues(), at(baseline.SplineOn(0))
	want := modelValues()
	if err := b.Mix(ds, q, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		for j := 1; j < len(got[i]); j += 2 {
			want[i][j] = spl[i][j]
		}
		for j := range got[i] {
			if math.Abs(float64(got[i][j]-want[i][j])) > 1e-5 {
				t.Errorf("per slot: sample %d value %d = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	b = &Blend{Model: []float64{0.5}, Spline: []float64{0.5}}
	if err := b.Mix(ds, q, modelValues()); err == nil {
		t.Error("1 weight for 2 values per token accepted")
	}
}

// The gate: Mix takes each value's weights from the bin of |spline −
// linear| at its query, and solve fits each bin with enough hidden values
// on its own, the others taking their slot's weights.
func TestBlendGate(t *testing.T) {
	// One series, straight from t = 0 to 4 and bent after: a query at 1.5
	// has spline = linear (gate bin 0), one at 5.5 does not (bin 1).
	ds := &data.Dataset{C: 1, D: 1, Samples: []data.Sample{{
		Positions: []float32{0, 1, 2, 3, 4, 5, 6, 7},
		Values:    []float32{0, 1, 2, 3, 4, 9, 4, 0},
	}}}
	q := [][]float32{{1.5, 5.5}}
	lin := baseline.LinearOn(0)(ds.Samples[0].Values, ds.Samples[0].Positions, 1, 1, q[0])
	spl := baseline.SplineOn(0)(ds.Samples[0].Values, ds.Samples[0].Positions, 1, 1, q[0])
	if d0, d1 := math.Abs(float64(spl[0]-lin[0])), math.Abs(float64(spl[1]-lin[1])); !(d0 < 0.1 && d1 >= 0.1) {
		t.Fatalf("|spline − linear| %v at 1.5 and %v at 5.5: the test needs one below 0.1 and one above", d0, d1)
	}
	// Straight: linear; bent: the model. The overall weights (spline)
	// must not be used.
	b := &Blend{Model: []float64{0}, Spline: []float64{1}, Edges: []float64{0.1},
		BinModel: [][]float64{{0, 1}}, BinSpline: [][]float64{{0, 0}}}
	pred := [][]float32{{100, 200}}
	if err := b.Mix(ds, q, pred); err != nil {
		t.Fatal(err)
	}
	if pred[0][0] != lin[0] || pred[0][1] != 200 {
		t.Errorf("gated mix %v, want linear's %v on the straight stretch and the model's 200 at the bend", pred[0], lin[0])
	}

	// solve: bin 0 of slot 0 has 60 values whose truth is the model's
	// (weight 1 on it); bin 1 has 10 whose truth is the spline's, too few,
	// so it takes the slot's weights, from all 70.
	var straight, bent SlotSums
	for j := range 60 {
		m := float64(j%7) - 3
		straight.add(m, 0.5*m+0.1, m)
	}
	for j := range 10 {
		sp := float64(j%3) + 1
		bent.add(-sp, sp, sp)
	}
	all := straight
	all.addSums(&bent)
	fit := &Blend{Sums: []SlotSums{all}, Edges: []float64{0.1}, BinSums: [][]SlotSums{{straight, bent}}}
	if err := fit.solve(); err != nil {
		t.Fatal(err)
	}
	wm, ws := all.best()
	if fit.BinModel[0][0] != 1 || fit.BinSpline[0][0] != 0 || fit.BinModel[0][1] != wm || fit.BinSpline[0][1] != ws || fit.Model[0] != wm {
		t.Errorf("bin weights model %v spline %v (overall %v, %v); want model 1 in bin 0 and the slot's %v, %v in bin 1",
			fit.BinModel, fit.BinSpline, fit.Model, fit.Spline, wm, ws)
	}
	if want := (straight.sse(1, 0) + bent.sse(wm, ws)) / 70; math.Abs(fit.BlendMSE-want) > 1e-12 {
		t.Errorf("blend MSE %v, want the bins' %v", fit.BlendMSE, want)
	}
}

func TestBlendFromMeta(t *testing.T) {
	cases := []struct {
		name, json string
		ok         bool
	}{
		{"valid", `{"model":[0.5,0.2],"spline":[0.3,0]}`, true},
		{"not JSON", `{"model":`, false},
		{"one weight short", `{"model":[0.5],"spline":[0.3,0]}`, false},
		{"negative", `{"model":[-0.1,0.2],"spline":[0.3,0]}`, false},
		{"sum above 1", `{"model":[0.8,0.2],"spline":[0.3,0]}`, false},
		{"no spline weights", `{"model":[0.5,0.2]}`, false},
		{"with sums", `{"model":[0.5,0.2],"spline":[0.3,0],"sums":[{"mm":1,"ms":0.5,"ss":2,"me":0.1,"se":-0.2,"ee":3,"n":60},{"n":0}]}`, true},
		{"sums for one slot", `{"model":[0.5,0.2],"spline":[0.3,0],"sums":[{"mm":1,"n":60}]}`, false},
		{"negative square sum", `{"model":[0.5,0.2],"spline":[0.3,0],"sums":[{"mm":-1,"n":60},{"n":0}]}`, false},
		{"negative count", `{"model":[0.5,0.2],"spline":[0.3,0],"sums":[{"n":-1},{"n":0}]}`, false},
		{"hidden isolated", `{"model":[0.5,0.2],"spline":[0.3,0],"hide":"isolated"}`, true},
		{"unknown hiding", `{"model":[0.5,0.2],"spline":[0.3,0],"hide":"runs"}`, false},
		{"gated", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1,1],"bin_model":[[0,0.5,1],[0,0,0]],"bin_spline":[[1,0.5,0],[0,0,1]]}`, true},
		{"gated with sums", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1],"bin_model":[[0,1],[0,0]],"bin_spline":[[1,0],[0,1]],"bin_sums":[[{"n":3},{"n":0}],[{"n":0},{"n":1}]]}`, true},
		{"edges descending", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[1,0.1],"bin_model":[[0,0.5,1],[0,0,0]],"bin_spline":[[1,0.5,0],[0,0,1]]}`, false},
		{"edge zero", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0],"bin_model":[[0,1],[0,0]],"bin_spline":[[1,0],[0,1]]}`, false},
		{"a bin short", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1,1],"bin_model":[[0,0.5],[0,0,0]],"bin_spline":[[1,0.5,0],[0,0,1]]}`, false},
		{"gate for one slot", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1],"bin_model":[[0,1]],"bin_spline":[[1,0]]}`, false},
		{"bin weights above 1", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1],"bin_model":[[0.8,1],[0,0]],"bin_spline":[[0.8,0],[0,1]]}`, false},
		{"bin weights without edges", `{"model":[0.5,0.2],"spline":[0.3,0],"bin_model":[[0],[0]],"bin_spline":[[1],[0]]}`, false},
		{"negative bin sum", `{"model":[0.5,0.2],"spline":[0.3,0],"edges":[0.1],"bin_model":[[0,1],[0,0]],"bin_spline":[[1,0],[0,1]],"bin_sums":[[{"ss":-1},{"n":0}],[{"n":0},{"n":1}]]}`, false},
		{"infinite sum", `{"model":[0.5,0.2],"spline":[0.3,0],"sums":[{"me":1e308,"se":1e308,"n":3},{"n":0}]}`, false},
	}
	for _, tc := range cases {
		b, err := BlendFromMeta(map[string]string{MetaBlend: tc.json}, 2)
		if (err == nil) != tc.ok || (tc.ok && b == nil) {
			t.Errorf("%s: %v, %v", tc.name, b, err)
		}
	}
	if b, err := BlendFromMeta(map[string]string{}, 2); b != nil || err != nil {
		t.Errorf("no blend: %v, %v", b, err)
	}
}
