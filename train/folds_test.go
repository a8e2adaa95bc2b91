package train

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"romae/data"
	"romae/model"
)

// TestFitFolds: folds run at most jobs at a time and their results come
// back by fold; a failure cancels the folds in flight, starts no more and
// is the error reported (not the cancellations it caused); an
// interruption between folds reports the first fold not started.
func TestFitFolds(t *testing.T) {
	var running, peak atomic.Int32
	res, err := FitFolds(context.Background(), 7, 3, true, func(ctx context.Context, k int) (*Result, error) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		return &Result{Steps: k}, nil
	})
	if err != nil || len(res) != 7 || peak.Load() > 3 || peak.Load() < 2 {
		t.Fatalf("7 folds, 3 at a time: %v, %d results, at most %d at once", err, len(res), peak.Load())
	}
	for k, r := range res {
		if r.Steps != k {
			t.Fatalf("result %d is fold %d's", k, r.Steps)
		}
	}

	var started atomic.Int32
	_, err = FitFolds(context.Background(), 6, 2, true, func(ctx context.Context, k int) (*Result, error) {
		started.Add(1)
		if k == 1 {
			time.Sleep(5 * time.Millisecond)
			return nil, errors.New("diverged")
		}
		<-ctx.Done() // fold 0 runs until cancelled, as a trainer stops at its next step
		return nil, &Interrupted{Checkpoint: fmt.Sprint(k), Err: ctx.Err()}
	})
	if err == nil || !strings.Contains(err.Error(), "fold 2: diverged") || started.Load() != 2 {
		t.Errorf("fold 2 failing: %v after %d folds started; want fold 2's error and no fold started after it", err, started.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	_, err = FitFolds(ctx, 4, 1, true, func(ctx context.Context, k int) (*Result, error) {
		if k == 1 {
			cancel() // Ctrl-C as fold 2 finishes
		}
		return &Result{}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "fold 3 of 4 not started") || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted after fold 2: %v", err)
	}
}

// TestFoldJobs: the setting, else one per core; at most the folds; fewer
// where the models' lower bounds would pass 45% of the free memory.
func TestFoldJobs(t *testing.T) {
	m, err := model.New[float32](model.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ds := &data.Dataset{C: 2, D: 2}
	for range 8 {
		ds.Samples = append(ds.Samples, data.Sample{Values: make([]float32, 2*200), Positions: make([]float32, 2*200)})
	}
	cfg := DefaultConfig()
	need, _, _ := StepMemory(m, cfg, ds, 1)
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	for _, c := range []struct {
		jobs, folds int
		avail       int64 // in units of need; 0: unknown
		want        int
	}{
		{jobs: 3, folds: 5, want: 3},
		{jobs: 8, folds: 5, want: 5},
		{jobs: 4, folds: 5, avail: 100, want: 4},
		{jobs: 4, folds: 5, avail: 5, want: 2},
		{jobs: 4, folds: 5, avail: 2, want: 1},
	} {
		availableMemory = func() (int64, string, bool) { return c.avail * need, "test", c.avail > 0 }
		if got := FoldJobs(c.jobs, c.folds, m, cfg, ds); got != c.want {
			t.Errorf("fold_jobs %d, %d folds, free memory %d× a model's bound: %d at once, want %d", c.jobs, c.folds, c.avail, got, c.want)
		}
	}
}
