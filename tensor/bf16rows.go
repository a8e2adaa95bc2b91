package tensor

import (
	"fmt"
	"math"
)

// BF16Rows is a float32 matrix rounded to bf16 (to nearest even, as the
// bf16 products round their operands) and stored the way those products
// read op(A): row-major, two columns to a uint32 (the even column in the
// low half).
//
// A bf16 product rounds and packs its float32 A again on every call. A
// layer whose output feeds a product directly (RMSNorm before the q|k|v
// and first MLP projections, SiLU before the second) stores it here as
// well, row by row while each row is still in cache (nn.RMSNormForwardBF16,
// nn.SiLUForwardBF16), and the product reads it in place (GemmBF16Rows,
// GemmPackedBF16Rows). The result is the same to the bit: the rounding and
// the kernel are the same.
//
// Rows are padded to a multiple of 32 and each row's pairs to a multiple
// of 16 with zeros, so both bf16 kernels (VDPBF16PS on 8-row panels, AMX
// on 32-row tiles of 16 pairs) read it with no edge case. The padding
// rows' contents are never used for a stored result.
type BF16Rows struct {
	pairs      []uint32
	rows, cols int
	ld         int // pairs per row
}

// Resize makes b a rows×cols matrix, reusing its storage when it is large
// enough. The contents are undefined until stored.
func (b *BF16Rows) Resize(rows, cols int) {
	if rows < 0 || cols <= 0 {
		panic(fmt.Sprintf("tensor.BF16Rows.Resize: %d×%d", rows, cols))
	}
	ld := ((cols+1)/2 + 15) &^ 15
	need := (rows + 31) &^ 31 * ld // BF16RowsBytes/4
	if cap(b.pairs) < need {
		b.pairs = make([]uint32, need)
	}
	b.pairs = b.pairs[:need]
	b.rows, b.cols, b.ld = rows, cols, ld
}

// Bytes is the memory b holds (its capacity, padding included).
func (b *BF16Rows) Bytes() int64 { return 4 * int64(cap(b.pairs)) }

// BF16RowsBytes is the memory a rows×cols BF16Rows takes when first sized
// so: rows padded to a multiple of 32, each row's pairs to one of 16.
func BF16RowsBytes(rows, cols int) int64 {
	return 4 * int64((rows+31)&^31) * int64(((cols+1)/2+15)&^15)
}

// Shape is the matrix's rows and columns.
func (b *BF16Rows) Shape() (rows, cols int) { return b.rows, b.cols }

// Store rounds rows r0 ≤ r < r0+rows of the matrix from src, which holds
// them from its start with row stride ld.
func (b *BF16Rows) Store(r0, rows int, src []float32, ld int) {
	if r0 < 0 || rows < 0 || r0+rows > b.rows || ld < b.cols || (rows > 0 && len(src) < (rows-1)*ld+b.cols) {
		panic(fmt.Sprintf("tensor.BF16Rows.Store: rows [%d, %d) of %d×%d from %d values, stride %d", r0, r0+rows, b.rows, b.cols, len(src), ld))
	}
	n := (b.cols + 1) / 2
	for r := range rows {
		dst := b.pairs[(r0+r)*b.ld : (r0+r+1)*b.ld]
		roundRowPairs(src[r*ld:r*ld+b.cols], dst[:n])
		clear(dst[n:])
	}
}

// CopyRows copies src's rows into rows r0 ≤ r < r0+rows of b, where src
// has as many columns as b: a product's operand rounded for a group of
// rows, kept with the other groups' for the backward pass.
func (b *BF16Rows) CopyRows(r0 int, src *BF16Rows) {
	if src.cols != b.cols || r0 < 0 || r0+src.rows > b.rows {
		panic(fmt.Sprintf("tensor.BF16Rows.CopyRows: %d×%d into rows [%d, %d) of %d×%d", src.rows, src.cols, r0, r0+src.rows, b.rows, b.cols))
	}
	copy(b.pairs[r0*b.ld:(r0+src.rows)*b.ld], src.pairs[:src.rows*src.ld])
}

// operand is b as the bf16 drivers read op(A).
func (b *BF16Rows) operand() bfA { return bfA{rows: b.pairs, ld: b.ld} }

// StoreCols rounds columns c0 ≤ j < c0+n of rows r0 ≤ r < r0+rows from
// src, which holds them from its start with row stride ld, leaving the
// other columns as they are: a layer that makes each row in parts
// (attention, a head at a time, the heads on several cores) stores each
// part as it is made. c0 is even and so is n unless the part ends the
// row, so no pair is shared by two parts; the part that ends a row clears
// the row's padding.
func (b *BF16Rows) StoreCols(r0, rows, c0, n int, src []float32, ld int) {
	if r0 < 0 || rows < 0 || r0+rows > b.rows || c0 < 0 || n <= 0 || c0+n > b.cols || c0%2 != 0 || (n%2 != 0 && c0+n != b.cols) ||
		ld < n || (rows > 0 && len(src) < (rows-1)*ld+n) {
		panic(fmt.Sprintf("tensor.BF16Rows.StoreCols: rows [%d, %d), columns [%d, %d) of %d×%d from %d values, stride %d",
			r0, r0+rows, c0, c0+n, b.rows, b.cols, len(src), ld))
	}
	p0, p1 := c0/2, (c0+n+1)/2
	for r := range rows {
		dst := b.pairs[(r0+r)*b.ld : (r0+r+1)*b.ld]
		roundRowPairs(src[r*ld:r*ld+n], dst[p0:p1])
		if c0+n == b.cols {
			clear(dst[p1:])
		}
	}
}

// Widen writes rows r0 ≤ r < r0+rows widened back to float32 into dst,
// [rows, cols]: the values a product reads.
func (b *BF16Rows) Widen(dst []float32, r0, rows int) {
	if r0 < 0 || rows < 0 || r0+rows > b.rows || len(dst) < rows*b.cols {
		panic(fmt.Sprintf("tensor.BF16Rows.Widen: rows [%d, %d) of %d×%d into %d values", r0, r0+rows, b.rows, b.cols, len(dst)))
	}
	for r := range rows {
		src := b.pairs[(r0+r)*b.ld:]
		for j := range b.cols {
			dst[r*b.cols+j] = math.Float32frombits((src[j/2] >> (16 * (j & 1))) << 16)
		}
	}
}

// Float32 is the matrix widened back to float32, [rows, cols].
func (b *BF16Rows) Float32() []float32 {
	out := make([]float32, b.rows*b.cols)
	b.Widen(out, 0, b.rows)
	return out
}

// BF16Operands reports whether float32 products now run on a bf16 kernel
// (precision bf16 on a CPU with one), so that a layer may hand them its
// output as BF16Rows.
func BF16Operands() bool { return bf16KernelNow() != bf16OnFP32 }

// GemmBF16Rows computes C = alpha·A·op(B) + beta·C, A m×k given as bf16
// rows, op(B) k×n (B n×k when transB, row stride ldb), C m×n (row
// stride ldc): Gemm(false, transB, …) with A rounded ahead by its
// producer. It runs on the bf16 kernel products run on now; where they
// run on none (BF16Operands false), on A widened back to float32.
func GemmBF16Rows(a *BF16Rows, transB bool, n int, alpha float32, b []float32, ldb int, beta float32, c []float32, ldc int) {
	m, k := a.rows, a.cols
	checkGemm("GemmBF16Rows", false, transB, m, n, k, m*k, k, len(b), ldb, len(c), ldc)
	switch {
	case m == 0 || n == 0:
	case alpha == 0:
		scaleC(m, n, beta, c, ldc)
	case !gemmRowsBF16(a, transB, n, alpha, b, ldb, beta, c, ldc):
		Gemm(false, transB, m, n, k, alpha, a.Float32(), k, b, ldb, beta, c, ldc)
	}
}

// GemmPackedSerialBF16Rows is GemmPackedSerial with A given as rows r0 …
// r0+m−1 of a, on one core: C = alpha·A·Wᵀ + beta·C, read in place on the
// bf16 kernel W was packed for, the same bits as GemmPackedSerial on the
// float32 rows a was stored from (that product rounds them as Store did);
// on those rows widened back where products run on another kernel now.
// A training pass that keeps a block's product inputs in bf16 runs its
// chunks of rows through it (model's rowTail).
func GemmPackedSerialBF16Rows(a *BF16Rows, r0, m int, alpha float32, w *PackedWeight[float32], beta float32, c []float32, ldc int) {
	k, n := a.cols, w.out
	if w.in != k || r0 < 0 || m < 0 || r0+m > a.rows {
		panic(fmt.Sprintf("tensor.GemmPackedSerialBF16Rows: rows [%d, %d) of %d×%d against W [%d, %d]", r0, r0+m, a.rows, a.cols, w.out, w.in))
	}
	checkGemm("GemmPackedSerialBF16Rows", false, true, m, n, k, m*k, k, len(w.w), k, len(c), ldc)
	switch {
	case m == 0:
	case alpha == 0:
		scaleC(m, n, beta, c, ldc)
	case w.packedBF != nil && gemmPackedBF16(1, w.bfKernel, bfA{rows: a.pairs[r0*a.ld:], ld: a.ld}, m, n, k, alpha, w.packedBF, beta, c, ldc):
		// done on W's packing
	default:
		rows := BF16Rows{pairs: a.pairs[r0*a.ld:], rows: m, cols: k, ld: a.ld}
		GemmPackedSerial(m, alpha, rows.Float32(), k, w, beta, c, ldc)
	}
}

// GemmPackedBF16Rows is GemmPacked with A given as bf16 rows: C =
// alpha·A·Wᵀ + beta·C, reading W's bf16 packing when it was made for the
// kernel in use.
func GemmPackedBF16Rows(a *BF16Rows, alpha float32, w *PackedWeight[float32], beta float32, c []float32, ldc int) {
	m, k := a.rows, a.cols
	n := w.out
	if w.in != k {
		panic(fmt.Sprintf("tensor.GemmPackedBF16Rows: A has %d columns, W [%d, %d]", k, w.out, w.in))
	}
	checkGemm("GemmPackedBF16Rows", false, true, m, n, k, m*k, k, len(w.w), k, len(c), ldc)
	switch {
	case m == 0:
	case alpha == 0:
		scaleC(m, n, beta, c, ldc)
	case w.packedBF != nil && gemmPackedBF16(packedWorkers(m, n, k), w.bfKernel, a.operand(), m, n, k, alpha, w.packedBF, beta, c, ldc):
		// done on W's packing
	case !gemmRowsBF16(a, true, n, alpha, w.w, k, beta, c, ldc):
		Gemm(false, true, m, n, k, alpha, a.Float32(), k, w.w, k, beta, c, ldc)
	}
}

// roundRowPairsGo rounds a row into bf16 pairs (the last one's high half
// zero when the row is odd): roundRowPairs where there is no vector path.
func roundRowPairsGo(src []float32, dst []uint32) {
	for p := range dst {
		v := math.Float32bits(RoundBF16(src[2*p])) >> 16
		if 2*p+1 < len(src) {
			v |= math.Float32bits(RoundBF16(src[2*p+1])) &^ 0xFFFF
		}
		dst[p] = v
	}
}
