package experiments

import (
	"context"
	"fmt"
	"path/filepath"
	"romae/internal/figure"

	"romae/data"
	"romae/datasets"
	"romae/eval"
	"romae/model"
	"romae/train"
)

func init() {
	register(Experiment{"position", "Sec. 5.1: recover absolute position of 10 identical tokens, with and without [CLS]", runPosition})
	register(Experiment{"position-range", "App. B.1: one token + [CLS], MSE against position over (0,100) and (0,1000)", runPositionRange})
}

// positionModel is a per-token regressor: the head reads every token's
// output and predicts its position.
func positionModel(size model.Size, cls bool, seed uint64) *model.Model[float32] {
	c := model.DefaultConfig()
	c.Encoder, c.Values, c.PosDims, c.UseCLS = size, 1, 1, cls
	c.Task, c.Pool, c.Outputs = model.TaskRegress, model.PoolToken, 1
	return newModel(c, seed)
}

// positionRecipe is Sec. 5.1's: AdamW lr 5e-4 (0.9, 0.999), wd 0.01,
// batch 64, 10 epochs, warm-up 625 steps; shorter budgets scale it down.
func positionRecipe(o *Options, seed uint64) train.Config {
	tc := train.DefaultConfig()
	tc.Optimizer, tc.LR, tc.WeightDecay, tc.BatchSize, tc.Seed = "adamw", 5e-4, 0.01, 64, seed
	tc.Epochs = pick(o, 4, 4, 10)
	tc.WarmupSteps = pick(o, 10, 100, 625)
	tc.ClipNorm = 0
	tc.EvalEvery = tc.Epochs
	return tc
}

// positionData is the position task's training and test sets with the
// spec that standardises their targets (zero mean and unit variance with
// the training set's statistics, so the linear head starts at the right
// scale); the raw test set is saved for `romae evaluate`, which reports MSE
// in position units as the experiment does.
func positionData(o *Options, tr, te *data.Dataset, tag string) (spec *data.Spec, teFile string, err error) {
	if teFile, err = o.saveTestData(tag+"-test", te); err != nil {
		return nil, "", err
	}
	ts := data.ComputeTargetStats(tr)
	spec = &data.Spec{Generated: "position", TargetStats: &ts}
	if err := spec.Prepare(tr, "position train"); err != nil {
		return nil, "", err
	}
	return spec, teFile, spec.Prepare(te, teFile)
}

func runPosition(ctx context.Context, o *Options, r *Result) error {
	nTrain, nTest := pick(o, 2048, 6000, 20000), pick(o, 256, 2000, 4000)
	sizes := pick(o, []string{"tiny"}, []string{"tiny"}, []string{"tiny", "small", "base"})
	paper := map[string][2]string{"tiny": {"0.062 (0.007)", "200.33"}, "small": {"0.0057 (0.002)", "200.33"}, "base": {"0.0031 (0.002)", "200.33"}}
	r.Seeds = o.seeds(1, 3, 5)
	variance := 50.0 * 50.0 / 12
	for _, sizeName := range sizes {
		size := model.Sizes[sizeName]
		if o.Budget == Tiny {
			size = model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 48}
		}
		for ci, cls := range []bool{true, false} {
			var mses []float64
			for seed := 1; seed <= r.Seeds; seed++ {
				tr := datasets.Position(nTrain, 10, 0, 50, uint64(seed))
				te := datasets.Position(nTest, 10, 0, 50, uint64(1000+seed))
				tag := fmt.Sprintf("%s-cls%v-seed%d", sizeName, cls, seed)
				spec, teFile, err := positionData(o, tr, te, tag)
				if err != nil {
					return err
				}
				m := positionModel(size, cls, uint64(seed))
				if _, err := fit(ctx, o, tag, m, positionRecipe(o, uint64(seed)), tr, nil, spec, nil); err != nil {
					return err
				}
				met, err := eval.Evaluate(m, m.NewWorkspace(), te, eval.Options{BatchSize: 256, TargetStats: spec.TargetStats})
				if err != nil {
					return err
				}
				mses = append(mses, met.MSE)
				r.reproduce(o.runDir(tag), teFile, "mse", met.MSE, 256)
				o.logf("position %s: MSE %.4g", tag, met.MSE)
			}
			setting := fmt.Sprintf("RoMAE-%s, [CLS]", sizeName)
			if !cls {
				setting = fmt.Sprintf("RoMAE-%s, no [CLS]", sizeName)
			}
			r.addRow(Row{Experiment: "position", Setting: setting, Metric: "MSE", Paper: paper[sizeName][ci],
				Values: mses, Baseline: variance, BaselineIs: "predict the mean: Var U(0,50)"})
		}
	}
	r.Notes = append(r.Notes, "Targets are standardised with the training set's mean and std for training; MSE is reported in position units. Without [CLS], RoPE is purely relative and the best possible MSE is the variance of U(0,50) ≈ 208.3.")
	return nil
}

func runPositionRange(ctx context.Context, o *Options, r *Result) error {
	n := pick(o, 1024, 8000, 20000)
	r.Seeds = o.seeds(1, 1, 1)
	var ss []figure.Series
	for _, hi := range []float64{100, 1000} {
		var mses []float64
		for seed := 1; seed <= r.Seeds; seed++ {
			tr := datasets.Position(n, 1, 0, hi, uint64(seed))
			te := datasets.Position(pick(o, 128, 2000, 4000), 1, 0, hi, uint64(2000+seed))
			tag := fmt.Sprintf("range%v-seed%d", hi, seed)
			spec, teFile, err := positionData(o, tr, te, tag)
			if err != nil {
				return err
			}
			mean, std := spec.TargetStats.Mean[0], spec.TargetStats.Std[0]
			size := model.Sizes["tiny"]
			if o.Budget == Tiny {
				size = model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 48}
			}
			m := positionModel(size, true, uint64(seed))
			tc := positionRecipe(o, uint64(seed))
			tc.Epochs = pick(o, 4, 8, 20)
			if _, err := fit(ctx, o, tag, m, tc, tr, nil, spec, nil); err != nil {
				return err
			}
			met, err := eval.Evaluate(m, m.NewWorkspace(), te, eval.Options{BatchSize: 256, TargetStats: spec.TargetStats})
			if err != nil {
				return err
			}
			r.reproduce(o.runDir(tag), teFile, "mse", met.MSE, 256)
			preds, err := eval.Predict(m, m.NewWorkspace(), te, 256)
			if err != nil {
				return err
			}
			// MSE against position, in 20 bins over the domain.
			const bins = 20
			se, cnt := make([]float64, bins), make([]float64, bins)
			for i, s := range te.Samples {
				truth := float64(s.Target[0])*std + mean
				e := preds[i][0]*std + mean - truth
				b := min(int(truth/hi*bins), bins-1)
				se[b] += e * e
				cnt[b]++
			}
			mses = append(mses, met.MSE)
			if seed == 1 {
				s := figure.Series{Name: fmt.Sprintf("U(0,%g)", hi)}
				for b := 0; b < bins; b++ {
					if cnt[b] > 0 {
						s.X = append(s.X, (float64(b)+0.5)/bins)
						s.Y = append(s.Y, se[b]/cnt[b])
					}
				}
				ss = append(ss, s)
			}
		}
		r.addRow(Row{Experiment: "position-range", Setting: fmt.Sprintf("RoMAE-tiny, 1 token + [CLS], U(0,%g)", hi),
			Metric: "MSE", Paper: "figure only (Fig. 2)", Values: mses, Baseline: hi * hi / 12, BaselineIs: "predict the mean"})
	}
	fig := filepath.Join(o.Out, "position-range.png")
	if err := figure.Save(fig, "Position reconstruction (App. B.1)", "position / domain width", "MSE", ss); err != nil {
		return err
	}
	r.Figures = append(r.Figures, fig)
	return nil
}
