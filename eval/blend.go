package eval

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"romae/baseline"
	"romae/data"
	"romae/datasets"
	"romae/model"
)

// Blend mixes RoMAE's interpolation with linear and natural cubic spline
// interpolation in time, value slot by value slot:
// Model[k]·model + Spline[k]·spline + (1 − Model[k] − Spline[k])·linear.
//
// Why: on short, smooth series a masked autoencoder trained with the
// recipe's 75% masking fills dense gaps worse than a line or a spline
// through the neighbours (JapaneseVowels: MSE 0.0038 against 0.0019),
// while on others it is far better (BasicMotions: 6.7 against 11.2). Their
// errors are only partly correlated, so the least-squares mix fitted on
// tokens hidden from data the model never trained on does at least about
// as well as the best of the three, and nobody has to guess in advance
// which one a new data set needs.
//
// The weights also depend on how far the spline strays from the line at
// the query (the gate, |spline − linear| in model units, binned at
// GateEdges): where the two agree the curve is straight there and linear
// interpolation is nearly exact, so the model's small errors would only
// add to it; where they part the curve bends between the neighbours,
// the line cuts the corner and the model is worth most. One pair of
// weights for both is a compromise that lost to linear interpolation on
// the GunPoint splits whose hidden steps fell mostly on straight stretches.
type Blend struct {
	// Model and Spline are the weights per value slot of the model and of
	// the spline, each in [0, 1] with a sum at most 1; linear
	// interpolation has the rest. With Edges, a slot's gate bins that
	// held too few hidden values to fit take these.
	Model  []float64 `json:"model"`
	Spline []float64 `json:"spline"`
	// Edges are the gate's bin edges (ascending; absent in blends of
	// romae before the gate: one pair of weights per slot). BinModel[k][i]
	// and BinSpline[k][i] are slot k's weights where the gate is in bin i:
	// below Edges[0] for i = 0, in [Edges[i−1], Edges[i]), or at least the
	// last edge for i = len(Edges).
	Edges     []float64   `json:"edges,omitempty"`
	BinModel  [][]float64 `json:"bin_model,omitempty"`
	BinSpline [][]float64 `json:"bin_spline,omitempty"`
	// How the weights were fitted: the fraction of each series' tokens
	// hidden, how they were chosen (HideIsolated; "" in blends of romae
	// before it: a uniform random subset), the number of random splits,
	// and the series and hidden tokens they covered.
	Holdout float64 `json:"holdout"`
	Hide    string  `json:"hide,omitempty"`
	Draws   int     `json:"draws"`
	Series  int     `json:"series"`
	Tokens  int     `json:"tokens"`
	// The MSE per value on those hidden tokens, in data units, of the
	// model alone, linear interpolation alone, the spline alone and the
	// blend (fitted on the same tokens, so an optimistic estimate of the
	// blend's).
	ModelMSE  float64 `json:"model_mse"`
	LinearMSE float64 `json:"linear_mse"`
	SplineMSE float64 `json:"spline_mse"`
	BlendMSE  float64 `json:"blend_mse"`
	// Sums are what the weights were solved from, per value slot (data
	// units), kept so that a later fit on more series pools their hidden
	// tokens with these (BlendOptions.Prior). Absent from blends stored
	// before romae kept them.
	Sums []SlotSums `json:"sums,omitempty"`
	// BinSums are the sums of each slot's gate bins (with Edges).
	BinSums [][]SlotSums `json:"bin_sums,omitempty"`
}

// GateEdges are the bin edges of the gate FitBlend fits weights in, in
// model units (the data standardised per value slot): log-spaced, since
// how far a spline strays from the line spans orders of magnitude
// between straight stretches and bends. Fixed, not fitted, so that fits
// on different series pool bin by bin.
var GateEdges = []float64{0.003, 0.01, 0.03, 0.1, 0.3}

// gateBin is the bin of Edges that a gate value (spline − linear, model
// units) falls in.
func (b *Blend) gateBin(sMinusL float64) int {
	x := math.Abs(sMinusL)
	i := 0
	for i < len(b.Edges) && x >= b.Edges[i] {
		i++
	}
	return i
}

// weights are slot k's weights where spline − linear is sMinusL.
func (b *Blend) weights(k int, sMinusL float64) (model, spline float64) {
	if len(b.Edges) == 0 {
		return b.Model[k], b.Spline[k]
	}
	i := b.gateBin(sMinusL)
	return b.BinModel[k][i], b.BinSpline[k][i]
}

// HideIsolated is how FitBlend hides tokens (Blend.Hide): no two
// neighbours in time (datasets.ObserveIsolated). Tokens hidden as a
// uniform random subset, as romae did before, leave runs of hidden
// neighbours and so gaps wider than those of the file being filled: there
// the spline and linear interpolation err differently than at the narrow
// gaps of a filled file, and the weights fitted on them lost to linear
// interpolation alone by 0.4–2.5% on ArrowHead's test series (20% hidden),
// where the isolated ones, with the gate, are ahead of it by 0.6–1.2%
// (README, "Interpolation beside linear and spline interpolation").
const HideIsolated = "isolated"

// MetaBlend is the checkpoint metadata key of a pre-training model's
// fitted Blend (JSON), which interpolate, evaluate --hidden and serve use.
const MetaBlend = "romae.interp_blend"

// BlendOptions says how FitBlend fits.
type BlendOptions struct {
	Holdout   float64 // fraction of each series' tokens hidden per split, at most 1/3 (0: 0.1)
	Draws     int     // random splits (0: 6)
	Seed      uint64
	MaxSeries int // series used at most, the first ones (0: 2048)
	BatchSize int // (0: 64)
	// Exclude lists, sorted, the fingerprints (data.Sample.Fingerprint) of
	// series left out of the fit: those the model trained on.
	Exclude []uint64
	// Prior, when Poolable, is a fit on other series whose hidden tokens
	// are pooled with this fit's: the weights come from both.
	Prior *Blend
}

// Fewer hidden values than these and a slot's weights are not fitted: the
// slot takes the weights pooled over slots, and with fewer than minBlendValues in all
// FitBlend fails with ErrBlendTooFew.
const (
	minBlendValues     = 20
	minBlendSlotValues = 50
)

// ErrBlendTooFew: the data has too few series with 3 or more tokens to fit
// a Blend.
var ErrBlendTooFew = errors.New("too few tokens to fit the blend with linear and spline interpolation")

// FitBlend fits a Blend for m on ds (in model units, scaled with stats;
// stats nil: unscaled): o.Draws times it hides o.Holdout of the tokens of
// every series with at least 3 (but those in o.Exclude), no two neighbours
// in time (HideIsolated), predicts them from the rest with the model,
// linear and spline interpolation, and takes per value slot the mix that
// minimises the squared error over these tokens and o.Prior's. ds should
// be data the model was not trained on: on its training series the
// model's error is optimistic and its weight too high.
//
// Why 10% six times rather than 20% three times: the model's context is
// then closer to the filled file's (72% of its tokens, not 64%), for the
// same number of hidden tokens.
func FitBlend(m *model.Model[float32], ds *data.Dataset, stats *data.Stats, o BlendOptions) (*Blend, error) {
	if o.Holdout == 0 {
		o.Holdout = 0.1
	}
	if !(o.Holdout > 0 && o.Holdout <= 1.0/3) {
		return nil, fmt.Errorf("blend holdout %v: want 0 < f ≤ 1/3 (no two hidden tokens are neighbours)", o.Holdout)
	}
	o.Draws, o.MaxSeries, o.BatchSize = positiveOr(o.Draws, 6), positiveOr(o.MaxSeries, 2048), positiveOr(o.BatchSize, 64)
	C := ds.C
	if C != m.Cfg.Values || ds.D != m.Cfg.PosDims {
		return nil, fmt.Errorf("blend: data has %d values and %d position axes per token, the model %d and %d", C, ds.D, m.Cfg.Values, m.Cfg.PosDims)
	}
	if o.Prior.Poolable() && len(o.Prior.Sums) != C {
		return nil, fmt.Errorf("blend: the prior fit has %d value slots, the data %d", len(o.Prior.Sums), C)
	}
	sub := BlendSeries(ds, o.Exclude, o.MaxSeries)
	b := &Blend{Holdout: o.Holdout, Hide: HideIsolated, Draws: o.Draws, Series: len(sub.Samples), Sums: make([]SlotSums, C),
		Edges: slices.Clone(GateEdges), BinSums: make([][]SlotSums, C)}
	for k := range C {
		b.BinSums[k] = make([]SlotSums, len(b.Edges)+1)
	}
	if len(sub.Samples) > 0 {
		if err := b.addHidden(m, sub, stats, o); err != nil {
			return nil, err
		}
	}
	if p := o.Prior; p.Poolable() {
		for k := range C {
			b.Sums[k].addSums(&p.Sums[k])
			for i := range b.BinSums[k] {
				b.BinSums[k][i].addSums(&p.BinSums[k][i])
			}
		}
		b.Series += p.Series
	}
	if err := b.solve(); err != nil {
		return nil, err
	}
	return b, nil
}

// Poolable reports whether a fit's hidden tokens can be pooled with b's:
// b keeps its sums, per gate bin too, and hid its tokens as FitBlend does
// now. A blend of an earlier romae, fitted on wider gaps or without the
// gate, is not (nil: false).
func (b *Blend) Poolable() bool {
	return b != nil && b.Sums != nil && b.Hide == HideIsolated && slices.Equal(b.Edges, GateEdges) && len(b.BinSums) == len(b.Sums)
}

// BlendSeries is the part of ds FitBlend fits on: its first max series
// with at least 3 tokens whose fingerprints are not in exclude (sorted).
func BlendSeries(ds *data.Dataset, exclude []uint64, max int) *data.Dataset {
	sub := *ds
	sub.Samples = nil
	for i := range ds.Samples {
		s := &ds.Samples[i]
		if s.Len(ds.C) < 3 || len(sub.Samples) >= max {
			continue
		}
		if _, seen := slices.BinarySearch(exclude, s.Fingerprint()); !seen {
			sub.Samples = append(sub.Samples, *s)
		}
	}
	return &sub
}

// addHidden adds to b.Sums, in data units, the hidden tokens of o.Draws
// random splits of sub's series.
func (b *Blend) addHidden(m *model.Model[float32], sub *data.Dataset, stats *data.Stats, o BlendOptions) error {
	C := sub.C
	// Everything relative to linear interpolation: per slot the sums of
	// products of dm = model − linear, ds = spline − linear and
	// e = truth − linear are all the squared error of any mix needs.
	g, bins := make([]SlotSums, C), make([][]SlotSums, C)
	for k := range C {
		bins[k] = make([]SlotSums, len(b.Edges)+1)
	}
	ws := m.NewWorkspace()
	linear, spline := baseline.LinearOn(sub.TimeAxis), baseline.SplineOn(sub.TimeAxis)
	perChannel := stats != nil && stats.PerChannel()
	for draw := range o.Draws {
		obs, hid := datasets.ObserveIsolated(sub, o.Holdout, sub.TimeAxis, o.Seed+uint64(draw))
		pred, err := Interpolate(m, ws, obs, hiddenQueries(hid), o.BatchSize)
		if err != nil {
			return err
		}
		for i, s := range hid.Samples {
			ov, op := obs.Samples[i].Values, obs.Samples[i].Positions
			lin, spl := linear(ov, op, C, sub.D, s.Positions), spline(ov, op, C, sub.D, s.Positions)
			for j, t := range s.Values {
				k, dm, ds, e := j%C, float64(pred[i][j]-lin[j]), float64(spl[j]-lin[j]), float64(t-lin[j])
				bin := b.gateBin(ds)
				if perChannel {
					// Each channel has its own scale: to data units value by value.
					_, sd := stats.At(k, s.Positions[j/C*sub.D:(j/C+1)*sub.D])
					dm, ds, e = dm*sd, ds*sd, e*sd
				}
				g[k].add(dm, ds, e)
				bins[k][bin].add(dm, ds, e)
			}
		}
	}
	for k := range C {
		u := 1.0
		if stats != nil && !perChannel {
			u = float64(stats.Std[k]) * float64(stats.Std[k])
		}
		g[k].scale(u)
		b.Sums[k].addSums(&g[k])
		for i := range bins[k] {
			bins[k][i].scale(u)
			b.BinSums[k][i].addSums(&bins[k][i])
		}
	}
	return nil
}

// solve sets b's weights and MSEs from b.Sums: per slot with enough
// hidden values, the slots' pooled weights for the others; then, with
// Edges, per gate bin with enough hidden values, its slot's for the
// others.
func (b *Blend) solve() error {
	C := len(b.Sums)
	var pooled SlotSums
	for k := range C {
		pooled.addSums(&b.Sums[k])
	}
	if pooled.N < minBlendValues {
		return ErrBlendTooFew
	}
	pm, ps := pooled.best()
	b.Model, b.Spline, b.Tokens = make([]float64, C), make([]float64, C), pooled.N/C
	var sm, sl, ss, sb float64
	for k := range C {
		g := &b.Sums[k]
		wm, wsp := pm, ps
		if g.N >= minBlendSlotValues {
			wm, wsp = g.best()
		}
		b.Model[k], b.Spline[k] = wm, wsp
		sl += g.EE
		sm += g.sse(1, 0)
		ss += g.sse(0, 1)
		if len(b.Edges) == 0 {
			sb += g.sse(wm, wsp)
		}
	}
	if len(b.Edges) > 0 {
		b.BinModel, b.BinSpline = make([][]float64, C), make([][]float64, C)
		for k := range C {
			b.BinModel[k], b.BinSpline[k] = make([]float64, len(b.Edges)+1), make([]float64, len(b.Edges)+1)
			for i := range b.BinSums[k] {
				g := &b.BinSums[k][i]
				wm, wsp := b.Model[k], b.Spline[k]
				if g.N >= minBlendSlotValues {
					wm, wsp = g.best()
				}
				b.BinModel[k][i], b.BinSpline[k][i] = wm, wsp
				sb += g.sse(wm, wsp)
			}
		}
	}
	nt := float64(pooled.N)
	b.ModelMSE, b.LinearMSE, b.SplineMSE, b.BlendMSE = sm/nt, sl/nt, ss/nt, sb/nt
	return nil
}

// SlotSums holds, for one value slot, the sums of products of the model's
// and the spline's differences from linear interpolation (m, s) and the
// truth's (e) over N hidden values.
type SlotSums struct {
	MM float64 `json:"mm"`
	MS float64 `json:"ms"`
	SS float64 `json:"ss"`
	ME float64 `json:"me"`
	SE float64 `json:"se"`
	EE float64 `json:"ee"`
	N  int     `json:"n"`
}

func (g *SlotSums) add(m, s, e float64) {
	g.MM, g.MS, g.SS, g.ME, g.SE, g.EE, g.N = g.MM+m*m, g.MS+m*s, g.SS+s*s, g.ME+m*e, g.SE+s*e, g.EE+e*e, g.N+1
}

func (g *SlotSums) addSums(h *SlotSums) {
	g.MM, g.MS, g.SS, g.ME, g.SE, g.EE, g.N = g.MM+h.MM, g.MS+h.MS, g.SS+h.SS, g.ME+h.ME, g.SE+h.SE, g.EE+h.EE, g.N+h.N
}

func (g *SlotSums) scale(u float64) {
	g.MM, g.MS, g.SS, g.ME, g.SE, g.EE = g.MM*u, g.MS*u, g.SS*u, g.ME*u, g.SE*u, g.EE*u
}

// sse is the squared error of linear + a·(model − linear) + b·(spline − linear).
func (g *SlotSums) sse(a, b float64) float64 {
	return g.EE - 2*(a*g.ME+b*g.SE) + a*a*g.MM + 2*a*b*g.MS + b*b*g.SS
}

// best minimises sse over the weights a, b ≥ 0 with a + b ≤ 1: the
// unconstrained minimum when it is inside, else the best of the edges'
// (a convex quadratic's minimum over a triangle is on its boundary then).
func (g *SlotSums) best() (a, b float64) {
	type cand struct{ a, b float64 }
	line := func(num, den float64) float64 { // argmin over [0, 1] of den·t² − 2·num·t
		if !(den > 0) {
			return 0
		}
		return min(max(num/den, 0), 1)
	}
	cands := []cand{{line(g.ME, g.MM), 0}, {0, line(g.SE, g.SS)}}
	// a = t, b = 1 − t: sse is quadratic in t.
	t := line(g.ME-g.SE-g.MS+g.SS, g.MM-2*g.MS+g.SS)
	cands = append(cands, cand{t, 1 - t})
	if det := g.MM*g.SS - g.MS*g.MS; det > 0 {
		a, b := (g.ME*g.SS-g.SE*g.MS)/det, (g.SE*g.MM-g.ME*g.MS)/det
		if a >= 0 && b >= 0 && a+b <= 1 {
			cands = append(cands, cand{a, b})
		}
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if g.sse(c.a, c.b) < g.sse(best.a, best.b) {
			best = c
		}
	}
	return best.a, best.b
}

func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Mix replaces pred[i] (the model's values at queries[i] for ds's sample i,
// in model units) with the blend of it and linear and spline interpolation
// through the sample's tokens.
func (b *Blend) Mix(ds *data.Dataset, queries, pred [][]float32) error {
	if len(b.Model) != ds.C || len(b.Spline) != ds.C {
		return fmt.Errorf("blend: %d model and %d spline weights for %d values per token", len(b.Model), len(b.Spline), ds.C)
	}
	if len(queries) != len(ds.Samples) || len(pred) != len(ds.Samples) {
		return fmt.Errorf("blend: %d query lists and %d predictions for %d samples", len(queries), len(pred), len(ds.Samples))
	}
	linear, spline := baseline.LinearOn(ds.TimeAxis), baseline.SplineOn(ds.TimeAxis)
	for i, s := range ds.Samples {
		lin := linear(s.Values, s.Positions, ds.C, ds.D, queries[i])
		if len(lin) != len(pred[i]) {
			return fmt.Errorf("blend: sample %s: %d predicted values for %d queried", s.ID, len(pred[i]), len(lin))
		}
		spl := spline(s.Values, s.Positions, ds.C, ds.D, queries[i])
		for j := range pred[i] {
			wm, wsp := b.weights(j%ds.C, float64(spl[j]-lin[j]))
			pred[i][j] = lin[j] + float32(wm)*(pred[i][j]-lin[j]) + float32(wsp)*(spl[j]-lin[j])
		}
	}
	return nil
}

// MixedMSE mixes pred, the model's values at hidden's tokens predicted from
// observed's as InterpolationMSE returns them, in place, and returns the
// blend's MSE per value against hidden's values (data units with stats).
func (b *Blend) MixedMSE(observed, hidden *data.Dataset, stats *data.Stats, pred [][]float32) (float64, error) {
	if err := b.Mix(observed, hiddenQueries(hidden), pred); err != nil {
		return 0, err
	}
	return hiddenMSE(pred, hidden, stats), nil
}

// MetaPretrainSeries is the checkpoint metadata key of the fingerprints
// (data.Sample.Fingerprint) of every series pre-training trained or
// validated on, sorted, as base64 of their little-endian bytes: what tells
// interpolate which series of a file the model has not seen, and can fit
// the blend on.
const MetaPretrainSeries = "romae.pretrain_series"

// Fingerprints is the sorted, distinct fingerprints of the datasets'
// series (nil datasets are skipped).
func Fingerprints(dss ...*data.Dataset) []uint64 {
	var fp []uint64
	for _, ds := range dss {
		if ds == nil {
			continue
		}
		for i := range ds.Samples {
			fp = append(fp, ds.Samples[i].Fingerprint())
		}
	}
	slices.Sort(fp)
	return slices.Compact(fp)
}

// EncodeFingerprints is Fingerprints' result as MetaPretrainSeries holds it.
func EncodeFingerprints(fp []uint64) string {
	raw := make([]byte, 0, 8*len(fp))
	for _, f := range fp {
		raw = binary.LittleEndian.AppendUint64(raw, f)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// FingerprintsFromMeta reads MetaPretrainSeries (ok false when the
// checkpoint has none: written before romae recorded them, or not by
// pretrain).
func FingerprintsFromMeta(meta map[string]string) (fp []uint64, ok bool, err error) {
	enc, ok := meta[MetaPretrainSeries]
	if !ok {
		return nil, false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw)%8 != 0 {
		return nil, true, fmt.Errorf("metadata %s: not base64 of 8-byte fingerprints", MetaPretrainSeries)
	}
	fp = make([]uint64, len(raw)/8)
	for i := range fp {
		fp[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	if !slices.IsSorted(fp) {
		return nil, true, fmt.Errorf("metadata %s: fingerprints not sorted", MetaPretrainSeries)
	}
	return fp, true, nil
}

// BlendFromMeta reads the Blend a checkpoint's metadata carries (nil, nil
// when it has none) and checks it against a model with values values per
// token.
func BlendFromMeta(meta map[string]string, values int) (*Blend, error) {
	raw, ok := meta[MetaBlend]
	if !ok {
		return nil, nil
	}
	var b Blend
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", MetaBlend, err)
	}
	if len(b.Model) != values || len(b.Spline) != values {
		return nil, fmt.Errorf("metadata %s: %d model and %d spline weights for a model with %d values per token", MetaBlend, len(b.Model), len(b.Spline), values)
	}
	if b.Hide != "" && b.Hide != HideIsolated {
		return nil, fmt.Errorf("metadata %s: hide %q: want %q or none", MetaBlend, b.Hide, HideIsolated)
	}
	if b.Sums != nil && len(b.Sums) != values {
		return nil, fmt.Errorf("metadata %s: sums for %d value slots, the model has %d", MetaBlend, len(b.Sums), values)
	}
	for k, g := range b.Sums {
		if err := g.check(fmt.Sprintf("sums[%d]", k)); err != nil {
			return nil, err
		}
	}
	for k := range values {
		if err := checkWeights(fmt.Sprintf("[%d]", k), b.Model[k], b.Spline[k]); err != nil {
			return nil, err
		}
	}
	if err := b.checkGate(values); err != nil {
		return nil, err
	}
	return &b, nil
}

// checkGate checks the gate's edges and, per slot and bin, its weights
// and sums (absent with no edges).
func (b *Blend) checkGate(values int) error {
	bins := len(b.Edges) + 1
	if len(b.Edges) == 0 {
		if b.BinModel != nil || b.BinSpline != nil || b.BinSums != nil {
			return fmt.Errorf("metadata %s: gate bin weights or sums without edges", MetaBlend)
		}
		return nil
	}
	for i, e := range b.Edges {
		if !(e > 0) || math.IsInf(e, 0) || (i > 0 && !(e > b.Edges[i-1])) {
			return fmt.Errorf("metadata %s: edges %v: want finite, positive and ascending", MetaBlend, b.Edges)
		}
	}
	if len(b.BinModel) != values || len(b.BinSpline) != values || (b.BinSums != nil && len(b.BinSums) != values) {
		return fmt.Errorf("metadata %s: gate bin weights for %d and %d value slots (sums %d), the model has %d", MetaBlend, len(b.BinModel), len(b.BinSpline), len(b.BinSums), values)
	}
	for k := range values {
		if len(b.BinModel[k]) != bins || len(b.BinSpline[k]) != bins || (b.BinSums != nil && len(b.BinSums[k]) != bins) {
			return fmt.Errorf("metadata %s: slot %d: gate weights or sums not for %d bins (%d edges)", MetaBlend, k, bins, len(b.Edges))
		}
		for i := range bins {
			if err := checkWeights(fmt.Sprintf("[%d] bin %d", k, i), b.BinModel[k][i], b.BinSpline[k][i]); err != nil {
				return err
			}
			if b.BinSums != nil {
				if err := b.BinSums[k][i].check(fmt.Sprintf("bin_sums[%d][%d]", k, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkWeights is an error unless model and spline weights lie in the
// triangle of convex mixes (where names the slot and bin).
func checkWeights(where string, wm, ws float64) error {
	if !(wm >= 0 && ws >= 0 && wm+ws <= 1+1e-9) {
		return fmt.Errorf("metadata %s: model%s = %v, spline%s = %v: want weights in [0, 1] with a sum at most 1", MetaBlend, where, wm, where, ws)
	}
	return nil
}

// check is an error unless g's sums are finite, its squares ≥ 0 and its
// count ≥ 0 (name says which sums).
func (g SlotSums) check(name string) error {
	if g.N < 0 || !(g.MM >= 0 && g.SS >= 0 && g.EE >= 0) || math.IsInf(g.MM+g.MS+g.SS+g.ME+g.SE+g.EE, 0) || math.IsNaN(g.MS+g.ME+g.SE) {
		return fmt.Errorf("metadata %s: %s = %+v: want finite sums, squares ≥ 0 and a count ≥ 0", MetaBlend, name, g)
	}
	return nil
}

// Describe is a line for logs: the weights' ranges and what the fit
// measured.
func (b *Blend) Describe() string {
	span := func(ws []float64) string {
		lo, hi := slices.Min(ws), slices.Max(ws)
		if hi-lo < 0.005 {
			return fmt.Sprintf("%.2f", lo)
		}
		return fmt.Sprintf("%.2f–%.2f", lo, hi)
	}
	hidden := fmt.Sprintf("%.0f%% hidden", 100*b.Holdout)
	if b.Hide == HideIsolated {
		hidden += ", no two neighbours"
	}
	gate := ""
	if len(b.Edges) > 0 {
		var lo, hi []float64 // the model's weight in the straightest and the most bent bins
		for k := range b.BinModel {
			lo, hi = append(lo, b.BinModel[k][0]), append(hi, b.BinModel[k][len(b.Edges)])
		}
		gate = fmt.Sprintf("per slot in %d bins of |spline − linear|: model %s where they agree, %s where they part most; overall ",
			len(b.Edges)+1, span(lo), span(hi))
	}
	return fmt.Sprintf("weights %smodel %s, spline %s, linear the rest (fitted on %d tokens of %d series, %s: MSE model %.4g, linear %.4g, spline %.4g, blend %.4g)",
		gate, span(b.Model), span(b.Spline), b.Tokens, b.Series, hidden, b.ModelMSE, b.LinearMSE, b.SplineMSE, b.BlendMSE)
}
