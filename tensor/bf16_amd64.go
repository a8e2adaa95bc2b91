//go:build goexperiment.simd && amd64

package tensor

// The bf16 matrix-product path: operands rounded to bfloat16 (round to
// nearest even) while packing, products on VDPBF16PS (AVX512_BF16: 32
// bf16 multiply-adds per instruction, twice an fp32 FMA's 16) with float32
// accumulation. simd/archsimd exposes neither VDPBF16PS, VCVTNE2PS2BF16
// nor the AVX512_BF16 CPUID bit, so the micro-kernel and the packing loops
// (rounding 32 floats per VCVTNE2PS2BF16, VPERMW to interleave two rows'
// values into k pairs) are Go assembly (bf16_kernel_amd64.s), and
// detection reads CPUID itself. It plugs in under the avx512 driver's
// serial product, so the M/N/K splitting and the per-(sample, head)
// attention products are shared with fp32.
//
// Packed layouts (uint32 = two bf16, the lower k index in the low half):
//
//	B sliver: [kp][32] — lane j holds op(B)(2p, j), op(B)(2p+1, j)
//	A panel, row-major A: [8][kp] — row r's pairs contiguous (astep 4)
//	A panel, transposed A: [kp][8] — pair p of the 8 rows contiguous (astep 32)
//
// kp = ⌈kb/2⌉; an odd k block pads its last pair with 0, short panels and
// slivers pad with zero rows/columns that are computed but never stored.

import (
	"math"
	"simd/archsimd"
	"unsafe"

	"romae/internal/bufs"
	"romae/internal/simdpart"
)

//go:noescape
func dpbf16x8x32(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, out *[256]float32)

//go:noescape
func dpbf16x8x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

// dpbf16x8x24c and dpbf16x8x16c are dpbf16x8x32c for a last sliver of at
// most 24 and 16 columns (narrowTails).
//
//go:noescape
func dpbf16x8x24c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func dpbf16x8x16c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

// dpbf16x4x32c and dpbf16x1x32c are dpbf16x8x32c for a short last
// panel's rows: 4 and 1 (shortPanels).
//
//go:noescape
func dpbf16x4x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func dpbf16x1x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)

//go:noescape
func cvtPairs(dst *uint32, src *float32, n int)

//go:noescape
func packBSliverPairs(dst *uint32, src *float32, ldb uintptr, kp int, idx *uint16)

// transpose16x16 stores the transpose of the 16×16 block of 32-bit values
// at src (rows srcStride bytes apart) at dst (rows dstStride bytes apart).
//
//go:noescape
func transpose16x16(dst *uint32, dstStride uintptr, src *uint32, srcStride uintptr)

//go:noescape
func packATPairs(dst *uint32, src *float32, lda uintptr, groups int, panel uintptr, idx *uint16)

// interleaveWords is VPERMW's index for packBSliverPairs/packATPairs:
// output word 2j ← word j (row 2p), 2j+1 ← word 16+j (row 2p+1).
var interleaveWords = func() (idx [32]uint16) {
	for j := range 16 {
		idx[2*j], idx[2*j+1] = uint16(j), uint16(16+j)
	}
	return
}()

const (
	bfMR    = 8
	bfNR    = 32
	bfKCMax = 512 // the largest k block kBlock gives
	bfNC    = 768 // ≥ the model's widest n (720), so A is packed once per k block
	bfMC    = 128
)

// hasBF16: AVX-512 usable (archsimd checks OS support) and AVX512_BF16
// (CPUID.(EAX=7,ECX=1):EAX bit 5, read by detectCPU).
var hasBF16 = hasAVX512 && cpuInfo.Has("avx512_bf16")

// BF16Supported reports whether the bf16 matrix-product path can run here.
func BF16Supported() bool { return hasBF16 }

func bf16Why() string { return "this CPU lacks AVX512_BF16 (VDPBF16PS)" }

// bf16Bits rounds f to bfloat16 (nearest, ties to even) and returns its
// 16 bits. NaN stays NaN (its quiet bit survives the rounding).
func bf16Bits(f float32) uint32 {
	u := math.Float32bits(f)
	return (u + 0x7FFF + ((u >> 16) & 1)) >> 16
}

// RoundBF16 is f rounded to the nearest bfloat16, as a float32.
func RoundBF16(f float32) float32 { return math.Float32frombits(bf16Bits(f) << 16) }

func bfPair(lo, hi float32) uint32 { return bf16Bits(lo) | bf16Bits(hi)<<16 }

// roundHi16 rounds 16 floats to bf16, leaving each result in the high half
// of its 32-bit lane. The constants are loaded, not broadcast: an integer
// broadcast goes through a legacy-SSE MOVQ, which pays the AVX-512 → SSE
// transition on Intel (avxsse_amd64_test.go).
func roundHi16(v archsimd.Float32x16) archsimd.Uint32x16 {
	u := v.AsUint32x16()
	odd := u.ShiftRight(archsimd.LoadUint32x16(&roundConsts[3])).And(archsimd.LoadUint32x16(&roundConsts[0]))
	return u.Add(archsimd.LoadUint32x16(&roundConsts[1])).Add(odd).And(archsimd.LoadUint32x16(&roundConsts[2]))
}

// roundConsts are roundHi16's 1, 0x7FFF and high-half mask on 16 lanes,
// and 16 as a per-lane shift count (ShiftAllRight by a constant takes its
// count through a legacy-SSE MOVQ as well).
var roundConsts = func() (c [4][16]uint32) {
	for i := range 16 {
		c[0][i], c[1][i], c[2][i], c[3][i] = 1, 0x7FFF, 0xFFFF0000, 16
	}
	return
}()

// interleave16 is lane j = bf16(lo[j]) | bf16(hi[j])<<16.
func interleave16(lo, hi archsimd.Float32x16) archsimd.Uint32x16 {
	return roundHi16(lo).ShiftRight(archsimd.LoadUint32x16(&roundConsts[3])).Or(roundHi16(hi))
}

// packRowPairs writes the kp pairs of one row of kb floats.
func packRowPairs(src []float32, kb int, dst []uint32) {
	if kb == 0 {
		return
	}
	src, dst = src[:kb], dst[:kp(kb)]
	cvtPairs(&dst[0], &src[0], kb)
}

func kp(kb int) int { return (kb + 1) / 2 }

// packBF16B packs the kb×w block of op(B) at (pc, j0), w ≤ 32, as a sliver.
func packBF16B(transB bool, b []float32, ldb, pc, j0, kb, w int, d []uint32) {
	kp := (kb + 1) / 2
	d = d[:kp*bfNR]
	if transB {
		// op(B)(p, j) = b[j·ldb + p]: row j of b holds column j's pairs.
		// Each half-sliver of 16 columns converts its rows into tmp, then
		// tmp is transposed 16×16 pairs at a time into the [kp][32] lanes.
		// tmp is pooled, not a local array: zeroing 16 KiB on every call
		// was a quarter of packing a 60-deep kᵀ sliver.
		stride := (kp + 15) &^ 15
		tp := bf16Bufs.get(16 * stride)
		defer bf16Bufs.put(tp)
		tmp := (*tp)[:16*stride]
		for jb := 0; jb < bfNR; jb += 16 {
			nj := max(0, min(16, w-jb))
			for jj := range nj {
				packRowPairs(b[(j0+jb+jj)*ldb+pc:], kb, tmp[jj*stride:])
			}
			clear(tmp[nj*stride:]) // missing columns are zero lanes
			// Pairs past kp in a row are left over from earlier use: they
			// transpose into rows that are never stored.
			for p0 := 0; p0 < kp; p0 += 16 {
				if kp-p0 >= 16 {
					transpose16x16(&d[p0*bfNR+jb], bfNR*4, &tmp[p0], uintptr(stride)*4)
					continue
				}
				var blk [256]uint32
				transpose16x16(&blk[0], 64, &tmp[p0], uintptr(stride)*4)
				for pp := range kp - p0 {
					copy(d[(p0+pp)*bfNR+jb:][:16], blk[pp*16:])
				}
			}
		}
		return
	}
	p0 := 0
	if w == bfNR && kb >= 2 {
		// Every complete pair of a full sliver in one assembly loop.
		full := kb / 2
		last := b[(pc+2*full-1)*ldb+j0:]
		_ = last[bfNR-1] // bounds: the last row read
		packBSliverPairs(&d[0], &b[pc*ldb+j0], uintptr(ldb)*4, full, &interleaveWords[0])
		p0 = full
	}
	for p := p0; p < kp; p++ {
		r0 := b[(pc+2*p)*ldb+j0:]
		var r1 []float32
		if 2*p+1 < kb {
			r1 = b[(pc+2*p+1)*ldb+j0:]
		}
		dst := d[p*bfNR : (p+1)*bfNR]
		if w == bfNR && r1 != nil {
			interleave16(archsimd.LoadFloat32x16Slice(r0), archsimd.LoadFloat32x16Slice(r1)).StoreSlice(dst)
			interleave16(archsimd.LoadFloat32x16Slice(r0[16:]), archsimd.LoadFloat32x16Slice(r1[16:])).StoreSlice(dst[16:])
			continue
		}
		// A short sliver or the odd last pair: masked loads, whose zero
		// lanes are the padding.
		for jb := 0; jb < bfNR; jb += 16 {
			n := max(0, min(16, w-jb))
			var lo, hi archsimd.Float32x16
			if n > 0 {
				lo = simdpart.Load16(r0[jb : jb+n])
				if r1 != nil {
					hi = simdpart.Load16(r1[jb : jb+n])
				}
			}
			interleave16(lo, hi).StoreSlice(dst[jb:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// packBF16A packs rows ic..ic+mb of op(A), k range pc..pc+kb, into 8-row
// panels (mb rounded up to 8; the extra rows are zeros). Returns the
// kernel's astep and arow.
func packBF16A(transA bool, a []float32, lda, ic, pc, mb, kb int, d []uint32) (astep, arow uintptr) {
	kp := (kb + 1) / 2
	panels := (mb + bfMR - 1) / bfMR
	d = d[:panels*bfMR*kp]
	if !transA {
		for r := range panels * bfMR {
			dst := d[r*kp : (r+1)*kp] // panel-major = row-major here
			if r >= mb {
				clear(dst)
				continue
			}
			packRowPairs(a[(ic+r)*lda+pc:], kb, dst)
		}
		return 4, uintptr(kp) * 4
	}
	// op(A)(r, p) = a[p·lda + r]: stored rows 2p and 2p+1 interleave
	// into the pairs of 16 consecutive r at a time.
	for p := range kp {
		r0 := a[(pc+2*p)*lda+ic:]
		r0 = r0[:mb]
		var r1 []float32
		if 2*p+1 < kb {
			r1 = a[(pc+2*p+1)*lda+ic:]
			r1 = r1[:mb]
		}
		r := 0
		if g := mb / 16; r1 != nil && g > 0 {
			_ = d[((2*g-1)*kp+p)*bfMR+bfMR-1] // bounds: the last panel written
			packATPairs(&d[p*bfMR], &r0[0], uintptr(lda)*4, g, uintptr(kp)*bfMR*4, &interleaveWords[0])
			r = 16 * g
		}
		packATTail(r0, r1, r, mb, panels, kp, p, d)
	}
	return bfMR * 4, 4
}

// packATTail packs pair p of op(A) = Aᵀ's rows r..: those after packATPairs'
// groups of 16 and the last panel's padding. Masked loads (zero lanes)
// take 16 rows at a time, each half going to its panel. Not inlined: in
// packBF16A's loop the compiler hoisted roundHi16's constants into a
// vector spill reloaded before the next packATPairs call (avxaudit).
//
//go:noinline
func packATTail(r0, r1 []float32, r, mb, panels, kp, p int, d []uint32) {
	for ; r < panels*bfMR; r += 16 {
		var lo, hi archsimd.Float32x16
		if n := max(0, min(16, mb-r)); n > 0 {
			lo = simdpart.Load16(r0[r : r+n])
			if r1 != nil {
				hi = simdpart.Load16(r1[r : r+n])
			}
		}
		v := interleave16(lo, hi)
		v.GetLo().StoreSlice(d[((r/bfMR)*kp+p)*bfMR:])
		if r+bfMR < panels*bfMR {
			v.GetHi().StoreSlice(d[((r/bfMR+1)*kp+p)*bfMR:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

var bf16Bufs = make(bufPool[uint32], 32)

// bfLayout is how a bf16 kernel reads op(B) (k×n) packed: column blocks
// of bfNC, then k blocks of kc, then 32-wide slivers of a k block's pairs
// ([pair][32] uint32, packBF16B's order), each sliver's pairs zero-padded
// to a multiple of pad (AMX tiles load 16 pairs at a time).
type bfLayout struct{ kc, pad int }

// The two kernels' layouts: VDPBF16PS reads a k block's pairs as they
// come; an AMX B tile loads 16 pairs. Their k blocks come from this CPU's
// caches (kBlocksFor).
var (
	dpbfLayout = bfLayout{pad: 1}
	amxLayout  = bfLayout{pad: 16}
)

// kBlocksFor is the k blocks the fp32, VDPBF16PS and AMX drivers take on
// caches of l1d and l2 bytes (kBlock). fp32: 256 on the Zen 4 and Zen 5
// (a B sliver is 32 KiB, an 8-row A panel 8 KiB), 384 on the Xeon's
// 48 KiB L1d. VDPBF16PS: 512 on all three. AMX: its 32-row A panel in
// half of L1d, not a quarter: the tiles hold C and each B sliver streams
// from L2 once per strip, so A is the one operand reread from L1 (once per
// sliver). 384 on the Xeon: BenchmarkAMXStrip runs the kernel alone at
// 3.2–3.3 TFLOP/s a core there against 2.2–3.1 at 192 (6 and 23 slivers,
// results/bench/xeon-amx-strip-20261127.txt), and attention's
// products over k = L = 201 keys take one block instead of 192 + 9
// (BenchmarkGemmKernels attnPV: 354 → 399 GFLOP/s, docs/performance.md).
// Where the CPU reports no cache sizes: 256,
// 512 and 384 (every AMX CPU so far has a 48 KiB L1d).
func kBlocksFor(l1d, l2 int) (fp32, bf16, amx int) {
	return kBlock(l1d, l2, asmNC, asmMR, 4, 256), kBlock(l1d, l2, bfNC, bfMR, 2, bfKCMax), kBlock(2*l1d, l2, bfNC, 32, 2, 384)
}

// setKBlocks gives the drivers the k blocks of caches of l1d and l2
// bytes: this CPU's from start-up, another class's in tests.
func setKBlocks(l1d, l2 int) {
	asmKC, dpbfLayout.kc, amxLayout.kc = kBlocksFor(l1d, l2)
	asmKCAT = kBlockAT(l1d, asmKC)
	kcL1 = kBlock(l1d, 1<<30, 1, asmMR, 4, asmKC)
	avx2KChunk = sliverChunk(l1d, asmNR*4)
	avx2GotoK = gotoDepth(l1d, (asmNR+tileFMA256.panelRows())*4) // a sliver and a panel of A a step
	asmL1D = l1d
}

// Set in a variable initialiser: it runs before every init function.
var _ = func() bool { setKBlocks(cpuInfo.L1D, cpuInfo.L2); return true }()

// bfDriver is a bf16 kernel's product on op(B) packed in its layout
// (bfCompute, amxCompute), and the rows of C that kernel computes at once
// (the row chunks of an M split are whole multiples of it).
type bfDriver struct {
	layout  bfLayout
	rows    int
	compute bfComputeFunc
}

// bfDriverFor is kernel kern's driver; ok false for the fp32 kernel, or
// AMX in a build without it.
func bfDriverFor(kern int32) (d bfDriver, ok bool) {
	switch kern {
	case bf16DPBF16:
		return bfDriver{dpbfLayout, bfMR, bfCompute}, true
	case bf16AMX:
		if amxCompute != nil {
			return bfDriver{amxLayout, 32, amxCompute}, true
		}
	}
	return bfDriver{}, false
}

// pairs is how many pairs a sliver of a kb-deep k block holds.
func (l bfLayout) pairs(kb int) int { return (kp(kb) + l.pad - 1) / l.pad * l.pad }

// colPairs is the pairs of all k blocks of one sliver column.
func (l bfLayout) colPairs(k int) int {
	n := k / l.kc * l.pairs(l.kc)
	if r := k % l.kc; r > 0 {
		n += l.pairs(r)
	}
	return n
}

// size is the packed op(B)'s length in pairs.
func (l bfLayout) size(n, k int) int { return (n + bfNR - 1) / bfNR * bfNR * l.colPairs(k) }

// slivers is how many slivers op(B) is packed in.
func (l bfLayout) slivers(n, k int) int { return sliverCount(n, k, l.kc, bfNR) }

// packSliver packs sliver u (sliverAt) into its place in dst. Column
// blocks before it are full (bfNC columns), and so are the k blocks
// before its own.
func (l bfLayout) packSliver(transB bool, b []float32, ldb, n, k, u int, dst []uint32) {
	s := sliverAt(u, n, k, l.kc, bfNC, bfNR)
	off := s.jc*l.colPairs(k) + s.pc/l.kc*l.pairs(l.kc)*s.sl*bfNR + s.js*l.pairs(s.kb)
	d := dst[off : off+l.pairs(s.kb)*bfNR]
	packBF16B(transB, b, ldb, s.pc, s.jc+s.js, s.kb, s.w, d)
	clear(d[kp(s.kb)*bfNR:])
}

// packRows is pack of op(B) = rows r0 … r0+k−1 of b (k×n, not
// transposed) from bf16 rows, on w workers: the same pairs pack makes
// from the float32 rows b was stored from, as BF16Rows.Store rounds them
// as the packing does. Each k block is read row pair by row pair across
// all its slivers (from float32 rows it is sliver by sliver, every row
// visited once per sliver, 1.5 KB apart), the pairs shared out over the
// workers.
func (l bfLayout) packRows(b *BF16Rows, r0, n, k int, dst []uint32, w int) {
	for jc := 0; jc < n; jc += bfNC {
		sl := (min(bfNC, n-jc) + bfNR - 1) / bfNR
		for pc := 0; pc < k; pc += l.kc {
			kb, pp := min(l.kc, k-pc), l.pairs(min(l.kc, k-pc))
			off := jc*l.colPairs(k) + pc/l.kc*l.pairs(l.kc)*sl*bfNR
			blk := dst[off : off+sl*pp*bfNR]
			if w <= 1 {
				packBF16BRows(b, r0+pc, jc, kb, sl, pp, 0, pp, blk)
				continue
			}
			ParallelFor(pp, 8, func(lo, hi int) { // the zero pairs past kp(kb) too
				packBF16BRows(b, r0+pc, jc, kb, sl, pp, lo, hi, blk)
			})
		}
	}
}

// packBF16BRows packs pairs p0 … p1−1 of the kb rows of b from row pc,
// columns j0 … j0+32·sl−1, as sl slivers of pairsPad pairs of rows each
// (zeros past kp(kb)): what packBF16B makes of the float32 rows, sliver
// by sliver. A last sliver narrower than 32 columns reads the rows' zero
// padding past b's columns (every row holds a multiple of 32 of them),
// which are its zero lanes; an odd last row pairs with zeros.
func packBF16BRows(b *BF16Rows, pc, j0, kb, sl, pairsPad, p0, p1 int, d []uint32) {
	kp, ld := kp(kb), 2*b.ld // ld: bf16 values per row
	v := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b.pairs))), 2*len(b.pairs))
	out := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
	lo, hi := archsimd.LoadUint16x32(&rowPairWords[0]), archsimd.LoadUint16x32(&rowPairWords[1])
	sliver := 2 * pairsPad * bfNR // one sliver's bf16 values
	for p := p0; p < min(p1, kp); p++ {
		r0 := v[(pc+2*p)*ld+j0:]
		var r1 []uint16
		if 2*p+1 < kb {
			r1 = v[(pc+2*p+1)*ld+j0:]
		}
		for s := range sl {
			x := archsimd.LoadUint16x32Slice(r0[s*bfNR:])
			var y archsimd.Uint16x32 // the odd last row's partner: zeros
			if r1 != nil {
				y = archsimd.LoadUint16x32Slice(r1[s*bfNR:])
			}
			o := out[s*sliver+p*2*bfNR:]
			x.ConcatPermute(y, lo).StoreSlice(o)
			x.ConcatPermute(y, hi).StoreSlice(o[bfNR:])
		}
	}
	archsimd.ClearAVXUpperBits()
	if z0 := max(p0, kp); z0 < p1 {
		for s := range sl {
			clear(d[(s*pairsPad+z0)*bfNR : (s*pairsPad+p1)*bfNR])
		}
	}
}

// rowPairWords are packBF16BRows's VPERMI2W indices: words 2j and 2j+1
// of the pairs of columns j (first) and 16+j (second) are word j of the
// first row and word j of the second (index 32+j).
var rowPairWords = func() (idx [2][32]uint16) {
	for h := range 2 {
		for j := range 16 {
			idx[h][2*j], idx[h][2*j+1] = uint16(16*h+j), uint16(32+16*h+j)
		}
	}
	return
}()

// pack packs all of op(B) on one core.
func (l bfLayout) pack(transB bool, b []float32, ldb, n, k int, dst []uint32) {
	for u := range l.slivers(n, k) {
		l.packSliver(transB, b, ldb, n, k, u, dst)
	}
}

// packParallel is pack with the slivers shared out over the workers.
func (l bfLayout) packParallel(transB bool, b []float32, ldb, n, k int, dst []uint32) {
	ParallelFor(l.slivers(n, k), 2, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			l.packSliver(transB, b, ldb, n, k, u, dst)
		}
	})
}

// serialBF16 is serialAsm's twin on bf16 driver d: same contract, one
// core; op(B) packed one k block at a time and used while that block is
// in L2.
func serialBF16(d bfDriver, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bp := bf16Bufs.get(d.layout.size(n, min(k, d.layout.kc)))
	forKBlocks(transA, transB, k, d.layout.kc, lda, ldb, beta, func(kb, aOff, bOff int, bet float32) {
		d.layout.pack(transB, b[bOff:], ldb, n, kb, *bp)
		d.compute(bfA{f: a[aOff:], ld: lda, trans: transA}, m, n, kb, alpha, *bp, bet, c, ldc)
	})
	bf16Bufs.put(bp)
}

// bfParallelM is asmParallelM on bf16 driver d: op(B) rounded and
// packed once, on all w workers, and shared by the row chunks. Packed per
// chunk, every worker rounded the whole weight matrix again.
func bfParallelM(d bfDriver, w int, a bfA, transB bool, m, n, k int, alpha float32, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bp := bf16Bufs.get(d.layout.size(n, k))
	if w > 1 {
		d.layout.packParallel(transB, b, ldb, n, k, *bp)
	} else {
		d.layout.pack(transB, b, ldb, n, k, *bp)
	}
	d.computeM(w, a, m, n, k, alpha, *bp, beta, c, ldc)
	bf16Bufs.put(bp)
}

// computeM is compute split over w workers in row chunks of whole
// multiples of d.rows (rowChunks), all reading the same packed op(B).
func (d bfDriver) computeM(w int, a bfA, m, n, k int, alpha float32, bp []uint32, beta float32, c []float32, ldc int) {
	if w <= 1 {
		d.compute(a, m, n, k, alpha, bp, beta, c, ldc)
		return
	}
	rowChunks(w, m, d.rows, func(i0, i1 int) {
		d.compute(a.from(i0), i1-i0, n, k, alpha, bp, beta, c[i0*ldc:], ldc)
	})
}

// packWeightBF16 is PackWeight's bf16 layout: op(B) = Wᵀ rounded and
// packed for the bf16 kernel products run on now (in dst's memory when it
// is large enough), and that kernel; nil when they run on none.
func packWeightBF16(dst []uint32, w []float32, n, k int) ([]uint32, int32) {
	kern := bf16KernelNow()
	d, ok := bfDriverFor(kern)
	if !ok {
		return nil, kern
	}
	bp := bufs.Resize(dst, d.layout.size(n, k))
	d.layout.packParallel(true, w, k, n, k, bp)
	return bp, kern
}

// gemmPackedBF16 is the M split over w workers on op(B) packed beforehand
// (PackWeight) for bf16 kernel kern, op(A) float32 or bf16 rows. False
// when products do not run on kern now.
func gemmPackedBF16(w int, kern int32, a bfA, m, n, k int, alpha float32, bp []uint32, beta float32, c []float32, ldc int) bool {
	d, ok := bfDriverFor(kern)
	if !ok || bf16KernelNow() != kern {
		return false
	}
	d.computeM(w, a, m, n, k, alpha, bp, beta, c, ldc)
	return true
}

// gemmRowsBF16 is GemmBF16Rows on the bf16 kernel in use: bfParallelM
// over a's rows. False when products run on no
// bf16 kernel now.
func gemmRowsBF16(a *BF16Rows, transB bool, n int, alpha float32, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	d, ok := bfDriverFor(bf16KernelNow())
	if !ok {
		return false
	}
	m, k := a.rows, a.cols
	bfParallelM(d, packedWorkers(m, n, k), a.operand(), transB, m, n, k, alpha, b, ldb, beta, c, ldc)
	return true
}

// roundRowPairs is BF16Rows.Store's row: packRowPairs with AVX-512,
// else the portable loop (BF16Rows is public, so it may be filled on any
// CPU even though only the bf16 products read it).
func roundRowPairs(src []float32, dst []uint32) {
	if !hasAVX512 {
		roundRowPairsGo(src, dst)
		return
	}
	packRowPairs(src, len(src), dst)
}

// bfCompute is C = alpha·op(A)·B + beta·C on VDPBF16PS, op(B) packed in
// its bfLayout. A float32 op(A) is rounded and packed once per k block
// and 128-row block, and reused by every sliver; BF16Rows are read in
// place (their rows are the packed panels' layout already).
func bfCompute(a bfA, m, n, k int, alpha float32, bpk []uint32, beta float32, c []float32, ldc int) {
	kc := dpbfLayout.kc
	abp, outp := bf16Bufs.get(bfMC*kc/2), asmBufs.get(256)
	abuf, out := *abp, (*[256]float32)(*outp)
	off := 0
	for jc := 0; jc < n; jc += bfNC {
		nb := min(bfNC, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			kp := kp(kb)
			bbuf := bpk[off:]
			off += (nb + bfNR - 1) / bfNR * bfNR * kp
			_ = bpk[off-1] // bounds: the block's slivers
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := 0; ic < m; ic += bfMC {
				mb := min(bfMC, m-ic)
				var astep, arow uintptr
				if a.rows == nil {
					astep, arow = packBF16A(a.trans, a.f, a.ld, ic, pc, mb, kb, abuf)
				} else {
					astep, arow = 4, uintptr(a.ld)*4
				}
				for i := ic; i < ic+mb; i += bfMR {
					rows := min(bfMR, m-i)
					var ap unsafe.Pointer
					if a.rows == nil {
						ap = unsafe.Pointer(&abuf[(i-ic)/bfMR*bfMR*kp])
					} else {
						ap = unsafe.Pointer(&a.rows[i*a.ld+pc/2])
					}
					tileDPBF16.panel(kp, ap, astep, arow, unsafe.Pointer(&bbuf[0]), c[i*ldc+jc:], ldc, rows, nb, alpha, bet, out)
				}
			}
		}
	}
	bf16Bufs.put(abp)
	asmBufs.put(outp)
}

// bf16Backend is the back end that runs products while precision is bf16:
// the avx512 driver, whose serial product switches to the bf16 kernel.
func bf16Backend() Backend {
	if !hasBF16 {
		return nil
	}
	return avx512Backend
}

// sgemmBF16 runs one single-core product on the chosen bf16 kernel;
// false: the kernel is the fp32 one (the caller goes on in float32).
func sgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	d, ok := bfDriverFor(bf16KernelNow())
	if !ok {
		return false
	}
	serialBF16(d, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return true
}

func kBlocks() (fp32, bf16, amx int) { return asmKC, dpbfLayout.kc, amxLayout.kc }

// kSplits is the k splits from the caches that fp32 products on backend
// make (Numerics; the bf16 kernel's is Kernel's KBlock).
func kSplits(backend string) []int {
	switch backend {
	case "avx512":
		return []int{asmKC, asmKCAT}
	case "avx2":
		return []int{asmKC, asmKCAT, avx2KChunk, avx2GotoK, kcL1}
	}
	return nil
}
