package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/data"
	"romae/model"
)

// capture runs a command with stdout redirected and returns what it printed.
func capture(t *testing.T, run func(context.Context, []string) error, args ...string) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	err = run(context.Background(), args)
	w.Close()
	os.Stdout = old
	return <-done, err
}

// runSpec is the data spec of the checkpoint at run (a run directory or file).
func runSpec(t *testing.T, run string) *data.Spec {
	t.Helper()
	_, ck, err := model.Load[float32](run)
	if err != nil {
		t.Fatal(err)
	}
	spec, _, err := data.SpecFromMeta(ck.Meta)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

const (
	trainTS = "../../testdata/BasicMotions_TRAIN.ts"
	testTS  = "../../testdata/BasicMotions_TEST.ts"
)

// The everyday path end to end on BasicMotions with a very small model:
// pretrain → finetune → evaluate → predict → interpolate → embed → inspect.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--batch-size", "8", "--train.progress", "none", "--data", trainTS}
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, append(common, "--model.size", "36,2,2,72", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "2", "--out", pre)...); err != nil {
		t.Fatal(err)
	}
	ft := filepath.Join(dir, "ft")
	out, err := capture(t, cmdFinetune, append(common, "--model", pre, "--data.val", testTS, "--train.epochs", "4",
		"--train.lr", "0.003", "--out", ft)...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Best struct{ Accuracy float64 } }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("finetune printed %q: %v", out, err)
	}
	if res.Best.Accuracy <= 0.25 { // 4 balanced classes: chance is 0.25
		t.Errorf("fine-tuned accuracy %v, want above chance", res.Best.Accuracy)
	}

	out, err = capture(t, cmdEvaluate, "--model", ft, "--data", testTS)
	if err != nil {
		t.Fatal(err)
	}
	var met struct {
		N        int
		Accuracy float64
	}
	if err := json.Unmarshal([]byte(out), &met); err != nil || met.N != 40 || met.Accuracy != res.Best.Accuracy {
		t.Errorf("evaluate printed %q (%v), want n 40 and the fine-tuning's best accuracy %v", out, err, res.Best.Accuracy)
	}

	preds := filepath.Join(dir, "new", "dir", "p.csv") // --out's directory is made
	if _, err := capture(t, cmdPredict, "--model", ft, "--data", testTS, "--out", preds); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, preds)
	if len(rows) != 41 || strings.Join(rows[0], ",") != "id,label,p_Standing,p_Running,p_Walking,p_Badminton" {
		t.Errorf("predictions: %d rows, header %v", len(rows), rows[0])
	}

	interp := filepath.Join(dir, "i.csv")
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", testTS, "--at", "0.5:2.5:1", "--out", interp); err != nil {
		t.Fatal(err)
	}
	rows = readCSV(t, interp)
	if len(rows) != 1+40*3 || strings.Join(rows[0], ",") != "id,time,dim0,dim1,dim2,dim3,dim4,dim5" || rows[1][1] != "0.5" {
		t.Errorf("interpolation: %d rows, header %v, first %v", len(rows), rows[0], rows[1])
	}

	emb := filepath.Join(dir, "e.npy")
	if _, err := capture(t, cmdEmbed, "--model", pre, "--data", testTS, "--out", emb); err != nil {
		t.Fatal(err)
	}
	if ids, err := os.ReadFile(filepath.Join(dir, "e.ids.txt")); err != nil || strings.Count(string(ids), "\n") != 40 {
		t.Errorf("embedding ids: %v", err)
	}

	if b, err := os.ReadFile(filepath.Join(ft, "curves.png")); err != nil || string(b[1:4]) != "PNG" {
		t.Errorf("training curves: %v", err)
	}

	out, err = capture(t, cmdInspect, ft)
	if err != nil || !strings.Contains(out, `"task": "classify"`) || !strings.Contains(out, "romae.train_state") {
		t.Errorf("inspect printed %q, %v", out, err)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Bad configurations get errors naming the field or file.
func TestBadConfigs(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "bad.yaml")
	os.WriteFile(unknown, []byte("train:\n  epoch: 3\n"), 0o644)
	badType := filepath.Join(dir, "type.yaml")
	os.WriteFile(badType, []byte("train:\n  epochs: many\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--config", unknown}, "field epoch not found"},
		{[]string{"--config", badType}, "type.yaml"},
		{[]string{"--train.lr", "fast"}, "train.lr"},
		{[]string{"--data.train", trainTS, "--model.size", "huge"}, "model.size"},
		{[]string{"--data.train", trainTS, "--model.p_rope", "2"}, "p_rope"},
		{[]string{"--data.train", trainTS, "--train.batch_size", "0", "--train.out", dir}, "batch_size"},
		{[]string{"--data.train", trainTS, "--data.fold_jobs", "-1", "--train.out", dir}, "data.fold_jobs = -1"},
		{[]string{}, "data.train is required"},
		{[]string{"--data.train", filepath.Join(dir, "none.ts")}, "none.ts"},
		{[]string{"--data.train", unknown}, "format"},
	}
	for _, tc := range cases {
		_, err := capture(t, cmdPretrain, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pretrain %v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// parityFixture is the authors' PyTorch outputs and weights (beside the
// checkout, as in CI).
const parityFixture = "../../../shared/fixtures/official-parity"

func TestVerifyOfficialCommand(t *testing.T) {
	out, err := capture(t, cmdVerifyOfficial, "--fixture", parityFixture)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]float64
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"classifier_max_rel_err", "pretrain_max_rel_err", "loss_abs_err"} {
		if v, ok := rep[k]; !ok || v > 1e-4 {
			t.Errorf("%s = %v (present %v), want ≤ 1e-4", k, v, ok)
		}
	}
}

func TestSizesCommand(t *testing.T) {
	out, err := capture(t, cmdSizes, "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], `"encoder_params":4669920`) {
		t.Errorf("sizes printed %q", out)
	}
}

// SIREN-RoPE goes through every CLI path: pre-train, fine-tune (the learned
// angle network is transferred with the encoder), interpolate.
func TestSirenPaths(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--train.batch_size", "8", "--train.progress", "none", "--data.train", trainTS, "--train.epochs", "1"}
	small := append([]string{"--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48", "--model.pos_encoding", "siren",
		"--model.siren.periods", "10,25", "--model.siren.hidden", "8"}, common...)
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, append(small, "--train.out", pre)...); err != nil {
		t.Fatal(err)
	}
	out, err := capture(t, cmdInspect, pre)
	if err != nil || !strings.Contains(out, `"pos_encoding": "siren"`) || !strings.Contains(out, `"periods": [`) {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	if _, err := capture(t, cmdFinetune, append(common, "--model", pre, "--train.out", filepath.Join(dir, "ft"))...); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", testTS, "--at", "0:1:0.5", "--out", filepath.Join(dir, "i.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, cmdPretrain, append(small, "--model.siren.axes", "3", "--train.out", filepath.Join(dir, "bad"))...); err == nil || !strings.Contains(err.Error(), "siren.axes") {
		t.Errorf("bad siren axes: %v", err)
	}
}

// Commands that use a trained model refuse bad input with a clear error.
func TestUsingCommandsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "1", "--train.progress", "none", "--data.train", trainTS, "--train.out", pre); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.ts")
	os.WriteFile(empty, []byte("@problemName x\n@univariate false\n@dimensions 6\n@equalLength true\n@seriesLength 100\n@classLabel true Standing Running Walking Badminton\n@data\n"), 0o644)
	wrongDims := filepath.Join(dir, "dims.ts")
	os.WriteFile(wrongDims, []byte("@problemName x\n@univariate true\n@equalLength true\n@seriesLength 3\n@classLabel true a b\n@data\n1,2,3:a\n"), 0o644)
	queries := filepath.Join(dir, "q.csv")
	os.WriteFile(queries, []byte("id,pos0\n0,1.5\nnope,2\n"), 0o644)
	cases := []struct {
		name string
		run  func(context.Context, []string) error
		args []string
		want string
	}{
		{"no model", cmdEvaluate, []string{"--data", testTS}, "--model and --data"},
		{"missing checkpoint", cmdEvaluate, []string{"--model", filepath.Join(dir, "none"), "--data", testTS}, "none"},
		{"empty data", cmdEmbed, []string{"--model", pre, "--data", empty, "--out", filepath.Join(dir, "e.npy")}, "empty.ts"},
		{"wrong dimensions", cmdEvaluate, []string{"--model", pre, "--data", wrongDims}, "values"},
		{"predict with pre-training model", cmdPredict, []string{"--model", pre, "--data", testTS}, "fine-tuned"},
		{"bad grid", cmdInterpolate, []string{"--model", pre, "--data", testTS, "--at", "5:1:1"}, "--at"},
		{"unknown query series", cmdInterpolate, []string{"--model", pre, "--data", testTS, "--queries", queries}, "q.csv:3"},
		{"grid and queries", cmdInterpolate, []string{"--model", pre, "--data", testTS}, "exactly one"},
	}
	for _, tc := range cases {
		if _, err := capture(t, tc.run, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// --help prints the usage to standard output and exits 0; a bad flag is one
// line on standard error naming the flag, with a hint, and exit 2; version
// names the back ends.
func TestHelpVersionAndBadFlags(t *testing.T) {
	run := func(args ...string) (stdout, stderr string, code int) { return runMain(t, args...) }
	for _, c := range []string{"pretrain", "finetune", "evaluate", "predict", "interpolate", "embed", "inspect", "experiment", "bench", "report"} {
		out, errOut, code := run(c, "--help")
		if code != 0 || !strings.HasPrefix(out, "usage: romae "+c) || errOut != "" {
			t.Errorf("%s --help: exit %d, stdout %.60q, stderr %q", c, code, out, errOut)
		}
		if help, _, code := run("help", c); code != 0 || help != out {
			t.Errorf("romae help %s: exit %d, and not the same as %s --help", c, code, c)
		}
	}
	out, errOut, code := run("pretrain", "--train.lr", "fast")
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-train.lr") || !strings.Contains(errOut, "--help") {
		t.Errorf("bad flag: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, _, code := run("--help"); code != 0 || !strings.Contains(out, "finetune") {
		t.Errorf("romae --help: exit %d, %q", code, out)
	}
	for _, v := range []string{"version", "--version"} {
		if out, _, code := run(v); code != 0 || !strings.Contains(out, "gemm back ends:") || !strings.Contains(out, "chosen:") || !strings.Contains(out, "numerics: ") {
			t.Errorf("%s: exit %d, %q", v, code, out)
		}
	}
}

// interpolate and evaluate --hidden with a fine-tuned model say that it
// has no decoder, and nothing before it.
func TestInterpolationNeedsDecoder(t *testing.T) {
	ft := filepath.Join(t.TempDir(), "ft")
	if _, err := capture(t, cmdFinetune, "--model.size", "24,2,1,48", "--data.folds", "1", "--train.epochs", "1",
		"--train.progress", "none", "--data", trainTS, "--out", ft); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"interpolate", "--model", ft, "--data", testTS, "--at", "0:10:1"},
		{"evaluate", "--model", ft, "--data", testTS, "--hidden", testTS},
	} {
		_, errOut, code := runMain(t, args...)
		if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "needs a pre-training model (it has the decoder); "+ft+" is a classify model") {
			t.Errorf("romae %s: exit %d, stderr %q; want exit 1 and one line saying it needs a pre-training model", strings.Join(args, " "), code, errOut)
		}
	}
}

// A command that applies a model says how many series of its file the
// checkpoint's data.nan drop left out, as training does.
func TestUsingCommandsSayWhatNaNDropLeftOut(t *testing.T) {
	dir := t.TempDir()
	lines := strings.SplitAfter(readFile(t, trainTS), "\n")
	lines[13] = "?" + lines[13][strings.IndexByte(lines[13], ','):] // the first case's first value missing
	file := filepath.Join(dir, "nan.ts")
	os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644)
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48", "--data.nan", "drop",
		"--train.epochs", "1", "--train.progress", "none", "--data", file, "--out", pre); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runMain(t, "embed", "--model", pre, "--data", file, "--out", filepath.Join(dir, "e.npy"))
	if code != 0 || !strings.Contains(errOut, "nan.ts: 1 missing values (data.nan drop): 1 series left out") {
		t.Errorf("embed: exit %d, stderr %q", code, errOut)
	}
}
