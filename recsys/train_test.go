package recsys

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/events"
)

func trainSynth(t *testing.T, task, variant string, tc TrainConfig) (*Trainer, *TrainResult) {
	t.Helper()
	d := synthData(60, 20, 11)
	mustSplit(t, d, events.SplitRule{Rule: events.LastFraction, Val: 0.15, Test: 0.15})
	if task == TaskNext {
		mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	}
	spec := &DataSpec{Vocab: d.Log.Vocab, ItemCats: d.Items.Values, ItemOf: d.Items.Of, Split: events.SplitRule{Rule: events.LeaveOneOut}}
	cfg := testConfig(task, variant, d, 9)
	cfg.DModel, cfg.FFN = 16, 32
	m, err := New[float32](cfg, d.Items.Of, tc.Seed)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trainer{Cfg: tc, Model: m, Data: d, Spec: spec}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tr, res
}

func quickTrain(out string) TrainConfig {
	tc := DefaultTrainConfig()
	tc.Epochs, tc.BatchSize, tc.LR, tc.Negatives, tc.Out, tc.Progress = 12, 16, 3e-3, 8, out, "none"
	return tc
}

// Training learns the synthetic structure (each user prefers one half of
// the catalogue; items follow each other in a drifting order) well beyond
// chance, for both tasks, and the best checkpoint reproduces its metrics.
func TestTrainingLearns(t *testing.T) {
	for _, task := range []string{TaskRanking, TaskNext} {
		t.Run(task, func(t *testing.T) {
			tr, res := trainSynth(t, task, PosSiren, quickTrain(t.TempDir()))
			if res.Best == nil {
				t.Fatal("no validation metrics")
			}
			switch task {
			case TaskRanking:
				if res.Best.AUC < 0.7 || res.Best.NE >= 0.95 {
					t.Errorf("validation %s: want AUC ≥ 0.7 and NE < 0.95", res.Best.Summary())
				}
			case TaskNext:
				// Most of the 20 items are outside a user's short history,
				// so HR@10 is high for any model: compare NDCG@10 with the
				// same model before training.
				fresh, err := New[float32](tr.Model.Cfg, tr.Model.ItemCats, tr.Cfg.Seed)
				if err != nil {
					t.Fatal(err)
				}
				before, err := Evaluate(fresh, fresh.NewWorkspace(), tr.Data, events.Val, 64)
				if err != nil {
					t.Fatal(err)
				}
				if res.Best.NDCG10 < before.NDCG10+0.15 {
					t.Errorf("validation %s; untrained %s: want NDCG@10 0.15 higher", res.Best.Summary(), before.Summary())
				}
			}
			ld, err := Load(tr.Cfg.Out)
			if err != nil {
				t.Fatal(err)
			}
			// The same evaluation batch: batch composition moves the last bits.
			met, err := Evaluate(ld.Model, ld.Model.NewWorkspace(), tr.Data, events.Val, tr.Cfg.EvalBatch)
			if err != nil {
				t.Fatal(err)
			}
			if met != *res.Best {
				t.Errorf("best.safetensors gives %+v, training reported %+v", met, *res.Best)
			}
			raw, err := os.ReadFile(filepath.Join(tr.Cfg.Out, MetricsFile))
			if err != nil || strings.Count(string(raw), `"val"`) != tr.Cfg.Epochs {
				t.Errorf("metrics.jsonl: %d epoch records, want %d (%v)", strings.Count(string(raw), `"val"`), tr.Cfg.Epochs, err)
			}
		})
	}
}

// A run stopped part-way and resumed ends with the same weights, bit for
// bit, as an uninterrupted one.
func TestResumeIsExact(t *testing.T) {
	tc := quickTrain(t.TempDir())
	tc.Epochs = 3
	full, _ := trainSynth(t, TaskNext, PosSirenSin, tc)

	tc.Out = t.TempDir()
	tc.MaxSteps = 5 // mid-epoch
	trainSynth(t, TaskNext, PosSirenSin, tc)
	tc.MaxSteps, tc.Resume = 0, true
	resumed, res := trainSynth(t, TaskNext, PosSirenSin, tc)
	if res.Steps != 3*((len(resumed.Model.Windows(resumed.Data, events.Train))+tc.BatchSize-1)/tc.BatchSize) {
		t.Errorf("resumed run took %d steps in all", res.Steps)
	}
	for i, w := range full.Model.W {
		if resumed.Model.W[i] != w {
			t.Fatalf("weight %d: resumed %v, uninterrupted %v", i, resumed.Model.W[i], w)
		}
	}
	// Resuming a finished run trains nothing and reports its result.
	again, res2 := trainSynth(t, TaskNext, PosSirenSin, tc)
	if res2.Steps != res.Steps || res2.BestEpoch != res.BestEpoch || res2.TrainLoss != res.TrainLoss || res2.Best == nil || *res2.Best != *res.Best {
		t.Errorf("finished run resumed: %+v, first %+v", res2, res)
	}
	for i, w := range full.Model.W {
		if again.Model.W[i] != w {
			t.Fatalf("weight %d changed by resuming a finished run", i)
		}
	}
}

func TestLoadRefusesMismatch(t *testing.T) {
	tr, _ := trainSynth(t, TaskRanking, PosIndex, func() TrainConfig { tc := quickTrain(t.TempDir()); tc.Epochs = 1; return tc }())
	path := filepath.Join(tr.Cfg.Out, BestFile)
	if _, err := Load(filepath.Join(tr.Cfg.Out, "missing.safetensors")); err == nil {
		t.Error("missing file loaded")
	}
	// A config that implies other shapes: the error names the tensor.
	ld, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ld.Model.Cfg.DModel = 24
	ld.Model.Cfg.FFN = 48
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	big, err := New[float32](ld.Model.Cfg, ld.Model.ItemCats, 1)
	if err != nil {
		t.Fatal(err)
	}
	big.Cfg.DModel = 16 // claims the old width, holds the new tensors
	if err := big.Save(bad, ld.Spec, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "item_embedding") {
		t.Errorf("mismatched shapes: %v", err)
	}
}

// Resuming with another recipe (here the learning rate) is refused.
func TestResumeRefusesOtherRecipe(t *testing.T) {
	tc := quickTrain(t.TempDir())
	tc.Epochs, tc.MaxSteps = 2, 3
	trainSynth(t, TaskRanking, PosIndex, tc)
	tc.Resume, tc.LR = true, tc.LR/2
	d := synthData(60, 20, 11)
	mustSplit(t, d, events.SplitRule{Rule: events.LastFraction, Val: 0.15, Test: 0.15})
	cfg := testConfig(TaskRanking, PosIndex, d, 9)
	cfg.DModel, cfg.FFN = 16, 32
	m, _ := New[float32](cfg, d.Items.Of, tc.Seed)
	_, err := (&Trainer{Cfg: tc, Model: m, Data: d, Spec: &DataSpec{Vocab: d.Log.Vocab}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "training recipe") {
		t.Errorf("resume with another lr: %v", err)
	}
}
