package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunsWithoutAVX512 runs romae (this test binary standing in for it)
// on CPUs without AVX-512 under qemu-user's emulator: a Haswell (AVX2 and
// FMA) and a Nehalem (SSE4.2, no AVX). romae is one binary for a mixed
// fleet, so each must pick its GEMM back end at run time and run the
// checks of checkOnEmulatedCPU. Until this test nothing ran the other
// paths of a GOEXPERIMENT=simd build: every machine here has AVX-512, and
// a package-level AVX-512 load made romae die with SIGILL at start-up on
// any CPU without it.
func TestRunsWithoutAVX512(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("emulates x86-64 CPUs with qemu-user on linux/amd64")
	}
	qemu, err := exec.LookPath("qemu-x86_64")
	if err != nil {
		t.Skip("qemu-x86_64 not found (apt-get install qemu-user; scripts/setup.sh installs it)")
	}
	for _, tc := range []struct{ cpu, gemm string }{
		// Haswell less the system features TCG cannot emulate (it warns of
		// each otherwise); the vector set is Haswell's.
		{"Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm", "avx2"},
		{"Nehalem", "gonum"},
	} {
		name, _, _ := strings.Cut(tc.cpu, ",")
		t.Run(name, func(t *testing.T) {
			checkOnEmulatedCPU(t, []string{qemu, "-cpu", tc.cpu, os.Args[0]}, tc.gemm, "lacks AVX512_BF16")
		})
	}
}

// TestRunsOnARM64 cross-builds romae for linux/arm64 (Graviton, Ampere,
// Apple silicon under Linux) and runs the same checks under qemu-aarch64:
// the portable build, where Go fuses a*b+c into one FMA and so rounds
// differently from amd64.
func TestRunsOnARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds romae for arm64")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not found (apt-get install qemu-user; scripts/setup.sh installs it)")
	}
	bin := filepath.Join(t.TempDir(), "romae")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go build: %v\n%s", err, out)
	}
	checkOnEmulatedCPU(t, []string{qemu, bin}, "gonum", "needs a GOEXPERIMENT=simd amd64 build")
}

// checkOnEmulatedCPU runs romae as the command line romae (an emulator
// and the binary) and requires: `version` to choose the gemm back end;
// `verify-official` to match the authors' PyTorch outputs (within 1e-4,
// its own threshold); one pre-training, fine-tuning and inference step to
// run on that back end; and `--precision bf16` to be refused with an
// error containing bf16Refusal, not to crash.
func checkOnEmulatedCPU(t *testing.T, romae []string, gemm, bf16Refusal string) {
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(romae[0], append(romae[1:], args...)...)
		cmd.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, stderr, err := run("version")
	if err != nil {
		t.Fatalf("romae version: %v\n%s", err, lastLines(stderr, 8))
	}
	if !strings.Contains(out, "chosen: "+gemm+";") {
		t.Errorf("romae version chose another back end, want %s:\n%s", gemm, out)
	}

	if _, stderr, err := run("verify-official", "--fixture", parityFixture); err != nil {
		t.Errorf("verify-official: %v\n%s", err, lastLines(stderr, 8))
	}

	// tiny-shallow (2 blocks, not tiny's 12): every op and product shape of
	// a step, at a sixth of the time; qemu-user runs the AVX2 kernels ~200x
	// slower than the host, and tiny took 135 s of CI here.
	out, stderr, err = run("bench", "--workload", "pretrain,finetune,infer", "--size", "tiny-shallow",
		"--batch-size", "2", "--tokens", "20", "--steps", "1")
	if err != nil {
		t.Fatalf("romae bench: %v\n%s", err, lastLines(stderr, 8))
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("bench printed %d lines, want 3:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var r struct {
			Workload string
			Gemm     string
			MedianS  float64 `json:"median_s"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r.Gemm != gemm || !(r.MedianS > 0) || math.IsInf(r.MedianS, 0) {
			t.Errorf("%s step: gemm %q, %v s; want %s and a time", r.Workload, r.Gemm, r.MedianS, gemm)
		}
	}

	_, stderr, err = run("bench", "--workload", "infer", "--precision", "bf16", "--size", "tiny-shallow",
		"--batch-size", "2", "--tokens", "20", "--steps", "1")
	if err == nil || !strings.Contains(stderr, bf16Refusal) {
		t.Errorf("bench --precision bf16: %v, want a refusal saying %q:\n%s", err, bf16Refusal, lastLines(stderr, 8))
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// TestCachesOverride runs romae with ROMAE_CACHES set, as a user would
// on a guest whose hypervisor reports no or wrong cache sizes: a Zen 4's
// 32 KiB L1d and 1 MiB L2 must reach the fp32 kernel's k block (256, as
// tuned on that chip; TestKBlock) and be named in bench's cpu_caches and
// in romae version, whatever this machine's own caches; a malformed
// value must be reported and leave CPUID's sizes in use.
func TestCachesOverride(t *testing.T) {
	bench := func(caches string) (benchResult, string) {
		t.Setenv("ROMAE_CACHES", caches) // runMain's child inherits it
		out, stderr, code := runMain(t, "bench", "--workload", "infer", "--size", "tiny-shallow",
			"--batch-size", "2", "--tokens", "20", "--steps", "1")
		if code != 0 {
			t.Fatalf("ROMAE_CACHES=%s romae bench: exit %d\n%s", caches, code, lastLines(stderr, 8))
		}
		var r benchResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r, stderr
	}
	const want = "L1d 32 KiB, L2 1024 KiB"
	r, _ := bench("32K,1M")
	if !strings.Contains(r.CPUCaches, want) || !strings.HasSuffix(r.CPUCaches, "from ROMAE_CACHES") {
		t.Errorf("cpu_caches %q, want %q from ROMAE_CACHES", r.CPUCaches, want)
	}
	if (r.GEMM == "avx512" || r.GEMM == "avx2") && r.KBlock != 256 {
		t.Errorf("%s k block %d with Zen 4's caches, want 256", r.GEMM, r.KBlock)
	}
	if out, _, code := runMain(t, "version"); code != 0 || !strings.Contains(out, want) {
		t.Errorf("romae version (exit %d) does not name the sizes %q:\n%s", code, want, out)
	}
	r, stderr := bench("32K,lots")
	if !strings.Contains(stderr, `ROMAE_CACHES: "32K,lots": L2 size "lots"`) || strings.Contains(r.CPUCaches, "ROMAE_CACHES") {
		t.Errorf("a malformed ROMAE_CACHES: cpu_caches %q, stderr:\n%s", r.CPUCaches, lastLines(stderr, 8))
	}
}
