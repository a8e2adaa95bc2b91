package experiments

import (
	"context"
	"fmt"

	"romae/data"
	"romae/datasets"
	"romae/eval"
	"romae/model"
	"romae/train"
)

func init() {
	register(Experiment{"pendulum-tries", "Issue 11: regularisation tries toward S5's 3.41e-3 on the pendulum (dropout, weight EMA), side by side with the paper's recipe",
		func(ctx context.Context, o *Options, r *Result) error {
			return runPendulumTries(ctx, o, r, "pendulum-tries", pendulumTries)
		}})
	register(Experiment{"pendulum-patches", "Issue 11: patch tokens at (t, y, x) instead of one token per frame on the pendulum, side by side with the paper's recipe",
		func(ctx context.Context, o *Options, r *Result) error {
			return runPendulumTries(ctx, o, r, "pendulum-patches", pendulumPatchTries)
		}})
}

// pendulumTry changes the paper's pendulum model or recipe, and with
// patch > 0 its tokens: each frame becomes (24/patch)² tokens of patch×patch
// pixels at positions (frame time, patch row, patch column), each with the
// frame's target; a frame's prediction is the mean of its tokens'.
type pendulumTry struct {
	name  string
	patch int
	apply func(c *model.Config, tc *train.Config)
}

// pendulumTries: the validation MSE of the paper's recipe flattens while
// the training MSE keeps falling (it overfits 2000 sequences), so the tries
// regularise: dropout in attention and the residual stream, a moving
// average of the weights, and both with stronger weight decay.
var pendulumTries = []pendulumTry{
	{"paper recipe", 0, func(*model.Config, *train.Config) {}},
	{"dropout 0.1", 0, func(c *model.Config, _ *train.Config) { c.AttnDropout, c.HiddenDropout = 0.1, 0.1 }},
	{"weight EMA 0.999", 0, func(_ *model.Config, tc *train.Config) { tc.EMA = 0.999 }},
	{"dropout 0.1 + EMA 0.999 + wd 0.05", 0, func(c *model.Config, tc *train.Config) {
		c.AttnDropout, c.HiddenDropout = 0.1, 0.1
		tc.EMA, tc.WeightDecay = 0.999, 0.05
	}},
}

// pendulumPatchTries: patch tokens let attention relate parts of frames
// at different times (where the rod's tip was) instead of whole-frame
// summaries, at 4× the tokens (16× the attention).
var pendulumPatchTries = []pendulumTry{
	{"paper recipe", 0, func(*model.Config, *train.Config) {}},
	{"12×12 patch tokens at (t, y, x)", 12, func(*model.Config, *train.Config) {}},
	{"12×12 patch tokens at (t, y, x) + dropout 0.1", 12, func(c *model.Config, _ *train.Config) { c.AttnDropout, c.HiddenDropout = 0.1, 0.1 }},
}

// patchFrames cuts every frame token of a pendulum dataset (positions:
// frame time only) into P×P pixel patches at positions (time, row, column),
// each carrying its frame's per-token target, frame by frame in order.
func patchFrames(ds *data.Dataset, P int) *data.Dataset {
	const side = datasets.PendulumSize
	g := side / P
	out := *ds
	out.C, out.D, out.TimeAxis = P*P, 3, 0
	out.ValueNames = nil
	out.Samples = make([]data.Sample, len(ds.Samples))
	for si, s := range ds.Samples {
		ns := data.Sample{ID: s.ID, Label: s.Label}
		for f, t := range s.Positions {
			frame := s.Values[f*side*side : (f+1)*side*side]
			for py := 0; py < g; py++ {
				for px := 0; px < g; px++ {
					for y := 0; y < P; y++ {
						row := frame[(py*P+y)*side+px*P:]
						ns.Values = append(ns.Values, row[:P]...)
					}
					ns.Positions = append(ns.Positions, t, float32(py), float32(px))
					ns.Target = append(ns.Target, s.Target[2*f:2*f+2]...)
				}
			}
		}
		out.Samples[si] = ns
	}
	return &out
}

// frameMSE is the per-value MSE of the frames' predictions: a frame is
// per consecutive tokens, and its prediction is the mean of theirs.
func frameMSE(pred [][]float64, te *data.Dataset, per int) float64 {
	var se float64
	var n int
	for si, s := range te.Samples {
		for f := 0; f < len(s.Target)/(2*per); f++ {
			for k := 0; k < 2; k++ {
				var p float64
				for j := 0; j < per; j++ {
					p += pred[si][2*(f*per+j)+k]
				}
				e := p/float64(per) - float64(s.Target[2*f*per+k])
				se += e * e
				n++
			}
		}
	}
	return se / float64(n)
}

func runPendulumTries(ctx context.Context, o *Options, r *Result, name string, tries []pendulumTry) error {
	nTrain, nVal, nTest := pick(o, 96, 2000, 2000), pick(o, 32, 500, 1000), pick(o, 64, 1000, 1000)
	r.Seeds = o.seeds(1, 2, 5)
	mses := make([][]float64, len(tries))
	for seed := 1; seed <= r.Seeds; seed++ {
		tr := datasets.Pendulum(nTrain, uint64(3*seed))
		val := datasets.Pendulum(nVal, uint64(3*seed+1))
		te := datasets.Pendulum(nTest, uint64(3*seed+2))
		for _, ds := range []*data.Dataset{tr, val, te} {
			shiftPositions(ds, 1)
		}
		patched := map[int][3]*data.Dataset{} // train, val, test cut into patches of each size
		teFile, err := o.saveTestData(fmt.Sprintf("pendulum-seed%d-test", seed), te)
		if err != nil {
			return err
		}
		for i, try := range tries {
			c, tc := pendulumConfig(), pendulumRecipe(o, uint64(seed))
			try.apply(&c, &tc)
			trT, valT, teT := tr, val, te
			if try.patch > 0 {
				sets, ok := patched[try.patch]
				if !ok { // tries with the same patches share one cut of the seed's data
					sets = [3]*data.Dataset{patchFrames(tr, try.patch), patchFrames(val, try.patch), patchFrames(te, try.patch)}
					patched[try.patch] = sets
				}
				trT, valT, teT = sets[0], sets[1], sets[2]
				c.Values, c.PosDims = try.patch*try.patch, 3
			}
			m := newModel(c, uint64(seed))
			tag := fmt.Sprintf("try%d-seed%d", i, seed)
			if _, err := fit(ctx, o, tag, m, tc, trT, valT, generated("pendulum"), nil); err != nil {
				return err
			}
			best, _, err := model.Load[float32](o.runDir(tag))
			if err != nil {
				return err
			}
			var mse float64
			if try.patch > 0 {
				pred, err := eval.Predict(best, best.NewWorkspace(), teT, 64)
				if err != nil {
					return err
				}
				per := (datasets.PendulumSize / try.patch) * (datasets.PendulumSize / try.patch)
				mse = frameMSE(pred, teT, per)
			} else {
				met, err := eval.Evaluate(best, best.NewWorkspace(), te, eval.Options{BatchSize: 64})
				if err != nil {
					return err
				}
				mse = met.MSE
				r.reproduce(o.runDir(tag), teFile, "mse", met.MSE, 64)
			}
			mses[i] = append(mses[i], mse*1e3)
			o.logf("pendulum try %q seed %d: test MSE %.4g ×1e-3", try.name, seed, mse*1e3)
		}
	}
	for i, try := range tries {
		r.addRow(Row{Experiment: name, Setting: try.name, Metric: "MSE per value ×1e-3",
			Paper: "S5 3.41, CRU 3.94", Values: mses[i]})
	}
	r.Notes = append(r.Notes, "Each try changes only what its name says in the pendulum experiment's model and recipe (same data, seeds and epochs; the epoch with the lowest validation MSE is evaluated on the test set). Patch tries (pendulum-patches): every token of a frame is trained on the frame's target, and a frame's prediction is the mean of its tokens' predictions.")
	return nil
}
