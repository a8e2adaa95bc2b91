package experiments

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"romae/data"
	"romae/eval"
	"romae/internal/linelog"
	"romae/model"
	"romae/train"
)

// fit trains m in o.Out/runs/tag; its checkpoints carry spec, how tr was
// made and scaled.
func fit(ctx context.Context, o *Options, tag string, m *model.Model[float32], tc train.Config, tr, val *data.Dataset,
	spec *data.Spec, mask func([]bool, *data.Batch, *rand.Rand) []bool) (*train.Result, error) {
	tc.Out = o.runDir(tag)
	tc.Progress = "none"
	log := io.Discard
	if o.Log != nil {
		tc.Progress, log = "lines", o.Log
	}
	t := &train.Trainer{Cfg: tc, Model: m, Train: tr, Val: val, Data: spec, Log: log, Mask: mask}
	res, err := t.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tag, err)
	}
	o.logf("%s: %d steps in %.0f s", tag, res.Steps, res.Seconds)
	return res, nil
}

// newModel builds a model from cfg with seed, panicking on configurations
// that the experiment code itself fixed (a programming error).
func newModel(cfg model.Config, seed uint64) *model.Model[float32] {
	m, err := model.New[float32](cfg, seed)
	if err != nil {
		panic(err)
	}
	return m
}

// classifierFrom is the fine-tuning model of the pre-train-then-fine-tune
// experiments: pre's encoder with a [CLS] classification head of `classes`
// outputs (head dropout 0.1), no decoder, weights copied from pm.
func classifierFrom(pre model.Config, pm *model.Model[float32], classes int, seed uint64) (*model.Model[float32], error) {
	fc := pre
	fc.Task, fc.Outputs, fc.Decoder, fc.NormTargets, fc.HeadDropout = model.TaskClassify, classes, model.Size{}, false, 0.1
	fm := newModel(fc, seed)
	return fm, fm.TransferEncoder(pm)
}

// pretrainFinetune is the pre-train-then-fine-tune protocol: pre-train pm
// with tc, fine-tune a classifierFrom(c, pm) with ft (both on tr, read and
// scaled as spec says; the classifier's initial head is seeded with
// ft.Seed), and return the fine-tuned model's metrics on te (the epoch
// selected on a split of tr, or with a split too small to select on the
// last epoch of a refit on all of tr: never selected on te), recording how
// `romae evaluate` reproduces them from teFile.
func pretrainFinetune(ctx context.Context, o *Options, r *Result, tag string, c model.Config, pm *model.Model[float32],
	tc, ft train.Config, tr, te *data.Dataset, spec *data.Spec, teFile string, evalBatch int) (eval.Metrics, error) {
	if _, err := fit(ctx, o, tag+"-pretrain", pm, tc, tr, nil, spec, nil); err != nil {
		return eval.Metrics{}, err
	}
	if o.folds > 1 {
		return foldsFinetune(ctx, o, r, tag, c, pm, ft, tr, te, spec, teFile, evalBatch)
	}
	fm, err := classifierFrom(c, pm, len(tr.Classes), ft.Seed)
	if err != nil {
		return eval.Metrics{}, err
	}
	ftr, val := tr, (*data.Dataset)(nil)
	if o.valFraction > 0 {
		// Model selection on a split of the training data, never on te.
		parts := data.Split(tr, []float64{1 - o.valFraction, o.valFraction}, rand.New(rand.NewPCG(ft.Seed, 0x5911)))
		ftr, val = parts[0], parts[1]
		ft.Select = train.SelectFor(len(val.Samples))
	}
	if val != nil && ft.Select == "last" {
		// The CLI's data.refit: the split is too small to select on, so it
		// gives its estimate (in the -holdout run's metrics) and the model
		// is then fine-tuned again on every training series.
		hm, err := classifierFrom(c, pm, len(tr.Classes), ft.Seed)
		if err != nil {
			return eval.Metrics{}, err
		}
		if _, err := fit(ctx, o, tag+"-finetune-holdout", hm, ft, ftr, val, spec, nil); err != nil {
			return eval.Metrics{}, err
		}
		ftr, val = tr, nil
	}
	if _, err := fit(ctx, o, tag+"-finetune", fm, ft, ftr, val, spec, nil); err != nil {
		return eval.Metrics{}, err
	}
	if val != nil { // the best epoch on val, as `romae evaluate` on the run directory loads it
		if fm, _, err = model.Load[float32](o.runDir(tag + "-finetune")); err != nil {
			return eval.Metrics{}, err
		}
	}
	met, err := eval.Evaluate(fm, fm.NewWorkspace(), te, eval.Options{BatchSize: evalBatch})
	r.reproduce(o.runDir(tag+"-finetune"), teFile, "accuracy", met.Accuracy, evalBatch)
	return met, err
}

// foldsFinetune is the CLI's data.folds after pre-training: o.folds
// classifiers from pm's encoder (head seeds ft.Seed+k), classifier k
// fine-tuned with fold k of tr held out (the epoch train.SelectFor picks on
// it), and the ensemble of the fold models, saved as the tag-finetune run's
// best.safetensors, evaluated on te. Its out-of-fold accuracy is logged.
// The fold models train side by side as the CLI's do (train.FitFolds),
// each the same model as trained alone.
func foldsFinetune(ctx context.Context, o *Options, r *Result, tag string, c model.Config, pm *model.Model[float32],
	ft train.Config, tr, te *data.Dataset, spec *data.Spec, teFile string, evalBatch int) (eval.Metrics, error) {
	fits, vals := train.Folds(tr, o.folds, ft.Seed)
	first, err := classifierFrom(c, pm, len(tr.Classes), ft.Seed)
	if err != nil {
		return eval.Metrics{}, err
	}
	// Side by side, one per core, as the CLI's fold models (train.FitFolds).
	jobs := train.FoldJobs(0, o.folds, first, ft, fits[0])
	var sink *linelog.Sink
	if o.Log != nil && jobs > 1 {
		sink = linelog.NewSink(o.Log)
	}
	foldTag := func(k int) string { return fmt.Sprintf("%s-finetune-fold%d", tag, k+1) }
	results, err := train.FitFolds(ctx, o.folds, jobs, true, func(ctx context.Context, k int) (*train.Result, error) {
		fk := ft
		fk.Seed += uint64(k)
		fk.Select = train.SelectFor(len(vals[k].Samples))
		fm := first
		if k > 0 {
			var err error
			if fm, err = classifierFrom(c, pm, len(tr.Classes), fk.Seed); err != nil {
				return nil, err
			}
		}
		ok := *o
		if sink != nil {
			ok.Log = sink.Prefixed(fmt.Sprintf("fold %d/%d: ", k+1, o.folds))
		}
		return fit(ctx, &ok, foldTag(k), fm, fk, fits[k], vals[k], spec, nil)
	})
	if err != nil {
		return eval.Metrics{}, err
	}
	dirs := make([]string, o.folds)
	for k := range dirs {
		dirs[k] = o.runDir(foldTag(k))
	}
	if cv := train.OutOfFold(results, model.TaskClassify); cv != nil {
		o.logf("%s: out-of-fold accuracy %.4f over %d training series", tag, cv.Accuracy, cv.N)
	}
	out := o.runDir(tag + "-finetune")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return eval.Metrics{}, err
	}
	ens, err := train.SaveEnsemble(dirs, filepath.Join(out, train.BestFile))
	if err != nil {
		return eval.Metrics{}, err
	}
	met, err := eval.Evaluate(ens, ens.NewWorkspace(), te, eval.Options{BatchSize: evalBatch})
	r.reproduce(out, teFile, "accuracy", met.Accuracy, evalBatch)
	return met, err
}

// generated is the data spec of data made in memory by a generator and
// used as generated (no scaling).
func generated(name string) *data.Spec { return &data.Spec{Generated: name} }

// saveTestData writes ds — raw, as generated, before any scaling — to
// o.Out/data/name.safetensors, where `romae evaluate --data` reads it.
func (o *Options) saveTestData(name string, ds *data.Dataset) (string, error) {
	path := filepath.Join(o.Out, "data", name+".safetensors")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, data.SaveDataset(path, ds)
}

// runDir is the run directory of the training run tag.
func (o *Options) runDir(tag string) string { return filepath.Join(o.Out, "runs", tag) }

// interpolate predicts every hidden token from the observed ones with the
// model of run tag and returns the MSE against the hidden values (per
// value, over all tokens) and the per-sample predictions; it saves both
// sets and records the `romae evaluate --hidden` command that gives the
// MSE back.
func (o *Options) interpolate(r *Result, tag string, m *model.Model[float32], observed, hidden *data.Dataset) (float64, [][]float32, error) {
	obsFile, err := o.saveTestData(tag+"-observed", observed)
	if err != nil {
		return 0, nil, err
	}
	hidFile, err := o.saveTestData(tag+"-hidden", hidden)
	if err != nil {
		return 0, nil, err
	}
	mse, pred, err := eval.InterpolationMSE(m, observed, hidden, nil, interpBatch)
	r.reproduce(o.runDir(tag), obsFile, "interp_mse", mse, interpBatch, "--hidden", hidFile)
	return mse, pred, err
}

// interpBatch is the batch size of the interpolation evaluations.
const interpBatch = 64

// observeMask hides all but k ∈ [lo, hi] valid tokens of every sample
// (uniformly chosen), the training task of the interpolation benchmarks.
func observeMask(lo, hi int) func([]bool, *data.Batch, *rand.Rand) []bool {
	return func(dst []bool, b *data.Batch, rng *rand.Rand) []bool {
		if cap(dst) < b.B*b.L {
			dst = make([]bool, b.B*b.L)
		}
		dst = dst[:b.B*b.L]
		for s := 0; s < b.B; s++ {
			n := b.Lengths[s]
			k := min(lo+rng.IntN(hi-lo+1), n-1)
			row := dst[s*b.L : (s+1)*b.L]
			for i := range row {
				row[i] = i < n
			}
			for _, j := range rng.Perm(n)[:k] {
				row[j] = false
			}
		}
		return dst
	}
}
