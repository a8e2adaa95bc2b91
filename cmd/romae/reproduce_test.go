package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"romae/ckpt"
	"romae/data"
	"romae/datasets"
	"romae/experiments"
)

// Every number an experiment reports from a saved model comes back exactly
// — bit for bit — from `romae evaluate` on the checkpoint and data files the
// run left behind: the checkpoints carry the data spec the experiment
// trained with, and the generated test sets are saved.
func TestExperimentCheckpointsReproduce(t *testing.T) {
	for _, name := range experiments.Names() {
		t.Run(name, func(t *testing.T) {
			o := experiments.Options{Budget: experiments.Tiny, Out: t.TempDir()}
			if name == "uea" {
				o.Data = trainTS
			}
			if name == "recsys" {
				o.Data = "../../../shared/data/movielens-small"
			}
			if name == "images" {
				if _, err := os.Stat(datasets.FashionMNISTDir()); err != nil {
					t.Skipf("images needs Debian's dataset-fashion-mnist package: %v", err)
				}
			}
			res, err := experiments.Run(context.Background(), name, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Reproduce) == 0 {
				t.Fatal("the experiment records no number that evaluate can reproduce")
			}
			for _, p := range res.Reproduce {
				run := cmdEvaluate
				if p.Tool == "recsys-evaluate" {
					run = cmdRecsysEvaluate
				}
				out, err := capture(t, run, append([]string{"--model", p.Model, "--data", p.Data}, p.Args...)...)
				if err != nil {
					t.Fatalf("%s: %v", p.Command(), err)
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%s printed %q: %v", p.Command(), out, err)
				}
				if v, ok := got[p.Metric].(float64); !ok || v != p.Value {
					t.Errorf("%s: %s = %v, the experiment reported %v", p.Command(), p.Metric, got[p.Metric], p.Value)
				}
			}
		})
	}
}

// A checkpoint without a data spec (as experiments wrote before) is refused
// with a message that says what is missing and how to supply it, never
// silently read another way; --data-spec (as inspect prints it) restores the
// exact number, --raw reads the file unscaled on request.
func TestCheckpointWithoutSpecRefused(t *testing.T) {
	dir := t.TempDir()
	ft := filepath.Join(dir, "ft")
	if _, err := capture(t, cmdFinetune, "--model.size", "24,2,1,48", "--train.epochs", "2", "--train.batch_size", "8",
		"--train.progress", "none", "--data.series_patch", "1", "--data.train", trainTS, "--train.out", ft); err != nil {
		t.Fatal(err)
	}
	want, err := capture(t, cmdEvaluate, "--model", ft, "--data", testTS)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := capture(t, cmdInspect, "--data-spec", ft)
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "spec.json")
	os.WriteFile(specFile, []byte(spec), 0o644)

	// The same weights with the spec stripped from the metadata.
	old := filepath.Join(dir, "old.safetensors")
	f, err := ckpt.ReadFile(filepath.Join(ft, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	delete(f.Metadata, data.MetaSpec)
	var tensors []*ckpt.Tensor
	for _, n := range f.Order {
		tensors = append(tensors, f.Tensors[n])
	}
	if err := ckpt.WriteFile(old, tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	for _, run := range []func(context.Context, []string) error{cmdEvaluate, cmdPredict} {
		_, err := capture(t, run, "--model", old, "--data", testTS)
		if err == nil || !strings.Contains(err.Error(), "no data spec") || !strings.Contains(err.Error(), "--data-spec") {
			t.Errorf("old checkpoint: got %v, want the no-data-spec error naming --data-spec", err)
		}
	}
	got, err := capture(t, cmdEvaluate, "--model", old, "--data", testTS, "--data-spec", specFile)
	if err != nil || got != want {
		t.Errorf("with --data-spec: %q (%v), want %q", got, err, want)
	}
	if _, err := capture(t, cmdEvaluate, "--model", old, "--data", testTS, "--raw"); err != nil {
		t.Errorf("--raw: %v", err)
	}
	if _, err := capture(t, cmdEvaluate, "--model", ft, "--data", testTS, "--raw"); err == nil {
		t.Error("--raw on a checkpoint with a spec: want an error")
	}
	if out, err := capture(t, cmdInspect, ft); err != nil || !strings.Contains(out, `"data": {`) || !strings.Contains(out, `"stats"`) {
		t.Errorf("inspect shows no data settings: %q, %v", out, err)
	}
}

// writeOscillatorCSV writes n generated oscillators as a long CSV
// (id,time,channel,value) with a separate id,label file.
func writeOscillatorCSV(t *testing.T, dir, name string, n int, seed uint64) (csvPath, labelsPath string) {
	t.Helper()
	ds := datasets.Oscillator(n, seed)
	var b, l strings.Builder
	b.WriteString("id,time,channel,value\n")
	l.WriteString("id,label\n")
	for i, s := range ds.Samples {
		id := name + strconv.Itoa(i)
		l.WriteString(id + "," + ds.Classes[s.Label] + "\n")
		for j, tm := range s.Positions {
			for c := range 3 {
				b.WriteString(id + "," + strconv.FormatFloat(float64(tm), 'g', -1, 32) + ",ch" + strconv.Itoa(c) + "," +
					strconv.FormatFloat(float64(s.Values[j*3+c]), 'g', -1, 32) + "\n")
			}
		}
	}
	csvPath, labelsPath = filepath.Join(dir, name+".csv"), filepath.Join(dir, name+"_labels.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labelsPath, []byte(l.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return csvPath, labelsPath
}

// Irregular long-CSV data with labels in a separate file, trained from
// scratch with the default recipe (shortened): evaluate reads the test file
// with its own labels file, and the baselines run on the same series.
func TestFinetuneFromScratchOnCSV(t *testing.T) {
	dir := t.TempDir()
	trainCSV, trainLabels := writeOscillatorCSV(t, dir, "train", 24, 1)
	testCSV, testLabels := writeOscillatorCSV(t, dir, "test", 12, 2)
	run := filepath.Join(dir, "run")
	if _, err := capture(t, cmdFinetune, "--data.train", trainCSV, "--data.labels_file", trainLabels, "--model.size", "24,2,1,48",
		"--train.epochs", "2", "--train.progress", "none", "--train.out", run); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, cmdEvaluate, "--model", run, "--data", testCSV); err == nil {
		t.Error("evaluate with the training labels file for the test ids: want an error")
	}
	out, err := capture(t, cmdEvaluate, "--model", run, "--data", testCSV, "--labels-file", testLabels, "--baselines")
	if err != nil {
		t.Fatal(err)
	}
	var met struct {
		N         int
		Baselines map[string]float64
	}
	if err := json.Unmarshal([]byte(out), &met); err != nil || met.N != 12 || len(met.Baselines) != 3 {
		t.Errorf("evaluate printed %q (%v), want 12 samples and 3 baselines", out, err)
	}
	// Scoring new data needs no labels.
	if _, err := capture(t, cmdPredict, "--model", run, "--data", testCSV, "--out", filepath.Join(dir, "p.csv")); err != nil {
		t.Errorf("predict without labels: %v", err)
	}
}
