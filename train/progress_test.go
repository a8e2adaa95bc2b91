package train

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"romae/model"
)

// The ETA after a resume counts only the steps this process ran: 10 of 100
// steps left, one step timed at 1 s, is 10 s (the elapsed time over the
// global step, 1 s / 91, gave 0 s).
func TestETAAfterResume(t *testing.T) {
	for _, tc := range []struct {
		first, step int
		elapsed     time.Duration
		want        string
	}{
		{first: 0, step: 10, elapsed: 10 * time.Second, want: "ETA 1m30s"},
		{first: 90, step: 91, elapsed: time.Second, want: "ETA 9s"},
		{first: 50, step: 60, elapsed: 20 * time.Second, want: "ETA 1m20s"},
	} {
		var out strings.Builder
		clock := time.Unix(1000, 0)
		p := newProgress(&out, "lines", 100, tc.first)
		p.now = func() time.Time { return clock }
		p.start = clock
		clock = clock.Add(tc.elapsed)
		p.step(tc.step, 1, 1, 0.5, 8)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("resumed at %d, step %d after %v: printed %q, want %q", tc.first, tc.step, tc.elapsed, out.String(), tc.want)
		}
	}
}

// A run stopped by max_steps reports the mean loss of the steps it ran in
// its last epoch, not 0.
func TestMaxStepsReportsTrainLoss(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	cfg.MaxSteps = 2 // the first epoch has 3 steps
	_, res := runToy(t, cfg, model.TaskPretrain)
	if !res.Stopped || res.Steps != 2 || !(res.TrainLoss > 0) {
		t.Errorf("result %+v: want stopped at step 2 with a positive train_loss", res)
	}
}

// Cancellation returns an *Interrupted naming the checkpoint it wrote.
func TestInterruptedNamesCheckpoint(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskPretrain), Train: toyData(10, 1), Data: toySpec(model.TaskPretrain), Log: io.Discard}
	_, err := tr.Run(ctx)
	var in *Interrupted
	if !errors.As(err, &in) || !errors.Is(err, context.Canceled) || in.Checkpoint != filepath.Join(cfg.Out, LastFile) {
		t.Fatalf("got %v, want an *Interrupted wrapping context.Canceled naming %s", err, filepath.Join(cfg.Out, LastFile))
	}
	if _, _, err := model.Load[float32](in.Checkpoint); err != nil {
		t.Errorf("the checkpoint it names: %v", err)
	}
}
