package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/model"
	"romae/tensor"
)

// A checkpoint counts its steps in batches of its run's size over its
// run's samples: resuming with another batch size or other training data
// is refused, naming what differs, instead of indexing past an epoch.
func TestResumeRefusesOtherSteps(t *testing.T) {
	for _, tc := range []struct {
		name          string
		batch         int
		samples, seed int
		scale         float32 // multiplies the values: another data.normalize
		want          string
	}{
		{"smaller batch", 3, 10, 1, 1, "train.batch_size 4, this one has 3"},
		{"larger batch", 8, 10, 1, 1, "train.batch_size 4, this one has 8"},
		{"other data", 4, 12, 1, 1, "10 training samples, this one has 12"},
		{"as many samples from another file", 4, 10, 5, 1, "other training data: the same number of samples (10)"},
		{"the same file scaled otherwise", 4, 10, 1, 2, "other training data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.MaxSteps = 4
			runToy(t, cfg, model.TaskClassify)
			cfg.MaxSteps, cfg.Resume, cfg.BatchSize = 0, true, tc.batch
			train := toyData(tc.samples, uint64(tc.seed))
			for i := range train.Samples {
				for k := range train.Samples[i].Values {
					train.Samples[i].Values[k] *= tc.scale
				}
			}
			tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskClassify), Train: train, Val: toyData(6, 2), Data: toySpec(model.TaskClassify), Log: io.Discard}
			_, err := tr.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// Resuming with another model configuration is refused naming the
// fields that differ (a fold model whose pool the recipe now chooses
// otherwise: model.pool mixed).
func TestResumeNamesChangedModelConfig(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	cfg.MaxSteps = 2
	runToy(t, cfg, model.TaskClassify)
	cfg.MaxSteps, cfg.Resume = 0, true
	m := toyModel(t, model.TaskClassify)
	c := m.Cfg
	c.Pool, c.HeadDropout = model.PoolMeanMax, 0.3
	other, err := model.New[float32](c, 11)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trainer{Cfg: cfg, Model: other, Train: toyData(10, 1), Val: toyData(6, 2), Data: toySpec(model.TaskClassify), Log: io.Discard}
	_, err = tr.Run(context.Background())
	want := fmt.Sprintf("head_dropout %v → 0.3, pool %s → meanmax", m.Cfg.HeadDropout, m.Cfg.Pool)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error naming %q", err, want)
	}
}

// Resuming a run that has nothing left to do (stopped by train.max_steps,
// or all its epochs done) takes no step, logs nothing, and reports the
// run's own training loss and step time rather than zeros.
func TestResumeWithNothingLeft(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxSteps int
		steps    int
	}{{"max_steps", 5, 5}, {"all epochs", 0, 9}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.MaxSteps = tc.maxSteps
			_, first := runToy(t, cfg, model.TaskClassify)
			log := metricsRecords(t, cfg.Out)
			cfg.Resume = true
			_, again := runToy(t, cfg, model.TaskClassify)
			if again.Steps != tc.steps || first.Steps != tc.steps {
				t.Fatalf("steps %d then %d, want %d both times", first.Steps, again.Steps, tc.steps)
			}
			if again.TrainLoss != first.TrainLoss || !(again.TrainLoss > 0) {
				t.Errorf("train loss %v after resuming, %v before", again.TrainLoss, first.TrainLoss)
			}
			if again.StepSeconds != first.StepSeconds || !(again.StepSeconds > 0) {
				t.Errorf("step time %v after resuming, %v before", again.StepSeconds, first.StepSeconds)
			}
			if got := metricsRecords(t, cfg.Out); strings.Join(got, "\n") != strings.Join(log, "\n") {
				t.Errorf("the log changed:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(log, "\n"))
			}
		})
	}
}

// A checkpoint written at an epoch's last step precedes that epoch's
// end-of-epoch record; a run killed after the record was written, resumed
// from that checkpoint, writes the record once.
func TestMetricsLogCheckpointAtEpochEnd(t *testing.T) {
	cfg := toyConfig(t.TempDir()) // 10 samples in batches of 4: 3 steps an epoch
	runToy(t, cfg, model.TaskClassify)
	whole := metricsRecords(t, cfg.Out)
	raw, err := os.ReadFile(filepath.Join(cfg.Out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var epochEnd string // epoch 1's record
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.Contains(line, `"train_loss"`) && strings.Contains(line, `"epoch":1,`) {
			epochEnd = line
		}
	}
	if epochEnd == "" {
		t.Fatalf("no end-of-epoch-1 record in\n%s", raw)
	}

	half := cfg
	half.Out, half.MaxSteps = t.TempDir(), 3 // checkpoint at epoch 1's last step
	runToy(t, half, model.TaskClassify)
	// What the killed run had logged after that checkpoint.
	f, err := os.OpenFile(filepath.Join(half.Out, MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(epochEnd)
	f.Close()
	half.MaxSteps, half.Resume = 0, true
	runToy(t, half, model.TaskClassify)
	if got := metricsRecords(t, half.Out); strings.Join(got, "\n") != strings.Join(whole, "\n") {
		t.Errorf("resumed log differs from the uninterrupted one:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(whole, "\n"))
	}
}

// Steps too large for the weights end the run with an error that names
// the learning rate, not a JSON encoder's complaint about NaN.
func TestDivergedRunNamesLR(t *testing.T) {
	cfg := toyConfig(t.TempDir())
	cfg.LR, cfg.WarmupFrac = 1e6, 0
	tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskPretrain), Train: toyData(10, 1), Val: toyData(6, 2), Data: toySpec(model.TaskPretrain), Log: io.Discard}
	_, err := tr.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "train.lr") {
		t.Fatalf("got %v, want an error naming train.lr", err)
	}
	raw, _ := os.ReadFile(filepath.Join(cfg.Out, MetricsFile))
	if strings.Contains(string(raw), "NaN") {
		t.Errorf("metrics log holds a NaN: %s", raw)
	}
}

// evaluate says when its numbers cannot be the run's: another precision,
// or, for pre-training, other validation masks.
func TestEvaluationNote(t *testing.T) {
	fp32 := tensor.Numerics{Precision: "fp32", Kernels: "avx2"}
	bf16 := tensor.Numerics{Precision: "bf16", Kernels: "avx512, bf16 vdpbf16ps"}
	st, _ := json.Marshal(state{Numerics: &fp32})
	cfg, _ := json.Marshal(Config{Seed: 7, MaskRatio: 0.5})
	meta := map[string]string{StateMeta: string(st), metaConfig: string(cfg)}
	for _, tc := range []struct {
		name     string
		meta     map[string]string
		now      tensor.Numerics
		pretrain bool
		seed     uint64
		ratio    float64
		want     []string // "" : no note
	}{
		{"same precision, classifier", meta, fp32, false, 1, 0.75, nil},
		{"other kernels, same precision", meta, tensor.Numerics{Precision: "fp32", Kernels: "avx512"}, false, 1, 0.75, nil},
		{"other precision", meta, bf16, false, 1, 0.75, []string{"it ran in fp32, this in bf16 (ROMAE_PRECISION=fp32)"}},
		{"pre-training, run's masks", meta, fp32, true, 7, 0.5, nil},
		{"pre-training, other seed", meta, fp32, true, 1, 0.5, []string{"train.seed 7 and train.mask_ratio 0.5, these with --seed 1 --mask-ratio 0.5"}},
		{"pre-training, other ratio and precision", meta, bf16, true, 7, 0.75, []string{"ROMAE_PRECISION=fp32", "--mask-ratio 0.75"}},
		{"nothing recorded", map[string]string{}, bf16, true, 1, 0.75, nil},
	} {
		got := EvaluationNote(tc.meta, tc.now, tc.pretrain, tc.seed, tc.ratio)
		if (got == "") != (tc.want == nil) {
			t.Errorf("%s: note %q", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: note %q, want %q in it", tc.name, got, w)
			}
		}
	}
}
