//go:build goexperiment.simd && amd64

package tensor

// The avx512 and avx2 back ends' default single-core product: a
// BLIS-style driver (B packed in 32-wide slivers, A read in place or
// packed in 8-row panels) over assembly tiles, the 8×32 fma8x32 family on
// AVX-512 and the 3/2/1-row fma3x32v family on AVX2 (tileKernel). The
// archsimd kernels (gemm_simd_kernel_amd64.go) stay as the reference,
// behind simdAsmKernel.

import (
	"math"
	"simd/archsimd"
	"unsafe"

	"romae/internal/bufs"
	"romae/internal/simdpart"
)

//go:noescape
func fma8x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

// fma8x24c and fma8x16c are fma8x32c for a last sliver of at most 24
// and 16 columns (narrowTails).
//
//go:noescape
func fma8x24c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func fma8x16c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

// fma4x32c and fma1x32c are fma8x32c for a short last panel's rows: 4
// and 1 (shortPanels).
//
//go:noescape
func fma4x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func fma1x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func fma8x32(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, out *[256]float32)

// fmaRx(8V)v are the AVX2 tiles (tileFMA256): R = 3, 2 or 1 rows × V = 4,
// 3, 2 or 1 vectors of 8 columns of a sliver, the last vector at byte
// offset last (gemm_avx2_kernel_amd64.s), C = tile or C += tile (bit 63
// of ldcb). avx2Tiles[R−1][V−1] is each.
//
//go:noescape
func fma3x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma3x24v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma3x16v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma3x8v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma2x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma2x24v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma2x16v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma2x8v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma1x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma1x24v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma1x16v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

//go:noescape
func fma1x8v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

type avx2TileFunc func(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)

var avx2Tiles = [3][4]avx2TileFunc{
	{fma1x8v, fma1x16v, fma1x24v, fma1x32v},
	{fma2x8v, fma2x16v, fma2x24v, fma2x32v},
	{fma3x8v, fma3x16v, fma3x24v, fma3x32v},
}

// avx2Tile is the AVX2 tile for rows (1–3) × cols (1–32) columns of a
// sliver and the byte offset of its last vector: the tile stores exactly
// columns 0 … cols−1 when cols ≥ 8, and columns 0 … 7 (into scratch)
// when fewer.
func avx2Tile(rows, cols int) (avx2TileFunc, uintptr) {
	return avx2Tiles[rows-1][(cols+7)/8-1], uintptr(max(cols-8, 0)) * 4
}

const (
	asmMR = 8
	asmNR = 32
	asmNC = 768 // ≥ the model's widest n (720): A is read once per k block
	asmMC = 128
)

// asmKC is the k block from this CPU's caches (kBlocksFor); asmKCAT the
// smaller one of the 8-row tiles reading op(A) = Aᵀ in place (kBlockAT).
var asmKC, asmKCAT int

// kBlockAT is the fp32 k block, at most kc, of the 8-row tiles that read
// op(A) = Aᵀ in place (the weight gradients, k = batch × tokens): each k
// step of the A panel is then a cache line of its own (8 floats of a row
// of A, rows kilobytes apart, past the L1 stride prefetcher's reach), so
// the panel's lines (64 bytes a step) and the B sliver (128 bytes a step)
// must stay in L1d together: 3/4 of it. A multiple of 32, at least 64; kc
// where the CPU reports no L1d size. The Xeon (48 KiB): 192, against 384
// for the other products; BenchmarkSgemmKBlockAT there, 2 cores, GFLOP/s:
// the weight gradients 720×180×6400 206–219 → 229–234, 180×720×6400
// 209–211 → 232–235, 180×180×6400 208–209 → 210–221. Zen 4's 32 KiB
// L1d gives 128, Zen 5's 48 KiB 192 (measured there only with the other
// cache-gated choices, 2026-11-28: together 1–11% off every step).
func kBlockAT(l1d, kc int) int {
	if l1d <= 0 {
		return kc
	}
	return min(kc, max(l1d*3/4/(64+asmNR*4)&^31, 64))
}

// evenBlocks is the k block that cuts k into as many blocks as kc does,
// all of (nearly) one length: attention's k = 201 runs as 101 + 100, not
// 192 + 9, whose second block is all tile overhead. BenchmarkSgemmEvenKBlocks
// on the Xeon, attention's dv = Pᵀ·dO (201×60×201), one core, 3 runs:
// 113–116 GFLOP/s at 192 + 9, 117–126 in one block of 201 (over the L1
// bound), 121–124 at 101 + 100. The weight gradients' k pieces of 1067
// run as 6 × 178 instead of 5 × 192 + 107.
func evenBlocks(k, kc int) int {
	n := (k + kc - 1) / kc
	return (k + n - 1) / n
}

// evenKBlocks has serialAsm cut the Aᵀ products' k into evenBlocks
// (false: blocks of asmKCAT and a remainder), a variable so
// BenchmarkSgemmEvenKBlocks can compare both.
var evenKBlocks = true

// avx2KChunk is how many k steps of a sliver panel256 runs its tiles on
// at once: the most whose part of the sliver (128 bytes a step) fills at
// most half of L1d (sliverChunk).
var avx2KChunk int

// avx2GotoK is the deepest k block the AVX2 tiles run in Goto's order
// (avx2Goto), one pass over it: gotoDepth's.
var avx2GotoK int

// gotoBlocks lets productKC and avx2Goto use avx2GotoK (false: Goto's
// order only up to avx2KChunk, and the k blocks from the caches alone, as
// before it), a variable so BenchmarkSgemmAVX2GotoDepth can compare both.
var gotoBlocks = true

// simdAsmKernel selects the assembly driver for the avx512 back end
// (fma8x32 …) and the avx2 one (fma3x32v …); false: the archsimd 4×32 and
// 4×16 kernels. A variable so benchmarks can compare both.
var simdAsmKernel = true

// asmDirectAT makes asmCompute read op(A) = Aᵀ in place (false: packed
// by packAT8 first), a variable so benchmarks can compare both.
var asmDirectAT = true

// tileMaskedStores lets the kernels store partial-column tiles into C
// with masked stores (false: through out and storeTile32), a variable so
// benchmarks can compare both.
var tileMaskedStores = true

// narrowTails runs a product's last sliver of at most 16 or 24 columns on
// the kernels that skip the padding columns' work (fma8x16c, fma8x24c,
// dpbf16x8x16c, dpbf16x8x24c; false: the 32-column ones), a variable so
// benchmarks can compare both.
var narrowTails = true

// shortPanels runs a last panel of 1–6 rows (m = 201 leaves 1, 180 and
// 540 leave 4) as 4-row and 1-row tiles stored straight into C (fma4x32c,
// fma1x32c and the bf16 pair; false: the 8-row kernel into out and
// storeTile32, computing padding rows), a variable so benchmarks can
// compare both. Seven rows keep the 8-row kernel: 4+1+1+1 would cost more.
var shortPanels = true

// asmBufs recycles the assembly driver's packed operands and the 8×32
// tile buffer (out) of the tiles that do not store into C themselves: a
// local array for it escaped to the heap (the AVX2 tiles are called
// through function values), 1 KiB allocated and zeroed per product and
// k block, 13 MB a fine-tuning step.
var asmBufs = make(bufPool[float32], 32)

// serialAsm is serial on the assembly kernel: for each k block, pack that
// block of op(B), then compute with it. Packing block by block rather
// than all of op(B) first keeps the packed block in L2 for the compute
// that follows; for the weight gradients (k = batch × tokens) op(B) is
// megabytes and, packed whole, came back from memory. The exception is a
// product whose blocks of rows run through every k block (rowBlocksOuter:
// the AVX2 tiles, op(A) = A): op(B) is packed whole first. The k block is
// that of a product nAll columns wide (serial).
func serialAsm(t tileKernel, nAll int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kc := productKC(t, transA, nAll, k)
	if rowBlocksOuter(t, transA, k, kc) { // every k block at once: gotoRowBlocks
		bp := asmBufs.get(asmPackedLen(n, k))
		asmPackB(transB, b, ldb, n, k, kc, *bp)
		asmCompute(t, transA, m, n, k, kc, alpha, a, lda, *bp, beta, c, ldc)
		asmBufs.put(bp)
		return
	}
	bp := asmBufs.get(asmPackedLen(n, min(k, kc)))
	forKBlocks(transA, transB, k, kc, lda, ldb, beta, func(kb, aOff, bOff int, bet float32) {
		asmPackB(transB, b[bOff:], ldb, n, kb, kc, *bp)
		asmCompute(t, transA, m, n, kb, kc, alpha, a[aOff:], lda, *bp, bet, c, ldc)
	})
	asmBufs.put(bp)
}

// productKC is the k block of one product, op(B) n columns wide and k
// deep, on tiles t: asmKC, the block of the widest products, unless
//   - op(A) = Aᵀ is read in place by the 8-row tiles: kBlockAT's, in
//     even blocks (evenKBlocks);
//   - the AVX2 tiles run op(B) (not Aᵀ) at most avx2GotoK deep: one
//     block of k, which Goto's order runs in one pass with its sliver in
//     L1d (the products with k = 180: 90 + 90 before, each C tile read
//     back from memory for the second block; BenchmarkSgemmAVX2GotoDepth
//     on a Zen 3, one core: 6400×540×180 66 → 71–74 GFLOP/s, 6400×720×180
//     70–76 → 71–84, 6400×180×180 64–65 → 68–69). The packed block of a
//     720-column op(B) (518 KB) then spills a 512 KiB L2, read from L3
//     once per block of asmMC rows;
//   - the AVX2 tiles run a narrower op(B) (narrowKBlocks): asmKC is
//     bounded by the packed block of asmNC columns filling 3/4 of L2 (a
//     Zen 3's 512 KiB gives 128), and a product of n columns can take
//     asmKC·asmNC/n steps in the same space, up to kBlock's L1d bound on
//     the A panel (kcL1), in even blocks. So attention's products over
//     k = 201 keys (n = 60) run as one block, not 128 + 73. A product
//     that needs several blocks anyway takes them at most avx2GotoK deep,
//     which Goto's order runs in one pass: the products into 180 columns
//     (k = 540 and 720) in blocks of 180 instead of 240, panel256's order
//     in chunks (W2's 32-row products of rowTail, BenchmarkSgemmAVX2GotoDepth
//     on a Zen 3, one core: 53–75 → 66–76 GFLOP/s; the whole 6400-row
//     product, its rows in blocks through all four (gotoRowBlocks), 58–65
//     → 61–72). Where the L1d bound already set asmKC (every CPU with
//     AVX-512 seen so far, which run the AVX-512 tiles) that is asmKC,
//     cut into even blocks.
func productKC(t tileKernel, transA bool, n, k int) int {
	switch {
	case transA && asmDirectAT && t == tileFMA:
		if evenKBlocks {
			return evenBlocks(k, asmKCAT)
		}
		return asmKCAT
	case !transA && t == tileFMA256 && gotoBlocks && k <= avx2GotoK:
		return k
	case !transA && t == tileFMA256 && narrowKBlocks:
		w := min((n+asmNR-1)/asmNR*asmNR, asmNC)
		kc := max(min(asmKC*asmNC/w&^31, kcL1, 512), asmKC)
		if gotoBlocks && k > kc {
			// Several blocks either way: blocks Goto's order runs in one pass.
			kc = min(kc, avx2GotoK)
		}
		return evenBlocks(k, kc)
	}
	return asmKC
}

// kcL1 is kBlock's L1d bound alone: the deepest k block whose 8-row A
// panel takes at most a quarter of L1d (setKBlocks).
var kcL1 int

// narrowKBlocks lets productKC give the AVX2 tiles' products narrower
// than asmNC their deeper k blocks (false: asmKC for all), a variable so
// BenchmarkSgemmNarrowKBlocks can compare both.
var narrowKBlocks = true

// forKBlocks runs block for each k block of kc: its depth kb, where that
// block of op(A) and op(B) starts in a and b, and the beta it applies
// (beta for the first, 1 for the blocks that accumulate onto it).
func forKBlocks(transA, transB bool, k, kc, lda, ldb int, beta float32, block func(kb, aOff, bOff int, bet float32)) {
	for pc := 0; pc < k; pc += kc {
		aOff, bOff := pc, pc*ldb
		if transA {
			aOff = pc * lda
		}
		if transB {
			bOff = pc
		}
		bet := beta
		if pc > 0 {
			bet = 1
		}
		block(min(kc, k-pc), aOff, bOff, bet)
	}
}

// asmParallelM is the M-split product with op(B) packed once and shared:
// the chunks only differ in their rows of A and C. It runs serialAsm's k
// blocks, each packed over the workers and then computed by them, so
// every element is summed as on one core (the weight gradients' blocks,
// kBlockAT, are not asmKC's); where rowBlocksOuter says so, all of them
// packed at once, as serialAsm does.
func asmParallelM(t tileKernel, w int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kc := productKC(t, transA, n, k)
	if rowBlocksOuter(t, transA, k, kc) { // every k block at once: gotoRowBlocks
		bp := asmBufs.get(asmPackedLen(n, k))
		asmPackBParallel(transB, b, ldb, n, k, kc, *bp)
		asmComputeM(t, w, transA, m, n, k, kc, alpha, a, lda, *bp, beta, c, ldc)
		asmBufs.put(bp)
		return
	}
	bp := asmBufs.get(asmPackedLen(n, min(k, kc)))
	forKBlocks(transA, transB, k, kc, lda, ldb, beta, func(kb, aOff, bOff int, bet float32) {
		asmPackBParallel(transB, b[bOff:], ldb, n, kb, kc, *bp)
		asmComputeM(t, w, transA, m, n, kb, kc, alpha, a[aOff:], lda, *bp, bet, c, ldc)
	})
	asmBufs.put(bp)
}

// asmComputeM is asmCompute split over w workers in row chunks of whole
// panels (rowChunks), all reading the same packed op(B).
func asmComputeM(t tileKernel, w int, transA bool, m, n, k, kc int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) {
	if w <= 1 { // no closure to allocate: GemmPackedSerial runs per chunk of rows
		asmCompute(t, transA, m, n, k, kc, alpha, a, lda, bp, beta, c, ldc)
		return
	}
	rowChunks(w, m, t.panelRows(), func(i0, i1 int) {
		aOff := i0 * lda
		if transA {
			aOff = i0
		}
		asmCompute(t, transA, i1-i0, n, k, kc, alpha, a[aOff:], lda, bp, beta, c[i0*ldc:], ldc)
	})
}

// asmTile is the fp32 tile float32 products run on now; ok false when
// they do not run on the assembly driver (it needs the avx512 or avx2 back
// end with simdAsmKernel, and no bf16 kernel in use).
func asmTile() (t tileKernel, ok bool) {
	s, ok := f32Backend().(*simdBackend)
	if !ok || !simdAsmKernel || bf16KernelNow() != bf16OnFP32 {
		return 0, false
	}
	return s.tile, true
}

// asmActive says whether float32 products run on the assembly driver now.
func asmActive() bool {
	_, ok := asmTile()
	return ok
}

// packedKC32 is the k block a float32 weight packed now for an op(B) of
// n columns and k deep is laid out in: productKC's on the tiles float32
// products run on, so GemmPacked gives Gemm's bits; 0 when they do not
// run on the assembly driver.
func packedKC32(n, k int) int {
	t, ok := asmTile()
	if !ok {
		return 0
	}
	return productKC(t, false, n, k)
}

// packWeight32 is PackWeight's float32 layout: op(B) = Wᵀ as asmPackB
// lays it out in k blocks of kc (packedKC32; in dst's memory when it is
// large enough), or nil when products do not run on the assembly driver.
func packWeight32(dst, w []float32, n, k int) (packed []float32, kc int) {
	kc = packedKC32(n, k)
	if kc == 0 {
		return nil, 0
	}
	d := bufs.Resize(dst, asmPackedLen(n, k))
	asmPackBParallel(true, w, k, n, k, kc, d)
	return d, kc
}

// gemmPacked32 is GemmPacked on the packed layout (k blocks of kc):
// Sgemm's M split over w workers without the pack. False when products
// do not run on the assembly driver now, or take other k blocks (the back
// end or precision changed after packing).
func gemmPacked32(w, m, n, k, kc int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) bool {
	t, ok := asmTile()
	if !ok || productKC(t, false, n, k) != kc {
		return false
	}
	asmComputeM(t, w, false, m, n, k, kc, alpha, a, lda, bp, beta, c, ldc)
	return true
}

// asmPackedLen is the size of op(B) packed as asmPackB lays it out.
func asmPackedLen(n, k int) int { return (n + asmNR - 1) / asmNR * asmNR * k }

// asmPackBParallel is asmPackB with the slivers shared out over the
// workers. Packed on the caller alone, a weight matrix was a serial stretch
// in every product: a fifth of a lone 200-token forward pass's CPU time,
// while the other core waited (the weights come from memory once per pass
// and the transposing pack runs well below memory bandwidth).
func asmPackBParallel(transB bool, b []float32, ldb, n, k, kc int, dst []float32) {
	// A sliver is up to kc×32 floats, several µs to pack: worth a
	// hand-off from 4 of them.
	ParallelFor(asmSlivers(n, k, kc), 2, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			asmPackSliver(transB, b, ldb, n, k, kc, u, dst)
		}
	})
}

// asmPackB packs all of op(B) (k×n) as slivers in the order asmCompute
// reads them: column blocks of asmNC, then k blocks of kc (asmKC, or
// productKC's for one product), then 32-wide slivers of kb×32 floats.
func asmPackB(transB bool, b []float32, ldb, n, k, kc int, dst []float32) {
	if !transB && k <= kc && packBByRows {
		switch {
		case hasAVX512:
			packBRows32(b, ldb, n, k, dst)
			return
		case hasAVX2FMA:
			packBRows32AVX2(b, ldb, n, k, dst)
			return
		}
	}
	for u := range asmSlivers(n, k, kc) {
		asmPackSliver(transB, b, ldb, n, k, kc, u, dst)
	}
}

// asmSlivers is how many slivers asmPackB lays op(B) (k×n) out in.
func asmSlivers(n, k, kc int) int { return sliverCount(n, k, kc, asmNR) }

// asmPackSliver packs sliver u of asmPackB's layout into its place in dst:
// its column block starts jc·k floats in (the blocks before it are full),
// its k block pc·sl·32 floats into that (ditto).
func asmPackSliver(transB bool, b []float32, ldb, n, k, kc, u int, dst []float32) {
	s := sliverAt(u, n, k, kc, asmNC, asmNR)
	off := s.jc*k + s.pc*s.sl*asmNR + s.js*s.kb
	packB(transB, b, ldb, s.pc, s.jc+s.js, s.kb, s.w, asmNR, dst[off:off+s.kb*asmNR])
}

// sliverCount is how many nr-wide slivers op(B) (k×n) is packed in, in
// k blocks of kc: every k block holds ⌈n/nr⌉ of them (a column block is a
// whole number of slivers).
func sliverCount(n, k, kc, nr int) int { return (k + kc - 1) / kc * ((n + nr - 1) / nr) }

// sliver is where sliver u of a packed op(B) (asmPackB's order, and the
// bf16 layouts') comes from: column block jc (sl slivers), k block pc of
// depth kb, and within them the sliver's first column js and width w.
type sliver struct{ jc, sl, pc, kb, js, w int }

// sliverAt locates sliver u of op(B) (k×n) packed as column blocks of
// nc, then k blocks of kc, then nr-wide slivers, in that order.
func sliverAt(u, n, k, kc, nc, nr int) sliver {
	perBlock := (k + kc - 1) / kc * (nc / nr) // slivers of a full column block
	jc := u / perBlock * nc
	nb := min(nc, n-jc)
	sl := (nb + nr - 1) / nr
	r := u % perBlock
	pc, js := r/sl*kc, r%sl*nr
	return sliver{jc: jc, sl: sl, pc: pc, kb: min(kc, k-pc), js: js, w: min(nr, nb-js)}
}

// asmCompute is C = alpha·op(A)·B + beta·C with B packed by asmPackB in
// k blocks of kc, on fp32 tiles t (tileFMA or tileFMA256).
func asmCompute(t tileKernel, transA bool, m, n, k, kc int, alpha float32, a []float32, lda int, bpk []float32, beta float32, c []float32, ldc int) {
	abp, outp := asmBufs.get(asmMC*kc), asmBufs.get(256)
	abuf, out := *abp, (*[256]float32)(*outp)
	off := 0
	mr := t.panelRows()
	mc := asmMC - asmMC%mr
	if rowBlocksOuter(t, transA, k, kc) {
		gotoRowBlocks(m, n, k, kc, mc, alpha, a, lda, bpk, beta, c, ldc, abuf, out)
		asmBufs.put(abp)
		asmBufs.put(outp)
		return
	}
	for jc := 0; jc < n; jc += asmNC {
		nb := min(asmNC, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bbuf := bpk[off:]
			off += (nb + asmNR - 1) / asmNR * asmNR * kb
			_ = bpk[off-1] // bounds: the block's slivers
			bet := beta
			if pc > 0 {
				bet = 1
			}
			if t == tileFMA256 && avx2Goto(transA, kb) {
				slivers256(transA, m, nb, pc, kb, alpha, a, lda, unsafe.Pointer(&bbuf[0]), bet, c[jc:], ldc, abuf, out)
				continue
			}
			if sliversOuter(t, transA, m, kb) {
				for s, js := 0, 0; js < nb; s, js = s+1, js+asmNR {
					bs := unsafe.Pointer(&bbuf[s*kb*asmNR])
					for i := 0; i < m; i += mr {
						t.panel(kb, unsafe.Pointer(&a[i*lda+pc]), 4, uintptr(lda)*4, bs, c[i*ldc+jc+js:], ldc, mr, min(asmNR, nb-js), alpha, bet, out)
					}
				}
				continue
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				packedAT := transA && !asmDirectAT && mr == asmMR
				if packedAT {
					packAT8(a, lda, ic, pc, mb, kb, abuf)
				}
				for i := ic; i < ic+mb; i += mr {
					rows := min(mr, m-i)
					if prefetchPanels && i+mr < m {
						prefetchPanel(transA, a, lda, i+mr, pc, min(mr, m-i-mr), kb)
					}
					var ap unsafe.Pointer
					var astep, arow uintptr
					switch {
					case transA && asmDirectAT && rows == mr:
						// Aᵀ's 8 rows at step p are 8 adjacent floats of
						// A's row pc+p: the kernel reads them in place.
						ap, astep, arow = unsafe.Pointer(&a[pc*lda+i]), uintptr(lda)*4, 4
					case packedAT:
						ap, astep, arow = unsafe.Pointer(&abuf[(i-ic)*kb]), asmMR*4, 4
					case transA:
						// The short last panel (m = 201, 180, 540 …), or
						// every panel of fewer than 8 rows when not read
						// in place: packed alone, zero-padded to 8 rows.
						packAT8(a, lda, i, pc, rows, kb, abuf)
						ap, astep, arow = unsafe.Pointer(&abuf[0]), asmMR*4, 4
					case rows == mr:
						ap, astep, arow = unsafe.Pointer(&a[i*lda+pc]), 4, uintptr(lda)*4
					default:
						// Edge panel: copy the rows, zero the rest.
						e := abuf[:asmMR*kb]
						clear(e)
						for r := range rows {
							copy(e[r*kb:(r+1)*kb], a[(i+r)*lda+pc:])
						}
						ap, astep, arow = unsafe.Pointer(&e[0]), 4, uintptr(kb)*4
					}
					t.panel(kb, ap, astep, arow, unsafe.Pointer(&bbuf[0]), c[i*ldc+jc:], ldc, rows, nb, alpha, bet, out)
				}
			}
		}
	}
	asmBufs.put(abp)
	asmBufs.put(outp)
}

// prefetchPanels has asmCompute prefetch the next panel's rows of op(A)
// into L2 before it computes the current one (false: the hardware
// prefetcher alone), a variable so benchmarks can compare both.
//
// A panel's rows of A are 6 or 8 streams of 1 KiB (one k block of 256
// floats) that the first sliver's tiles read from memory; the hardware
// prefetcher catches each stream only after a few misses. Prefetched a
// panel ahead they are in L2 when the tiles start. BenchmarkSgemmPrefetchA
// on one core of a Zen 4, GFLOP/s without → with: W2's product
// 6400×180×720 85 → 94–98 on the AVX2 tiles, 98 → 102 on AVX-512;
// attention's P·V 67 → 84 and 74 → 85.
var prefetchPanels = true

// sliversOuter reports whether asmCompute runs a k block of kb steps with
// the slivers of op(B) outermost: each sliver is read from L2 once and
// used by every panel while it is in L1, instead of every panel reading
// every sliver from L2 again. It pays for the few rows a core takes at a
// time through a block's layers (rowTail, qkvRoPEChunks: 32 rows, 4
// panels) where the sliver and all the panels' rows of A fit in L1d
// together (on the Xeon's 48 KiB: k = 180, not a Zen 4's 32 KiB), on the
// 8-row AVX-512 tiles, whole panels only, A read in place. Per tile, the
// same kernel call as in the other order, so the same bits.
// BenchmarkSgemmSliversOuter, one core, 32 rows, Xeon (median GFLOP/s
// of 2–6 alternations): 540×180 162 → 175, 180×180 157 → 160–170,
// 720×180 within noise; k = 720 does not fit and keeps the panels
// outermost.
func sliversOuter(t tileKernel, transA bool, m, kb int) bool {
	return sliverOuter && !transA && t == tileFMA && m > asmMR && m <= 4*asmMR && m%asmMR == 0 &&
		kb*(asmNR+m)*4 <= asmL1D
}

// asmL1D is this CPU's L1d size in bytes (setKBlocks; 0: not reported).
var asmL1D int

// sliverOuter lets asmCompute take the order sliversOuter chooses (false:
// panels outermost), a variable so tests and benchmarks can compare both.
var sliverOuter = true

// prefetchPanel prefetches into L2 the rows ≥ i (rows of them) of op(A)
// over k steps pc … pc+kb−1: kb lines of A when op(A) = Aᵀ (each step's
// rows are adjacent floats of one row of A), rows runs of kb floats
// otherwise.
func prefetchPanel(transA bool, a []float32, lda, i, pc, rows, kb int) {
	if transA {
		_ = a[(pc+kb-1)*lda+i+rows-1]
		prefetchRows(unsafe.Pointer(&a[pc*lda+i]), kb, uintptr(lda)*4, uintptr(rows)*4)
		return
	}
	_ = a[(i+rows-1)*lda+pc+kb-1]
	prefetchRows(unsafe.Pointer(&a[i*lda+pc]), rows, uintptr(lda)*4, uintptr(kb)*4)
}

// prefetchRows issues PREFETCHT1 for every cache line of rows runs of
// rowBytes bytes, stride bytes apart, from p (gemm_avx2_kernel_amd64.s).
//
//go:noescape
func prefetchRows(p unsafe.Pointer, rows int, stride, rowBytes uintptr)

// tileKernel names the micro-kernels of the assembly driver over 32-wide
// slivers of 4-byte B elements: an 8×32 pair (tile8x32_amd64.h), the one
// storing into C itself (…c) and the one storing into out
// (asmMR×asmNR = bfMR×bfNR), or the AVX2 tiles of 3, 2 and 1 rows.
type tileKernel uint8

const (
	tileFMA    tileKernel = iota // fma8x32c / fma8x32 (fp32)
	tileDPBF16                   // dpbf16x8x32c / dpbf16x8x32 (bf16 pairs)
	tileFMA256                   // fmaRx(8V)v, avx2Tiles (fp32, AVX2)
)

// panelRows is how many rows of C one panel call computes: 8 for the 8×32
// kernels; 6 for the AVX2 tiles, two 3-row tiles. An 8-row panel there
// needs a 2-row tile, whose 8 accumulators cannot hide the FMA latency
// (4 cycles on Zen 3/4 and Skylake, 5 on Zen 2 and Haswell, at 2 FMAs a
// cycle): alone in L1 it ran at 107 GFLOP/s against the 3-row tile's 115
// on this Zen 4, and at 96–100 on the 128-step chunks panel256 runs.
func (t tileKernel) panelRows() int {
	if t == tileFMA256 {
		return 6
	}
	return asmMR
}

// panel computes one panel of C, its first rows (≤ 8) starting at c[0],
// across a packed op(B) block of nb columns: slivers of steps×32 4-byte
// elements from b (the caller checks they are there), A's panel at a
// (astep and arow as the kernels take them). Whole 8-row tiles with
// alpha = 1 and beta ∈ {0, 1} go straight into C, as do short panels cut
// into 4-row and 1-row tiles (shortPanels); the rest through out and
// storeTile32.
func (t tileKernel) panel(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c []float32, ldc, rows, nb int, alpha, beta float32, out *[256]float32) {
	if t == tileFMA256 {
		panel256(steps, avx2KChunk, a, astep, arow, b, c, ldc, rows, nb, alpha, beta, out)
		return
	}
	direct := alpha == 1 && (beta == 0 || beta == 1) && (rows == asmMR || shortPanels && rows < asmMR-1)
	ldcb := uintptr(ldc) * 4
	if beta == 1 {
		ldcb |= 1 << 63
	}
	for s, js := 0, 0; js < nb; s, js = s+1, js+asmNR {
		cols := min(asmNR, nb-js)
		b := unsafe.Add(b, s*steps*asmNR*4)
		if direct && (tileMaskedStores || cols == asmNR) {
			cRow := c[js:]
			_ = cRow[(rows-1)*ldc+cols-1] // bounds: the whole tile
			if rows == asmMR {
				t.tile8(steps, a, astep, arow, b, unsafe.Pointer(&cRow[0]), ldcb, cols)
				continue
			}
			for r := 0; r < rows; {
				ar, cr := unsafe.Add(a, uintptr(r)*arow), unsafe.Pointer(&cRow[r*ldc])
				switch {
				case rows-r >= 4 && t == tileFMA:
					fma4x32c(steps, ar, astep, arow, b, cr, ldcb, cols)
					r += 4
				case rows-r >= 4:
					dpbf16x4x32c(steps, ar, astep, arow, b, cr, ldcb, cols)
					r += 4
				case t == tileFMA:
					fma1x32c(steps, ar, astep, arow, b, cr, ldcb, cols)
					r++
				default:
					dpbf16x1x32c(steps, ar, astep, arow, b, cr, ldcb, cols)
					r++
				}
			}
			continue
		}
		if t == tileFMA {
			fma8x32(steps, a, astep, arow, b, out)
		} else {
			dpbf16x8x32(steps, a, astep, arow, b, out)
		}
		storeTile32(c[js:], ldc, rows, cols, alpha, beta, out)
	}
}

// panel256 is panel on the AVX2 tiles: each sliver's rows (≤ 6: see
// panelRows) as tiles of 3 rows, the last of 2 or 1 where fewer are left,
// and of as many 8-column vectors as the sliver's columns need (a last
// sliver of 20 columns runs 24, not 32). With alpha = 1 and beta ∈ {0, 1}
// tiles of 8 columns or more go straight into C, their last vector
// overlapping the one before it (gemm_avx2_kernel_amd64.s); the rest
// into out and then storeTile32. Each tile reads the whole sliver again,
// so the k block is run in chunks of chunk steps (avx2KChunk), a part of
// the sliver that stays in L1 across the panel's tiles (the whole block's
// sliver, 32 KiB at k = 256, is the whole L1d of a Zen or a Haswell: the
// second tile read it from L2 again); the chunks after the first add onto
// the tile. slivers256 passes its whole block, which Goto's order keeps
// in L1d anyway.
func panel256(steps, chunk int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c []float32, ldc, rows, nb int, alpha, beta float32, out *[256]float32) {
	direct := alpha == 1 && (beta == 0 || beta == 1)
	ldcbC := uintptr(ldc) * 4
	if beta == 1 {
		ldcbC |= 1 << 63
	}
	for s, js := 0, 0; js < nb; s, js = s+1, js+asmNR {
		cols := min(asmNR, nb-js)
		b := unsafe.Add(b, s*steps*asmNR*4)
		toC := direct && cols >= 8
		var dst []float32
		ldd, ldcb := asmNR, uintptr(asmNR*4)
		if toC {
			dst, ldd, ldcb = c[js:], ldc, ldcbC
			_ = dst[(rows-1)*ldc+cols-1] // bounds: the whole tile
		} else {
			dst = out[:]
		}
		for k0 := 0; k0 < steps; k0 += chunk {
			kn := min(chunk, steps-k0)
			ak, bk := unsafe.Add(a, uintptr(k0)*astep), unsafe.Add(b, k0*asmNR*4)
			for r := 0; r < rows; {
				n := min(3, rows-r)
				tile, last := avx2Tile(n, cols)
				tile(kn, unsafe.Add(ak, uintptr(r)*arow), astep, arow, bk, unsafe.Pointer(&dst[r*ldd]), ldcb, last)
				r += n
			}
			ldcb |= 1 << 63
		}
		if !toC {
			storeTile32(c[js:], ldc, rows, cols, alpha, beta, out)
		}
	}
}

// avx2SliversOuter lets asmCompute run the AVX2 tiles in Goto's order
// where avx2Goto says (false: panel256's order always), a variable so
// benchmarks and tests can compare both.
var avx2SliversOuter = true

// avx2Goto reports whether asmCompute runs a k block of kb steps on the
// AVX2 tiles in Goto's order (slivers256): where the block's sliver and
// a panel's rows of A fit in L1d (kb ≤ avx2GotoK; for Aᵀ read in place,
// kb ≤ avx2KChunk) and the sliver stays there across all the panels. A
// deeper block, run chunk by chunk across the panels (reading each C
// tile back once per chunk), was slower than panel256's order.
// BenchmarkSgemmAVX2Order on a Zen 3, one core, paired ratios of 15
// alternations, Goto's order against panel256's: kb = 90 (the first MLP
// layer 6400×720×180, 1.06; the QKV product, 1.04), Q·Kᵀ (k = 60) 1.10,
// the weight gradients (kb = 128) 1.00–1.04; in chunks, kb = 240 (the
// second MLP layer and its dX, 6400×180×720) 0.97 and 0.96.
func avx2Goto(transA bool, kb int) bool {
	if transA || !gotoBlocks {
		// Each k step of Aᵀ read in place is a line of its own, not 24
		// bytes: measured only up to half of L1d.
		return avx2SliversOuter && kb <= avx2KChunk && (!transA || asmDirectAT)
	}
	return avx2SliversOuter && kb <= avx2GotoK
}

// rowBlocksOuter reports whether asmCompute runs a product of several k
// blocks (k > kc) on the AVX2 tiles with its blocks of asmMC rows
// outermost (gotoRowBlocks): op(A) = A and every block in Goto's order.
func rowBlocksOuter(t tileKernel, transA bool, k, kc int) bool {
	return t == tileFMA256 && !transA && gotoBlocks && k > kc && avx2Goto(false, kc)
}

// gotoRowBlocks is asmCompute's product (op(B) packed in column blocks of
// asmNC, then k blocks of kc) with each block of mc rows run through all
// the k blocks before the next: that block of C (126 rows × 180 columns:
// 90 KB) stays in L2 from one k block to the next, instead of the whole
// of C (4.6 MB for 6400 rows) being read back from memory once per k
// block. The packed op(B), every k block of it, is then read once per
// block of rows: 518 KB for 720 × 180, from L3 on a 512 KiB L2. Each
// element of C sees the same k blocks in the same order, on the same tile
// calls, as in slivers256 over all the rows, so the same bits.
func gotoRowBlocks(m, n, k, kc, mc int, alpha float32, a []float32, lda int, bpk []float32, beta float32, c []float32, ldc int, abuf []float32, out *[256]float32) {
	jcOff := 0
	for jc := 0; jc < n; jc += asmNC {
		nb := min(asmNC, n-jc)
		w := (nb + asmNR - 1) / asmNR * asmNR // padded columns of each k block
		for ic := 0; ic < m; ic += mc {
			mb := min(mc, m-ic)
			for pc := 0; pc < k; pc += kc {
				kb := min(kc, k-pc)
				bbuf := bpk[jcOff+pc*w:]
				_ = bbuf[w*kb-1] // bounds: the block's slivers
				bet := beta
				if pc > 0 {
					bet = 1
				}
				slivers256(false, mb, nb, pc, kb, alpha, a[ic*lda:], lda, unsafe.Pointer(&bbuf[0]), bet, c[ic*ldc+jc:], ldc, abuf, out)
			}
		}
		jcOff += w * k
	}
}

// avx2Panel is one panel of op(A) as the AVX2 tiles read it: its first
// element, the bytes per k step and per row, and its rows (≤ 6).
type avx2Panel struct {
	a           unsafe.Pointer
	astep, arow uintptr
	rows        int
}

// slivers256 is asmCompute's k block (kb ≤ avx2KChunk steps, op(B)
// packed at b, nb columns) on the AVX2 tiles in Goto's loop order: for
// each block of asmMC rows, each 32-column sliver of B comes into L1d once
// and every 6-row panel of the block runs over it, so only the A panels
// (24 bytes a k step) stream from L2. In panel256's order each panel
// streams every sliver from L2 again (128 bytes a k step). Per element of
// C the tile calls are panel256's (one per 3 rows, over the whole block),
// so the sums are the same bits.
func slivers256(transA bool, m, nb, pc, kb int, alpha float32, a []float32, lda int, b unsafe.Pointer, beta float32, c []float32, ldc int, abuf []float32, out *[256]float32) {
	const mr = 6
	const mc = asmMC - asmMC%mr
	var panels [mc / mr]avx2Panel
	direct := alpha == 1 && (beta == 0 || beta == 1)
	ldcb := uintptr(ldc) * 4
	if beta == 1 {
		ldcb |= 1 << 63
	}
	for ic := 0; ic < m; ic += mc {
		mb := min(mc, m-ic)
		np := 0
		for i := ic; i < ic+mb; i += mr {
			rows := min(mr, m-i)
			p := &panels[np]
			switch {
			case transA && rows == mr:
				_ = a[(pc+kb-1)*lda+i+rows-1]
				p.a, p.astep, p.arow = unsafe.Pointer(&a[pc*lda+i]), uintptr(lda)*4, 4
			case transA: // the short last panel, packed (the only one that is)
				packAT8(a, lda, i, pc, rows, kb, abuf)
				p.a, p.astep, p.arow = unsafe.Pointer(&abuf[0]), asmMR*4, 4
			default:
				_ = a[(i+rows-1)*lda+pc+kb-1]
				p.a, p.astep, p.arow = unsafe.Pointer(&a[i*lda+pc]), 4, uintptr(lda)*4
			}
			p.rows = rows
			np++
		}
		cb := c[ic*ldc:]
		for s, js := 0, 0; js < nb; s, js = s+1, js+asmNR {
			cols := min(asmNR, nb-js)
			bs := unsafe.Add(b, s*kb*asmNR*4)
			for q, p := range panels[:np] {
				if !direct || cols < 8 { // through out and storeTile32
					panel256(kb, kb, p.a, p.astep, p.arow, bs, cb[q*mr*ldc+js:], ldc, p.rows, cols, alpha, beta, out)
					continue
				}
				if s == 0 && prefetchPanels && q+1 < np { // the rows' first pass comes from memory
					prefetchPanel(transA, a, lda, ic+(q+1)*mr, pc, panels[q+1].rows, kb)
				}
				dst := cb[q*mr*ldc+js:]
				_ = dst[(p.rows-1)*ldc+cols-1] // bounds: the whole tile
				for r := 0; r < p.rows; {
					n := min(3, p.rows-r)
					tile, last := avx2Tile(n, cols)
					tile(kb, unsafe.Add(p.a, uintptr(r)*p.arow), p.astep, p.arow, bs, unsafe.Pointer(&dst[r*ldc]), ldcb, last)
					r += n
				}
			}
		}
	}
}

// tile8 is one whole 8-row tile into C (c, ldcb and cols as the …c
// kernels take them), on the narrow kernel for a last sliver of at most
// 16 or 24 columns (narrowTails).
func (t tileKernel) tile8(steps int, a unsafe.Pointer, astep, arow uintptr, b, c unsafe.Pointer, ldcb uintptr, cols int) {
	narrow := narrowTails && cols <= 24
	switch {
	case t == tileFMA && narrow && cols <= 16:
		fma8x16c(steps, a, astep, arow, b, c, ldcb, cols)
	case t == tileFMA && narrow:
		fma8x24c(steps, a, astep, arow, b, c, ldcb, cols)
	case t == tileFMA:
		fma8x32c(steps, a, astep, arow, b, c, ldcb, cols)
	case narrow && cols <= 16:
		dpbf16x8x16c(steps, a, astep, arow, b, c, ldcb, cols)
	case narrow:
		dpbf16x8x24c(steps, a, astep, arow, b, c, ldcb, cols)
	default:
		dpbf16x8x32c(steps, a, astep, arow, b, c, ldcb, cols)
	}
}

// bufPool recycles scratch slices (packed operands). A channel rather than
// a sync.Pool so a GC cycle does not throw them away: steady-state
// training allocates nothing.
type bufPool[E any] chan *[]E

// get is a slice of n elements, contents undefined.
func (p bufPool[E]) get(n int) *[]E {
	var b *[]E
	select {
	case b = <-p:
	default:
		b = new([]E)
	}
	if cap(*b) < n {
		*b = make([]E, n)
	}
	*b = (*b)[:n]
	return b
}

func (p bufPool[E]) put(b *[]E) {
	select {
	case p <- b:
	default:
	}
}

// packAT8 packs rows ic..ic+mb of op(A) = Aᵀ over k range pc..pc+kb as
// 8-row panels dst[(i/8)·kb·8 + p·8 + r], zero-padding a short last panel.
func packAT8(a []float32, lda, ic, pc, mb, kb int, dst []float32) {
	full := mb &^ (asmMR - 1)
	for p := range kb {
		src := a[(pc+p)*lda+ic:]
		src = src[:mb]
		d := dst[p*asmMR:]
		for i := 0; i < full; i += asmMR {
			archsimd.LoadFloat32x8Slice(src[i:]).StoreSlice(d[i*kb:])
		}
	}
	// The short panel after the vector loops: clear/copy are SSE code.
	archsimd.ClearAVXUpperBits()
	if full < mb {
		for p := range kb {
			e := dst[full*kb+p*asmMR : full*kb+p*asmMR+asmMR]
			clear(e)
			copy(e, a[(pc+p)*lda+ic+full:(pc+p)*lda+ic+mb])
		}
	}
}

// storeTile32 is C[rows, cols] = alpha·out + beta·C (beta 0: C not read).
//
// The float compares are made once, before the first vector instruction:
// inside the loop each one is a legacy-SSE UCOMISS that on Intel pays the
// AVX-512 → SSE transition (~140 ns) per row (see avxsse_amd64_test.go).
func storeTile32(c []float32, ldc, rows, cols int, alpha, beta float32, out *[256]float32) {
	// Integer compares of the bits: float compares get re-issued inside
	// the loop (flags are rematerialised, not kept). alpha == 1 and
	// beta == ±0 have exactly these encodings.
	scale, accum := math.Float32bits(alpha) != 0x3F800000, math.Float32bits(beta)&0x7FFFFFFF != 0
	if !hasAVX512 {
		storeTile32AVX2(c, ldc, rows, cols, alpha, beta, scale, accum, out)
		return
	}
	va, vb := archsimd.BroadcastFloat32x16(alpha), archsimd.BroadcastFloat32x16(beta)
	for r := range rows {
		row := c[r*ldc : r*ldc+cols]
		t := out[r*asmNR : r*asmNR+asmNR]
		if cols == asmNR {
			lo, hi := archsimd.LoadFloat32x16Slice(t), archsimd.LoadFloat32x16Slice(t[16:])
			if scale {
				lo, hi = lo.Mul(va), hi.Mul(va)
			}
			if accum {
				lo = archsimd.LoadFloat32x16Slice(row).MulAdd(vb, lo)
				hi = archsimd.LoadFloat32x16Slice(row[16:]).MulAdd(vb, hi)
			}
			lo.StoreSlice(row)
			hi.StoreSlice(row[16:])
			continue
		}
		// A partial tile (n = 60, 201, 540, 180 … leave one per row of
		// tiles): masked loads and stores, not a scalar loop.
		for j := 0; j < cols; j += 16 {
			e := min(j+16, cols)
			v := simdpart.Load16(t[j:e])
			if scale {
				v = v.Mul(va)
			}
			if accum {
				v = simdpart.Load16(row[j:e]).MulAdd(vb, v)
			}
			simdpart.Store16(v, row[j:e])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// storeTile32AVX2 is storeTile32 in 8-wide vectors, for the AVX2 tiles
// (tileFMA256) on CPUs without AVX-512.
func storeTile32AVX2(c []float32, ldc, rows, cols int, alpha, beta float32, scale, accum bool, out *[256]float32) {
	va, vb := archsimd.BroadcastFloat32x8(alpha), archsimd.BroadcastFloat32x8(beta)
	for r := range rows {
		row := c[r*ldc : r*ldc+cols]
		t := out[r*asmNR : r*asmNR+cols]
		for j := 0; j < cols; j += 8 {
			e := min(j+8, cols)
			v := simdpart.Load8(t[j:e])
			if scale {
				v = v.Mul(va)
			}
			if accum {
				v = simdpart.Load8(row[j:e]).MulAdd(vb, v)
			}
			simdpart.Store8(v, row[j:e])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// PrefetchRows asks for rows runs of n values, ld apart, from x into L2
// ahead of their use: for callers that know which operands their next
// task reads (attention's next head) while the current one computes on
// cached data. A hint only; it reads and changes nothing.
func PrefetchRows[T Float](x []T, rows, ld, n int) {
	if rows <= 0 || n <= 0 {
		return
	}
	_ = x[(rows-1)*ld+n-1]
	var z T
	sz := unsafe.Sizeof(z)
	prefetchRows(unsafe.Pointer(&x[0]), rows, uintptr(ld)*sz, uintptr(n)*sz)
}
