package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"romae/data"
	"romae/model"
)

// toyData makes n irregular series of 6..12 tokens (2 values, 1-D real
// time), labelled by whether their first value trends up or down.
func toyData(n int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	ds := &data.Dataset{Name: "toy", C: 2, D: 1, Classes: []string{"down", "up"}}
	for i := 0; i < n; i++ {
		L := 6 + rng.IntN(7)
		s := data.Sample{ID: fmt.Sprint(i), Label: i % 2}
		t := 0.0
		for j := 0; j < L; j++ {
			t += 0.5 + rng.Float64()
			slope := -1.0
			if s.Label == 1 {
				slope = 1
			}
			s.Values = append(s.Values, float32(slope*t/10+0.1*rng.NormFloat64()), float32(rng.NormFloat64()))
			s.Positions = append(s.Positions, float32(t))
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

func toyModel(t testing.TB, task string) *model.Model[float32] {
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 32}
	c.Decoder = model.Size{DModel: 12, Heads: 1, Depth: 1, FFN: 16}
	c.Values, c.Task, c.Outputs = 2, task, 2
	c.AttnDropout, c.HiddenDropout, c.DropPath = 0.1, 0.1, 0.1
	m, err := model.New[float32](c, 11)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// toySpec is the data spec of toyData: generated, unscaled, its classes
// for a classifier.
func toySpec(task string) *data.Spec {
	s := &data.Spec{Generated: "toy"}
	if task == model.TaskClassify {
		s.Classes = []string{"down", "up"}
	}
	return s
}

func toyConfig(out string) Config {
	c := DefaultConfig()
	c.Epochs, c.BatchSize, c.LR, c.Out, c.Progress = 3, 4, 1e-3, out, "none"
	return c
}

func runToy(t testing.TB, cfg Config, task string) (*model.Model[float32], *Result) {
	m := toyModel(t, task)
	train := toyData(10, 1)
	if cfg.AugmentShift {
		// Stand-ins for shifted tokenisations (data.PatchSeriesShifted):
		// each sample also comes without its first token.
		for i := range train.Samples {
			s := &train.Samples[i]
			s.Shifts = []data.Sample{{ID: s.ID, Label: s.Label, Values: s.Values[2:], Positions: s.Positions[1:]}}
		}
	}
	tr := &Trainer{Cfg: cfg, Model: m, Train: train, Val: toyData(6, 2), Data: toySpec(task), Log: io.Discard}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

func sameWeights(t *testing.T, a, b *model.Model[float32]) {
	t.Helper()
	for i := range a.W {
		if a.W[i] != b.W[i] {
			t.Fatalf("weight %d differs: %v vs %v", i, a.W[i], b.W[i])
		}
	}
}

// Stopping mid-epoch (step 4 of 3-step epochs) and resuming gives exactly
// the weights of an uninterrupted run, for both optimisers and tasks, and
// with a moving average of the weights (which the model holds at the end).
func TestResumeIsExact(t *testing.T) {
	for _, tc := range []struct {
		task, opt string
		ema       float64
		shift     bool
	}{{model.TaskPretrain, "adamw", 0, false}, {model.TaskClassify, "sgd", 0, false}, {model.TaskClassify, "adamw", 0.9, false},
		{model.TaskClassify, "adamw", 0, true}} {
		t.Run(fmt.Sprintf("%s/%s/ema%v/shift%v", tc.task, tc.opt, tc.ema, tc.shift), func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.Optimizer, cfg.EMA, cfg.AugmentShift = tc.opt, tc.ema, tc.shift
			whole, _ := runToy(t, cfg, tc.task)
			if tc.shift {
				// The shifts are drawn: without them the run differs.
				cfg.Out, cfg.AugmentShift = t.TempDir(), false
				plain, _ := runToy(t, cfg, tc.task)
				if slices.Equal(plain.W, whole.W) {
					t.Fatal("train.augment_shift changed nothing")
				}
				cfg.AugmentShift = true
			}

			cfg.Out = t.TempDir()
			cfg.MaxSteps = 4
			_, res := runToy(t, cfg, tc.task)
			if !res.Stopped || res.Steps != 4 {
				t.Fatalf("first half: %+v, want stopped at step 4", res)
			}
			cfg.MaxSteps, cfg.Resume = 0, true
			resumed, res := runToy(t, cfg, tc.task)
			if res.Steps != 9 {
				t.Fatalf("resumed run ended at step %d, want 9", res.Steps)
			}
			sameWeights(t, whole, resumed)
		})
	}
}

// The average follows w_avg ← d·w_avg + (1−d)·w with d = min(decay,
// (1+t)/(10+t)), and swap is its own inverse.
func TestWeightEMA(t *testing.T) {
	e := newWeightEMA([]float32{1, 2}, 0.5)
	e.update([]float32{3, 4}, 1) // d = min(0.5, 2/11) = 2/11
	want := []float32{2.0/11*1 + 9.0/11*3, 2.0/11*2 + 9.0/11*4}
	e.update([]float32{5, 6}, 100) // d = 0.5
	want = []float32{0.5*want[0] + 2.5, 0.5*want[1] + 3}
	for i := range want {
		if d := e.avg[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("avg[%d] = %v, want %v", i, e.avg[i], want[i])
		}
	}
	w := []float32{7, 8}
	e.swap(w)
	if d := w[0] - want[0]; d > 1e-6 || d < -1e-6 || e.avg[0] != 7 {
		t.Fatalf("swap: w %v avg %v", w, e.avg)
	}
	e.swap(w)
	if w[0] != 7 || w[1] != 8 {
		t.Fatalf("swap twice: w %v, want [7 8]", w)
	}
}

// A training process killed with SIGKILL at an arbitrary moment (it writes
// last.safetensors after every step) resumes to the same final weights.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a training subprocess")
	}
	cfg := toyConfig(t.TempDir())
	cfg.Epochs = killEpochs
	whole, _ := runToy(t, cfg, model.TaskPretrain)

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrainSubprocess$")
	cmd.Env = append(os.Environ(), "ROMAE_TRAIN_SUBPROCESS="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once a few steps are checkpointed, wherever the process is then.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, MetricsFile)); err == nil && strings.Count(string(b), "\n") >= 12 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("subprocess made no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	_, ck, err := model.Load[float32](filepath.Join(dir, LastFile))
	if err != nil {
		t.Fatal(err)
	}
	var st state
	if err := json.Unmarshal([]byte(ck.Meta[StateMeta]), &st); err != nil {
		t.Fatal(err)
	}
	total := 3 * killEpochs
	if st.Step >= total {
		t.Fatalf("the subprocess finished (step %d) before it was killed; the test proves nothing", st.Step)
	}
	t.Logf("killed after checkpointing step %d of %d (epoch %d)", st.Step, total, st.Epoch+1)

	cfg.Out, cfg.Resume = dir, true
	resumed, res := runToy(t, cfg, model.TaskPretrain)
	if res.Steps != total {
		t.Fatalf("resumed run ended at step %d, want %d", res.Steps, total)
	}
	sameWeights(t, whole, resumed)
}

// killEpochs is long enough (3 steps each, a checkpoint per step) that the
// kill lands mid-run.
const killEpochs = 200

// TestTrainSubprocess is the process TestResumeAfterKill kills.
func TestTrainSubprocess(t *testing.T) {
	dir := os.Getenv("ROMAE_TRAIN_SUBPROCESS")
	if dir == "" {
		t.Skip("only run as TestResumeAfterKill's subprocess")
	}
	cfg := toyConfig(dir)
	cfg.Epochs, cfg.CheckpointEvery = killEpochs, 1
	runToy(t, cfg, model.TaskPretrain)
}

// Training actually learns: the toy classification task is separable.
func TestTrainingLearns(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	cfg.Epochs, cfg.LR = 30, 3e-3
	m := toyModel(t, model.TaskClassify)
	tr := &Trainer{Cfg: cfg, Model: m, Train: toyData(40, 1), Val: toyData(20, 2), Data: toySpec(model.TaskClassify), Log: io.Discard}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Best == nil || res.Best.Accuracy < 0.9 {
		t.Errorf("best validation %+v, want accuracy ≥ 0.9 on a separable task", res.Best)
	}
	for _, f := range []string{BestFile, LastFile, MetricsFile} {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestBadInputsRefused(t *testing.T) {
	noLabel := toyData(4, 1)
	noLabel.Samples[2].Label = -1
	wrongC := toyData(4, 1)
	wrongC.C = 3
	for i := range wrongC.Samples {
		s := &wrongC.Samples[i]
		s.Values = append(s.Values, s.Values[:len(s.Values)/2]...)
	}
	nan := toyData(4, 1)
	nan.Samples[1].Values[0] = float32(nanValue())
	cases := []struct {
		name string
		ds   *data.Dataset
		cfg  func(*Config)
		want string
		spec func() *data.Spec // nil: toySpec
	}{
		{"missing label", noLabel, nil, "sample 2 (2) has no label", nil},
		{"wrong values", wrongC, nil, "values per token", nil},
		{"nan value", nan, nil, "NaN", nil},
		{"bad lr", toyData(4, 1), func(c *Config) { c.LR = -1 }, "train.lr", nil},
		{"bad optimizer", toyData(4, 1), func(c *Config) { c.Optimizer = "adam" }, "train.optimizer", nil},
		{"bad class weights", toyData(4, 1), func(c *Config) { c.ClassWeights = "1,2,3" }, "class_weights", nil},
		{"empty", &data.Dataset{Name: "e", C: 2, D: 1, Classes: []string{"a", "b"}}, nil, "empty", nil},
		{"no data spec", toyData(4, 1), nil, "data.Spec", func() *data.Spec { return nil }},
		{"spec classes short", toyData(4, 1), nil, "1 class names for a classifier with 2 outputs",
			func() *data.Spec { return &data.Spec{Classes: []string{"down"}} }},
		{"spec classes reordered", toyData(4, 1), nil, "differ from the training data's",
			func() *data.Spec { return &data.Spec{Classes: []string{"up", "down"}} }},
		{"spec stats width", toyData(4, 1), nil, "stats for 1 value slots",
			func() *data.Spec {
				return &data.Spec{Classes: []string{"down", "up"}, Stats: &data.Stats{Mean: []float64{0}, Std: []float64{1}}}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			spec := toySpec(model.TaskClassify)
			if tc.spec != nil {
				spec = tc.spec()
			}
			tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskClassify), Train: tc.ds, Data: spec, Log: io.Discard}
			_, err := tr.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func nanValue() float64 { var z float64; return z / z }

// metricsRecords reads dir's metrics.jsonl without its wall-clock fields.
func metricsRecords(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		delete(rec, "seconds")
		delete(rec, "samples_per_s")
		b, _ := json.Marshal(rec)
		out = append(out, string(b))
	}
	return out
}

// The metrics log of a stopped-and-resumed run is the uninterrupted run's
// (records after the checkpoint are not repeated), and a fresh run in a
// used directory starts a new log rather than appending to the old one.
func TestMetricsLog(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	runToy(t, cfg, model.TaskPretrain)
	whole := metricsRecords(t, cfg.Out)

	runToy(t, cfg, model.TaskPretrain) // again, same directory, no resume
	if again := metricsRecords(t, cfg.Out); strings.Join(again, "\n") != strings.Join(whole, "\n") {
		t.Errorf("fresh run in a used directory: %d records, want %d", len(again), len(whole))
	}

	half := cfg
	half.Out, half.MaxSteps, half.CheckpointEvery = t.TempDir(), 5, 2 // last checkpoint at step 4
	runToy(t, half, model.TaskPretrain)
	half.MaxSteps, half.Resume = 0, true
	runToy(t, half, model.TaskPretrain)
	if got := metricsRecords(t, half.Out); strings.Join(got, "\n") != strings.Join(whole, "\n") {
		t.Errorf("resumed log differs from the uninterrupted one:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(whole, "\n"))
	}
}

// A step whose loss is not finite is skipped (no update, said in the log
// and counted in the result); ten in a row end the run with an error.
func TestNonFiniteStepsSkipped(t *testing.T) {
	for _, c := range []struct {
		name      string
		poison    func(step int) bool
		wantSkips int
		wantErr   bool
	}{
		{"one poisoned batch", func(step int) bool { return step == 3 }, 1, false},
		{"diverged", func(step int) bool { return step >= 2 }, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.EMA, cfg.Epochs = 0.9, 6 // 18 steps
			m := toyModel(t, model.TaskPretrain)
			step := 0
			// The mask hook runs once per step, before the forward pass: a
			// +Inf value there makes that step's loss non-finite.
			mask := func(dst []bool, bt *data.Batch, rng *rand.Rand) []bool {
				dst = data.RandomMask(dst, bt, cfg.MaskRatio, rng)
				if c.poison(step) {
					bt.Values[0] = float32(math.Inf(1))
				}
				step++
				return dst
			}
			var log strings.Builder
			tr := &Trainer{Cfg: cfg, Model: m, Train: toyData(12, 1), Data: toySpec(model.TaskPretrain), Log: &log, Mask: mask}
			res, err := tr.Run(context.Background())
			if c.wantErr {
				if err == nil || !strings.Contains(err.Error(), "in a row") {
					t.Fatalf("a diverged run: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.SkippedSteps != c.wantSkips || !strings.Contains(log.String(), "update skipped") {
				t.Errorf("%d skipped steps, log %q; want %d", res.SkippedSteps, log.String(), c.wantSkips)
			}
			for i, w := range m.W {
				if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
					t.Fatalf("weight %d is %v after a skipped step", i, w)
				}
			}
		})
	}
}

// Checkpoints at epoch ends are paced by train.checkpoint_seconds, and the
// pace changes nothing but how often they are written: under select
// "last", best.safetensors comes with last.safetensors, and the run's
// weights and best epoch are the same either way.
func TestCheckpointPacing(t *testing.T) {
	const epochs = 6
	var weights [][]float32
	for _, c := range []struct {
		seconds            float64
		wantLast, wantBest int
	}{
		{0, epochs, epochs}, // every epoch's end (the last one by finish)
		{1e9, 1, 1},         // the end of the run only
	} {
		cfg := toyConfig(t.TempDir())
		cfg.Epochs, cfg.Select, cfg.CheckpointSeconds = epochs, "last", c.seconds
		tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskClassify), Train: toyData(10, 1), Val: toyData(6, 2),
			Data: toySpec(model.TaskClassify), Log: io.Discard}
		res, err := tr.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tr.writes[LastFile] != c.wantLast || tr.writes[BestFile] != c.wantBest || res.BestEpoch != epochs {
			t.Errorf("checkpoint_seconds %v: %d last and %d best writes, best epoch %d; want %d, %d, %d",
				c.seconds, tr.writes[LastFile], tr.writes[BestFile], res.BestEpoch, c.wantLast, c.wantBest, epochs)
		}
		best, _, err := model.Load[float32](filepath.Join(cfg.Out, BestFile))
		if err != nil {
			t.Fatal(err)
		}
		weights = append(weights, best.W)
	}
	for i := range weights[0] {
		if weights[0][i] != weights[1][i] {
			t.Fatalf("best.safetensors weight %d: %v with checkpoints every epoch, %v with one", i, weights[0][i], weights[1][i])
		}
	}
}

// A step that needs more than 90% of the free memory is refused before the
// first step, with the bound, the free memory and what to change; where
// the free memory cannot be read the run goes ahead.
func TestMemoryCheck(t *testing.T) {
	defer func(f func() (int64, string, bool)) { availableMemory = f }(availableMemory)
	m := toyModel(t, model.TaskClassify)
	ds := toyData(4, 1)
	n := 0
	for _, s := range ds.Samples {
		n = max(n, s.Len(ds.C))
	}
	need := m.Cfg.StepBytes(4, n, 0, true) + 8*int64(m.NumParams())
	for _, tc := range []struct {
		name  string
		avail int64
		ok    bool
		want  string // "": trains
	}{
		{"fits", need * 2, true, ""},
		{"under 90% only", need * 21 / 20, true, "too little room"},
		{"more than free", need / 2, true, "more than the"},
		{"unknown", 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			availableMemory = func() (int64, string, bool) { return tc.avail, "test", tc.ok }
			cfg := toyConfig(t.TempDir())
			cfg.Epochs = 1
			tr := &Trainer{Cfg: cfg, Model: m, Train: ds, Data: toySpec(model.TaskClassify), Log: io.Discard}
			_, err := tr.Run(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "train.batch_size")):
				t.Fatalf("error %v, want one saying %q and naming train.batch_size", err, tc.want)
			}
		})
	}
}
