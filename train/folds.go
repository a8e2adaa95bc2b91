package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"romae/data"
	"romae/eval"
	"romae/model"
)

// Folds splits ds into k stratified folds (data.Split) drawn with seed and
// returns, for fold i, the samples of every other fold (fits[i]) and the
// fold itself (vals[i]): the k train/validation pairs of k-fold
// cross-fitting. Every sample is in exactly one vals[i].
func Folds(ds *data.Dataset, k int, seed uint64) (fits, vals []*data.Dataset) {
	shares := make([]float64, k)
	for i := range shares {
		shares[i] = 1 / float64(k)
	}
	vals = data.Split(ds, shares, rand.New(rand.NewPCG(seed, 0x5911)))
	for i := range vals {
		var rest []*data.Dataset
		for j, v := range vals {
			if j != i {
				rest = append(rest, v)
			}
		}
		fits = append(fits, data.Concat(rest...))
	}
	return fits, vals
}

// SaveEnsemble loads the model each run directory in dirs keeps, combines
// them (model.NewEnsemble: outputs averaged) and writes the ensemble to
// path with the first run's checkpoint metadata — the data spec and
// provenance every member shares — without its training state.
func SaveEnsemble(dirs []string, path string) (*model.Model[float32], error) {
	members := make([]*model.Model[float32], len(dirs))
	var first *model.Checkpoint
	for i, dir := range dirs {
		m, ck, err := model.Load[float32](dir)
		if err != nil {
			return nil, err
		}
		members[i] = m
		if i == 0 {
			first = ck
		}
	}
	ens, err := model.NewEnsemble(members)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := map[string]string{}
	for k, v := range first.Meta {
		if k != StateMeta {
			meta[k] = v
		}
	}
	return ens, ens.Save(path, meta, nil)
}

// OutOfFold pools the fold models' validation metrics (each fold's kept
// epoch) into metrics over every training series: confusion matrices
// summed, losses and squared errors weighted by fold size; nil when a fold
// has none.
func OutOfFold(results []*Result, task string) *eval.Metrics {
	var cv eval.Metrics
	var mse float64
	for _, r := range results {
		b := r.Best
		if b == nil {
			return nil
		}
		cv.N += b.N
		cv.Loss += b.Loss * float64(b.N)
		mse += b.MSE * float64(b.N)
		if b.Confusion != nil {
			if cv.Confusion == nil {
				cv.Confusion = make([][]int, len(b.Confusion))
				for i := range cv.Confusion {
					cv.Confusion[i] = make([]int, len(b.Confusion))
				}
			}
			for i, row := range b.Confusion {
				for j, c := range row {
					cv.Confusion[i][j] += c
				}
			}
		}
	}
	if cv.N == 0 {
		return nil
	}
	cv.Loss /= float64(cv.N)
	switch task {
	case model.TaskClassify:
		cv.Accuracy, cv.MacroF1 = eval.Accuracy(cv.Confusion), eval.MacroF1(cv.Confusion)
	case model.TaskRegress:
		cv.MSE = mse / float64(cv.N)
		cv.RMSE = math.Sqrt(cv.MSE)
	}
	return &cv
}

// FitFolds runs fit(ctx, k) for the folds k = 0 … K−1, jobs at a time,
// started in fold order, and returns their results by fold. Each fit
// trains a model of its own: the products split their work by the core
// count alone, never by which cores are free, so a fold's model is the
// same to the bit whether it trains alone or beside others. When a fold
// fails the others are cancelled (they stop at their next step, their
// checkpoints written) and no more start; the error is the first, in fold
// order, that is not such a cancellation. alone is a one-process run,
// which also starts no more folds once ctx is cancelled; MPI ranks stop
// only on what a fold's ranks agreed, or they would part ways.
func FitFolds(ctx context.Context, K, jobs int, alone bool, fit func(ctx context.Context, k int) (*Result, error)) ([]*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results, errs := make([]*Result, K), make([]error, K)
	started := 0 // folds 0 … started−1, in order
	slots := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	var failed atomic.Bool
	for k := range K {
		slots <- struct{}{}
		if failed.Load() || (alone && ctx.Err() != nil) {
			<-slots
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if results[k], errs[k] = fit(ctx, k); errs[k] != nil {
				failed.Store(true)
				cancel()
			}
		}()
	}
	wg.Wait()
	var first error
	firstK := 0
	for k, err := range errs {
		var stopped *Interrupted
		if err != nil && (first == nil || (errors.As(first, &stopped) && !errors.As(err, &stopped))) {
			first, firstK = err, k
		}
	}
	if first != nil {
		return nil, fmt.Errorf("fold %d: %w", firstK+1, first)
	}
	if started < K { // interrupted between two folds
		return nil, fmt.Errorf("fold %d of %d not started: %w (the run was interrupted)", started+1, K, context.Cause(ctx))
	}
	return results, nil
}

// FoldJobs is how many fold models train at once: requested, or where it
// is 0 one per core; at most the folds; and no more than leave each
// model's memory check, made as it starts, room beside the others
// already running (their lower bounds, StepMemory on the fold's training
// data, within 45% of the free memory: half of the 90% that check allows
// one model).
func FoldJobs(requested, folds int, m *model.Model[float32], cfg Config, fit *data.Dataset) int {
	jobs := requested
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	jobs = min(jobs, folds)
	if avail, _, ok := availableMemory(); ok && jobs > 1 {
		need, _, _ := StepMemory(m, cfg, fit, 1)
		jobs = min(jobs, max(1, int(avail*45/100/max(need, 1))))
	}
	return max(jobs, 1)
}
