package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"romae/data"
	"romae/dist"
	"romae/internal/sysmem"
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
//
// Fold models train foldJobs at a time (data.fold_jobs): a default-recipe
// step is a few ms of products a few hundred rows tall, which two cores
// share at 1.35× one core's speed, so models side by side use the cores
// better than one model on all of them (docs/performance.md). Every
// product splits its work by the core count alone, never by who is free,
// so each fold model is the same to the bit however many train at once.
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
	jobs := foldJobs(cfg, comm, m, fits[0])
	if jobs > 1 {
		logf("romae: training %d fold models at a time (data.fold_jobs; the same models as one after the other)\n", jobs)
	}
	results, dirs, errs := make([]*train.Result, K), make([]string, K), make([]error, K)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	var stopped atomic.Bool // a fold failed or was interrupted: start no more
	out := newLineSink(os.Stderr)
	start := time.Now()
	for k := range K {
		slots <- struct{}{}
		// One process also stops on an interruption between two folds;
		// MPI ranks only on what their last fold agreed, or they would
		// part ways.
		if stopped.Load() || (comm.Size() == 1 && ctx.Err() != nil) {
			<-slots
			break
		}
		fit, val := fits[k], vals[k]
		mk := m
		if k > 0 {
			if mk, err = model.New[float32](m.Cfg, cfg.Train.Seed+uint64(k)); err == nil && pm != nil {
				err = mk.TransferEncoder(pm)
			}
			if err != nil {
				errs[k] = err
				<-slots
				break
			}
		}
		tc := cfg.Train
		tc.Out, tc.Seed = foldDir(cfg.Train.Out, k+1), cfg.Train.Seed+uint64(k)
		if _, err := os.Stat(filepath.Join(tc.Out, train.LastFile)); tc.Resume && err != nil {
			tc.Resume = false // this fold had not started
		}
		var logw io.Writer // stderr, as one model's run
		if jobs > 1 {
			logw = out.prefixed(fmt.Sprintf("fold %d/%d: ", k+1, K))
			if tc.Progress == "bar" {
				tc.Progress = "lines" // bars of models side by side would overwrite each other
			}
		}
		logf("romae: fold %d/%d: %s model, %d parameters; %d training samples, %d held out; %s\n",
			k+1, K, mk.Cfg.Task, mk.NumParams(), len(fit.Samples), len(val.Samples), tc.Out)
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			results[k], _, errs[k] = trainRun(ctx, comm, tc, mk, fit, val, spec, meta, nil, logw)
			dirs[k] = tc.Out
			if errs[k] != nil {
				stopped.Store(true)
				cancel() // the other folds stop at their next step, their checkpoints written
			}
		}()
	}
	wg.Wait()
	if err := foldsError(errs); err != nil {
		return endRank(comm, err)
	}
	comm.Close()
	if comm.Rank() != 0 {
		return nil
	}
	for k, r := range results {
		if r == nil { // interrupted between two folds
			return fmt.Errorf("fold %d of %d not started: %w; --train.resume continues the run", k+1, K, context.Cause(ctx))
		}
	}
	if _, err := train.SaveEnsemble(dirs, filepath.Join(cfg.Train.Out, train.BestFile)); err != nil {
		return err
	}
	seconds := 0.0
	for _, r := range results {
		seconds += r.Seconds
	}
	res := map[string]any{"folds": K, "members": K, "cv": train.OutOfFold(results, m.Cfg.Task), "fold_results": results,
		"seconds": seconds, "fold_jobs": jobs, "wall_seconds": time.Since(start).Seconds(),
		"model": filepath.Join(cfg.Train.Out, train.BestFile)}
	if err := writeFileAtomic(filepath.Join(cfg.Train.Out, "result.json"), mustJSON(res)); err != nil {
		return err
	}
	return printJSON(res)
}

// foldJobs is how many fold models train at once: data.fold_jobs, or
// where it is 0 one per core up to the fold count; one where ranks of an
// MPI run train them (the ranks step together through one model); and no
// more than leave each model's training check, made as it starts, room
// beside the others already running (their lower bounds within 45% of
// the free memory, half of the 90% that check allows one model).
func foldJobs(cfg *runConfig, comm dist.Comm, m *model.Model[float32], fit *data.Dataset) int {
	jobs := cfg.Data.FoldJobs
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, cfg.Data.Folds)
	if comm.Size() > 1 {
		return 1
	}
	if avail, _, ok := availableMemory(); ok && jobs > 1 {
		need, _, _ := train.StepMemory(m, cfg.Train, fit, 1)
		jobs = min(jobs, max(1, int(avail*45/100/max(need, 1))))
	}
	return jobs
}

// availableMemory is sysmem.Available; tests replace it.
var availableMemory = sysmem.Available

// foldsError is the first fold's error, by fold order, that is not an
// interruption the failure of another fold caused; nil when every fold
// finished.
func foldsError(errs []error) error {
	var first error
	firstK := 0
	for k, err := range errs {
		if err == nil {
			continue
		}
		var stopped *train.Interrupted
		if first == nil || (errors.As(first, &stopped) && !errors.As(err, &stopped)) {
			first, firstK = err, k
		}
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("fold %d: %w", firstK+1, first)
}

// lineSink is one writer that several runs' logs share, whole lines at a
// time, so lines of models training side by side never interleave.
type lineSink struct {
	mu sync.Mutex
	w  io.Writer
}

func newLineSink(w io.Writer) *lineSink { return &lineSink{w: w} }

// prefixed is a writer onto s that starts every line with prefix; it
// holds a line back until its newline arrives.
func (s *lineSink) prefixed(prefix string) io.Writer { return &prefixWriter{sink: s, prefix: prefix} }

type prefixWriter struct {
	sink    *lineSink
	prefix  string
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.partial = append(p.partial, b...)
			break
		}
		line := append(append([]byte(p.prefix), p.partial...), b[:i+1]...)
		p.sink.mu.Lock()
		_, err := p.sink.w.Write(line)
		p.sink.mu.Unlock()
		if err != nil {
			return n - len(b), err
		}
		p.partial, b = p.partial[:0], b[i+1:]
	}
	return n, nil
}
