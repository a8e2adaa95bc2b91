package main

import (
	"context"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"romae/experiments"
)

// trainedRuns pre-trains and fine-tunes a very small model on BasicMotions
// and returns the two run directories (the fine-tuning one a single model:
// data.folds 1).
func trainedRuns(t *testing.T) (pre, ft string) {
	t.Helper()
	dir := t.TempDir()
	pre, ft = filepath.Join(dir, "pre"), filepath.Join(dir, "ft")
	common := []string{"--data", trainTS, "--batch-size", "8", "--train.progress", "none"}
	if _, err := capture(t, cmdPretrain, append(common, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "3", "--out", pre)...); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, cmdFinetune, append(common, "--model", pre, "--data.folds", "1", "--train.epochs", "3", "--out", ft)...); err != nil {
		t.Fatal(err)
	}
	return pre, ft
}

// experimentDir lays out what `romae experiment` writes — results.json, a
// figure, runs/ — around an existing run directory.
func experimentDir(t *testing.T, run string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toy")
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(run, filepath.Join(dir, "runs", "toy-seed1")); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(dir, "runs", "toy-seed1", "curves.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "toy.png"), png, 0o644)
	res := experiments.Result{Name: "toy", Budget: "tiny", Seeds: 1, Command: "romae experiment toy --budget tiny",
		Rows:    []experiments.Row{{Setting: "RoMAE", Metric: "accuracy", Paper: "0.9", Mean: 0.5, Values: []float64{0.5}, Baseline: 0.25, BaselineIs: "majority"}},
		Figures: []string{"results/toy/toy.png"}, Notes: []string{"a note", "| a | b |\n|---|---|\n| 1 | 2 |"}}
	os.WriteFile(filepath.Join(dir, "results.json"), mustJSON(res), 0o644)
	return dir
}

// The report of a pre-training run, a fine-tuning run and an experiment
// directory holds what each should show.
func TestReportContents(t *testing.T) {
	pre, ft := trainedRuns(t)
	for _, tc := range []struct {
		name, dir string
		want      []string
	}{
		{"pretrain", pre, []string{"Training curves", "Example interpolations", "series 0", "Interpolation MSE", "the model alone", "spline interpolation in time", "dim0", "Configuration", "BasicMotions_TRAIN.ts", "tokens per series", "Scaling statistics"}},
		{"finetune", ft, []string{"Validation accuracy and macro-F1", "Confusion matrix", "Standing", "pre-trained encoder from", "class Walking"}},
	} {
		out, err := capture(t, cmdReport, "--run", tc.dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		html := readFile(t, strings.TrimSpace(out))
		for _, w := range tc.want {
			if !strings.Contains(html, w) {
				t.Errorf("%s report lacks %q", tc.name, w)
			}
		}
		if n := strings.Count(html, `<svg class="chart"`); n < 3 {
			t.Errorf("%s report has %d charts", tc.name, n)
		}
	}
	exp := experimentDir(t, ft)
	html := filepath.Join(t.TempDir(), "exp.html")
	if _, err := capture(t, cmdReport, "--run", exp, "--out", html); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, html)
	for _, w := range []string{"romae experiment toy", "majority", "data:image/png;base64,", "<details", "run toy-seed1", `class="confusion"`, "<pre>| a | b |"} {
		if !strings.Contains(page, w) {
			t.Errorf("experiment report lacks %q", w)
		}
	}
	if _, err := capture(t, cmdReport, "--run", t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither metrics.jsonl") {
		t.Errorf("an empty directory: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chromium renders page in headless Chromium and returns the DOM after its
// scripts ran and every console line (messages and uncaught errors). The
// test skips where no Chromium is installed; scripts/setup.sh installs
// Debian's, so CI runs it.
func chromium(t *testing.T, page string) (dom string, console []string) {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("chromium is not installed (scripts/setup.sh installs Debian's chromium): the report was not rendered in a browser")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+abs)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if consoleLine.MatchString(line) {
			console = append(console, line)
		}
	}
	return string(out), console
}

var consoleLine = regexp.MustCompile(`:CONSOLE[:(]`)

// The reports load in a real browser without a console message or an
// uncaught error, their script runs to the end, and the charts are there.
// A page with an error is caught the same way (the check can fail).
func TestReportInChromium(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "broken.html")
	os.WriteFile(broken, []byte(`<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>`), 0o644)
	if _, console := chromium(t, broken); len(console) == 0 {
		t.Fatal("a page with an uncaught error showed no console line: the check cannot see errors")
	}
	pre, ft := trainedRuns(t)
	exp := experimentDir(t, ft)
	folds := filepath.Join(t.TempDir(), "folds")
	if _, err := capture(t, cmdFinetune, "--data", trainTS, "--data.folds", "2", "--model.size", "24,2,1,48", "--train.epochs", "2",
		"--train.progress", "none", "--out", folds); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{pre, exp, folds} {
		if _, err := capture(t, cmdReport, "--run", dir); err != nil {
			t.Fatal(err)
		}
		dom, console := chromium(t, filepath.Join(dir, "report.html"))
		if len(console) > 0 {
			t.Errorf("%s: console:\n%s", dir, strings.Join(console, "\n"))
		}
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Errorf("%s: the page's script did not run to the end", dir)
		}
		if n := strings.Count(dom, "<svg class=\"chart\""); n < 3 {
			t.Errorf("%s: %d charts in the rendered page", dir, n)
		}
	}
}
