package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"romae/data"
	"romae/model"
	"romae/train"
)

// runMain runs this test binary as romae (TestMain) and returns what it
// wrote and its exit code.
func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// Every command spells the shared things the same way: --data, --format,
// --batch-size, --model, --out wherever they apply.
func TestOneVocabulary(t *testing.T) {
	want := map[string][]string{
		"pretrain":    {"data", "format", "batch-size", "out"},
		"finetune":    {"data", "format", "batch-size", "model", "out"},
		"evaluate":    {"data", "format", "batch-size", "model"},
		"predict":     {"data", "format", "batch-size", "model", "out"},
		"interpolate": {"data", "format", "batch-size", "model", "out"},
		"embed":       {"data", "format", "batch-size", "model", "out"},
		"bench":       {"batch-size"},
		"experiment":  {"data", "out"},
	}
	for cmd, names := range want {
		docs, err := commandFlags(cmd)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, d := range docs {
			have = append(have, d.names...)
		}
		for _, n := range names {
			if !slices.Contains(have, n) {
				t.Errorf("romae %s has no --%s (flags: %v)", cmd, n, have)
			}
		}
	}
}

// The old spellings work for one release and say so on standard error.
func TestDeprecatedSpellings(t *testing.T) {
	_, errOut, code := runMain(t, "bench", "--batch", "2", "--tokens", "4", "--steps", "1", "--warmup", "0", "--size", "tiny-shallow")
	if code != 0 || !strings.Contains(errOut, "--batch is deprecated") || !strings.Contains(errOut, "use --batch-size") {
		t.Errorf("bench --batch: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runMain(t, "finetune", "--from", filepath.Join(t.TempDir(), "none"), "--data", trainTS)
	if code != 1 || !strings.Contains(errOut, "--from is deprecated") || !strings.Contains(errOut, "use --model") || !strings.Contains(errOut, "none") {
		t.Errorf("finetune --from: exit %d, stderr %q", code, errOut)
	}
}

// Every setting is checked before any data is read (here the data file does
// not even exist, so a data error would show); flags that cannot apply to
// the command are errors; a JSON config's errors say JSON.
func TestSettingsCheckedBeforeData(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none.ts")
	badJSON := filepath.Join(dir, "run.json")
	os.WriteFile(badJSON, []byte("{\"train\": {\"epochs\": 3,}}"), 0o644)
	unknownJSON := filepath.Join(dir, "unknown.json")
	os.WriteFile(unknownJSON, []byte(`{"train": {"epoch": 3}}`), 0o644)
	ckpt := filepath.Join(dir, "pre")
	for _, tc := range []struct {
		run  func(context.Context, []string) error
		args []string
		want string
	}{
		{cmdPretrain, []string{"--data", none, "--train.epochs", "0"}, "train.epochs = 0"},
		{cmdPretrain, []string{"--data", none, "--model.size", "huge"}, "model.size"},
		{cmdPretrain, []string{"--data", none, "--model.pos_encoding", "alibi"}, "pos_encoding"},
		{cmdPretrain, []string{"--data", none, "--data.nan", "skip"}, "data.nan"},
		{cmdPretrain, []string{"--data", none, "--data.patch", "0,5"}, "data.patch"},
		{cmdPretrain, []string{"--data", trainTS, "--data.patch", "4,4"}, "image patches apply to .npy/.npz"},
		{cmdPretrain, []string{"--data", none}, "none.ts"},
		{cmdPretrain, []string{"--data", trainTS, "--train.label_smoothing", "0.1"}, "--train.label_smoothing applies to finetune, not pretrain"},
		{cmdFinetune, []string{"--data", trainTS, "--train.mask_ratio", "0.5"}, "applies to pretrain"},
		{cmdFinetune, []string{"--model", ckpt, "--data", trainTS, "--model.size", "base"}, "--model.size cannot apply with --model"},
		{cmdFinetune, []string{"--model", ckpt, "--data", trainTS, "--model.pos_encoding", "absolute"}, "--model.pos_encoding cannot apply"},
		{cmdPretrain, []string{"--config", badJSON}, "run.json:1: JSON config"},
		{cmdPretrain, []string{"--config", unknownJSON}, "unknown.json: JSON config: unmarshal errors: line 1: field epoch not found"},
		{cmdPretrain, []string{"--data", trainTS, "extra.ts"}, `unexpected argument "extra.ts"`},
	} {
		_, err := capture(t, tc.run, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// A config file shared by pretrain and finetune may give architecture
// settings, but one that contradicts the pre-trained model is an error.
func TestFinetuneConfigArchitectureMustMatch(t *testing.T) {
	dir := t.TempDir()
	pre := filepath.Join(dir, "pre")
	cfg := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfg, []byte("model:\n  size: 24,2,1,48\n  decoder_size: 24,2,1,48\ntrain:\n  epochs: 1\n  progress: none\n"), 0o644)
	if _, err := capture(t, cmdPretrain, "--config", cfg, "--data", trainTS, "--out", pre); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, cmdFinetune, "--config", cfg, "--model", pre, "--data", trainTS, "--out", filepath.Join(dir, "ft")); err != nil {
		t.Errorf("finetune with the same config file: %v", err)
	}
	os.WriteFile(cfg, []byte("model:\n  size: 36,2,2,72\ntrain:\n  epochs: 1\n  progress: none\n"), 0o644)
	_, err := capture(t, cmdFinetune, "--config", cfg, "--model", pre, "--data", trainTS, "--out", filepath.Join(dir, "ft2"))
	if err == nil || !strings.Contains(err.Error(), "model.size 36,2,2,72 in the config file differs from the pre-trained model's 24,2,1,48") {
		t.Errorf("contradicting size: %v", err)
	}
}

// A run directory that holds a run is refused unless the run is resumed or
// replaced; --overwrite deletes the old run's files, so no stale
// best.safetensors survives to be inspected.
func TestExistingRunDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"--data", trainTS, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48", "--train.epochs", "1",
		"--train.progress", "none", "--out", out}
	if _, err := capture(t, cmdPretrain, args...); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, train.MetricsFile))
	_, err := capture(t, cmdPretrain, args...)
	if err == nil || !strings.Contains(err.Error(), "already holds a run") || !strings.Contains(err.Error(), "--train.resume") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("second run into %s: %v, want a refusal naming --train.resume and --overwrite", out, err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, train.MetricsFile)); !bytes.Equal(before, after) {
		t.Error("the refused run changed metrics.jsonl")
	}
	if _, err := capture(t, cmdPretrain, append(args, "--overwrite", "--train.resume")...); err == nil || !strings.Contains(err.Error(), "contradict") {
		t.Errorf("--overwrite with --train.resume: %v", err)
	}
	// Replaced by a run stopped after one step: it writes no best.safetensors.
	if _, err := capture(t, cmdPretrain, append(args, "--overwrite", "--train.epochs", "2", "--train.max_steps", "1")...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, train.BestFile)); err == nil {
		t.Error("the replaced run's best.safetensors survived --overwrite")
	}
	if _, ck, err := model.Load[float32](filepath.Join(out, train.LastFile)); err != nil || !strings.Contains(ck.Meta["romae.train_state"], `"step":1,`) {
		t.Errorf("last.safetensors after --overwrite: %v", err)
	}
}

// Ctrl-C during training writes the checkpoint, says where it is and prints
// the command that resumes; that command finishes the run.
func TestInterruptPrintsResumeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains in a subprocess")
	}
	out := filepath.Join(t.TempDir(), "run")
	words := interruptRun(t, []string{"pretrain", "--data", trainTS, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "400", "--train.progress", "none", "--out", out}, []string{out}, filepath.Join(out, train.LastFile))
	if words[0] != os.Args[0] {
		t.Fatalf("resume command %q", words)
	}
	// Resume with fewer epochs, so the test ends soon: the command line is
	// the one printed, with one setting added.
	resumed := exec.Command(words[0], append(words[1:], "--train.epochs", "3")...)
	resumed.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
	if b, err := resumed.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("resuming")) {
		t.Fatalf("the printed command: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err != nil {
		t.Error(err)
	}
}

// interruptRun runs romae with args in a subprocess until every run
// directory in dirs has logged an epoch, sends it SIGINT, checks that it
// exits 130 naming the checkpoint written at checkpoint, and returns the
// command it prints to resume (ending in --train.resume).
func interruptRun(t *testing.T, args, dirs []string, checkpoint string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for logged := 0; logged < len(dirs) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		logged = 0
		for _, dir := range dirs {
			if b, _ := os.ReadFile(filepath.Join(dir, train.MetricsFile)); bytes.Contains(b, []byte("train_loss")) {
				logged++
			}
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	msg := errOut.String()
	if !ok || ee.ExitCode() != 130 || !strings.Contains(msg, "checkpoint written to "+checkpoint) {
		t.Fatalf("after SIGINT: %v, stderr %q; want exit 130 naming %s", err, msg, checkpoint)
	}
	_, resume, found := strings.Cut(msg, "resume with: ")
	words := strings.Fields(resume)
	if !found || words[len(words)-1] != "--train.resume" {
		t.Fatalf("resume command %q", resume)
	}
	return words
}

// interpolate writes the header its --queries file takes (id, then the
// position axes by name) and channels by name; the older pos1,pos2 header
// still works, with a note.
func TestInterpolateColumnsByName(t *testing.T) {
	dir := t.TempDir()
	trainCSV, _ := writeOscillatorCSV(t, dir, "train", 6, 1)
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, "--data", trainCSV, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "1", "--train.progress", "none", "--out", pre); err != nil {
		t.Fatal(err)
	}
	grid := filepath.Join(dir, "grid.csv")
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", trainCSV, "--at", "0:1:0.5", "--out", grid); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, grid)
	if strings.Join(rows[0], ",") != "id,channel,time,value" || rows[1][1] != "ch0" || len(rows) != 1+6*3*3 {
		t.Fatalf("grid output: header %v, first row %v, %d rows", rows[0], rows[1], len(rows))
	}
	// Its own output, value column and all, read back as queries gives the
	// same values back; so do its first rows with the columns in another
	// order.
	again := filepath.Join(dir, "again.csv")
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", trainCSV, "--queries", grid, "--out", again); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, again); !slices.EqualFunc(got, rows, slices.Equal) {
		t.Errorf("its own output as queries gave %d rows, not the same %d", len(got), len(rows))
	}
	queries := filepath.Join(dir, "q.csv")
	q := "\ufefftime,id,channel\n"
	for _, r := range rows[1:4] {
		q += r[2] + "," + r[0] + "," + r[1] + "\n"
	}
	os.WriteFile(queries, []byte(q), 0o644)
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", trainCSV, "--queries", queries, "--out", again); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, again); !slices.EqualFunc(got, rows[:4], slices.Equal) {
		t.Errorf("queries in column order time,id,channel gave %v, want %v", got, rows[:4])
	}
	os.WriteFile(queries, []byte("id,pos1,pos2\ntrain0,1,0.5\n"), 0o644)
	_, errOut, code := runMain(t, "interpolate", "--model", pre, "--data", trainCSV, "--queries", queries)
	if code != 0 || !strings.Contains(errOut, "deprecated") {
		t.Errorf("legacy header: exit %d, stderr %q", code, errOut)
	}
	// A .ts file for this CSV-trained model: the message says what the
	// model needs, not that the user set data.channels (they did not).
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", trainTS, "--at", "0:1:0.5"); err == nil ||
		!strings.Contains(err.Error(), "was trained on a long CSV whose channel column holds ch0, ch1, ch2") || strings.Contains(err.Error(), "data.channels") {
		t.Errorf(".ts data for a CSV-trained model: %v", err)
	}
	// A CSV whose value column has another name: the message names the
	// model's data spec, not a data.value_columns the user could not set.
	renamed := filepath.Join(dir, "renamed.csv")
	lines := strings.SplitN(readFile(t, trainCSV), "\n", 2)
	os.WriteFile(renamed, []byte(strings.Replace(lines[0], "value", "flux", 1)+"\n"+lines[1]), 0o644)
	if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", renamed, "--at", "0:1:0.5"); err == nil ||
		!strings.Contains(err.Error(), `renamed.csv:1: header has no column "value"`) || !strings.Contains(err.Error(), "reads it as its data spec's data.value_columns") ||
		strings.Contains(err.Error(), "set data.value_columns") {
		t.Errorf("a renamed value column for a CSV-trained model: %v", err)
	}
	// The report draws the example interpolations by channel name.
	out, err := capture(t, cmdReport, "--run", pre)
	if err != nil {
		t.Fatal(err)
	}
	if html := readFile(t, strings.TrimSpace(out)); !strings.Contains(html, "ch0 value") || !strings.Contains(html, "ch2 value") {
		t.Error("the report's interpolation legend does not name the channels")
	}
	for content, want := range map[string]string{
		"id,band,time\ntrain0,ch1,0.5\n":             `q.csv:1: header id,band,time has no column "channel": want id,channel,time`,
		"id,channel,time\ntrain0,ch1\n":              "q.csv:2: 2 fields, the header has 3",
		"id,channel,time\ntrain0,ch1,0.5\nx,ch1,1\n": `q.csv:3: series "x" is not in the data`,
		"": "q.csv:1: empty file",
		// Channel indices the model never saw, as serve refuses them.
		"id,channel,time\ntrain0,1,0.5\ntrain0,7,0.5\n": "q.csv:3: channel: channel 7 is not one of the model's channels: ch0, ch1, ch2",
		"id,channel,time\ntrain0,-1,0.5\n":              "q.csv:2: channel: channel -1 is not one",
		"id,channel,time\ntrain0,0.5,0.5\n":             "q.csv:2: channel: channel 0.5 is not one",
		"id,channel,time\ntrain0,ch9,0.5\n":             `channel "ch9" is neither one of ch0, ch1, ch2`,
	} {
		os.WriteFile(queries, []byte(content), 0o644)
		if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", trainCSV, "--queries", queries); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("queries %q: error %v, want %q", content, err, want)
		}
	}
}

// The README's command table and docs/cli.md's settings table are what
// `romae help reference` generates from the flag definitions.
// ROMAE_UPDATE_REFERENCE=1 rewrites them.
func TestReferenceInSync(t *testing.T) {
	cmds, settings, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, marker, want string }{
		{"../../README.md", "<!-- romae help reference: commands", cmds},
		{"../../docs/cli.md", "<!-- romae help reference: settings", settings},
	} {
		raw, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		start := strings.Index(doc, f.marker)
		if start < 0 {
			t.Fatalf("%s has no %q marker", f.path, f.marker)
		}
		start += strings.Index(doc[start:], "\n") + 1
		end := start + strings.Index(doc[start:], "<!-- end -->")
		if end < start {
			t.Fatalf("%s: no <!-- end --> after %q", f.path, f.marker)
		}
		if doc[start:end] == f.want {
			continue
		}
		if os.Getenv("ROMAE_UPDATE_REFERENCE") == "1" {
			if err := os.WriteFile(f.path, []byte(doc[:start]+f.want+doc[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is out of date with the flags; ROMAE_UPDATE_REFERENCE=1 go test -run TestReferenceInSync ./cmd/romae/ rewrites it", f.path)
	}
}

// A model keeps its training file's channel names: a file lacking a band
// keeps the others' indices (also when fine-tuning a pre-trained model), a
// band it never saw is refused naming the file and line.
func TestChannelsRecorded(t *testing.T) {
	dir := t.TempDir()
	trainCSV, labels := writeOscillatorCSV(t, dir, "train", 6, 1)
	all := readFile(t, trainCSV)
	var noCh1, renamed strings.Builder
	for _, line := range strings.SplitAfter(all, "\n") {
		if !strings.Contains(line, ",ch1,") {
			noCh1.WriteString(line)
		}
		renamed.WriteString(strings.Replace(line, ",ch2,", ",ch7,", 1))
	}
	noCh1CSV, renamedCSV := filepath.Join(dir, "noch1.csv"), filepath.Join(dir, "renamed.csv")
	os.WriteFile(noCh1CSV, []byte(noCh1.String()), 0o644)
	os.WriteFile(renamedCSV, []byte(renamed.String()), 0o644)
	tiny := []string{"--model.size", "24,2,1,48", "--train.epochs", "1", "--train.progress", "none"}
	pre, ft := filepath.Join(dir, "pre"), filepath.Join(dir, "ft")
	if _, err := capture(t, cmdPretrain, append([]string{"--data", trainCSV, "--model.decoder_size", "24,2,1,48", "--out", pre}, tiny...)...); err != nil {
		t.Fatal(err)
	}
	// Fine-tuned on the file without ch1: the pre-trained model's channels.
	if _, err := capture(t, cmdFinetune, "--model", pre, "--data", noCh1CSV, "--data.labels_file", labels,
		"--train.epochs", "1", "--train.progress", "none", "--data.folds", "1", "--out", ft); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{pre, ft} {
		spec := runSpec(t, run)
		if want := []string{"ch0", "ch1", "ch2"}; !slices.Equal(spec.Source.Channels, want) {
			t.Fatalf("%s: channels %v, want %v", run, spec.Source.Channels, want)
		}
		ds, err := spec.Read(noCh1CSV)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[float32]int{}
		for _, s := range ds.Samples {
			for k := 0; k < len(s.Positions); k += ds.D {
				seen[s.Positions[k]]++
			}
		}
		if len(seen) != 2 || seen[0] == 0 || seen[2] == 0 {
			t.Errorf("%s: a file without ch1 read with channel indices %v, want ch0 at 0 and ch2 at 2", run, seen)
		}
	}
	_, err := capture(t, cmdEmbed, "--model", pre, "--data", renamedCSV, "--out", filepath.Join(dir, "e.npy"))
	if err == nil || !strings.Contains(err.Error(), "renamed.csv:4:") || !strings.Contains(err.Error(), `channel "ch7" is not one of the channels ch0, ch1, ch2`) {
		t.Errorf("a band the model never saw: %v", err)
	}
}

// An --out the command cannot write is refused before any work (the
// model path here does not exist: the --out error comes first).
func TestOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"embed", "--out", filepath.Join(dir, "e.csv")}, "e.csv: this command writes .npy files"},
		{[]string{"predict", "--out", filepath.Join(dir, "p.npy")}, "p.npy: this command writes .csv or .json files"},
		{[]string{"interpolate", "--at", "0:1:1", "--out", filepath.Join(dir, "i.json")}, "i.json: this command writes .csv files"},
		{[]string{"report", "--run", dir, "--out", filepath.Join(dir, "r.pdf")}, "r.pdf: this command writes .html or .htm files"},
		{[]string{"predict", "--out", filepath.Join(aFile(t), "sub", "p.csv")}, "not a directory"},
	} {
		args := append(tc.args, "--model", filepath.Join(dir, "none"), "--data", filepath.Join(dir, "none.ts"))
		if tc.args[0] == "report" {
			args = tc.args
		}
		_, errOut, code := runMain(t, args...)
		if code == 0 || !strings.Contains(errOut, "--out ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("romae %s: exit %d, stderr %q, want --out and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}

// aFile is a file's path: no directory can be made under it (whoever
// runs the tests, root included).
func aFile(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	return f
}

func TestExtrapolationNote(t *testing.T) {
	// Two series on (channel, time): times 0–4 and 10–12.
	ds := &data.Dataset{C: 1, D: 2, TimeAxis: 1, Samples: []data.Sample{
		{Values: []float32{1, 2, 3}, Positions: []float32{0, 0, 1, 2, 0, 4}},
		{Values: []float32{1, 2}, Positions: []float32{0, 10, 0, 12}},
	}}
	for _, tc := range []struct {
		name string
		q    [][]float32
		want string
	}{
		{"inside", [][]float32{{0, 0, 1, 4}, {0, 11}}, ""},
		{"some outside", [][]float32{{0, 5}, {0, 11, 1, 9}}, "2 of 3 query times lie outside"},
		{"all outside", [][]float32{{0, 59000}, {}}, "every one of the 1 query times lies outside"},
	} {
		if got := extrapolationNote(ds, tc.q); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// embed's .ids.txt keeps line i for row i whatever the ids hold: an id
// with a line break is written quoted, on one line, and reads back.
func TestEmbedIDLine(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"star 12", "star 12"},
		{"a,b", "a,b"},
		{"two\nlines", `"two\nlines"`},
		{"cr\rhere", `"cr\rhere"`},
		{`"quoted"`, `"\"quoted\""`},
		{`mid"quote`, `mid"quote`},
	} {
		got := idLine(tc.id)
		if got != tc.want || strings.ContainsAny(got, "\n\r") {
			t.Errorf("idLine(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if got != tc.id {
			if back, err := strconv.Unquote(got); err != nil || back != tc.id {
				t.Errorf("idLine(%q) = %q reads back as %q, %v", tc.id, got, back, err)
			}
		}
	}
}

// Bands on other scales (a token's values do not say its band): training on
// a long CSV standardises each band on its own, stored in the checkpoint,
// and interpolation maps the model's values back with each band's own
// constants, so an untrained model's values land at its band's level, not
// at the pooled mean between the bands. data.normalize_channels false
// keeps one mean and std for all bands.
func TestBandsStandardisedPerChannel(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "bands.csv")
	level := map[string][2]float64{"g": {5000, 40}, "r": {-20, 0.5}} // mean, spread
	var b strings.Builder
	b.WriteString("id,time,band,flux,label\n")
	for i := range 12 {
		for k := range 10 {
			for _, band := range []string{"g", "r"} {
				l := level[band]
				fmt.Fprintf(&b, "s%d,%g,%s,%g,c%d\n", i, 60000+float64(k)*1.5+0.3*float64(i%3), band, l[0]+l[1]*math.Sin(float64(i+k)), i%2)
			}
		}
	}
	os.WriteFile(csvPath, []byte(b.String()), 0o644)
	for _, perChannel := range []bool{true, false} {
		t.Run(fmt.Sprint("normalize_channels=", perChannel), func(t *testing.T) {
			pre := filepath.Join(t.TempDir(), "pre")
			if _, err := capture(t, cmdPretrain, "--data", csvPath, "--data.value_columns", "flux", "--data.channel_column", "band",
				"--data.normalize_channels="+fmt.Sprint(perChannel), "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
				"--train.epochs", "1", "--train.progress", "none", "--out", pre); err != nil {
				t.Fatal(err)
			}
			st := runSpec(t, pre).Stats
			if st.PerChannel() != perChannel {
				t.Fatalf("stats %+v: per channel %v, want %v", st, st.PerChannel(), perChannel)
			}
			if perChannel && (math.Abs(st.ChannelMean[0]-5000) > 40 || math.Abs(st.ChannelMean[1]+20) > 0.5) {
				t.Errorf("band means %v, want about 5000 (g) and -20 (r)", st.ChannelMean)
			}
			grid := filepath.Join(t.TempDir(), "grid.csv")
			if _, err := capture(t, cmdInterpolate, "--model", pre, "--data", csvPath, "--at", "60001:60010:3", "--blend", "off", "--out", grid); err != nil {
				t.Fatal(err)
			}
			rows := readCSV(t, grid)
			if strings.Join(rows[0], ",") != "id,channel,time,flux" {
				t.Fatalf("header %v", rows[0])
			}
			for _, r := range rows[1:] {
				v, _ := strconv.ParseFloat(r[3], 64)
				l := level[r[1]]
				// An untrained model's values are within a few units of 0:
				// within 5 spreads of the band's level per band, thousands
				// away from either band pooled.
				if near := math.Abs(v-l[0]) < 5*l[1]; near != perChannel {
					t.Errorf("%v: %s %s at %s interpolated to %v; band level %v ± %v", perChannel, r[0], r[1], r[2], v, l[0], l[1])
				}
			}
		})
	}
}

// Series on scales orders of magnitude apart: fine-tuning from scratch
// standardises each series on its own (data.normalize_series, in the
// recipe line and the checkpoint's spec); where it may not (pre-training,
// the user's no) training warns, naming the file, the column and the
// channel. Data on one scale gets neither. Pre-training refuses the
// setting, and so does fine-tuning a pre-trained model.
func TestScaleSpreadRecipe(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, scale func(i int) float64) string {
		var b strings.Builder
		b.WriteString("id,time,band,flux,label\n")
		for i := range 30 {
			for k := range 8 {
				for _, band := range []string{"g", "r"} {
					fmt.Fprintf(&b, "s%d,%d,%s,%g,c%d\n", i, k, band, scale(i)*(2+math.Sin(float64(i+k))), i%2)
				}
			}
		}
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(b.String()), 0o644)
		return path
	}
	bright := write("bright.csv", func(i int) float64 { return math.Pow(10, float64(i)/10) })
	even := write("even.csv", func(i int) float64 { return 1 + float64(i)/30 })
	tiny := []string{"--data.value_columns", "flux", "--data.channel_column", "band", "--model.size", "24,2,1,48", "--train.epochs", "1", "--train.progress", "none"}
	for _, tc := range []struct {
		name          string
		args          []string
		chosen, warns bool
	}{
		{"fine-tuning, 2.4 decades", []string{"finetune", "--data", bright, "--data.folds", "1"}, true, false},
		{"fine-tuning, told not to", []string{"finetune", "--data", bright, "--data.folds", "1", "--data.normalize_series=false"}, false, true},
		{"pre-training, 2.4 decades", []string{"pretrain", "--data", bright, "--model.decoder_size", "24,2,1,48"}, false, true},
		{"fine-tuning, one scale", []string{"finetune", "--data", even, "--data.folds", "1"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			_, errOut, code := runMain(t, append(append(tc.args, tiny...), "--out", out)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if chosen := strings.Contains(errOut, "data.normalize_series=true"); chosen != tc.chosen || runSpec(t, out).Source.NormalizeSeries != tc.chosen {
				t.Errorf("recipe line says data.normalize_series=true: %v, spec %v; want %v. stderr:\n%s", chosen, runSpec(t, out).Source.NormalizeSeries, tc.chosen, errOut)
			}
			warned := strings.Contains(errOut, "romae: warning: "+bright+": its series' spreads of flux in channel g are 2.4 decades apart") &&
				strings.Contains(errOut, "fine-tune from scratch with --data.normalize_series")
			if warned != tc.warns || strings.Contains(errOut, "warning") != tc.warns {
				t.Errorf("warned %v, want %v; stderr:\n%s", warned, tc.warns, errOut)
			}
		})
	}
	pre := filepath.Join(dir, "pre")
	_, errOut, code := runMain(t, append([]string{"pretrain", "--data", bright, "--data.normalize_series", "--out", pre}, tiny...)...)
	if code != 1 || !strings.Contains(errOut, "data.normalize_series: pre-training reconstructs each series' values") {
		t.Errorf("pre-training with data.normalize_series: exit %d, stderr %q", code, errOut)
	}
	// A pre-trained model read its series unstandardised: fine-tuning it
	// with data.normalize_series would feed it another scale.
	if _, errOut, code = runMain(t, append([]string{"pretrain", "--data", bright, "--model.decoder_size", "24,2,1,48", "--out", pre}, tiny...)...); code != 0 {
		t.Fatalf("pretrain: exit %d: %s", code, errOut)
	}
	_, errOut, code = runMain(t, "finetune", "--model", pre, "--data", bright, "--data.value_columns", "flux", "--data.channel_column", "band",
		"--data.normalize_series", "--train.epochs", "1", "--data.folds", "1",
		"--train.progress", "none", "--out", filepath.Join(dir, "ft"))
	if code != 1 || !strings.Contains(errOut, "data.normalize_series: the model fine-tuned from read its series as they are") {
		t.Errorf("fine-tuning a pre-trained model with data.normalize_series: exit %d, stderr %q", code, errOut)
	}
}
