package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/baseline"
	"romae/ckpt"
	"romae/data"
	"romae/datasets"
	"romae/model"
)

// writeAmplitudeTS writes n irregular series whose regression target is
// their amplitude (.ts with @targetLabel true).
func writeAmplitudeTS(t *testing.T, path string, n int, seed float64) *data.Dataset {
	return writeAmplitudeTSAs(t, path, n, seed, func(a float64) float64 { return a })
}

// writeAmplitudeTSAs is writeAmplitudeTS with target(amplitude) as the
// target: the amplitude in other units.
func writeAmplitudeTSAs(t *testing.T, path string, n int, seed float64, target func(float64) float64) *data.Dataset {
	t.Helper()
	ds := &data.Dataset{C: 1, D: 1, TargetDim: 1}
	for i := range n {
		a := 0.5 + math.Mod(float64(i)*0.37+seed, 1.5)
		s := data.Sample{Label: -1, Target: []float32{float32(target(a))}}
		tm := 0.0
		for j := range 20 + i%7 {
			tm += 0.05 + 0.03*math.Abs(math.Sin(float64(j)*1.7+seed))
			s.Positions = append(s.Positions, float32(tm))
			s.Values = append(s.Values, float32(a*math.Sin(6*tm+float64(i))))
		}
		ds.Samples = append(ds.Samples, s)
	}
	if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, ds) }); err != nil {
		t.Fatal(err)
	}
	return ds
}

// A regressor from a .ts file with targets, trained from scratch by the
// default recipe (shortened): evaluate reports its test MSE beside the
// training mean and the 1-NN regressors, which equal the baseline package's
// on the same files, and predict writes one prediction per series.
func TestRegressionFromScratch(t *testing.T) {
	dir := t.TempDir()
	trainPath, testPath := filepath.Join(dir, "amp_TRAIN.ts"), filepath.Join(dir, "amp_TEST.ts")
	tr := writeAmplitudeTS(t, trainPath, 30, 0.1)
	te := writeAmplitudeTS(t, testPath, 12, 0.6)
	run := filepath.Join(dir, "run")
	if _, err := capture(t, cmdFinetune, "--data", trainPath, "--model.size", "24,2,1,48", "--data.folds", "1",
		"--train.epochs", "3", "--train.progress", "none", "--out", run); err != nil {
		t.Fatal(err)
	}
	out, err := capture(t, cmdEvaluate, "--model", run, "--data", testPath, "--baselines")
	if err != nil {
		t.Fatal(err)
	}
	var met struct {
		N         int
		MSE       *float64
		Baselines map[string]float64
	}
	if err := json.Unmarshal([]byte(out), &met); err != nil || met.N != 12 || met.MSE == nil || !(*met.MSE >= 0) {
		t.Fatalf("evaluate printed %q (%v), want an MSE over 12 series", out, err)
	}
	want, err := baseline.RegressionTable(tr, te, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got, ok := met.Baselines[k]; !ok || math.Abs(got-v) > 1e-6*v {
			t.Errorf("baseline %s = %v, want %v (evaluate printed %v)", k, got, v, met.Baselines)
		}
	}
	if len(met.Baselines) != 3 {
		t.Errorf("baselines %v, want the training mean and two 1-NN regressors", met.Baselines)
	}
	pred := filepath.Join(dir, "p.csv")
	if _, err := capture(t, cmdPredict, "--model", run, "--data", testPath, "--out", pred); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(strings.TrimSpace(string(b)), "\n"); lines != 12 {
		t.Errorf("predict wrote %d rows after the header, want 12:\n%s", lines, b)
	}
}

// Regression targets are standardised for training, whatever their units:
// the same amplitudes as 1000 + 10·a or as 1e-4·a train to a model
// better than predicting the training mean (unscaled, 1000 + 10·a left the
// model near 0, a million times worse), the checkpoint records the
// standardisation, and the validation MSE training reports is in the
// targets' units, as evaluate's is.
func TestRegressionTargetsStandardised(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(float64) float64
	}{
		{"1000 + 10a", func(a float64) float64 { return 1000 + 10*a }},
		{"1e-4 a", func(a float64) float64 { return 1e-4 * a }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trainPath, testPath := filepath.Join(dir, "amp_TRAIN.ts"), filepath.Join(dir, "amp_TEST.ts")
			writeAmplitudeTSAs(t, trainPath, 40, 0.1, tc.target)
			writeAmplitudeTSAs(t, testPath, 20, 0.6, tc.target)
			run := filepath.Join(dir, "run")
			if _, err := capture(t, cmdFinetune, "--data", trainPath, "--model.size", "24,2,1,48", "--data.folds", "1",
				"--data.val", testPath, "--train.epochs", "25", "--train.progress", "none", "--out", run); err != nil {
				t.Fatal(err)
			}
			spec := runSpec(t, run)
			if spec.TargetStats == nil || len(spec.TargetStats.Mean) != 1 {
				t.Fatalf("checkpoint's target_stats %+v, want one target's", spec.TargetStats)
			}
			out, err := capture(t, cmdEvaluate, "--model", run, "--data", testPath, "--baselines")
			if err != nil {
				t.Fatal(err)
			}
			var met struct {
				MSE       float64
				Baselines map[string]float64
			}
			if err := json.Unmarshal([]byte(out), &met); err != nil {
				t.Fatal(err)
			}
			mean, ok := met.Baselines["training_mean_mse"]
			if !ok || !(met.MSE < 0.5*mean) {
				t.Fatalf("test MSE %v, training mean's %v (baselines %v): want under half of it", met.MSE, mean, met.Baselines)
			}
			var res struct {
				Best struct{ MSE float64 }
			}
			raw, err := os.ReadFile(filepath.Join(run, "result.json"))
			if err == nil {
				err = json.Unmarshal(raw, &res)
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Best.MSE-met.MSE) > 1e-6*met.MSE {
				t.Errorf("training reported validation MSE %v, evaluate %v on the same file", res.Best.MSE, met.MSE)
			}
		})
	}
}

// A regressor trained on a CSV's target columns names its predictions
// after them.
func TestPredictNamesCSVTargets(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,time,value,amp\n")
	for i := range 8 {
		amp := 1 + float64(i)/4
		for k := range 12 {
			tm := float64(k) + 0.3*float64(i%3)
			fmt.Fprintf(&b, "s%d,%g,%g,%g\n", i, tm, amp*math.Sin(tm), amp)
		}
	}
	path := filepath.Join(dir, "amp.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	run := filepath.Join(dir, "run")
	if _, err := capture(t, cmdFinetune, "--data", path, "--data.target_columns", "amp", "--model.size", "24,2,1,48",
		"--data.folds", "1", "--train.epochs", "1", "--train.progress", "none", "--out", run); err != nil {
		t.Fatal(err)
	}
	pred := filepath.Join(dir, "p.csv")
	if _, err := capture(t, cmdPredict, "--model", run, "--data", path, "--out", pred); err != nil {
		t.Fatal(err)
	}
	if rows := readCSV(t, pred); len(rows) != 9 || strings.Join(rows[0], ",") != "id,amp" {
		t.Errorf("predictions: %d rows, header %v, want 9 and id,amp", len(rows), rows[0])
	}
}

// TestFinetunePerTokenDefaults: a dataset file with per-token targets
// (as the experiments save their test sets) trains with the recipe alone:
// it pools per token and does not patch the series, which per-token
// targets forbid (it chose series patches and mean pooling, and the run
// was refused, until the recipe looked at the targets).
func TestFinetunePerTokenDefaults(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sines.safetensors")
	if err := data.SaveDataset(p, datasets.Sines(40, 2, 1)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if _, err := capture(t, cmdFinetune, "--data", p, "--train.epochs", "1", "--train.progress", "none", "--out", out); err != nil {
		t.Fatalf("per-token targets with the defaults: %v", err)
	}
	m, _, err := model.Load[float32](out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Cfg.Pool != model.PoolToken || m.Cfg.Task != model.TaskRegress {
		t.Errorf("trained a %s model pooling %s, want a regressor pooling %s", m.Cfg.Task, m.Cfg.Pool, model.PoolToken)
	}
}
