package train

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/ckpt"
	"romae/model"
	"romae/tensor"
)

// A checkpoint records the numerics its products ran with; resuming one
// from a machine with other numerics says so, names the ROMAE_CACHES
// value that would match, and still resumes; the same numerics say nothing.
func TestResumeNotesOtherNumerics(t *testing.T) {
	here := tensor.CurrentNumerics()
	other := here
	other.CPU, other.KSplits, other.Caches = "Another CPU", append([]int{1}, here.KSplits...), "32K,1M"
	for _, tc := range []struct {
		name     string
		rewrite  func(*tensor.Numerics) *tensor.Numerics
		wantNote bool
	}{
		{"same machine", func(n *tensor.Numerics) *tensor.Numerics { return n }, false},
		{"other caches", func(*tensor.Numerics) *tensor.Numerics { return &other }, true},
		{"not recorded", func(*tensor.Numerics) *tensor.Numerics { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.MaxSteps = 4
			runToy(t, cfg, model.TaskPretrain)

			last := filepath.Join(cfg.Out, LastFile)
			f, err := ckpt.ReadFile(last)
			if err != nil {
				t.Fatal(err)
			}
			var st state
			if err := json.Unmarshal([]byte(f.Metadata[StateMeta]), &st); err != nil {
				t.Fatal(err)
			}
			if st.Numerics == nil || !st.Numerics.SameBits(here) || st.Numerics.CPU != here.CPU {
				t.Fatalf("checkpoint records numerics %+v, want this process's %+v", st.Numerics, here)
			}
			st.Numerics = tc.rewrite(st.Numerics)
			sj, _ := json.Marshal(st)
			f.Metadata[StateMeta] = string(sj)
			var tensors []*ckpt.Tensor
			for _, name := range f.Order {
				tensors = append(tensors, f.Tensors[name])
			}
			var buf bytes.Buffer
			if err := ckpt.Write(&buf, tensors, f.Metadata); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(last, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}

			cfg.MaxSteps, cfg.Resume = 0, true
			var log strings.Builder
			tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskPretrain), Train: toyData(10, 1), Val: toyData(6, 2), Data: toySpec(model.TaskPretrain), Log: &log}
			res, err := tr.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != 9 {
				t.Fatalf("resumed run ended at step %d, want 9", res.Steps)
			}
			note := strings.Contains(log.String(), "not bit-identical")
			if note != tc.wantNote {
				t.Fatalf("log %q: note printed %v, want %v", log.String(), note, tc.wantNote)
			}
			if tc.wantNote && (!strings.Contains(log.String(), "Another CPU") || !strings.Contains(log.String(), "ROMAE_CACHES=32K,1M")) {
				t.Errorf("note %q names neither the other CPU nor ROMAE_CACHES=32K,1M", log.String())
			}
		})
	}
}

// numericsNote says what would make the bits match: the precision first,
// then the kernels, then the caches.
func TestNumericsNote(t *testing.T) {
	base := tensor.Numerics{Precision: "fp32", Kernels: "avx512", KSplits: []int{256, 192}, Caches: "48K,1024K", CPU: "Zen 5"}
	with := func(f func(*tensor.Numerics)) *tensor.Numerics { n := base; f(&n); return &n }
	for _, tc := range []struct {
		name   string
		before *tensor.Numerics
		want   string // "" : no note
	}{
		{"same", with(func(n *tensor.Numerics) { n.CPU = "another CPU, same caches" }), ""},
		{"none recorded", nil, ""},
		{"precision", with(func(n *tensor.Numerics) { n.Precision = "bf16" }), "ROMAE_PRECISION=bf16"},
		{"kernels", with(func(n *tensor.Numerics) { n.Kernels = "avx2"; n.KSplits = []int{256, 192, 96} }), "that needs its kernels (avx2; here avx512)"},
		{"caches", with(func(n *tensor.Numerics) { n.KSplits, n.Caches = []int{384, 192}, "48K,2048K" }), "ROMAE_CACHES=48K,2048K"},
		{"caches not reported", with(func(n *tensor.Numerics) { n.KSplits, n.Caches = []int{256, 256}, "" }), "not bit-identical to an uninterrupted run"},
	} {
		got := numericsNote(tc.before, base)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: note %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

// A resumed run says which of its settings differ from the checkpoint's
// run's, and nothing when only where and how long it runs changed.
func TestResumeNotesOtherSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // "" : no note
	}{
		{"same settings", func(*Config) {}, ""},
		{"where and how it runs", func(c *Config) { c.Progress, c.CheckpointEvery = "lines", 3 }, ""},
		{"learning rate and epochs", func(c *Config) { c.LR *= 10; c.Epochs++ }, "train.epochs 3 → 4, train.lr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := toyConfig(t.TempDir())
			cfg.MaxSteps = 4
			runToy(t, cfg, model.TaskPretrain)
			cfg.MaxSteps, cfg.Resume = 0, true
			tc.change(&cfg)
			var log strings.Builder
			tr := &Trainer{Cfg: cfg, Model: toyModel(t, model.TaskPretrain), Train: toyData(10, 1), Val: toyData(6, 2), Data: toySpec(model.TaskPretrain), Log: &log}
			if _, err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			note := strings.Contains(log.String(), "resuming with settings other than")
			if note != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("log %q: want a note %q", log.String(), tc.want)
			}
		})
	}
}
