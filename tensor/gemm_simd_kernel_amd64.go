//go:build goexperiment.simd && amd64

package tensor

// Register-blocked micro-kernels on simd/archsimd.
//
// Shape of the tile is dictated by the Go compiler rather than the ISA:
//   - values live across a loop back edge (the accumulators) only get
//     X0–X14, 15 registers, even with AVX-512's 32 available;
//   - the scheduler hoists every load of the loop body to its top, so all
//     broadcast A values of one k step are live at once;
//   - MulAdd is VFMADD213 (x = x*y + z): the accumulator can only be z, so
//     each FMA costs a register move, which lengthens the dependency chain.
// So the budget is acc + B vectors + broadcasts <= 15. 4 rows × 2 vectors
// (8 accumulators, 2 B loads, 4 broadcasts = 14) is the largest tile that
// does not spill; 8 independent chains hide the 4-cycle FMA latency. On the
// Zen 4 test box (1 zmm FMA/cycle) it runs at ~106 GFLOP/s per core in L1,
// ~90% of peak. 3×48 or 6×16 spill and drop to 30–60.
//
// Both kernels read A unpacked through four row pointers that advance by
// csA bytes per k step (csA=4 for row-major A, lda*4 for transposed A), so
// op(A) is never copied. B is read in place when its rows are contiguous
// (rsB = ldb*4) and from nr-wide packed slivers otherwise (rsB = nr*4).
// Loops are written as "body; if last break; advance" so no pointer is ever
// formed past the end of its slice: the GC may scan it at a preemption.

import (
	"simd/archsimd"
	"unsafe"
)

// A kernel computes the rows×cols tile C = alpha·Σ_p A[r,p]·Bp[p,:] + beta·C
// (beta==0: C is not read). a0..a3 point at A[r,0] and step csA bytes per
// k; rows<4 repeat a0. bp points at the first nr-wide row of B, the next
// one rsB bytes on. Everything needed only after the k loop sits behind
// the *tile pointer: a float argument would pin a vector register through
// the loop and make the accumulators spill.

// tile is where a micro-kernel's result goes: c is C from the tile's
// top-left corner. scale and accum (alpha ≠ 1, beta ≠ 0) are decided by
// the driver: a float compare after the vector loop would be a legacy-SSE
// UCOMISS in dirty upper state (avxsse_amd64_test.go).
type tile struct {
	c            []float32
	ldc          int
	alpha, beta  float32
	rows, cols   int
	scale, accum bool
}

func newTile(c []float32, ldc int, alpha, beta float32, rows, cols int) tile {
	return tile{c, ldc, alpha, beta, rows, cols, alpha != 1, beta != 0}
}

func ld16(p unsafe.Pointer) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16((*[16]float32)(p))
}

func bc16(p unsafe.Pointer) archsimd.Float32x16 {
	return archsimd.BroadcastFloat32x16(*(*float32)(p))
}

// kernel4x32 is the AVX-512 tile: 4 rows × 32 columns.
func kernel4x32(kc int, a0, a1, a2, a3 unsafe.Pointer, csA uintptr, bp unsafe.Pointer, rsB uintptr, t *tile) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float32x16
	for n := kc; ; {
		b0, b1 := ld16(bp), ld16(unsafe.Add(bp, 64))
		x := bc16(a0)
		c00 = x.MulAdd(b0, c00)
		c01 = x.MulAdd(b1, c01)
		x = bc16(a1)
		c10 = x.MulAdd(b0, c10)
		c11 = x.MulAdd(b1, c11)
		x = bc16(a2)
		c20 = x.MulAdd(b0, c20)
		c21 = x.MulAdd(b1, c21)
		x = bc16(a3)
		c30 = x.MulAdd(b0, c30)
		c31 = x.MulAdd(b1, c31)
		if n--; n == 0 {
			break
		}
		a0, a1, a2, a3 = unsafe.Add(a0, csA), unsafe.Add(a1, csA), unsafe.Add(a2, csA), unsafe.Add(a3, csA)
		bp = unsafe.Add(bp, rsB)
	}
	if t.cols < 32 {
		var e [4][32]float32
		c00.Store((*[16]float32)(e[0][:16]))
		c01.Store((*[16]float32)(e[0][16:]))
		c10.Store((*[16]float32)(e[1][:16]))
		c11.Store((*[16]float32)(e[1][16:]))
		c20.Store((*[16]float32)(e[2][:16]))
		c21.Store((*[16]float32)(e[2][16:]))
		c30.Store((*[16]float32)(e[3][:16]))
		c31.Store((*[16]float32)(e[3][16:]))
		archsimd.ClearAVXUpperBits()
		for r := range t.rows {
			storeEdge(t.c[r*t.ldc:r*t.ldc+t.cols], e[r][:t.cols], t.alpha, t.beta)
		}
		return
	}
	va, vb := archsimd.BroadcastFloat32x16(t.alpha), archsimd.BroadcastFloat32x16(t.beta)
	c, ldc, rows, scale, accum := t.c, t.ldc, t.rows, t.scale, t.accum
	store16x2(c[:32], c00, c01, va, vb, scale, accum)
	if rows > 1 {
		store16x2(c[ldc:ldc+32], c10, c11, va, vb, scale, accum)
	}
	if rows > 2 {
		store16x2(c[2*ldc:2*ldc+32], c20, c21, va, vb, scale, accum)
	}
	if rows > 3 {
		store16x2(c[3*ldc:3*ldc+32], c30, c31, va, vb, scale, accum)
	}
	archsimd.ClearAVXUpperBits()
}

// store16x2 writes one full tile row: row = alpha·(lo|hi) + beta·row.
func store16x2(row []float32, lo, hi, va, vb archsimd.Float32x16, scale, accum bool) {
	if scale {
		lo, hi = lo.Mul(va), hi.Mul(va)
	}
	if accum {
		lo = archsimd.LoadFloat32x16Slice(row).MulAdd(vb, lo)
		hi = archsimd.LoadFloat32x16Slice(row[16:]).MulAdd(vb, hi)
	}
	lo.StoreSlice(row)
	hi.StoreSlice(row[16:])
}

// storeEdge is row = alpha·t + beta·row for clipped tiles, in scalar code
// after the kernel has cleared the upper state (beta 0: row not read).
func storeEdge(row, t []float32, alpha, beta float32) {
	for j := range row {
		v := alpha * t[j]
		if beta != 0 {
			v += beta * row[j]
		}
		row[j] = v
	}
}

func ld8(p unsafe.Pointer) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8((*[8]float32)(p))
}

func bc8(p unsafe.Pointer) archsimd.Float32x8 {
	return archsimd.BroadcastFloat32x8(*(*float32)(p))
}

// kernel4x16 is the AVX2+FMA tile: 4 rows × 16 columns, same register
// budget as kernel4x32 with half-width vectors.
func kernel4x16(kc int, a0, a1, a2, a3 unsafe.Pointer, csA uintptr, bp unsafe.Pointer, rsB uintptr, t *tile) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float32x8
	for n := kc; ; {
		b0, b1 := ld8(bp), ld8(unsafe.Add(bp, 32))
		x := bc8(a0)
		c00 = x.MulAdd(b0, c00)
		c01 = x.MulAdd(b1, c01)
		x = bc8(a1)
		c10 = x.MulAdd(b0, c10)
		c11 = x.MulAdd(b1, c11)
		x = bc8(a2)
		c20 = x.MulAdd(b0, c20)
		c21 = x.MulAdd(b1, c21)
		x = bc8(a3)
		c30 = x.MulAdd(b0, c30)
		c31 = x.MulAdd(b1, c31)
		if n--; n == 0 {
			break
		}
		a0, a1, a2, a3 = unsafe.Add(a0, csA), unsafe.Add(a1, csA), unsafe.Add(a2, csA), unsafe.Add(a3, csA)
		bp = unsafe.Add(bp, rsB)
	}
	if t.cols < 16 {
		var e [4][16]float32
		c00.Store((*[8]float32)(e[0][:8]))
		c01.Store((*[8]float32)(e[0][8:]))
		c10.Store((*[8]float32)(e[1][:8]))
		c11.Store((*[8]float32)(e[1][8:]))
		c20.Store((*[8]float32)(e[2][:8]))
		c21.Store((*[8]float32)(e[2][8:]))
		c30.Store((*[8]float32)(e[3][:8]))
		c31.Store((*[8]float32)(e[3][8:]))
		archsimd.ClearAVXUpperBits()
		for r := range t.rows {
			storeEdge(t.c[r*t.ldc:r*t.ldc+t.cols], e[r][:t.cols], t.alpha, t.beta)
		}
		return
	}
	va, vb := archsimd.BroadcastFloat32x8(t.alpha), archsimd.BroadcastFloat32x8(t.beta)
	c, ldc, rows, scale, accum := t.c, t.ldc, t.rows, t.scale, t.accum
	store8x2(c[:16], c00, c01, va, vb, scale, accum)
	if rows > 1 {
		store8x2(c[ldc:ldc+16], c10, c11, va, vb, scale, accum)
	}
	if rows > 2 {
		store8x2(c[2*ldc:2*ldc+16], c20, c21, va, vb, scale, accum)
	}
	if rows > 3 {
		store8x2(c[3*ldc:3*ldc+16], c30, c31, va, vb, scale, accum)
	}
	archsimd.ClearAVXUpperBits()
}

func store8x2(row []float32, lo, hi, va, vb archsimd.Float32x8, scale, accum bool) {
	if scale {
		lo, hi = lo.Mul(va), hi.Mul(va)
	}
	if accum {
		lo = archsimd.LoadFloat32x8Slice(row).MulAdd(vb, lo)
		hi = archsimd.LoadFloat32x8Slice(row[8:]).MulAdd(vb, hi)
	}
	lo.StoreSlice(row)
	hi.StoreSlice(row[8:])
}
