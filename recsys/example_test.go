package recsys_test

import (
	"context"
	"fmt"
	"os"

	"romae/events"
	"romae/recsys"
)

// Train a SIREN-RoPE next-item model on an events file for a few steps
// and evaluate it on each user's last event.
func Example() {
	d, spec, err := recsys.Prepare(recsys.Source{Events: "../events/testdata/events.csv", Items: "../events/testdata/movies.csv"},
		events.SplitRule{Rule: events.LeaveOneOut})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := recsys.DefaultConfig(recsys.TaskNext, recsys.PosSiren)
	cfg.DModel, cfg.FFN, cfg.MaxLen = 16, 32, 4
	cfg = spec.ModelConfig(cfg) // vocabulary sizes
	m, err := recsys.New[float32](cfg, spec.ItemOf, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "recsys")
	defer os.RemoveAll(dir)
	tc := recsys.DefaultTrainConfig()
	tc.Epochs, tc.Out, tc.Progress = 2, dir, "none"
	if _, err := (&recsys.Trainer{Cfg: tc, Model: m, Data: d, Spec: spec}).Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	best, err := recsys.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	met, err := recsys.Evaluate(best.Model, best.Model.NewWorkspace(), d, events.Test, 64)
	fmt.Println(met.Task, met.N, err)
	// Output: next 2 <nil>
}
