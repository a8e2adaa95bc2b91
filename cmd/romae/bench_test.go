package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"romae/model"
	"romae/tensor"
)

// The counted FLOPs of issue 6's workloads: ~82, ~214, ~71 GFLOP.
func TestBenchFLOPs(t *testing.T) {
	o := benchOpts{size: "tiny", values: 2, posDims: 2, classes: 20}
	for _, c := range []struct {
		w    string
		want float64
	}{{"pretrain", 82}, {"finetune", 214}, {"infer", 71}} {
		cfg, err := benchConfig(o, c.w, model.PosRoPE)
		if err != nil {
			t.Fatal(err)
		}
		got := benchFLOPs(cfg, c.w, 32, 200, 0.75) / 1e9
		if math.Abs(got-c.want)/c.want > 0.03 {
			t.Errorf("%s: %.1f GFLOP, issue counts ~%v", c.w, got, c.want)
		}
	}
}

func TestBenchCommand(t *testing.T) {
	out, err := capture(t, cmdBench, "--workload", "pretrain,finetune,infer", "--size", "tiny-shallow",
		"--batch-size", "2", "--tokens", "12", "--steps", "2", "--pos-encoding", "rope,rope-int,absolute")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 {
		t.Fatalf("want 9 JSON lines, got %d: %q", len(lines), out)
	}
	for _, l := range lines {
		var r benchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if r.MedianS <= 0 || r.GFLOP <= 0 || r.Steps != 2 || len(r.StepS) != 2 || r.Precision != "fp32" {
			t.Errorf("implausible result %+v", r)
		}
		if cpu, k := tensor.CPU(), tensor.Kernel(); r.CPU != cpu.Name || r.CPUClass != cpu.Class() || r.CPUCaches != cpu.Caches() || r.Kernel != k.Kernel || r.GEMM != k.Backend {
			t.Errorf("machine fields %q %q %q %q %q, want %q %q %q %q %q", r.CPU, r.CPUClass, r.CPUCaches, r.Kernel, r.GEMM, cpu.Name, cpu.Class(), cpu.Caches(), k.Kernel, k.Backend)
		}
	}
	if _, err := capture(t, cmdBench, "--workload", "nope"); err == nil {
		t.Error("unknown workload accepted")
	}
}

// --cpuprofile writes one profile per run: FILE itself for a single run,
// FILE.workload-precision-encoding for each of several.
func TestBenchCPUProfile(t *testing.T) {
	for _, c := range []struct {
		workloads string
		want      []string
	}{
		{"infer", []string{"p"}},
		{"pretrain,infer", []string{"p.pretrain-fp32-rope", "p.infer-fp32-rope"}},
	} {
		t.Run(c.workloads, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := capture(t, cmdBench, "--workload", c.workloads, "--size", "tiny-shallow", "--batch-size", "2",
				"--tokens", "12", "--steps", "2", "--cpuprofile", filepath.Join(dir, "p")); err != nil {
				t.Fatal(err)
			}
			var got []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				got = append(got, e.Name())
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
					t.Errorf("%s: not a gzipped profile (%d bytes, %v)", e.Name(), len(b), err)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("files %v, want %v", got, want)
			}
		})
	}
}
