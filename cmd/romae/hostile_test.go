package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"romae/ckpt"
	"romae/model"
)

// TestMain lets the test binary stand in for bin/romae: with
// ROMAE_HOSTILE_AS_MAIN=1 it runs main() on its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("ROMAE_HOSTILE_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHostileInputsCLI runs romae on every hostile input found while
// fuzzing (and the ones issue 12 lists) under `ulimit -v 4000000` (4 GB of
// address space) and a 30 s deadline, and requires a non-zero exit with a
// one-line error: no panic, no out-of-memory crash, no hang. It runs
// bin/romae when ROMAE_BIN names it (scripts/hostile.sh builds and passes
// it), else this test binary as romae.
func TestHostileInputsCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs romae a dozen times")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for ulimit")
	}
	bin, env := os.Getenv("ROMAE_BIN"), []string(nil)
	if bin == "" {
		bin, env = os.Args[0], []string{"ROMAE_HOSTILE_AS_MAIN=1"}
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "run")

	// A tiny classifier and pre-training model, and their tensors.
	small := func(task string) *model.Model[float32] {
		c := model.DefaultConfig()
		c.Encoder = model.Size{DModel: 4, Heads: 1, Depth: 1, FFN: 4}
		c.Decoder = c.Encoder
		c.Values, c.Task, c.Outputs = 1, task, 3
		if task == model.TaskPretrain {
			c.Outputs = 0
		}
		m, err := model.New[float32](c, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tensors := func(m *model.Model[float32]) []*ckpt.Tensor {
		var ts []*ckpt.Tensor
		for _, p := range m.Params {
			ts = append(ts, ckpt.F32Tensor(p.Name, p.Shape, p.W))
		}
		return ts
	}
	clf, pre := small(model.TaskClassify), small(model.TaskPretrain)
	huge := strings.Replace(mustJSONString(t, clf.Cfg), `"d_model":4`, `"d_model":65536`, 1)
	if !strings.Contains(huge, "65536") {
		t.Fatalf("config JSON changed shape: %s", huge)
	}
	hugeCk := filepath.Join(dir, "huge.safetensors")
	if err := ckpt.WriteFile(hugeCk, tensors(clf), map[string]string{"romae.format": "romae-checkpoint-1", "romae.config": huge}); err != nil {
		t.Fatal(err)
	}
	classesCk := filepath.Join(dir, "classes.safetensors")
	if err := clf.Save(classesCk, map[string]string{"romae.classes": `["a","b"]`, "romae.data_source": `{"format":"ts"}`}, nil); err != nil {
		t.Fatal(err)
	}
	preCk := filepath.Join(dir, "pre.safetensors")
	if err := pre.Save(preCk, nil, nil); err != nil {
		t.Fatal(err)
	}
	official := filepath.Join(dir, "official")
	write("official/model_config.json", []byte(`{"encoder_config":{"d_model":4,"nhead":1,"depth":1000000000,"dim_feedforward":4},"tubelet_size":[1,1,1],"n_pos_dims":1,"dim_output":3}`))
	if err := ckpt.WriteFile(filepath.Join(official, "model.safetensors"), tensors(clf), nil); err != nil {
		t.Fatal(err)
	}
	series := write("series.ts", []byte("@univariate true\n@classLabel true a b c\n@data\n1,2,3:a\n2,3,4:b\n"))
	var twelve bytes.Buffer
	twelve.WriteString("@univariate true\n@classLabel true a b c\n@data\n")
	for i := range 12 {
		fmt.Fprintf(&twelve, "%d,2,3,%d:%c\n", i, i%5, 'a'+i%3)
	}
	series12 := write("series12.ts", twelve.Bytes())
	// Finite weights whose outputs overflow: a diverged run's, or a
	// damaged file's.
	overflow := small(model.TaskClassify)
	for i := range overflow.W {
		overflow.W[i] = float32(3e38 * float64(1-2*(i%2)))
	}
	overflowCk := filepath.Join(dir, "overflow.safetensors")
	if err := overflow.Save(overflowCk, map[string]string{"romae.classes": `["a","b","c"]`, "romae.data_source": `{"format":"ts"}`}, nil); err != nil {
		t.Fatal(err)
	}

	// .ts: stamped dimensions sharing no stamp (stamps × dimensions).
	var stamped bytes.Buffer
	stamped.WriteString("@timeStamps true\n@data\n")
	for d := range 60000 {
		if d > 0 {
			stamped.WriteByte(':')
		}
		fmt.Fprintf(&stamped, "(%d,1)", d)
	}
	stamped.WriteByte('\n')
	// .ts: 150 000 labels (a scan per label is 10¹⁰ comparisons).
	var labels bytes.Buffer
	labels.WriteString("@classLabel true")
	for i := range 150000 {
		fmt.Fprintf(&labels, " c%d", i)
	}
	labels.WriteString("\n@data\n1,2:c149999\n")
	// CSV, slot mode: one object with 30 000 times, 30 000 channels seen
	// on other objects (times × channels slots).
	var slot bytes.Buffer
	slot.WriteString("id,time,channel,value\n")
	for i := range 30000 {
		fmt.Fprintf(&slot, "a,%d,c0,1\nb%d,0,c%d,1\n", i, i, i)
	}

	// ok: a correct answer (exit 0) is acceptable too, as long as it
	// comes in time; the --at case now finishes with its 17 points.
	cases := []struct {
		name string
		args []string
		ok   bool
	}{
		{"npy shape (1e12, 0)", []string{"pretrain", "--data.train", write("n.npy", npyHead("(1000000000000, 0)")), "--train.out", out}, false},
		{"npy images (1e12, 0, 4)", []string{"pretrain", "--data.train", write("i.npy", npyHead("(1000000000000, 0, 4)")), "--data.patch", "1,1", "--train.out", out}, false},
		{"npz label 2^40", []string{"pretrain", "--data.train", write("l.npz", labelNPZ(t)), "--train.out", out}, false},
		{"checkpoint d_model 65536", []string{"inspect", hugeCk}, false},
		{"authors' config depth 1e9", []string{"inspect", official}, false},
		{"classes fewer than outputs", []string{"predict", "--model", classesCk, "--data", series}, false},
		{"--at that never advances", []string{"interpolate", "--model", preCk, "--data", series, "--raw", "--at", "1e17:1.00000000000001e17:1"}, true},
		{".ts stamped dimensions", []string{"pretrain", "--data.train", write("stamped.ts", stamped.Bytes()), "--train.out", out}, false},
		{".ts 150000 labels", []string{"pretrain", "--data.train", write("labels.ts", labels.Bytes()), "--train.out", out}, false},
		{"CSV slot times × channels", []string{"pretrain", "--data.train", write("slot.csv", slot.Bytes()), "--data.channel_mode", "slot", "--train.out", out}, false},
		{"data.val_fraction leaving no training series", []string{"pretrain", "--data.train", series12, "--data.val_fraction", "0.99", "--train.out", out}, false},
		{"finetune data.val_fraction leaving no training series", []string{"finetune", "--data.train", series12, "--data.val_fraction", "0.99", "--data.folds", "0", "--train.out", out}, false},
		{"overflowing outputs, predict to JSON", []string{"predict", "--model", overflowCk, "--data", series12, "--out", filepath.Join(dir, "p.json")}, false},
		{"overflowing outputs, predict to CSV", []string{"predict", "--model", overflowCk, "--data", series12, "--out", filepath.Join(dir, "p.csv")}, false},
		{"overflowing outputs, evaluate", []string{"evaluate", "--model", overflowCk, "--data", series12}, false},
		{"overflowing outputs, embed", []string{"embed", "--model", overflowCk, "--data", series12, "--out", filepath.Join(dir, "e.npy")}, false},
		{"config size 65536", []string{"pretrain", "--data.train", series, "--model.size", "65536,1,1,4", "--train.out", out}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", `ulimit -v 4000000 && exec "$0" "$@"`, bin}, c.args...)...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Env = append(cmd.Env, "GOMAXPROCS=2")
			var stderr bytes.Buffer
			cmd.Stderr, cmd.Stdout = &stderr, &bytes.Buffer{}
			start := time.Now()
			err := cmd.Run()
			msg := strings.TrimRight(stderr.String(), "\n")
			var exit *exec.ExitError
			switch {
			case ctx.Err() != nil:
				t.Fatalf("still running after %v", time.Since(start))
			case err == nil && c.ok:
			case err == nil:
				t.Fatalf("exit 0, want an error (stderr %q)", msg)
			case !errors.As(err, &exit) || exit.ExitCode() != 1:
				t.Fatalf("%v, want exit status 1; stderr:\n%.2000s", err, msg)
			case err != nil && (strings.Contains(msg, "\n") || msg == ""):
				t.Fatalf("want a one-line error, got:\n%.2000s", msg)
			case strings.Contains(msg, "panic") || strings.Contains(msg, "fatal error"):
				t.Fatalf("crashed: %s", msg)
			}
			t.Logf("%.1fs: %s", time.Since(start).Seconds(), msg)
		})
	}
}

func mustJSONString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func npyHead(shape string) []byte {
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': %s, }\n", shape)
	return append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(dict)), byte(len(dict) >> 8)}, dict...)
}

func labelNPZ(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zipWriter(&b)
	w, _ := zw.Create("x.npy")
	w.Write(append(npyHead("(2, 2)"), make([]byte, 16)...))
	w, _ = zw.Create("y.npy")
	dict := "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n"
	w.Write(append(append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(dict)), 0}, dict...), binary.LittleEndian.AppendUint64(make([]byte, 8), 1<<40)...))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zipWriter(b *bytes.Buffer) *zip.Writer { return zip.NewWriter(b) }

// Commands with nothing to save stop at once on SIGINT or SIGTERM, exit
// 130 and say so, even while blocked reading their input (here a FIFO
// nobody writes to).
func TestSignalStopsUsingCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts romae as a subprocess")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.csv")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "inspect", fifo)
			cmd.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // blocked opening the FIFO
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
					t.Fatalf("%v, stderr %q: want exit 130 saying interrupted", err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 10 s after %v", sig)
			}
		})
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
