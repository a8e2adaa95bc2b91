package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"romae/dist"
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

// TestFoldJobs: data.fold_jobs, else one per core up to the folds; one
// across MPI ranks; fewer where the models' lower bounds would pass 45%
// of the free memory.
func TestFoldJobs(t *testing.T) {
	m, err := model.New[float32](model.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	fit := seriesDataset([]int{200, 150, 100, 200}, 1)
	tc := train.DefaultConfig()
	need, _, _ := train.StepMemory(m, tc, fit, 1)
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	for _, c := range []struct {
		jobs, folds int
		avail       int64 // in units of need; 0: unknown
		ranks       int
		want        int
	}{
		{jobs: 3, folds: 5, ranks: 1, want: 3},
		{jobs: 8, folds: 5, ranks: 1, want: 5},
		{jobs: 4, folds: 5, avail: 100, ranks: 1, want: 4},
		{jobs: 4, folds: 5, avail: 5, ranks: 1, want: 2},
		{jobs: 4, folds: 5, avail: 2, ranks: 1, want: 1},
		{jobs: 4, folds: 5, ranks: 2, want: 1},
	} {
		availableMemory = func() (int64, string, bool) { return c.avail * need, "test", c.avail > 0 }
		cfg := defaultRunConfig()
		cfg.Train = tc
		cfg.Data.FoldJobs, cfg.Data.Folds = c.jobs, c.folds
		if got := foldJobs(&cfg, fakeComm{size: c.ranks}, m, fit); got != c.want {
			t.Errorf("fold_jobs %d, %d folds, free memory %d× a model's bound, %d ranks: %d at once, want %d", c.jobs, c.folds, c.avail, c.ranks, got, c.want)
		}
	}
}

// fakeComm is a one-process communicator that says it has size ranks.
type fakeComm struct {
	dist.Local
	size int
}

func (c fakeComm) Size() int { return c.size }

// TestPrefixWriter: lines written in pieces from several goroutines come
// out whole, each once, each behind its writer's prefix.
func TestPrefixWriter(t *testing.T) {
	var buf bytes.Buffer
	sink := newLineSink(&buf)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := sink.prefixed(fmt.Sprintf("fold %d: ", g))
			for i := range 50 {
				fmt.Fprintf(w, "epoch %d", i)
				fmt.Fprintf(w, " loss %d\nnext ", i)
			}
			fmt.Fprint(w, "end\n")
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4*51 {
		t.Fatalf("%d lines, want %d", len(lines), 4*51)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i, j int
		if n, _ := fmt.Sscanf(l, "fold %d: epoch %d loss %d", &g, &i, &j); n == 3 && i == j {
		} else if n, _ := fmt.Sscanf(l, "fold %d: next epoch %d loss %d", &g, &i, &j); n == 3 && i == j {
		} else if !strings.HasSuffix(l, ": next end") {
			t.Fatalf("line %q is not one whole line behind its prefix", l)
		}
		if seen[l] {
			t.Fatalf("line %q twice", l)
		}
		seen[l] = true
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
	cmd := exec.Command(os.Args[0], args(out, 3)...)
	cmd.Env = env
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for { // until every fold has logged an epoch
		n := 0
		for k := 1; k <= 3; k++ {
			if b, _ := os.ReadFile(filepath.Join(foldDir(out, k), train.MetricsFile)); bytes.Contains(b, []byte("train_loss")) {
				n++
			}
		}
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	msg := errOut.String()
	if !ok || ee.ExitCode() != 130 || !strings.Contains(msg, "checkpoint written to "+foldDir(out, 1)) {
		t.Fatalf("after SIGINT: %v, stderr %q; want exit 130 naming fold 1's checkpoint", err, msg)
	}
	for k := 1; k <= 3; k++ {
		if _, err := os.Stat(filepath.Join(foldDir(out, k), train.LastFile)); err != nil {
			t.Errorf("fold %d: %v", k, err)
		}
	}
	_, resume, found := strings.Cut(msg, "resume with: ")
	words := strings.Fields(resume)
	if !found || words[len(words)-1] != "--train.resume" {
		t.Fatalf("resume command %q", resume)
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
