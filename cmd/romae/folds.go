package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"romae/data"
	"romae/internal/linelog"
	"romae/model"
	"romae/train"
)

// foldDir is fold k's run directory (k from 1) inside the run directory.
func foldDir(out string, k int) string { return filepath.Join(out, fmt.Sprintf("fold-%d", k)) }

// poolMixed is model.pool's value for fold models that alternate mean and
// meanmax pooling (foldConfig).
const poolMixed = "mixed"

// foldConfig is fold model k's configuration (k from 0), built like fold
// 0's c: under model.pool mixed every second fold pools mean and max
// together (meanmax), the others the mean. Their ensemble averages both
// kinds of head: where the class lives in a brief event that the mean
// washes out, the mean models are unsure and the meanmax ones decide
// (generated spike data: mean 0.546, meanmax 0.820, mixed 0.812); where
// the mean is the better pool, three of five members use it
// (docs/defaults.md, "Fold models that alternate the pool").
func foldConfig(c model.Config, pool string, k int) model.Config {
	if pool == poolMixed && k%2 == 1 {
		c.Pool = model.PoolMeanMax
	}
	return c
}

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
//
// Fold models train side by side (data.fold_jobs, train.FitFolds): a
// default-recipe step is a few ms of products a few hundred rows tall,
// which two cores share at 1.35× one core's speed, so models side by side
// use the cores better than one model on all of them (docs/performance.md),
// and each is the same model to the bit either way.
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
	jobs := 1 // MPI ranks step together through one model at a time
	if comm.Size() == 1 {
		jobs = train.FoldJobs(cfg.Data.FoldJobs, K, m, cfg.Train, fits[0])
	}
	if jobs > 1 {
		logf("romae: training %d fold models at a time (data.fold_jobs; the same models as one after the other)\n", jobs)
	}
	sink := linelog.NewSink(os.Stderr)
	start := time.Now()
	results, err := train.FitFolds(ctx, K, jobs, comm.Size() == 1, func(ctx context.Context, k int) (*train.Result, error) {
		mk := m
		if k > 0 {
			var err error
			if mk, err = model.New[float32](foldConfig(m.Cfg, cfg.Model.Pool, k), cfg.Train.Seed+uint64(k)); err == nil && pm != nil {
				err = mk.TransferEncoder(pm)
			}
			if err != nil {
				return nil, err
			}
		}
		tc := cfg.Train
		tc.Out, tc.Seed = foldDir(cfg.Train.Out, k+1), cfg.Train.Seed+uint64(k)
		if _, err := os.Stat(filepath.Join(tc.Out, train.LastFile)); tc.Resume && err != nil {
			tc.Resume = false // this fold had not started
		}
		var logw io.Writer // stderr, as one model's run
		if jobs > 1 {
			logw = sink.Prefixed(fmt.Sprintf("fold %d/%d: ", k+1, K))
			if tc.Progress == "bar" {
				tc.Progress = "lines" // bars of models side by side would overwrite each other
			}
		}
		logf("romae: fold %d/%d: %s model, %d parameters; %d training samples, %d held out; %s\n",
			k+1, K, mk.Cfg.Task, mk.NumParams(), len(fits[k].Samples), len(vals[k].Samples), tc.Out)
		res, _, err := trainRun(ctx, comm, tc, mk, fits[k], vals[k], spec, meta, nil, logw)
		return res, err
	})
	if err != nil {
		return endRank(comm, err)
	}
	comm.Close()
	if comm.Rank() != 0 {
		return nil
	}
	dirs := make([]string, K)
	seconds := 0.0
	for k, r := range results {
		dirs[k] = foldDir(cfg.Train.Out, k+1)
		seconds += r.Seconds
	}
	if _, err := train.SaveEnsemble(dirs, filepath.Join(cfg.Train.Out, train.BestFile)); err != nil {
		return err
	}
	res := map[string]any{"folds": K, "members": K, "cv": train.OutOfFold(results, m.Cfg.Task), "fold_results": results,
		"seconds": seconds, "fold_jobs": jobs, "wall_seconds": time.Since(start).Seconds(),
		"model": filepath.Join(cfg.Train.Out, train.BestFile)}
	if err := writeFileAtomic(filepath.Join(cfg.Train.Out, "result.json"), mustJSON(res)); err != nil {
		return err
	}
	return printJSON(res)
}
