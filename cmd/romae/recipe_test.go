package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"romae/data"
	"romae/model"
)

func TestRecipeFromData(t *testing.T) {
	cases := []struct {
		name        string
		n           int
		task        string
		fromScratch bool
		args        []string
		want        map[string]any
	}{
		{"tiny set from scratch", 40, model.TaskClassify, true, nil,
			map[string]any{"batch": 8, "epochs": 300, "size": "tiny-shallow", "pool": model.PoolMean, "lr": 1e-3, "drop": 0.1, "select": "last", "eval_every": 6, "refit": true, "ema": 0.99, "warp": 0.0}},
		{"fold models of a classifier", 40, model.TaskClassify, true, []string{"--data.folds", "5"},
			map[string]any{"pool": "mixed"}},
		{"fold models of a regressor", 40, model.TaskRegress, true, []string{"--data.folds", "5"},
			map[string]any{"pool": model.PoolMean}},
		{"fold models from a pre-trained encoder", 40, model.TaskClassify, false, []string{"--data.folds", "5"},
			map[string]any{"pool": "auto"}},
		{"270 series", 270, model.TaskClassify, true, nil,
			map[string]any{"batch": 32, "epochs": 167, "lr": 1e-3, "select": "loss", "eval_every": 1, "refit": false}},
		{"fine-tuning a pre-trained encoder", 270, model.TaskClassify, false, nil,
			map[string]any{"batch": 32, "lr": 5e-4, "size": "tiny", "pool": "auto"}},
		{"flags win", 40, model.TaskClassify, true, []string{"--train.epochs", "7", "--train.lr", "0.01", "--train.augment_drop", "0", "--train.augment_warp", "0.2"},
			map[string]any{"batch": 8, "epochs": 7, "lr": 0.01, "drop": 0.0, "eval_every": 1, "warp": 0.2}},
		{"explicit batch sets the epochs", 40, model.TaskClassify, true, []string{"--train.batch_size", "40"},
			map[string]any{"batch": 40, "epochs": 500}},
		{"regression from scratch", 200, model.TaskRegress, true, nil,
			map[string]any{"batch": 16, "drop": 0.1, "jitter": 0.05, "scale": 0.0, "smoothing": 0.0, "ema": 0.99}},
		{"classification scales", 200, model.TaskClassify, true, nil,
			map[string]any{"jitter": 0.05, "scale": 0.1, "smoothing": 0.1}},
		{"pre-training", 5000, model.TaskPretrain, true, nil,
			map[string]any{"batch": 64, "epochs": 20, "drop": 0.0, "ema": 0.0, "warp": 0.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, err := parseTraining("finetune", "", append(tc.args, "--data", trainTS, "--out", t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			cfg, r := &run.cfg, run.r
			r.applyTrainRecipe(cfg, tc.n, tc.n/4, tc.task, tc.fromScratch)
			if tc.task != model.TaskPretrain {
				r.applyRefitRecipe(cfg, tc.n/4)
			}
			got := map[string]any{"batch": cfg.Train.BatchSize, "epochs": cfg.Train.Epochs, "size": cfg.Model.Size,
				"pool": cfg.Model.Pool, "lr": cfg.Train.LR, "drop": cfg.Train.AugmentDrop, "select": cfg.Train.Select,
				"refit": cfg.Data.Refit, "ema": cfg.Train.EMA, "eval_every": cfg.Train.EvalEvery, "warp": cfg.Train.AugmentWarp,
				"jitter": cfg.Train.AugmentJitter, "scale": cfg.Train.AugmentScale, "smoothing": cfg.Train.LabelSmoothing}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if s := r.summary(); !strings.HasPrefix(s, "romae: recipe") {
				t.Errorf("summary %q", s)
			}
			for _, a := range tc.args {
				if key := strings.TrimPrefix(a, "--"); key != a && strings.Contains(r.summary(), key+"=") {
					t.Errorf("the summary reports %s as chosen, but the user gave it", key)
				}
			}
		})
	}
}

// seriesDataset holds one series per length, labelled a and b in turn,
// with that many observations on every channel (value = time index;
// the channel is a second position axis when there are several).
func seriesDataset(lengths []int, channels int) *data.Dataset {
	d := 1
	if channels > 1 {
		d = 2
	}
	ds := &data.Dataset{C: 1, D: d, TimeAxis: d - 1, Classes: []string{"a", "b"}}
	for k, n := range lengths {
		s := data.Sample{Label: k % 2}
		for c := range channels {
			for i := range n {
				s.Values = append(s.Values, float32(i))
				if d == 2 {
					s.Positions = append(s.Positions, float32(c))
				}
				s.Positions = append(s.Positions, float32(i))
			}
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

func TestSeriesPatchFor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lengths  []int
		channels int
		want     int
	}{
		{"short", []int{24}, 1, 1},
		{"at the limit", []int{48}, 1, 1},
		{"GunPoint", []int{150}, 1, 6},
		{"ArrowHead", []int{251}, 1, 10},
		{"long", []int{5000}, 1, 32},
		{"6 channels", []int{150, 150}, 6, 6},
		{"6 short channels", []int{40}, 6, 1},
		// Ragged: P from the lower quartile (90), not the median (130).
		{"ragged", []int{360, 30, 130, 50, 190, 90, 140, 100}, 1, 4},
		{"ragged, short quartile", []int{10, 10, 60, 60}, 1, 2},
		{"ragged, short median", []int{10, 10, 40, 400}, 1, 1},
		// The longest sample keeps at most maxSeqTokens (512) tokens.
		{"at the token bound", []int{16384}, 1, 32},
		{"past the token bound", []int{16385}, 1, 33},
		{"very long", []int{200000}, 1, 391},
		{"one long outlier", []int{100, 100, 100, 60000}, 1, 118},
		{"long, 6 channels on an axis", []int{5000}, 6, 59},
	} {
		if got := seriesPatchFor(seriesDataset(tc.lengths, tc.channels)); got != tc.want {
			t.Errorf("%s: lengths %v × %d channels: P = %d, want %d", tc.name, tc.lengths, tc.channels, got, tc.want)
		}
	}
}

// The config file counts as given: its settings are not overridden.
func TestRecipeRespectsConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(path, []byte("train:\n  epochs: 3\nmodel:\n  size: tiny\n"), 0o644)
	run, err := parseTraining("finetune", "", []string{"--config", path, "--data", trainTS, "--out", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &run.cfg
	run.r.applyTrainRecipe(cfg, 40, 10, model.TaskClassify, true)
	if cfg.Train.Epochs != 3 || cfg.Model.Size != "tiny" || cfg.Train.BatchSize != 8 {
		t.Errorf("epochs %d size %s batch %d, want 3, tiny (from the file) and 8 (chosen)", cfg.Train.Epochs, cfg.Model.Size, cfg.Train.BatchSize)
	}
}

// With a validation split too small to select on (BasicMotions: 8 of 40),
// the recipe holds it out for one run (its metrics kept in OUT/holdout)
// and then trains on all 40 series, which is the model OUT holds.
func TestHoldoutThenRefit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	out, err := capture(t, cmdFinetune, "--data.train", trainTS, "--data.val_fraction", "0.2", "--model.size", "36,2,2,72", "--train.epochs", "2",
		"--train.progress", "none", "--train.out", dir)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Steps   int
		Holdout struct {
			TrainSamples int `json:"train_samples"`
			HeldOut      int `json:"held_out"`
			Validation   struct{ N int }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("finetune printed %q: %v", out, err)
	}
	// Batch 8: 2 epochs of 40 series are 10 steps; of the 32 left by the split, 8.
	if res.Steps != 10 || res.Holdout.TrainSamples != 32 || res.Holdout.HeldOut != 8 || res.Holdout.Validation.N != 8 {
		t.Errorf("refit steps %d, hold-out %+v; want 10 steps on all 40 series after a 32/8 hold-out run", res.Steps, res.Holdout)
	}
	for _, f := range []string{"best.safetensors", "result.json", filepath.Join(holdoutDir, "best.safetensors"), filepath.Join(holdoutDir, "metrics.jsonl")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "result.json")); err != nil || !strings.Contains(string(raw), `"holdout"`) {
		t.Errorf("result.json lacks the hold-out metrics: %s %v", raw, err)
	}
	// A last.safetensors the refit cannot continue (another model's) is
	// refused on resuming before the hold-out run trains on.
	c := model.DefaultConfig()
	c.Encoder, c.Task, c.Outputs = model.Size{DModel: 8, Heads: 1, Depth: 1, FFN: 8}, model.TaskClassify, 4
	other, err := model.New[float32](c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Save(filepath.Join(dir, "last.safetensors"), nil, nil); err != nil {
		t.Fatal(err)
	}
	holdLog := readFile(t, filepath.Join(dir, holdoutDir, "metrics.jsonl"))
	_, err = capture(t, cmdFinetune, "--data.train", trainTS, "--data.val_fraction", "0.2", "--model.size", "36,2,2,72", "--train.epochs", "3",
		"--train.progress", "none", "--train.out", dir, "--train.resume")
	if err == nil || !strings.Contains(err.Error(), "model config differs") {
		t.Errorf("resuming with another model's last.safetensors: %v", err)
	}
	if readFile(t, filepath.Join(dir, holdoutDir, "metrics.jsonl")) != holdLog {
		t.Error("the hold-out run trained on before the refit's checkpoint was refused")
	}
}

// dataRecipe parses a finetune (or pretrain) command line with args and
// applies the data recipe for raw.
func dataRecipe(t *testing.T, raw *data.Dataset, pretrain bool, args []string) *trainingRun {
	t.Helper()
	cmd := "finetune"
	if pretrain {
		cmd = "pretrain"
	}
	run, err := parseTraining(cmd, "", append(args, "--data", trainTS, "--out", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	run.r.applyDataRecipe(&run.cfg, raw, nil, pretrain)
	return run
}

// The data recipe: fold models for 10 to 1000 training series when
// fine-tuning with no validation file or split given, a 20% split
// otherwise.
func TestDataRecipeFolds(t *testing.T) {
	samples := func(n int) *data.Dataset {
		ds := &data.Dataset{C: 1, D: 1, Classes: []string{"a", "b"}}
		for i := range n {
			ds.Samples = append(ds.Samples, data.Sample{Values: []float32{0, 1}, Positions: []float32{0, 1}, Label: i % 2})
		}
		return ds
	}
	for _, tc := range []struct {
		name     string
		n        int
		pretrain bool
		args     []string
		folds    int
		valFrac  float64
	}{
		{"too few to fold", 9, false, nil, 0, 0.2},
		{"small set", 40, false, nil, 5, 0},
		{"largest folded", 1000, false, nil, 5, 0},
		{"large set", 1001, false, nil, 0, 0.2},
		{"pre-training", 40, true, nil, 0, 0.2},
		{"split given", 40, false, []string{"--data.val_fraction", "0.1"}, 0, 0.1},
		{"refit given", 40, false, []string{"--data.refit"}, 0, 0.2},
		{"folds given", 2000, false, []string{"--data.folds", "3"}, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := dataRecipe(t, samples(tc.n), tc.pretrain, tc.args)
			if d := run.cfg.Data; d.Folds != tc.folds || d.ValFraction != tc.valFrac {
				t.Errorf("data.folds %d, data.val_fraction %v; want %d and %v", d.Folds, d.ValFraction, tc.folds, tc.valFrac)
			}
		})
	}
	for _, bad := range [][]string{{"--data.folds", "3", "--data.val_fraction", "0.2"}, {"--data.folds", "3", "--data.refit"},
		{"--data.folds", "3", "--data.val", trainTS}, {"--data.folds", "-1"}, {"--data.folds", "21"}} {
		if _, err := parseTraining("finetune", "", append(bad, "--data", trainTS, "--out", t.TempDir())); err == nil || !strings.Contains(err.Error(), "data.folds") {
			t.Errorf("%v: error %v, want one naming data.folds", bad, err)
		}
	}
	if _, err := parseTraining("pretrain", "", []string{"--data.folds", "3", "--data", trainTS, "--out", t.TempDir()}); err == nil {
		t.Error("pretrain accepted data.folds")
	}
}

// The data recipe shifts the patch grid (train.augment_shift) whenever it
// fine-tunes on series patches, unless told not to.
func TestDataRecipeShift(t *testing.T) {
	for _, tc := range []struct {
		name     string
		length   int
		pretrain bool
		args     []string
		patch    int
		shift    bool
	}{
		{"short series, one token per step", 40, false, nil, 1, false},
		{"long series", 240, false, nil, 10, true},
		{"patch given", 40, false, []string{"--data.series_patch", "4"}, 4, true},
		{"shift turned off", 240, false, []string{"--train.augment_shift=false"}, 10, false},
		{"pre-training", 240, true, nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := dataRecipe(t, seriesDataset(slices.Repeat([]int{tc.length}, 20), 1), tc.pretrain, tc.args)
			if p, s := run.cfg.Data.SeriesPatch, run.cfg.Train.AugmentShift; p != tc.patch || s != tc.shift {
				t.Errorf("data.series_patch %d, train.augment_shift %v; want %d and %v", p, s, tc.patch, tc.shift)
			}
		})
	}
}

// data.folds K: K fold runs, out-of-fold metrics over every training
// series, and the ensemble of the fold models as the run's model, which
// evaluate, predict and report read; --overwrite clears the fold runs.
func TestFolds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	args := []string{"--data.train", trainTS, "--data.folds", "3", "--model.size", "24,2,1,48", "--train.epochs", "2",
		"--train.progress", "none", "--train.out", dir}
	out, err := capture(t, cmdFinetune, args...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Folds       int
		CV          struct{ N int }
		FoldResults []struct{ Best struct{ N int } } `json:"fold_results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("finetune printed %q: %v", out, err)
	}
	held := 0
	for _, f := range res.FoldResults {
		held += f.Best.N
	}
	if res.Folds != 3 || len(res.FoldResults) != 3 || res.CV.N != 40 || held != 40 {
		t.Errorf("folds %d, %d fold results holding out %d, out-of-fold n %d; want 3 folds holding out all 40 series once", res.Folds, len(res.FoldResults), held, res.CV.N)
	}
	m, _, err := model.Load[float32](dir)
	if err != nil || m.Members() != 3 {
		t.Fatalf("run model: %v members, %v", m, err)
	}
	if _, err := capture(t, cmdEvaluate, "--model", dir, "--data", testTS); err != nil {
		t.Errorf("evaluate: %v", err)
	}
	preds := filepath.Join(t.TempDir(), "p.csv")
	if _, err := capture(t, cmdPredict, "--model", dir, "--data", testTS, "--out", preds); err != nil {
		t.Errorf("predict: %v", err)
	}
	page, err := runPage(dir, reportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range page.Sections {
		titles = append(titles, s.Title)
	}
	for _, want := range []string{"Confusion matrix (out of fold)", "Fold 3: training curves"} {
		if !strings.Contains(strings.Join(titles, "|"), want) {
			t.Errorf("report sections %q lack %q", titles, want)
		}
	}
	if _, err := capture(t, cmdFinetune, args...); err == nil || !strings.Contains(err.Error(), "fold-1/") {
		t.Errorf("a second run into the folds run: %v, want a refusal naming fold-1/", err)
	}
	args[3] = "2"
	if _, err := capture(t, cmdFinetune, append(args, "--overwrite")...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fold-3")); err == nil {
		t.Error("--overwrite with 2 folds left the old run's fold-3")
	}
}

// Fine-tuning finds a long CSV's "label" column by itself; a file without
// labels or with one class is refused naming the file and, for a CSV, the
// flags and its columns.
func TestFinetuneLabels(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, classes ...string) string {
		var b strings.Builder
		b.WriteString("id,time,value,label,note\n")
		for i := range 8 {
			for k := range 10 {
				fmt.Fprintf(&b, "s%d,%d,%g,%s,x\n", i, k, float64(i%2)+0.1*float64(k), classes[i%len(classes)])
			}
		}
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(b.String()), 0o644)
		return path
	}
	two, one := write("two.csv", "slow", "fast"), write("one.csv", "slow")
	tiny := []string{"--model.size", "24,2,1,48", "--data.folds", "1", "--train.epochs", "1", "--train.progress", "none"}
	run := filepath.Join(dir, "run")
	_, errOut, code := runMain(t, append([]string{"finetune", "--data", two, "--out", run}, tiny...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "data.label_column=label") {
		t.Errorf("the recipe line does not say it read column label: %q", errOut)
	}
	if spec := runSpec(t, run); !slices.Equal(spec.Classes, []string{"fast", "slow"}) {
		t.Errorf("classes %v", spec.Classes)
	}
	// A "target" column (and no "label") is a regression target.
	var b strings.Builder
	b.WriteString("id,time,value,target\n")
	for i := range 8 {
		for k := range 10 {
			fmt.Fprintf(&b, "s%d,%d,%g,%d\n", i, k, float64(i)+0.1*float64(k), i)
		}
	}
	targets := filepath.Join(dir, "targets.csv")
	os.WriteFile(targets, []byte(b.String()), 0o644)
	_, errOut, code = runMain(t, append([]string{"finetune", "--data", targets, "--out", filepath.Join(dir, "reg")}, tiny...)...)
	if code != 0 || !strings.Contains(errOut, "data.target_columns=[target]") {
		t.Errorf("a target column: exit %d, %q", code, errOut)
	} else if spec := runSpec(t, filepath.Join(dir, "reg")); !slices.Equal(spec.Source.TargetColumns, []string{"target"}) || spec.TargetStats == nil {
		t.Errorf("a target column: spec targets %v, stats %v", spec.Source.TargetColumns, spec.TargetStats)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", one}, `one.csv: every series has the label "slow"; classification needs at least 2 classes`},
		{[]string{"--data", two, "--data.label_column", ""}, "two.csv has neither labels nor regression targets: name its label column (--data.label_column COLUMN"},
		{[]string{"--data", two, "--data.label_column", "", "--model.task", "classify"}, "two.csv has no class labels for model.task classify: name"},
		{[]string{"--data", two, "--model.task", "regress", "--data.label_column", ""}, "its columns are id, time, value, label, note"},
	} {
		_, err := capture(t, cmdFinetune, append(append(tc.args, "--out", filepath.Join(dir, "bad")), tiny...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("finetune %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// Resuming with the data read otherwise (data.normalize off: as many
// series, other values) is refused, naming the setting.
func TestResumeNamesChangedDataSetting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	args := []string{"--data.train", trainTS, "--data.folds", "1", "--model.size", "24,2,1,48", "--train.epochs", "1", "--train.progress", "none", "--train.out", dir}
	if _, err := capture(t, cmdFinetune, args...); err != nil {
		t.Fatal(err)
	}
	_, err := capture(t, cmdFinetune, append(args, "--train.resume", "--train.epochs", "2", "--data.normalize=false")...)
	if err == nil || !strings.Contains(err.Error(), "other training data") || !strings.Contains(err.Error(), "data.normalize true → false") {
		t.Errorf("resumed with data.normalize off: %v", err)
	}
}
