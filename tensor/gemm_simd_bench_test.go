//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkSgemmLoopOrder compares the avx512 driver's two loop orders
// (simdBOuter) side by side on the model's shapes, one run, interleaved.
func BenchmarkSgemmLoopOrder(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer SetBackend(registry[0].b.Name())
	for _, sh := range benchShapes {
		for _, outer := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/bOuter=%v", sh.name, outer), func(b *testing.B) {
				prev := simdBOuter
				simdBOuter = outer
				defer func() { simdBOuter = prev }()
				benchShapeRun(b, sh)
			})
		}
	}
}

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
	s := &simdBackend{"avx512", 32}
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
				s.serial(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
			}
			g := 2 * float64(sh.m*sh.n*sh.k) * float64(reps) / (threadCPU() - c0) / 1e9
			line += fmt.Sprintf("  %s %.0f", v, g)
		}
		simdAsmKernel = true
		bf16On.Store(false)
		t.Log(line)
	}
}

// BenchmarkSgemmDirectAT compares reading op(A) = Aᵀ in place with packing
// it first (asmDirectAT) on the model's TN products (the weight gradients),
// side by side in one run.
func BenchmarkSgemmDirectAT(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer SetBackend(registry[0].b.Name())
	for _, sh := range benchShapes {
		if !sh.transA {
			continue
		}
		for _, direct := range []bool{false, true, false, true} {
			b.Run(fmt.Sprintf("%s/direct=%v", sh.name, direct), func(b *testing.B) {
				prev := asmDirectAT
				asmDirectAT = direct
				defer func() { asmDirectAT = prev }()
				benchShapeRun(b, sh)
			})
		}
	}
}

// BenchmarkTileStores compares partial-column tiles stored into C by the
// kernel with masks against the round trip through out and storeTile32,
// both variants side by side: one 8×32 fp32 tile at k = 60 (attention's
// head dim) for several column counts, then the model's products whose n
// leaves a partial tile, in fp32 and bf16.
func BenchmarkTileStores(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer func() { SetBackend(registry[0].b.Name()); SetPrecision(PrecisionFP32); tileMaskedStores = true }()
	const k, ldc = 60, 200
	a, bb, c := make([]float32, asmMR*k), make([]float32, k*asmNR), make([]float32, asmMR*ldc)
	var out [256]float32
	for _, cols := range []int{8, 20, 28, 32} {
		for _, accum := range []bool{false, true} {
			ldcb, beta := uintptr(ldc*4), float32(0)
			if accum {
				ldcb, beta = ldcb|1<<63, 1
			}
			name := fmt.Sprintf("tile/cols%d/accum=%v", cols, accum)
			b.Run(name+"/masked=false", func(b *testing.B) {
				for range b.N {
					fma8x32(k, unsafe.Pointer(&a[0]), 4, k*4, unsafe.Pointer(&bb[0]), &out)
					storeTile32(c, ldc, asmMR, cols, 1, beta, &out)
				}
			})
			b.Run(name+"/masked=true", func(b *testing.B) {
				for range b.N {
					fma8x32c(k, unsafe.Pointer(&a[0]), 4, k*4, unsafe.Pointer(&bb[0]), unsafe.Pointer(&c[0]), ldcb, cols)
				}
			})
		}
	}
	for _, prec := range []string{PrecisionFP32, PrecisionBF16} {
		if prec == PrecisionBF16 && !BF16Supported() {
			continue
		}
		SetPrecision(prec)
		for _, sh := range benchShapes {
			if sh.n%asmNR == 0 {
				continue
			}
			for _, masked := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/%s/masked=%v", prec, sh.name, masked), func(b *testing.B) {
					tileMaskedStores = masked
					benchShapeRun(b, sh)
				})
			}
		}
	}
}
