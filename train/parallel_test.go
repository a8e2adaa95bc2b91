package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"romae/dist"
	"romae/model"
)

// dpModel is toyModel without dropout (with dropout > 0, ranks draw
// their own masks and runs are not comparable step by step).
func dpModel(t testing.TB, task string) *model.Model[float32] {
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 32}
	c.Decoder = model.Size{DModel: 12, Heads: 1, Depth: 1, FFN: 16}
	c.Values, c.Task, c.Outputs = 2, task, 2
	m, err := model.New[float32](c, 11)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runRanks trains the toy task on n in-process ranks (n = 0: a plain
// Trainer without Comm) and returns rank 0's model, result and per-step
// losses. A rank that fails alone aborts the others, as the command
// line does.
func runRanks(t *testing.T, n int, cfg Config, task string, ctxOf func(rank int) context.Context) (*model.Model[float32], *Result, []float64, error) {
	t.Helper()
	ranks := max(n, 1)
	var comms []dist.Comm
	if n > 0 {
		comms = dist.NewLoopback(n)
	}
	models := make([]*model.Model[float32], ranks)
	results := make([]*Result, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		// Ranks other than 0 start from other weights: the broadcast must fix that.
		models[r] = dpModel(t, task)
		if r > 0 {
			for i := range models[r].W {
				models[r].W[i] *= 1.5
			}
		}
		tr := &Trainer{Cfg: cfg, Model: models[r], Train: toyData(23, 1), Val: toyData(9, 2), Data: toySpec(task), Log: io.Discard}
		if task == model.TaskClassify {
			tr.Cfg.ClassWeights = "0.7,1.6"
		}
		if n > 0 {
			tr.Comm = comms[r]
		}
		ctx := context.Background()
		if ctxOf != nil {
			ctx = ctxOf(r)
		}
		wg.Go(func() {
			results[r], errs[r] = tr.Run(ctx)
			if errs[r] != nil && !dist.IsAgreed(errs[r]) && n > 0 {
				comms[r].Abort(1)
			}
		})
	}
	wg.Wait()
	if errs[0] != nil {
		return nil, nil, nil, errs[0]
	}
	for r := 1; r < ranks; r++ {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for i := range models[0].W {
			if models[r].W[i] != models[0].W[i] {
				t.Fatalf("rank %d's weight %d is %v, rank 0's %v", r, i, models[r].W[i], models[0].W[i])
			}
		}
	}
	return models[0], results[0], stepLosses(t, cfg.Out), nil
}

func stepLosses(t *testing.T, dir string) []float64 {
	t.Helper()
	var out []float64
	for _, rec := range metricsRecords(t, dir) {
		var r struct{ Loss *float64 }
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			t.Fatal(err)
		}
		if r.Loss != nil {
			out = append(out, *r.Loss)
		}
	}
	return out
}

// lossTolerance bounds |Δloss|/loss between runs that differ only in how
// the global batch is split: float32 gradient sums in another order,
// compounded over the run's steps (measured: at most 1.7e-7 over the
// 18 steps below; a wrong loss weighting gives 0.06).
const lossTolerance = 1e-5

// An N-rank run follows the one-process run with the same global batch,
// step by step: 2 ranks, and 3 ranks splitting batches of 4 unevenly;
// pre-training (AdamW) and classification with class weights (SGD), with
// validation merged across ranks. Every rank ends with rank 0's weights.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	for _, tc := range []struct{ task, opt string }{{model.TaskPretrain, "adamw"}, {model.TaskClassify, "sgd"}} {
		t.Run(tc.task, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.Optimizer = tc.opt
			_, one, want, err := runRanks(t, 0, cfg, tc.task, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{2, 3} {
				cfg.Out = t.TempDir()
				_, res, got, err := runRanks(t, n, cfg, tc.task, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) || res.Steps != one.Steps || res.Ranks != n {
					t.Fatalf("%d ranks: %d losses, %d steps, ranks %d; one process: %d losses, %d steps", n, len(got), res.Steps, res.Ranks, len(want), one.Steps)
				}
				worst := 0.0
				for i := range want {
					worst = math.Max(worst, math.Abs(got[i]-want[i])/want[i])
				}
				t.Logf("%d ranks: largest relative loss difference over %d steps %.2g", n, len(want), worst)
				if worst > lossTolerance {
					t.Errorf("%d ranks: losses %v, one process %v (tolerance %g)", n, got, want, lossTolerance)
				}
				if d := math.Abs(res.Best.Loss-one.Best.Loss) / one.Best.Loss; res.Best.N != one.Best.N ||
					(tc.task == model.TaskClassify && d > lossTolerance) {
					t.Errorf("%d ranks: validation %+v, one process %+v", n, res.Best, one.Best)
				}
			}
		})
	}
}

// A 2-rank run stopped mid-epoch and resumed ends with exactly the
// weights of an uninterrupted 2-rank run, also with a moving average of
// the weights (rank 0's resumed average reaches every rank).
func TestDataParallelResume(t *testing.T) {
	for _, ema := range []float64{0, 0.9} {
		t.Run(fmt.Sprintf("ema%v", ema), func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.EMA = ema
			whole, _, _, err := runRanks(t, 2, cfg, model.TaskPretrain, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Out, cfg.MaxSteps = t.TempDir(), 7
			if _, res, _, err := runRanks(t, 2, cfg, model.TaskPretrain, nil); err != nil || !res.Stopped {
				t.Fatalf("first part: %+v, %v", res, err)
			}
			cfg.MaxSteps, cfg.Resume = 0, true
			resumed, res, _, err := runRanks(t, 2, cfg, model.TaskPretrain, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != 18 {
				t.Fatalf("resumed run ended at step %d, want 18", res.Steps)
			}
			sameWeights(t, whole, resumed)
		})
	}
}

// Interrupting one rank stops all of them at the same step (none waits
// forever in a collective), and rank 0 writes last.safetensors there.
func TestDataParallelInterruptOneRank(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err := runRanks(t, 2, cfg, model.TaskPretrain, func(rank int) context.Context {
		if rank == 1 {
			return cancelled
		}
		return context.Background()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("rank 0 returned %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, LastFile)); err != nil {
		t.Errorf("no checkpoint after the interruption: %v", err)
	}
}
