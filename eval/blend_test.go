package eval

import (
	"errors"
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
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Decoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Values, c.PosDims, c.Task = 2, 1, model.TaskPretrain
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
	if b.Series != 40 || b.Tokens != 3*40*6 || b.Draws != 3 || b.Holdout != 0.2 {
		t.Errorf("fitted on %d series, %d tokens, %d draws, holdout %v; want 40, 720, 3, 0.2", b.Series, b.Tokens, b.Draws, b.Holdout)
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
		if err := stats.Invert(s.Values); err != nil {
			t.Fatal(err)
		}
		units.Samples = append(units.Samples, s)
	}
	var linear float64
	for draw := range 3 {
		obs, hid := datasets.ObserveFraction(&units, 0.2, 5+uint64(draw))
		mse, err := baseline.InterpolationMSE(baseline.LinearOn(0), obs, hid)
		if err != nil {
			t.Fatal(err)
		}
		linear += mse / 3
	}
	if math.Abs(linear-b.LinearMSE) > 1e-6*linear {
		t.Errorf("reported linear MSE %v, baseline.InterpolationMSE on the same splits %v", b.LinearMSE, linear)
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
	if _, err := FitBlend(m, &mixed, stats, BlendOptions{Prior: &Blend{Sums: make([]SlotSums, 3)}}); err == nil {
		t.Error("a prior with 3 value slots accepted for 2")
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
	if _, err := FitBlend(m, smoothSeries(2, 5, 1), nil, BlendOptions{}); !errors.Is(err, ErrBlendTooFew) {
		t.Errorf("2 series of 5 tokens (6 hidden values): %v, want ErrBlendTooFew", err)
	}
	if _, err := FitBlend(m, smoothSeries(5, 5, 1), nil, BlendOptions{Holdout: 1.5}); err == nil {
		t.Error("holdout 1.5 accepted")
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
