//go:build goexperiment.simd

package tensor

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestSgemmCPUEfficiency (ROMAE_GEMM_CPU=1) measures single-core GFLOP per
// second of thread CPU time of the 4×32 archsimd kernel, the 8×32
// assembly kernel and bf16, twice each, interleaved. CPU time
// stays meaningful on a shared box where
// wall-clock benchmarks swing 2× with other processes' load.
func TestSgemmCPUEfficiency(t *testing.T) {
	if os.Getenv("ROMAE_GEMM_CPU") == "" {
		t.Skip("set ROMAE_GEMM_CPU=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := avx512Backend
	threadCPU := func() float64 {
		var ru syscall.Rusage
		syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	for _, sh := range benchShapes {
		a, bb, c, lda, ldb, _, _, _ := sh.operands()
		line := sh.name
		for _, v := range []string{"simd4x32", "asm8x32", "bf16", "simd4x32", "asm8x32", "bf16"} {
			simdAsmKernel = v != "simd4x32"
			bf16On.Store(v == "bf16" && hasBF16)
			reps := max(1, int(2e9/(2*float64(sh.m*sh.n*sh.k))))
			c0 := threadCPU()
			for range reps {
				s.serial(sh.n, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
			}
			g := 2 * float64(sh.m*sh.n*sh.k) * float64(reps) / (threadCPU() - c0) / 1e9
			line += fmt.Sprintf("  %s %.0f", v, g)
		}
		simdAsmKernel = true
		bf16On.Store(false)
		t.Log(line)
	}
}
