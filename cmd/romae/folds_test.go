package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"romae/model"
	"romae/train"
)

// TestFoldJobsSameModels: fold models trained side by side are the fold
// models trained one after the other, to the bit (weights and out-of-fold
// metrics), since no product splits its work by which cores are free.
func TestFoldJobsSameModels(t *testing.T) {
	type result struct {
		CV       json.RawMessage
		FoldJobs int `json:"fold_jobs"`
	}
	runs := map[int]result{}
	dirs := map[int]string{}
	for _, jobs := range []int{1, 3} {
		dir := filepath.Join(t.TempDir(), "ft")
		out, err := capture(t, cmdFinetune, "--data.train", trainTS, "--data.folds", "3", "--data.fold_jobs", fmt.Sprint(jobs),
			"--model.size", "24,2,1,48", "--model.hidden_dropout", "0.1", "--train.ema", "0.9", "--train.epochs", "3",
			"--train.progress", "none", "--train.out", dir)
		if err != nil {
			t.Fatalf("fold_jobs %d: %v", jobs, err)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("fold_jobs %d printed %q: %v", jobs, out, err)
		}
		runs[jobs], dirs[jobs] = r, dir
	}
	if runs[1].FoldJobs != 1 || runs[3].FoldJobs != 3 {
		t.Errorf("fold_jobs recorded as %d and %d, want 1 and 3", runs[1].FoldJobs, runs[3].FoldJobs)
	}
	if !bytes.Equal(runs[1].CV, runs[3].CV) {
		t.Errorf("out-of-fold metrics: one at a time %s, side by side %s", runs[1].CV, runs[3].CV)
	}
	for k := 1; k <= 3; k++ {
		a, _, err := model.Load[float32](foldDir(dirs[1], k))
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := model.Load[float32](foldDir(dirs[3], k))
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.W {
			if a.W[i] != b.W[i] {
				t.Fatalf("fold %d: weight %d is %v one at a time, %v side by side", k, i, a.W[i], b.W[i])
			}
		}
	}
}

// TestInterruptFoldsSideBySide: Ctrl-C while fold models train side by
// side checkpoints each of them and prints the resume command; resumed,
// every fold model is the one an uninterrupted run trains one fold after
// the other, to the bit.
func TestInterruptFoldsSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("trains in a subprocess")
	}
	args := func(out string, jobs int) []string {
		return []string{"finetune", "--data", trainTS, "--data.folds", "3", "--data.fold_jobs", fmt.Sprint(jobs),
			"--model.size", "24,2,1,48", "--model.hidden_dropout", "0.1", "--train.ema", "0.9", "--train.epochs", "60",
			"--train.progress", "none", "--out", out}
	}
	env := append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
	whole := filepath.Join(t.TempDir(), "whole")
	first := exec.Command(os.Args[0], args(whole, 1)...)
	first.Env = env
	if b, err := first.CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}

	out := filepath.Join(t.TempDir(), "run")
	words := interruptRun(t, args(out, 3), []string{foldDir(out, 1), foldDir(out, 2), foldDir(out, 3)}, foldDir(out, 1))
	for k := 1; k <= 3; k++ {
		if _, err := os.Stat(filepath.Join(foldDir(out, k), train.LastFile)); err != nil {
			t.Errorf("fold %d: %v", k, err)
		}
	}
	resumed := exec.Command(words[0], words[1:]...)
	resumed.Env = env
	if b, err := resumed.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("resuming")) {
		t.Fatalf("the printed command: %v\n%s", err, b)
	}
	for k := 1; k <= 3; k++ {
		a, _, err := model.Load[float32](foldDir(whole, k))
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := model.Load[float32](foldDir(out, k))
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.W {
			if a.W[i] != b.W[i] {
				t.Fatalf("fold %d: weight %d is %v uninterrupted, %v interrupted and resumed", k, i, a.W[i], b.W[i])
			}
		}
	}
}

// TestFoldPoolsMixed: under model.pool mixed every second fold model
// pools mean and max together, the others the mean, and the run's
// ensemble records each member's pool (model's TestEnsemble: loaded with
// them, it averages the members' outputs). Under model.pool mean every
// fold pools the mean.
func TestFoldPoolsMixed(t *testing.T) {
	for _, c := range []struct {
		pool      string
		want      []string
		metaPools string
	}{
		{"mixed", []string{model.PoolMean, model.PoolMeanMax, model.PoolMean}, "mean,meanmax,mean"},
		{"mean", []string{model.PoolMean, model.PoolMean, model.PoolMean}, ""},
	} {
		dir := filepath.Join(t.TempDir(), "ft")
		if _, err := capture(t, cmdFinetune, "--data.train", trainTS, "--data.folds", "3", "--model.pool", c.pool,
			"--model.size", "24,2,1,48", "--train.epochs", "2", "--train.progress", "none", "--train.out", dir); err != nil {
			t.Fatalf("model.pool %s: %v", c.pool, err)
		}
		for k, want := range c.want {
			m, _, err := model.Load[float32](foldDir(dir, k+1))
			if err != nil {
				t.Fatal(err)
			}
			if m.Cfg.Pool != want {
				t.Errorf("model.pool %s: fold %d pools %s, want %s", c.pool, k+1, m.Cfg.Pool, want)
			}
		}
		ens, ck, err := model.Load[float32](filepath.Join(dir, train.BestFile))
		if err != nil {
			t.Fatal(err)
		}
		if ens.Members() != 3 || ens.Cfg.Pool != model.PoolMean || ck.Meta["romae.ensemble.pools"] != c.metaPools {
			t.Errorf("model.pool %s: the ensemble has %d members, the first pooling %s, member pools %q; want 3, mean, %q",
				c.pool, ens.Members(), ens.Cfg.Pool, ck.Meta["romae.ensemble.pools"], c.metaPools)
		}
	}
}
