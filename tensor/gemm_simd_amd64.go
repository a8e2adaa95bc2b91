//go:build goexperiment.simd && amd64

package tensor

// The SIMD back ends (GOEXPERIMENT=simd), avx512 and avx2: the parallel
// split of a product, then, per core, the assembly driver
// (gemm_asm_amd64.go, the default) or the blocked driver below over the
// archsimd micro-kernels of gemm_simd_kernel_amd64.go (simdAsmKernel
// false: the reference). The archsimd driver:
//
// Loop nest, outer to inner (BLIS naming):
//
//	jc: nc columns of C      B panel kc×nc packed once, lives in L2
//	pc: kc of the k axis     (beta applies on the first pass only)
//	i : 4 rows of C          A read in place: 4 rows × kc stay in L1
//	js: nr columns           micro-kernel on one 4×nr tile
//
// A is not packed: the kernel broadcasts A elements straight from the
// caller's matrix through four row pointers, which handles transA for free
// (only the pointer step differs) and saves a transpose of A that would
// cost ~10% on the model's 6400×180 activations. B is packed into
// nr-wide slivers, zero-padded to nr, so the kernel always runs full width
// and only its stores are clipped.

import (
	"simd/archsimd"
	"unsafe"

	"romae/internal/simdpart"
)

const (
	simdMR = 4   // rows per micro-tile (fixed by the kernels)
	simdKC = 256 // k block: an A micro-panel is 4×256×4 B = 4 KiB of L1
	simdNC = 512 // column block: packed B ≤ 256×512×4 B = 512 KiB of L2
	simdMC = 128 // row block for packing transposed A: 128 KiB
	// Products below this many multiply-adds run on one core: splitting
	// costs a goroutine hand-off (~1–2 µs) and duplicates B packing.
	simdParallelFMAs = 1 << 20
)

// packedWorkers is how many workers an M split on an op(B) packed
// beforehand takes: all of them, or one below simdParallelFMAs.
func packedWorkers(m, n, k int) int {
	if m*n*k < simdParallelFMAs {
		return 1
	}
	return workers()
}

// rowChunks runs fn over rows [0, m) on w workers, in chunks of whole
// units of unit rows (a kernel's panel height), 4 chunks per worker, so a
// core slowed by another process just takes fewer of them: the M split
// of every product whose op(B) is packed once and shared.
func rowChunks(w, m, unit int, fn func(i0, i1 int)) {
	units := (m + unit - 1) / unit
	parallelChunks(units, min(4*w, units), w, 0, func(lo, hi int) {
		fn(lo*unit, min(hi*unit, m))
	})
}

type simdBackend struct {
	name string
	nr   int        // columns per archsimd micro-tile (simdAsmKernel false)
	tile tileKernel // the assembly driver's fp32 tiles
}

var (
	avx512Backend = &simdBackend{"avx512", 32, tileFMA}
	_             = register(avx512Backend, rankAVX512, hasAVX512)
	_             = register(&simdBackend{"avx2", 16, tileFMA256}, rankAVX2, hasAVX2FMA)
)

func (s *simdBackend) Name() string { return s.name }

// Sgemm splits large products over the cores along whichever of M and N
// gives every worker whole tiles (M preferred: each worker then packs only
// B, which is the small operand in the model's activation×weight
// products), and runs small ones inline.
func (s *simdBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m*n*k < simdParallelFMAs {
		s.serial(n, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Pieces of k on one core too: the sums then fall the same way
	// whatever the number of cores (TestProductsSameOnAnyCoreCount).
	if p := kPieces(m, n, k); p > 1 {
		s.splitK(p, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	w := workers()
	if w == 1 {
		s.serial(n, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	mr, nr := simdMR, s.nr
	if simdAsmKernel {
		mr, nr = s.tile.panelRows(), asmNR // chunk edges on whole panels
	}
	mTiles, nTiles := (m+mr-1)/mr, (n+nr-1)/nr
	if mTiles >= 2*w || mTiles >= nTiles {
		bf, onBF16 := bfDriverFor(bf16KernelNow())
		if simdAsmKernel && k*n <= 1<<20 {
			// On the assembly driver (fp32 FMA on AVX-512 or AVX2,
			// VDPBF16PS, AMX) op(B) is packed once, on all workers, and
			// shared by the row chunks.
			if onBF16 {
				bfParallelM(bf, w, bfA{f: a, ld: lda, trans: transA}, transB, m, n, k, alpha, b, ldb, beta, c, ldc)
			} else {
				asmParallelM(s.tile, w, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			}
			return
		}
		// Otherwise each chunk packs all of op(B). When that is small, cut
		// 4 chunks per worker so a core slowed by another process just
		// takes fewer of them (not where each chunk rounds it to bf16).
		chunks := min(w, mTiles)
		if k*n <= 1<<18 && !onBF16 {
			chunks = min(4*w, mTiles)
		}
		parallelChunks(mTiles, chunks, w, 0, func(lo, hi int) {
			i0, i1 := lo*mr, min(hi*mr, m)
			aOff := i0 * lda
			if transA {
				aOff = i0
			}
			s.serial(n, transA, transB, i1-i0, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[i0*ldc:], ldc)
		})
		return
	}
	parallelChunks(nTiles, min(w, nTiles), w, 0, func(lo, hi int) {
		j0, j1 := lo*nr, min(hi*nr, n)
		bOff := j0
		if transB {
			bOff = j0 * ldb
		}
		s.serial(n, transA, transB, m, j1-j0, k, alpha, a, lda, b[bOff:], ldb, beta, c[j0:], ldc)
	})
}

// sgemmSerial is GemmSerial's entry: the single-core product.
func (s *simdBackend) sgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	s.serial(n, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// packBufs recycles serial's B-panel and A-pack buffers.
var packBufs = make(bufPool[float32], 16)

// serial is the single-core blocked product on already-validated
// arguments; nAll is the whole product's n, which sets the k block
// (productKC), when this is a chunk of its columns: the same sums on any
// number of cores.
func (s *simdBackend) serial(nAll int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if bf16On.Load() && sgemmBF16(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	if simdAsmKernel {
		serialAsm(s.tile, nAll, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	bufp := packBufs.get(simdKC*(simdNC+32) + simdMC*simdKC)
	defer packBufs.put(bufp)
	buf := *bufp
	nr, wide := s.nr, s.nr == 32
	apack := buf[simdKC*(simdNC+32):]
	for jc := 0; jc < n; jc += simdNC {
		nb := min(simdNC, n-jc)
		for pc := 0; pc < k; pc += simdKC {
			kb := min(simdKC, k-pc)
			// Where each nr-wide sliver of op(B) comes from.
			var bps [simdNC/16 + 1]unsafe.Pointer
			var rsB [simdNC/16 + 1]uintptr
			for s, js := 0, 0; js < nb; s, js = s+1, js+nr {
				// Always packed, even when B's rows are contiguous: reading
				// B in place (stride ldb) was 10–30% slower because rows
				// like 180 floats leave most 64-byte loads straddling two
				// cache lines, while packed slivers are line-aligned.
				d := buf[js*kb : js*kb+kb*nr]
				packB(transB, b, ldb, pc, jc+js, kb, min(nr, nb-js), nr, d)
				bps[s], rsB[s] = unsafe.Pointer(&d[0]), uintptr(nr)*4
			}
			bet := beta
			if pc > 0 {
				bet = 1 // later k blocks accumulate onto the first
			}
			for ic := 0; ic < m; ic += simdMC {
				mb := min(simdMC, m-ic)
				if transA {
					// Column p of a 4-row micro-panel is 4 contiguous floats
					// but successive p are lda apart, so reading op(A) in
					// place touches a new cache line every k step. Pack the
					// block as [mb/4][kb][4], reading A's rows sequentially.
					packAT(a, lda, ic, pc, mb, kb, apack)
				}
				if simdBOuter {
					// BLIS order: one B sliver (kb×nr, ≤ 16 KiB) stays in
					// L1 while every 4-row A micro-panel of the block
					// streams past it from L2: per k step the kernel then
					// reads 16 bytes of A from L2 instead of 128 of B.
					for s, js := 0, 0; js < nb; s, js = s+1, js+nr {
						for i := ic; i < ic+mb; i += simdMR {
							rows := min(simdMR, m-i)
							a0, a1, a2, a3, step := aPanel(transA, a, lda, apack, i, ic, pc, kb, rows)
							t := newTile(c[i*ldc+jc+js:], ldc, alpha, bet, rows, min(nr, nb-js))
							if wide {
								kernel4x32(kb, a0, a1, a2, a3, step, bps[s], rsB[s], &t)
							} else {
								kernel4x16(kb, a0, a1, a2, a3, step, bps[s], rsB[s], &t)
							}
						}
					}
					continue
				}
				for i := ic; i < ic+mb; i += simdMR {
					rows := min(simdMR, m-i)
					a0, a1, a2, a3, step := aPanel(transA, a, lda, apack, i, ic, pc, kb, rows)
					// The A micro-panel stays in L1 across the slivers; the
					// packed B panel streams from L2.
					ci := c[i*ldc+jc:]
					for s, js := 0, 0; js < nb; s, js = s+1, js+nr {
						t := newTile(ci[js:], ldc, alpha, bet, rows, min(nr, nb-js))
						// Direct calls, not a func value: through an indirect
						// call &t would escape and cost an allocation per tile.
						if wide {
							kernel4x32(kb, a0, a1, a2, a3, step, bps[s], rsB[s], &t)
						} else {
							kernel4x16(kb, a0, a1, a2, a3, step, bps[s], rsB[s], &t)
						}
					}
				}
			}
		}
	}
}

// simdBOuter selects the BLIS loop order (B sliver outer, in L1); false is
// the original order (A micro-panel outer). A variable so the benchmarks
// can compare both in one run.
var simdBOuter = false

// aPanel returns the row pointers of the 4-row A micro-panel at row i of
// op(A), k offset pc: the packed block for transA, A in place otherwise.
// Rows past the edge alias row 0: computed, never stored.
func aPanel(transA bool, a []float32, lda int, apack []float32, i, ic, pc, kb, rows int) (a0, a1, a2, a3 unsafe.Pointer, step uintptr) {
	if transA {
		a0 = unsafe.Pointer(&apack[(i-ic)*kb])
		return a0, unsafe.Add(a0, 4), unsafe.Add(a0, 8), unsafe.Add(a0, 12), simdMR * 4
	}
	a0 = unsafe.Pointer(&a[i*lda+pc])
	a1, a2, a3 = a0, a0, a0
	if rows > 1 {
		a1 = unsafe.Pointer(&a[(i+1)*lda+pc])
	}
	if rows > 2 {
		a2 = unsafe.Pointer(&a[(i+2)*lda+pc])
	}
	if rows > 3 {
		a3 = unsafe.Pointer(&a[(i+3)*lda+pc])
	}
	return a0, a1, a2, a3, 4
}

// packB copies the kb×w block of op(B) at (pc, j0), w ≤ nr, into one
// sliver: kb rows of nr contiguous floats, zero-padded past w so the kernel
// can always run full width.
func packB(transB bool, b []float32, ldb, pc, j0, kb, w, nr int, d []float32) {
	if !transB {
		if w == nr && nr == 32 && hasAVX512 {
			for p := range kb {
				src, dst := b[(pc+p)*ldb+j0:], d[p*nr:]
				archsimd.LoadFloat32x16Slice(src).StoreSlice(dst)
				archsimd.LoadFloat32x16Slice(src[16:]).StoreSlice(dst[16:])
			}
			archsimd.ClearAVXUpperBits()
			return
		}
		if w == nr && nr == 32 {
			// The assembly driver's slivers without AVX-512: four 8-wide
			// moves a row, one bounds check each side.
			for p := range kb {
				src, dst := b[(pc+p)*ldb+j0:][:32], d[p*32:][:32]
				archsimd.LoadFloat32x8Slice(src).StoreSlice(dst)
				archsimd.LoadFloat32x8Slice(src[8:]).StoreSlice(dst[8:])
				archsimd.LoadFloat32x8Slice(src[16:]).StoreSlice(dst[16:])
				archsimd.LoadFloat32x8Slice(src[24:]).StoreSlice(dst[24:])
			}
			archsimd.ClearAVXUpperBits()
			return
		}
		if w == nr && nr%8 == 0 {
			// 8-wide (AVX, fine for both back ends) moves instead of
			// copy(): a memmove call per 64–128 bytes costs more than the
			// copy itself.
			for p := range kb {
				src, dst := b[(pc+p)*ldb+j0:], d[p*nr:]
				for v := 0; v < nr; v += 8 {
					archsimd.LoadFloat32x8Slice(src[v:]).StoreSlice(dst[v:])
				}
			}
			archsimd.ClearAVXUpperBits()
			return
		}
		for p := range kb {
			copy(d[p*nr:p*nr+w], b[(pc+p)*ldb+j0:])
			clear(d[p*nr+w : p*nr+nr])
		}
		return
	}
	if nr == 32 && hasAVX2FMA {
		packBT32(b, ldb, pc, j0, kb, w, d)
		return
	}
	// op(B)(p, j) = b[j*ldb + p]: read each column of op(B) sequentially
	// and scatter it down the sliver.
	if w < nr {
		clear(d)
	}
	for jj := range w {
		col := b[(j0+jj)*ldb+pc:]
		col = col[:kb]
		for p, v := range col {
			d[p*nr+jj] = v
		}
	}
}

// packBRows32 packs one k block of op(B) = b (k rows of n
// floats, ldb apart) as asmPackB lays it out, row by row: row p's 32-float
// pieces go to step p of each sliver (sliver s starts at s·32·k), the
// last one zero-padded. Sliver by sliver (packB), each sliver walked the
// block's k rows with a stride of ldb, and every row came from memory
// once per sliver's cache lines; row by row, the block is read as the one
// contiguous run it is when ldb = n.
func packBRows32(b []float32, ldb, n, k int, dst []float32) {
	full, sk := n&^31, 32*k
	var zero archsimd.Float32x16 // not Broadcast(0): that builds 0 with a legacy-SSE XORPS
	for p := range k {
		row, d := b[p*ldb:p*ldb+n], dst[p*32:]
		j := 0
		for ; j < full; j += 32 {
			o := d[j/32*sk:]
			archsimd.LoadFloat32x16Slice(row[j:]).StoreSlice(o)
			archsimd.LoadFloat32x16Slice(row[j+16:]).StoreSlice(o[16:])
		}
		if j < n {
			o := d[j/32*sk:][:32]
			lo, hi := row[j:], row[min(j+16, n):]
			simdpart.Load16(lo[:min(16, len(lo))]).StoreSlice(o)
			if len(hi) > 0 {
				simdpart.Load16(hi).StoreSlice(o[16:])
			} else {
				zero.StoreSlice(o[16:])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}

// packBRows32AVX2 is packBRows32 in 8-wide (AVX2) moves, for the AVX2
// tiles: the weight gradients pack the layer input, k rows of up to 720
// floats from memory, and sliver by sliver it walked them 23 times with
// a stride of a row, 13% of W2's weight gradient on a Zen 3
// (BenchmarkSgemmPackBRows). The last piece's partial vector is a masked
// move: no scalar float code between the vector ones.
func packBRows32AVX2(b []float32, ldb, n, k int, dst []float32) {
	full, sk := n&^31, 32*k
	var zero archsimd.Float32x8
	for p := range k {
		row, d := b[p*ldb:p*ldb+n], dst[p*32:]
		j := 0
		for ; j < full; j += 32 {
			r, o := row[j:j+32], d[j/32*sk:][:32]
			archsimd.LoadFloat32x8Slice(r).StoreSlice(o)
			archsimd.LoadFloat32x8Slice(r[8:]).StoreSlice(o[8:])
			archsimd.LoadFloat32x8Slice(r[16:]).StoreSlice(o[16:])
			archsimd.LoadFloat32x8Slice(r[24:]).StoreSlice(o[24:])
		}
		if j < n {
			r, o := row[j:], d[j/32*sk:][:32]
			for v := 0; v < 32; v += 8 {
				switch {
				case v+8 <= len(r):
					archsimd.LoadFloat32x8Slice(r[v:]).StoreSlice(o[v:])
				case v < len(r):
					simdpart.Load8(r[v:]).StoreSlice(o[v:])
				default:
					zero.StoreSlice(o[v:])
				}
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}

// packBByRows lets asmPackB pack a k block of a non-transposed op(B) row
// by row (packBRows32; false: sliver by sliver), a variable so benchmarks
// can compare both.
var packBByRows = true

// packBT32 is packB of op(B) = bᵀ into a 32-wide sliver, 8 columns of
// op(B) (rows of b) × 8 steps at a time: 8 loads, a transpose in ymm
// registers, 8 stores. Columns past w are zero lanes, the sliver's
// padding. AVX2, and used with AVX-512 too: on a Zen 4 it packed a
// 256×32 sliver in 2.0 µs, against 3.7 for a 16×16 AVX-512 transpose
// that kept its rows in an array (in memory) and 4.7 for a scalar loop.
//
// The transpose: 32-bit, then 64-bit interleaves of row pairs within each
// 128-bit half, then the halves exchanged between rows i and i+4. It is
// written out on eight variables, not an array, and not as a call, which
// would return with the upper ymm state dirty (TestNoSSEAfterAVX).
func packBT32(b []float32, ldb, pc, j0, kb, w int, d []float32) {
	for jb := 0; jb < 32; jb += 8 {
		nj := max(0, min(8, w-jb))
		for p0 := 0; p0 < kb; p0 += 8 {
			np := min(8, kb-p0)
			src := b[min((j0+jb)*ldb+pc+p0, len(b)):] // empty past the last row (nj = 0)
			r0, r1 := loadBT8(src, 0, ldb, nj, np), loadBT8(src, 1, ldb, nj, np)
			r2, r3 := loadBT8(src, 2, ldb, nj, np), loadBT8(src, 3, ldb, nj, np)
			r4, r5 := loadBT8(src, 4, ldb, nj, np), loadBT8(src, 5, ldb, nj, np)
			r6, r7 := loadBT8(src, 6, ldb, nj, np), loadBT8(src, 7, ldb, nj, np)
			r0, r1 = r0.InterleaveLoGrouped(r1), r0.InterleaveHiGrouped(r1)
			r2, r3 = r2.InterleaveLoGrouped(r3), r2.InterleaveHiGrouped(r3)
			r4, r5 = r4.InterleaveLoGrouped(r5), r4.InterleaveHiGrouped(r5)
			r6, r7 = r6.InterleaveLoGrouped(r7), r6.InterleaveHiGrouped(r7)
			r0, r2 = interleave64(r0, r2)
			r1, r3 = interleave64(r1, r3)
			r4, r6 = interleave64(r4, r6)
			r5, r7 = interleave64(r5, r7)
			dst := d[p0*32+jb:]
			storeBT8(dst, 0, np, r0.Select128FromPair(0, 2, r4))
			storeBT8(dst, 1, np, r2.Select128FromPair(0, 2, r6))
			storeBT8(dst, 2, np, r1.Select128FromPair(0, 2, r5))
			storeBT8(dst, 3, np, r3.Select128FromPair(0, 2, r7))
			storeBT8(dst, 4, np, r0.Select128FromPair(1, 3, r4))
			storeBT8(dst, 5, np, r2.Select128FromPair(1, 3, r6))
			storeBT8(dst, 6, np, r1.Select128FromPair(1, 3, r5))
			storeBT8(dst, 7, np, r3.Select128FromPair(1, 3, r7))
		}
	}
	archsimd.ClearAVXUpperBits()
}

// loadBT8 is row jj of an 8×8 block of b (rows ldb apart from src, np ≤ 8
// columns of each): zero past the block's nj rows or np columns.
func loadBT8(src []float32, jj, ldb, nj, np int) archsimd.Uint32x8 {
	switch {
	case jj >= nj:
		return archsimd.BroadcastUint32x8(0) // not Uint32x8{}: that zeroes with SSE moves
	case np == 8:
		return archsimd.LoadFloat32x8Slice(src[jj*ldb:]).AsUint32x8()
	}
	return simdpart.Load8(src[jj*ldb:][:np]).AsUint32x8()
}

// interleave64 is the 64-bit interleave of x and y within 128-bit halves.
func interleave64(x, y archsimd.Uint32x8) (lo, hi archsimd.Uint32x8) {
	a, b := x.AsUint64x4(), y.AsUint64x4()
	return a.InterleaveLoGrouped(b).AsUint32x8(), a.InterleaveHiGrouped(b).AsUint32x8()
}

// storeBT8 stores v as sliver row pp of a 32-wide sliver from dst, if the
// block has that row (pp < np).
func storeBT8(dst []float32, pp, np int, v archsimd.Uint32x8) {
	if pp < np {
		v.AsFloat32x8().StoreSlice(dst[pp*32:])
	}
}

// packAT packs rows ic..ic+mb of op(A) = Aᵀ over k range pc..pc+kb as
// micro-panels dst[(i/4)*kb*4 + p*4 + r]. A row of A (fixed p) is read
// sequentially and dealt out 4 floats per panel; a short last panel is
// zero-padded (its extra rows are computed but never stored).
func packAT(a []float32, lda, ic, pc, mb, kb int, dst []float32) {
	full := mb &^ (simdMR - 1)
	for p := range kb {
		src := a[(pc+p)*lda+ic:]
		src = src[:mb]
		d := dst[p*simdMR:]
		for i := 0; i < full; i += simdMR {
			archsimd.LoadFloat32x4Slice(src[i:]).StoreSlice(d[i*kb:])
		}
		if full < mb {
			e := d[full*kb : full*kb+simdMR]
			clear(e)
			copy(e, src[full:])
		}
	}
}

// kPieces is how many pieces of the k axis a product is cut into: > 1 only
// for the k-heavy weight gradients (dW[o,i] = dOutᵀ·in summed over all
// B·L tokens). Split over M or N, every worker would pack the whole of
// one operand (the k×n activation block, megabytes) again; split over K,
// each piece packs only its own slice of both and the pieces' m×n partial
// results are summed at the end, which is tiny next to the product. The
// count depends on the shape only, never on GOMAXPROCS, so the rounding
// of the sum is the same on every machine.
func kPieces(m, n, k int) int {
	if k < 2048 || k < 4*max(m, n) {
		return 1
	}
	return min(k/1024, 8)
}

// kScratch recycles the partial-sum buffers of splitK and linearGrads32.
var kScratch = make(bufPool[float32], 4)

// splitK computes C = alpha·op(A)·op(B) + beta·C as p products over k
// ranges: piece 0 lands in C (with beta), pieces 1..p−1 in scratch, then
// C += Σ scratch in piece order.
func (s *simdBackend) splitK(p int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bufp := kScratch.get((p - 1) * m * n)
	buf := *bufp
	ParallelFor(p, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k0, k1 := i*k/p, (i+1)*k/p
			aOff, bOff := k0, k0*ldb
			if transA {
				aOff = k0 * lda
			}
			if transB {
				bOff = k0
			}
			if i == 0 {
				s.serial(n, transA, transB, m, n, k1-k0, alpha, a[aOff:], lda, b[bOff:], ldb, beta, c, ldc)
			} else {
				s.serial(n, transA, transB, m, n, k1-k0, alpha, a[aOff:], lda, b[bOff:], ldb, 0, buf[(i-1)*m*n:], n)
			}
		}
	})
	addPieces(c, ldc, buf, m, n, p)
	kScratch.put(bufp)
}

// addPieces is splitK's last step: C [m, n] += the p−1 partial products
// in buf (m×n each, pieces 1 … p−1), in piece order.
func addPieces(c []float32, ldc int, buf []float32, m, n, p int) {
	ParallelFor(m, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := c[r*ldc : r*ldc+n]
			for i := 1; i < p; i++ {
				addTo(row, buf[(i-1)*m*n+r*n:][:n])
			}
		}
	})
}

// addTo is dst += src.
func addTo(dst, src []float32) {
	src = src[:len(dst)]
	j := 0
	if hasAVX512 {
		for ; j+16 <= len(dst); j += 16 {
			archsimd.LoadFloat32x16Slice(dst[j:]).Add(archsimd.LoadFloat32x16Slice(src[j:])).StoreSlice(dst[j:])
		}
		archsimd.ClearAVXUpperBits() // before the scalar tail
	}
	for ; j < len(dst); j++ {
		dst[j] += src[j]
	}
}
