package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"romae/data"
	"romae/model"
	"romae/train"
)

// foldDir is fold k's run directory (k from 1) inside the run directory.
func foldDir(out string, k int) string { return filepath.Join(out, fmt.Sprintf("fold-%d", k)) }

// runFolds is fine-tuning with data.folds K: the training series are split
// into K stratified folds; model k (seed train.seed+k−1, built as m was,
// from the same pre-trained encoder pm if any) trains on the other folds
// with fold k as its validation split, in OUT/fold-k, keeping the epoch
// train.select picks on it. Every training series is then validated on
// exactly once, by a model that did not train on it: the out-of-fold
// metrics (result.json "cv") estimate how the recipe does on new series
// from K times more series than one split would. The run's model,
// OUT/best.safetensors, is the ensemble of the K fold models (their
// averaged outputs, model.NewEnsemble), which on small training sets is
// both better and less seed-dependent than one model (docs/defaults.md).
// Each fold resumes with train.resume; finished folds are kept.
func (t *trainingRun) runFolds(ctx context.Context, m, pm *model.Model[float32], tr *data.Dataset, spec *data.Spec, meta map[string]string) error {
	cfg := &t.cfg
	K := cfg.Data.Folds
	comm, logf, err := t.startRuns()
	if err != nil {
		return err
	}
	if n := len(tr.Samples); n < 2*K {
		return fmt.Errorf("data.folds %d needs at least %d training series (2 per fold); %s has %d", K, 2*K, cfg.Data.Train, n)
	}
	fits, vals := train.Folds(tr, K, cfg.Train.Seed)
	var results []*train.Result
	var dirs []string
	seconds := 0.0
	for k := range K {
		fit, val := fits[k], vals[k]
		mk := m
		if k > 0 {
			if mk, err = model.New[float32](m.Cfg, cfg.Train.Seed+uint64(k)); err == nil && pm != nil {
				err = mk.TransferEncoder(pm)
			}
			if err != nil {
				return endRank(comm, err)
			}
		}
		tc := cfg.Train
		tc.Out, tc.Seed = foldDir(cfg.Train.Out, k+1), cfg.Train.Seed+uint64(k)
		if _, err := os.Stat(filepath.Join(tc.Out, train.LastFile)); tc.Resume && err != nil {
			tc.Resume = false // this fold had not started
		}
		logf("romae: fold %d/%d: %s model, %d parameters; %d training samples, %d held out; %s\n",
			k+1, K, mk.Cfg.Task, mk.NumParams(), len(fit.Samples), len(val.Samples), tc.Out)
		res, _, err := trainRun(ctx, comm, tc, mk, fit, val, spec, meta, nil)
		if err != nil {
			return endRank(comm, fmt.Errorf("fold %d: %w", k+1, err))
		}
		results = append(results, res)
		dirs = append(dirs, tc.Out)
		seconds += res.Seconds
	}
	comm.Close()
	if comm.Rank() != 0 {
		return nil
	}
	if _, err := train.SaveEnsemble(dirs, filepath.Join(cfg.Train.Out, train.BestFile)); err != nil {
		return err
	}
	out := map[string]any{"folds": K, "members": K, "cv": train.OutOfFold(results, m.Cfg.Task), "fold_results": results,
		"seconds": seconds, "model": filepath.Join(cfg.Train.Out, train.BestFile)}
	if err := writeFileAtomic(filepath.Join(cfg.Train.Out, "result.json"), mustJSON(out)); err != nil {
		return err
	}
	return printJSON(out)
}
