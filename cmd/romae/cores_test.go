package main

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"

	"romae/model"
	"romae/train"
)

// TestFinetuneSameOnAnyCoreCount: `romae finetune` trains the same model,
// to the bit, on one core and on three (hidden dropout and the weights'
// moving average on, products large enough to split over the cores), and
// reports the same metrics: a result measured on a 2-core machine is
// reproduced on a laptop's or a server's cores.
func TestFinetuneSameOnAnyCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	type result struct {
		TrainLoss float64 `json:"train_loss"`
		Holdout   struct{ Validation json.RawMessage }
	}
	var results []result
	var models []*model.Model[float32]
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		dir := filepath.Join(t.TempDir(), "ft")
		out, err := capture(t, cmdFinetune, "--data.train", trainTS, "--data.folds", "0", "--model.size", "64,2,2,128",
			"--model.hidden_dropout", "0.1", "--train.ema", "0.9", "--train.epochs", "2", "--train.batch_size", "8",
			"--train.progress", "none", "--train.out", dir)
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
		m, _, err := model.Load[float32](filepath.Join(dir, train.LastFile))
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Holdout.Validation == nil {
			t.Fatalf("GOMAXPROCS %d printed %q (%v)", procs, out, err)
		}
		results, models = append(results, r), append(models, m)
	}
	if a, b := results[0], results[1]; a.TrainLoss != b.TrainLoss || string(a.Holdout.Validation) != string(b.Holdout.Validation) {
		t.Errorf("training loss and hold-out metrics: %v %s on one core, %v %s on three", a.TrainLoss, a.Holdout.Validation, b.TrainLoss, b.Holdout.Validation)
	}
	for i := range models[0].W {
		if models[0].W[i] != models[1].W[i] {
			t.Fatalf("weight %d: %v on one core, %v on three", i, models[0].W[i], models[1].W[i])
		}
	}
}
