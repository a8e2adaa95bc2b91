//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"os"
	"strconv"
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

// BenchmarkSgemmDirectAT compares reading op(A) = Aᵀ in place with packing
// it first (asmDirectAT) on the model's TN products (the weight gradients),
// side by side in one run.
func BenchmarkSgemmDirectAT(b *testing.B) {
	benchTNVariants(b, []bool{false, true, false, true}, "direct", func(direct bool) func() {
		prev := asmDirectAT
		asmDirectAT = direct
		return func() { asmDirectAT = prev }
	})
}

// BenchmarkSgemmKBlockAT compares the TN products (the weight gradients)
// at the k block of the other products (asmKC) and at their own
// (asmKCAT, kBlockAT), side by side in one run.
func BenchmarkSgemmKBlockAT(b *testing.B) {
	benchTNVariants(b, []int{asmKC, asmKCAT, asmKC, asmKCAT}, "kc", func(kc int) func() {
		prev := asmKCAT
		asmKCAT = kc
		return func() { asmKCAT = prev }
	})
}

// BenchmarkSgemmEvenKBlocks runs attention's dv = Pᵀ·dO (201×60×201, P
// read in place with rows 201 floats apart) on one core, as the backward
// pass does per (sample, head): its k of 201 in blocks of asmKCAT and a
// remainder, in even blocks (evenBlocks), and in one block of asmKC.
func BenchmarkSgemmEvenKBlocks(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer SetBackend(registry[0].b.Name())
	const L, hd, ld, heads = 201, 60, 540, 96
	p, do, o := make([]float32, heads*L*L), make([]float32, L*ld), make([]float32, L*64)
	for i := range p {
		p[i] = float32(i%7) / 7
	}
	for i := range do {
		do[i] = float32(i%5) - 2
	}
	for _, v := range []struct {
		name string
		kc   int
		even bool
	}{{"remainder", asmKCAT, false}, {"even", asmKCAT, true}, {"one", asmKC, false}} {
		b.Run(fmt.Sprintf("%s/kc=%d", v.name, v.kc), func(b *testing.B) {
			prevKC, prevEven := asmKCAT, evenKBlocks
			asmKCAT, evenKBlocks = v.kc, v.even
			defer func() { asmKCAT, evenKBlocks = prevKC, prevEven }()
			for i := range b.N {
				GemmSerial(true, false, L, hd, L, 1, p[i%heads*L*L:], L, do, ld, 0, o, 64)
			}
			b.ReportMetric(2*L*L*hd*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// benchTNVariants runs the model's TN products on the avx512 back end once
// per variant, in the order given, each under set(variant), which returns
// what undoes it.
func benchTNVariants[V any](b *testing.B, variants []V, name string, set func(V) func()) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer SetBackend(registry[0].b.Name())
	for _, sh := range benchShapes {
		if !sh.transA {
			continue
		}
		for _, v := range variants {
			b.Run(fmt.Sprintf("%s/%s=%v", sh.name, name, v), func(b *testing.B) {
				defer set(v)()
				benchShapeRun(b, sh)
			})
		}
	}
}

// BenchmarkSgemmPrefetchA compares asmCompute with and without the
// prefetch of the next panel's op(A) (prefetchPanels) on the model's
// shapes, on each assembly back end (avx512, avx2), side by side in one
// run; -cpu 1 gives the steadiest figures.
func BenchmarkSgemmPrefetchA(b *testing.B) {
	defer SetBackend(registry[0].b.Name())
	for _, be := range []string{"avx512", "avx2"} {
		if SetBackend(be) != nil {
			continue
		}
		for _, sh := range benchShapes {
			for rep := range benchReps(1) {
				for _, pf := range []bool{false, true} {
					b.Run(fmt.Sprintf("%s/%s/prefetch=%v/rep=%d", be, sh.name, pf, rep), func(b *testing.B) {
						SetBackend(be)
						prev := prefetchPanels
						prefetchPanels = pf
						defer func() { prefetchPanels = prev }()
						benchShapeRun(b, sh)
					})
				}
			}
		}
	}
}

// BenchmarkSgemmNarrowTails compares a last sliver of at most 16 or 24
// columns on the narrow kernels (fma8x16c, fma8x24c, dpbf16x8x16c,
// dpbf16x8x24c) with the 32-column ones (narrowTails), side by side in one
// run: one 8-row tile of 16 and 20 columns from L1 (k = 256 steps), then
// the model's products whose n leaves such a sliver (180: 20 columns, 720:
// 16, 200: 8), in fp32 and bf16.
func BenchmarkSgemmNarrowTails(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer func() { SetBackend(registry[0].b.Name()); SetPrecision(PrecisionFP32); narrowTails = true }()
	const k, ldc = 256, 32
	a, bb, c := make([]float32, asmMR*k), make([]float32, k*asmNR), make([]float32, asmMR*ldc)
	ap, bp, cp, ldcb := unsafe.Pointer(&a[0]), unsafe.Pointer(&bb[0]), unsafe.Pointer(&c[0]), uintptr(ldc*4)
	type kernel = func(int, unsafe.Pointer, uintptr, uintptr, unsafe.Pointer, unsafe.Pointer, uintptr, int)
	for _, tc := range []struct {
		name         string
		cols         int
		wide, narrow kernel
		ok           bool
	}{
		{"fp32", 16, fma8x32c, fma8x16c, true},
		{"fp32", 20, fma8x32c, fma8x24c, true},
		{"bf16", 16, dpbf16x8x32c, dpbf16x8x16c, hasBF16},
		{"bf16", 20, dpbf16x8x32c, dpbf16x8x24c, hasBF16},
	} {
		if !tc.ok {
			continue
		}
		for _, narrow := range []bool{false, true} {
			kern := tc.wide
			if narrow {
				kern = tc.narrow
			}
			b.Run(fmt.Sprintf("tile/%s/cols%d/narrow=%v", tc.name, tc.cols, narrow), func(b *testing.B) {
				for range b.N {
					kern(k/2, ap, 4, k*4/2, bp, cp, ldcb, tc.cols)
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
			if r := sh.n % asmNR; r == 0 || r > 24 {
				continue
			}
			for _, narrow := range []bool{false, true, false, true} {
				b.Run(fmt.Sprintf("%s/%s/narrow=%v", prec, sh.name, narrow), func(b *testing.B) {
					narrowTails = narrow
					benchShapeRun(b, sh)
				})
			}
		}
	}
}

// BenchmarkSgemmShortPanels compares a short last panel run as 4-row and
// 1-row tiles straight into C (shortPanels) with the 8-row kernel into
// out and storeTile32, side by side in one run: one panel of 1 and 4
// rows across 7 slivers from L1 (k = 256 steps, one thread), then the
// model's products whose m leaves 1 row (attention over 201 tokens: [CLS]
// and 200) or 4 rows (the weight gradients of 180 and 540 outputs), in
// fp32 and bf16.
func BenchmarkSgemmShortPanels(b *testing.B) {
	if SetBackend("avx512") != nil {
		b.Skip("no avx512")
	}
	defer func() { SetBackend(registry[0].b.Name()); SetPrecision(PrecisionFP32); shortPanels = true }()
	const k, nb = 256, 7 * asmNR
	a, bb, c := make([]float32, asmMR*k), make([]float32, nb*k), make([]float32, asmMR*nb)
	var out [256]float32
	for _, kern := range []struct {
		name string
		t    tileKernel
		ok   bool
	}{{"fp32", tileFMA, true}, {"bf16", tileDPBF16, hasBF16}} {
		if !kern.ok {
			continue
		}
		for _, rows := range []int{1, 4} {
			for _, short := range []bool{false, true} {
				b.Run(fmt.Sprintf("panel/%s/rows%d/short=%v", kern.name, rows, short), func(b *testing.B) {
					shortPanels = short
					for range b.N {
						kern.t.panel(k/2, unsafe.Pointer(&a[0]), 4, k*4/2, unsafe.Pointer(&bb[0]), c, nb, rows, nb, 1, 0, &out)
					}
				})
			}
		}
	}
	shapes := []benchShape{
		{"attnQK_96x201x201x60_NT", false, true, 201, 201, 60, 96},
		{"attnPV_96x201x60x201_NN", false, false, 201, 60, 201, 96},
		{"dw_180x180x6432_TN", true, false, 180, 180, 6432, 1},
		{"dw_540x180x6432_TN", true, false, 540, 180, 6432, 1},
	}
	for _, prec := range []string{PrecisionFP32, PrecisionBF16} {
		if prec == PrecisionBF16 && !BF16Supported() {
			continue
		}
		SetPrecision(prec)
		for _, sh := range shapes {
			for _, short := range []bool{false, true, false, true} {
				b.Run(fmt.Sprintf("%s/%s/short=%v", prec, sh.name, short), func(b *testing.B) {
					shortPanels = short
					benchShapeRun(b, sh)
				})
			}
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

// BenchmarkSgemmPackBRows compares packing a k block of a non-transposed
// op(B) row by row (packBByRows) and sliver by sliver on the model's
// products that pack one (the weight gradients pack the layer input, a
// block of megabytes from memory), side by side in one run; -cpu 1 and
// -cpu 2 both matter, as the gradients split over k.
func BenchmarkSgemmPackBRows(b *testing.B) {
	if SetBackend("avx512") != nil && SetBackend("avx2") != nil {
		b.Skip("no avx512 or avx2")
	}
	defer SetBackend(registry[0].b.Name())
	for _, sh := range benchShapes {
		if sh.transB {
			continue
		}
		for _, rows := range []bool{false, true, false, true} {
			b.Run(fmt.Sprintf("%s/rows=%v", sh.name, rows), func(b *testing.B) {
				defer func(v bool) { packBByRows = v }(packBByRows)
				packBByRows = rows
				benchShapeRun(b, sh)
			})
		}
	}
}

// BenchmarkSgemmSliversOuter compares the two orders of asmCompute's
// tiles (sliverOuter) on the 32-row products a core runs through a
// block's layers (rowTail, qkvRoPEChunks) with the weights packed once,
// side by side in one run; each iteration takes the next 32 rows of a
// 6400-row input, as the chunks do. -cpu 1 gives the steadiest figures.
func BenchmarkSgemmSliversOuter(b *testing.B) {
	for _, sh := range chunkShapes {
		w, a, c := sh.operands()
		pw := PackWeight(w, sh.n, sh.k)
		for _, outer := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/slivers-outer=%v", sh.name, outer), func(b *testing.B) {
				defer func(v bool) { sliverOuter = v }(sliverOuter)
				sliverOuter = outer
				sh.run(b, pw, a, c)
			})
		}
	}
}

// chunkShape is a product a core runs 32 rows at a time through a
// block's layers (rowTail, qkvRoPEChunks) on a weight packed once: n
// outputs from k inputs.
type chunkShape struct {
	name string
	n, k int
}

var chunkShapes = []chunkShape{{"qkv_32x540x180", 540, 180}, {"wo_32x180x180", 180, 180}, {"w1_32x720x180", 720, 180}, {"w2_32x180x720", 180, 720}}

// operands are sh's weight [n, k] and a 6400-row input and output.
func (sh chunkShape) operands() (w, a, c []float32) {
	w = make([]float32, sh.n*sh.k)
	for i := range w {
		w[i] = float32(i%7) * 0.1
	}
	return w, make([]float32, 6400*sh.k), make([]float32, 6400*sh.n)
}

// run times the product on pw, each iteration the next 32 rows of a, as
// the chunks take them, and reports GFLOP/s.
func (sh chunkShape) run(b *testing.B, pw *PackedWeight[float32], a, c []float32) {
	b.ResetTimer()
	for it := range b.N {
		r := it % 200 * 32
		GemmPackedSerial(32, 1, a[r*sh.k:], sh.k, pw, 0, c[r*sh.n:], sh.n)
	}
	b.ReportMetric(float64(2*32*sh.n*sh.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemmNarrowKBlocks compares the AVX2 tiles' products with and
// without productKC's deeper k blocks for products narrower than asmNC
// (narrowKBlocks) on the model's shapes, interleaved, reps times each:
// the blocks differ only where asmKC is set by the L2 (a Zen 3's 512 KiB;
// ROMAE_CACHES=32K,512K gives it to another CPU). -cpu 1, and the median
// of the reps, give the steadiest figures on a noisy machine.
func BenchmarkSgemmNarrowKBlocks(b *testing.B) {
	if SetBackend("avx2") != nil {
		b.Skip("no avx2")
	}
	defer SetBackend(registry[0].b.Name())
	const reps = 5
	for _, sh := range benchShapes {
		for rep := range reps {
			for _, narrow := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/narrow=%v/rep=%d", sh.name, narrow, rep), func(b *testing.B) {
					defer func(v bool) { narrowKBlocks = v }(narrowKBlocks)
					narrowKBlocks = narrow
					benchShapeRun(b, sh)
				})
			}
		}
	}
}

// BenchmarkSgemmAVX2Order compares the AVX2 tiles' two loop orders
// (avx2SliversOuter: Goto's, slivers256; false: panel256's) on the
// model's shapes, interleaved, reps times each (ROMAE_BENCH_REPS); they
// differ where avx2Goto takes Goto's order. -cpu 1 and the paired ratios
// of the reps give the steadiest figures on a noisy machine.
func BenchmarkSgemmAVX2Order(b *testing.B) {
	if SetBackend("avx2") != nil {
		b.Skip("no avx2")
	}
	defer SetBackend(registry[0].b.Name())
	reps := benchReps(5)
	shapes := append([]benchShape{{"qkv_6400x540x180_NN", false, false, 6400, 540, 180, 1}}, benchShapes...)
	for _, sh := range shapes {
		for rep := range reps {
			for _, outer := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/outer=%v/rep=%d", sh.name, outer, rep), func(b *testing.B) {
					defer func(v bool) { avx2SliversOuter = v }(avx2SliversOuter)
					avx2SliversOuter = outer
					benchShapeRun(b, sh)
				})
			}
		}
	}
}

// benchReps is ROMAE_BENCH_REPS when set (more alternations on a noisy
// machine), else def.
func benchReps(def int) int {
	if n, err := strconv.Atoi(os.Getenv("ROMAE_BENCH_REPS")); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkSgemmAVX2GotoDepth compares the AVX2 tiles' k blocks with and
// without gotoBlocks (Goto's order over blocks up to avx2GotoK deep, in
// one pass) on the products with k = 180, 200 and 720, whole and 32 rows at a
// time on packed weights (as rowTail runs them), interleaved, reps times
// each (ROMAE_BENCH_REPS). -cpu 1 and the paired ratios give the
// steadiest figures on a noisy machine.
func BenchmarkSgemmAVX2GotoDepth(b *testing.B) {
	if SetBackend("avx2") != nil {
		b.Skip("no avx2")
	}
	defer SetBackend(registry[0].b.Name())
	defer func(v bool) { gotoBlocks = v }(gotoBlocks)
	reps := benchReps(4)
	for _, sh := range []benchShape{benchShapes[0], {"qkv_6400x540x180_NN", false, false, 6400, 540, 180, 1}, benchShapes[1], benchShapes[2], benchShapes[3], benchShapes[8]} {
		for rep := range reps {
			for _, deep := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/deep=%v/rep=%d", sh.name, deep, rep), func(b *testing.B) {
					gotoBlocks = deep
					benchShapeRun(b, sh)
				})
			}
		}
	}
	for _, sh := range chunkShapes {
		w, a, c := sh.operands()
		for rep := range reps {
			for _, deep := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/deep=%v/rep=%d", sh.name, deep, rep), func(b *testing.B) {
					gotoBlocks = deep
					sh.run(b, PackWeight(w, sh.n, sh.k), a, c) // packed in the blocks this choice gives
				})
			}
		}
	}
}
