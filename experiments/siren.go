package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"time"

	"romae/data"
	"romae/datasets"
	"romae/eval"
	"romae/model"
	"romae/train"
)

func init() {
	register(Experiment{"siren", "Issue 5: fixed continuous p-RoPE vs SIREN-RoPE on periodic light curves (accuracy, interpolation MSE, step-time overhead), and on synthetic and spiral", runSiren})
}

// lightCurveSiren learns the time axis's angles from normalised time (in
// years), daily and yearly cycles, and an embedding of the band; the band
// axis keeps fixed p-RoPE.
func lightCurveSiren() model.Config {
	c := model.DefaultConfig()
	c.PosEncoding = model.PosSiren
	c.Siren = model.DefaultSiren(2)
	c.Siren.TimeScale, c.Siren.Periods = 365.25, []float64{1, 365.25}
	c.Siren.CatAxes, c.Siren.CatSizes = []int{0}, []int{datasets.LightCurveBands}
	return c
}

func runSiren(ctx context.Context, o *Options, r *Result) error {
	r.Seeds = o.seeds(1, 3, 3)
	n := pick(o, 120, 900, 3000)
	enc := pick(o, model.Size{DModel: 24, Heads: 2, Depth: 1, FFN: 48}, model.Size{DModel: 96, Heads: 4, Depth: 3, FFN: 192}, model.Sizes["tiny"])
	dec := pick(o, model.Size{DModel: 24, Heads: 2, Depth: 1, FFN: 48}, model.Size{DModel: 96, Heads: 4, Depth: 1, FFN: 192}, model.Sizes["tiny-shallow"])
	modes := []string{model.PosRoPE, model.PosSiren}
	acc, mse := map[string][]float64{}, map[string][]float64{}
	for seed := 1; seed <= r.Seeds; seed++ {
		all := datasets.LightCurves(n, uint64(seed))
		parts := data.Split(all, []float64{2.0 / 3, 1.0 / 3}, rand.New(rand.NewPCG(uint64(seed), 11)))
		tr, te := parts[0], parts[1]
		teFile, err := o.saveTestData(fmt.Sprintf("lightcurves-test-seed%d", seed), te)
		if err != nil {
			return err
		}
		// Standardise with training statistics; the parts share their
		// samples' slices with all, so one Apply covers both.
		stats := data.ComputeStats(tr)
		if err := stats.Apply(all); err != nil {
			return err
		}
		spec := &data.Spec{Generated: "lightcurves", Stats: &stats, Classes: tr.Classes}
		pspec := &data.Spec{Generated: "lightcurves", Stats: &stats}
		for _, mode := range modes {
			cfg := model.DefaultConfig()
			if mode == model.PosSiren {
				cfg = lightCurveSiren()
			}
			cfg.Encoder, cfg.Decoder, cfg.Values, cfg.PosDims = enc, dec, 2, 2
			// Classification, trained from scratch for both modes alike.
			cc := cfg
			cc.Task, cc.Outputs, cc.Pool = model.TaskClassify, len(datasets.LightCurveClasses), model.PoolCLS
			m := newModel(cc, uint64(seed))
			tc := train.DefaultConfig()
			tc.LR, tc.BatchSize, tc.Seed, tc.WeightDecay = 1e-3, 32, uint64(seed), 0.05
			tc.Epochs = pick(o, 3, 25, 60)
			tc.EvalEvery = tc.Epochs
			ctag := fmt.Sprintf("lc-classify-%s-seed%d", mode, seed)
			if _, err := fit(ctx, o, ctag, m, tc, tr, nil, spec, nil); err != nil {
				return err
			}
			met, err := eval.Evaluate(m, m.NewWorkspace(), te, eval.Options{BatchSize: 64})
			if err != nil {
				return err
			}
			r.reproduce(o.runDir(ctag), teFile, "accuracy", met.Accuracy, 64)
			acc[mode] = append(acc[mode], met.Accuracy)
			// Interpolation: masked autoencoder; MSE of 30% hidden
			// observations (same masks for both modes).
			pc := cfg
			pc.Task = model.TaskPretrain
			pm := newModel(pc, uint64(seed))
			tc.MaskRatio = 0.3
			ptag := fmt.Sprintf("lc-interp-%s-seed%d", mode, seed)
			if _, err := fit(ctx, o, ptag, pm, tc, tr, nil, pspec, nil); err != nil {
				return err
			}
			pmet, err := eval.Evaluate(pm, pm.NewWorkspace(), te, eval.Options{BatchSize: 64, MaskRatio: 0.3, Seed: 77})
			if err != nil {
				return err
			}
			r.reproduce(o.runDir(ptag), teFile, "mse", pmet.MSE, 64, "--mask-ratio", "0.3", "--seed", "77")
			mse[mode] = append(mse[mode], pmet.MSE)
			o.logf("siren %s seed %d: accuracy %.4f, interpolation MSE %.4g", mode, seed, met.Accuracy, pmet.MSE)
		}
	}
	label := map[string]string{model.PosRoPE: "fixed continuous p-RoPE", model.PosSiren: "SIREN-RoPE"}
	for _, mode := range modes {
		r.addRow(Row{Experiment: "siren/lightcurves", Setting: label[mode], Metric: "accuracy (6 classes)", Paper: "-",
			Values: acc[mode], Baseline: 1.0 / 6, BaselineIs: "chance"})
	}
	for _, mode := range modes {
		r.addRow(Row{Experiment: "siren/lightcurves", Setting: label[mode], Metric: "interpolation MSE (30% hidden, standardised flux)", Paper: "-",
			Values: mse[mode], Baseline: 1, BaselineIs: "predict the mean (unit variance after standardisation)"})
	}
	// The angle network's cost is per token, the Transformer's grows with
	// width and depth: time it at this experiment's size and at RoMAE-tiny.
	type timedSize struct {
		name     string
		enc, dec model.Size
	}
	sizes := []timedSize{{fmt.Sprintf("encoder d %d × %d", enc.DModel, enc.Depth), enc, dec}}
	if o.Budget != Tiny {
		sizes = append(sizes, timedSize{"RoMAE-tiny, tiny-shallow decoder", model.Sizes["tiny"], model.Sizes["tiny-shallow"]})
	}
	for _, sz := range sizes {
		over, err := sirenOverhead(sz.enc, sz.dec, pick(o, 3, 15, 25))
		if err != nil {
			return err
		}
		r.addRow(Row{Experiment: "siren/overhead", Setting: "pre-training step, 32 light curves, " + sz.name,
			Metric: "step time overhead vs p-RoPE (%)", Paper: "+2.4% (recommender, SIREN-RoPE paper)", Values: []float64{over}})
	}

	// The same comparison on two reproduction experiments.
	for _, name := range []string{"synthetic", "spiral"} {
		for _, mode := range modes {
			sub := *o
			sub.PosEncoding, sub.Out, sub.Seeds = mode, filepath.Join(o.Out, name+"-"+mode), pick(o, 1, 1, 3)
			// Quick: the small interpolation model, so both modes of both
			// experiments take about a minute rather than half an hour.
			sub.interpSmall = o.Budget == Quick
			var sr Result
			if err := registry[name].Run(ctx, &sub, &sr); err != nil {
				return err
			}
			row := sr.Rows[0]
			row.Experiment, row.Setting = "siren/"+name, label[mode]+", "+row.Setting
			r.Rows = append(r.Rows, row)
		}
	}
	r.Notes = append(r.Notes, "Light curves: datasets.LightCurves (6 classes, two pairs differing only in period), 3-year irregular cadence with seasonal gaps, 6 bands; tokens (flux, flux error) at (band, day). SIREN-RoPE learns the time axis's angles from time in years, sin/cos of 1-day and 1-year cycles and a band embedding; the band axis keeps fixed p-RoPE. Both modes share every other setting and seed.")
	return nil
}

// sirenOverhead times pre-training steps (forward, backward) of the two
// modes alternately on the same batch and returns the median over pairs of
// the SIREN-RoPE overhead in percent.
func sirenOverhead(enc, dec model.Size, reps int) (float64, error) {
	ds := datasets.LightCurves(32, 99)
	bt := data.Collate(nil, ds, seqIdx(32))
	mask := data.RandomMask(nil, bt, 0.75, rand.New(rand.NewPCG(1, 2)))
	var models [2]*model.Model[float32]
	for i, mode := range []string{model.PosRoPE, model.PosSiren} {
		c := model.DefaultConfig()
		if mode == model.PosSiren {
			c = lightCurveSiren()
		}
		c.Encoder, c.Decoder, c.Values, c.PosDims, c.Task = enc, dec, 2, 2, model.TaskPretrain
		models[i] = newModel(c, 1)
	}
	wss := [2]*model.Workspace[float32]{models[0].NewWorkspace(), models[1].NewWorkspace()}
	step := func(i int) (float64, error) {
		start := time.Now()
		models[i].ZeroGrad()
		if _, err := models[i].ForwardPretrain(wss[i], bt, mask, true, nil); err != nil {
			return 0, err
		}
		models[i].BackwardPretrain(wss[i])
		return time.Since(start).Seconds(), nil
	}
	// One untimed step each warms the buffers up; then pairs in ABBA order
	// (so neither mode always runs first), each pair giving one ratio.
	var ratios []float64
	for rep := -1; rep < reps; rep++ {
		order := [2]int{0, 1}
		if rep%2 != 0 {
			order = [2]int{1, 0}
		}
		var t [2]float64
		for _, i := range order {
			s, err := step(i)
			if err != nil {
				return 0, err
			}
			t[i] = s
		}
		if rep >= 0 {
			ratios = append(ratios, t[1]/t[0])
		}
	}
	sort.Float64s(ratios)
	return 100 * (ratios[len(ratios)/2] - 1), nil
}

func seqIdx(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
