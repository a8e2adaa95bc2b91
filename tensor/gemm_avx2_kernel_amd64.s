//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "tile8x32_amd64.h"

// The AVX2 (VEX, 16 ymm registers) fp32 tiles of the assembly driver, for
// CPUs without AVX-512 (AMD Zen 1–3, Intel Haswell to the client cores):
// R = 3, 2 or 1 rows × V = 4, 3, 2 or 1 vectors of 8 columns, on the same
// packed 32-wide B slivers as fma8x32c. A 6-row panel is cut 3+3
// (panelRows), 2 and 1 rows only at the end of C; V < 4 only on a last
// sliver narrower than 32 columns. The archsimd 4×16 kernel they replace
// is limited by the Go compiler to 8 accumulators and a register move per
// FMA; these keep up to 12 (3 rows × 4 ymm) in Y0–Y11, row r's A broadcast
// in Y12+r and the current B vector in Y15, so a 3×32 step is 12 FMAs on 7
// loads. X15 is free here: the compiler zeroes it again after calling ABI0
// code.
//
//	func fmaRx(8V)v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb, last uintptr)
//
// C(r, j) = Σ_p A(r,p)·B(p,j) for the tile's rows and columns, A row r's
// current element at a + r·arow advancing astep bytes per step, B a packed
// sliver (128 bytes per step); C's rows ldcb&^(1<<63) bytes apart, C =
// tile when bit 63 of ldcb is clear, C += tile when set.
//
// Vectors 0 … V−2 are columns 0 … 8(V−1)−1; the last vector is the eight
// columns from byte offset last, in the sliver and in C alike. A tile of w
// columns (8 ≤ w ≤ 32) passes last = 4(w−8): its last vector overlaps the
// one before it instead of running past column w, so it is stored into C
// whole, without masks or scratch. Where two vectors overlap they hold the
// same sums (the same FMAs in the same order), and every row's loads of C
// come before its stores, so C += tile adds once.

// AVX2_BCASTR: broadcast the current A element of rows 0 … R−1.
// The k loop runs two steps an iteration (the loop's pointer updates and
// branch once per two steps: 20 instructions per 12 FMAs instead of 24);
// AVX2_BCASTR_2 broadcasts the second step's elements, astep (DX) further.
#define AVX2_BCAST1 \
	VBROADCASTSS (SI), Y12

#define AVX2_BCAST2 \
	AVX2_BCAST1; \
	VBROADCASTSS (AX), Y13

#define AVX2_BCAST3 \
	AVX2_BCAST2; \
	VBROADCASTSS (BX), Y14

#define AVX2_BCAST1_2 \
	VBROADCASTSS (SI)(DX*1), Y12

#define AVX2_BCAST2_2 \
	AVX2_BCAST1_2; \
	VBROADCASTSS (AX)(DX*1), Y13

#define AVX2_BCAST3_2 \
	AVX2_BCAST2_2; \
	VBROADCASTSS (BX)(DX*1), Y14

// AVX2_FMAR(src, a0, a1, a2): load the B vector at src, add its products
// with rows 0 … R−1 to accumulators a0 … a(R−1).
#define AVX2_FMA1(src, a0, a1, a2) \
	VMOVUPS src, Y15; \
	VFMADD231PS Y15, Y12, a0

#define AVX2_FMA2(src, a0, a1, a2) \
	AVX2_FMA1(src, a0, a1, a2); \
	VFMADD231PS Y15, Y13, a1

#define AVX2_FMA3(src, a0, a1, a2) \
	AVX2_FMA2(src, a0, a1, a2); \
	VFMADD231PS Y15, Y14, a2

// AVX2_VECSV(fma): the V vectors of one k step; vector v of row r
// accumulates in Y(4r+v). AVX2_VECSV_2(fma): the same for the second step
// of an iteration, its B vectors 128 bytes on (R11 = last + 128).
// AVX2_VECSV_AT(fma, o, last) is either: vectors 0 … V−2 at o, o+32 …
// bytes from DI, the last at DI + last.
#define AVX2_VECS1_AT(fma, o, last) \
	fma((DI)(last*1), Y0, Y4, Y8)

#define AVX2_VECS2_AT(fma, o, last) \
	fma(o(DI), Y0, Y4, Y8); \
	fma((DI)(last*1), Y1, Y5, Y9)

#define AVX2_VECS3_AT(fma, o, last) \
	fma(o(DI), Y0, Y4, Y8); \
	fma(o+32(DI), Y1, Y5, Y9); \
	fma((DI)(last*1), Y2, Y6, Y10)

#define AVX2_VECS4_AT(fma, o, last) \
	fma(o(DI), Y0, Y4, Y8); \
	fma(o+32(DI), Y1, Y5, Y9); \
	fma(o+64(DI), Y2, Y6, Y10); \
	fma((DI)(last*1), Y3, Y7, Y11)

#define AVX2_VECS1(fma) AVX2_VECS1_AT(fma, 0, R12)
#define AVX2_VECS2(fma) AVX2_VECS2_AT(fma, 0, R12)
#define AVX2_VECS3(fma) AVX2_VECS3_AT(fma, 0, R12)
#define AVX2_VECS4(fma) AVX2_VECS4_AT(fma, 0, R12)
#define AVX2_VECS1_2(fma) AVX2_VECS1_AT(fma, 128, R11)
#define AVX2_VECS2_2(fma) AVX2_VECS2_AT(fma, 128, R11)
#define AVX2_VECS3_2(fma) AVX2_VECS3_AT(fma, 128, R11)
#define AVX2_VECS4_2(fma) AVX2_VECS4_AT(fma, 128, R11)

// AVX2_ADVR_2: on two k steps (R10 = 2·astep; DECQ last: the loop
// branches on it).
#define AVX2_ADV1_2 \
	ADDQ $256, DI; \
	ADDQ R10, SI; \
	DECQ CX

#define AVX2_ADV2_2 \
	ADDQ $256, DI; \
	ADDQ R10, SI; \
	ADDQ R10, AX; \
	DECQ CX

#define AVX2_ADV3_2 \
	ADDQ $256, DI; \
	ADDQ R10, SI; \
	ADDQ R10, AX; \
	ADDQ R10, BX; \
	DECQ CX

// AVX2_ROWV(op, y0, y1, y2, y3): op(register, memory) on the V vectors of
// one row of C at DI (the accumulators past V are not touched).
#define AVX2_ST(y, m) VMOVUPS y, m
#define AVX2_AD(y, m) VADDPS m, y, y

#define AVX2_ROW1(op, y0, y1, y2, y3) \
	op(y0, (DI)(R12*1))

#define AVX2_ROW2(op, y0, y1, y2, y3) \
	op(y0, 0(DI)); \
	op(y1, (DI)(R12*1))

#define AVX2_ROW3(op, y0, y1, y2, y3) \
	op(y0, 0(DI)); \
	op(y1, 32(DI)); \
	op(y2, (DI)(R12*1))

#define AVX2_ROW4(op, y0, y1, y2, y3) \
	op(y0, 0(DI)); \
	op(y1, 32(DI)); \
	op(y2, 64(DI)); \
	op(y3, (DI)(R12*1))

// AVX2_STORE and AVX2_ADD write one row (C = tile, C += tile) and move DI
// R13 bytes on to the next; AVX2_ADD loads the whole row before it stores
// any of it (see the overlap above).
#define AVX2_STORE(rowv, y0, y1, y2, y3) \
	rowv(AVX2_ST, y0, y1, y2, y3); \
	ADDQ R13, DI

#define AVX2_ADD(rowv, y0, y1, y2, y3) \
	rowv(AVX2_AD, y0, y1, y2, y3); \
	rowv(AVX2_ST, y0, y1, y2, y3); \
	ADDQ R13, DI

#define AVX2_ROWS1(how, rowv) \
	how(rowv, Y0, Y1, Y2, Y3)

#define AVX2_ROWS2(how, rowv) \
	AVX2_ROWS1(how, rowv); \
	how(rowv, Y4, Y5, Y6, Y7)

#define AVX2_ROWS3(how, rowv) \
	AVX2_ROWS2(how, rowv); \
	how(rowv, Y8, Y9, Y10, Y11)

// AVX2_PF(rowv, …) prefetches the row of C at R8 (first, second and last
// byte of the tile's columns) and moves R8 R9 bytes on to the next row.
#define AVX2_PF(rowv, y0, y1, y2, y3) \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	PREFETCHT0 28(R8)(R12*1); \
	ADDQ R9, R8

// AVX2_KERNEL(bcast, bcast2, fma, adv2, vecs, vecs2, rows, rowv) is a
// whole kernel: the arguments (TILE_ARGS, last in R12), a prefetch of the
// tile's rows of C, zeroed accumulators, the k loop two steps an
// iteration and an odd last step after it (the same FMAs in the same
// order as one step an iteration, so the same bits), then C = tile or
// C += tile.
//
// The prefetch: a product with k > asmKC adds each k block onto C, which
// the block before left in memory (a C of 6400×180 floats is 4.6 MB), so
// without it each tile's loads of C wait for DRAM at the end of the tile.
// Issued first, they arrive while the k loop runs.
#define AVX2_KERNEL(bcast, bcast2, fma, adv2, vecs, vecs2, rows, rowv) \
	TILE_ARGS; \
	MOVQ last+56(FP), R12; \
	MOVQ c+40(FP), R8; \
	MOVQ ldcb+48(FP), R9; \
	BTRQ $63, R9; \
	rows(AVX2_PF, rowv); \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	LEAQ 128(R12), R11; \
	LEAQ (DX)(DX*1), R10; \
	SHRQ $1, CX; \
	JZ   tail; \
loop: \
	bcast; \
	vecs(fma); \
	bcast2; \
	vecs2(fma); \
	adv2; \
	JNZ  loop; \
tail: \
	TESTB $1, steps+0(FP); \
	JZ   stored; \
	bcast; \
	vecs(fma); \
stored: \
	MOVQ c+40(FP), DI; \
	MOVQ ldcb+48(FP), R13; \
	BTRQ $63, R13; \
	JCS  accum; \
	rows(AVX2_STORE, rowv); \
	VZEROUPPER; \
	RET; \
accum: \
	rows(AVX2_ADD, rowv); \
	VZEROUPPER; \
	RET

TEXT ·fma3x32v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST3, AVX2_BCAST3_2, AVX2_FMA3, AVX2_ADV3_2, AVX2_VECS4, AVX2_VECS4_2, AVX2_ROWS3, AVX2_ROW4)

TEXT ·fma3x24v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST3, AVX2_BCAST3_2, AVX2_FMA3, AVX2_ADV3_2, AVX2_VECS3, AVX2_VECS3_2, AVX2_ROWS3, AVX2_ROW3)

TEXT ·fma3x16v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST3, AVX2_BCAST3_2, AVX2_FMA3, AVX2_ADV3_2, AVX2_VECS2, AVX2_VECS2_2, AVX2_ROWS3, AVX2_ROW2)

TEXT ·fma3x8v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST3, AVX2_BCAST3_2, AVX2_FMA3, AVX2_ADV3_2, AVX2_VECS1, AVX2_VECS1_2, AVX2_ROWS3, AVX2_ROW1)

TEXT ·fma2x32v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST2, AVX2_BCAST2_2, AVX2_FMA2, AVX2_ADV2_2, AVX2_VECS4, AVX2_VECS4_2, AVX2_ROWS2, AVX2_ROW4)

TEXT ·fma2x24v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST2, AVX2_BCAST2_2, AVX2_FMA2, AVX2_ADV2_2, AVX2_VECS3, AVX2_VECS3_2, AVX2_ROWS2, AVX2_ROW3)

TEXT ·fma2x16v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST2, AVX2_BCAST2_2, AVX2_FMA2, AVX2_ADV2_2, AVX2_VECS2, AVX2_VECS2_2, AVX2_ROWS2, AVX2_ROW2)

TEXT ·fma2x8v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST2, AVX2_BCAST2_2, AVX2_FMA2, AVX2_ADV2_2, AVX2_VECS1, AVX2_VECS1_2, AVX2_ROWS2, AVX2_ROW1)

TEXT ·fma1x32v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST1, AVX2_BCAST1_2, AVX2_FMA1, AVX2_ADV1_2, AVX2_VECS4, AVX2_VECS4_2, AVX2_ROWS1, AVX2_ROW4)

TEXT ·fma1x24v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST1, AVX2_BCAST1_2, AVX2_FMA1, AVX2_ADV1_2, AVX2_VECS3, AVX2_VECS3_2, AVX2_ROWS1, AVX2_ROW3)

TEXT ·fma1x16v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST1, AVX2_BCAST1_2, AVX2_FMA1, AVX2_ADV1_2, AVX2_VECS2, AVX2_VECS2_2, AVX2_ROWS1, AVX2_ROW2)

TEXT ·fma1x8v(SB), NOSPLIT, $0-64
	AVX2_KERNEL(AVX2_BCAST1, AVX2_BCAST1_2, AVX2_FMA1, AVX2_ADV1_2, AVX2_VECS1, AVX2_VECS1_2, AVX2_ROWS1, AVX2_ROW1)

// prefetchRows prefetches into L2 each 64-byte line of rows runs of
// rowBytes (> 0) bytes, stride bytes apart, from p; the last byte of each
// run too, for a run that does not start on a line. No AVX: any amd64.
//
// func prefetchRows(p unsafe.Pointer, rows int, stride, rowBytes uintptr)
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ rows+8(FP), CX
	MOVQ stride+16(FP), DX
	MOVQ rowBytes+24(FP), BX
	TESTQ CX, CX
	JLE  done
row:
	XORQ AX, AX
line:
	PREFETCHT1 (SI)(AX*1)
	ADDQ $64, AX
	CMPQ AX, BX
	JLT  line
	PREFETCHT1 -1(SI)(BX*1)
	ADDQ DX, SI
	DECQ CX
	JNZ  row
done:
	RET
