//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "tile8x32_amd64.h"

// The AVX2 (VEX, 16 ymm registers) fp32 tiles of the assembly driver, for
// CPUs without AVX-512 (AMD Zen 1–3, Intel Haswell to the client cores):
// 3, 2 or 1 rows × 32 columns on the same packed 32-wide B slivers as
// fma8x32c, a 6-row panel cut 3+3 (panelRows), 2 and 1 rows only at the
// end of C. The archsimd 4×16 kernel they replace
// is limited by the Go compiler to 8 accumulators and a register move per
// FMA; these keep 12 (3 rows × 4 ymm) in Y0–Y11, row r's A broadcast in
// Y12+r and the current B vector in Y15, so each step is 12 FMAs on 7 loads.
// X15 is free here: the compiler zeroes it again after calling ABI0 code.
//
//	func k(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr)
//
// C(r, j) = Σ_p A(r,p)·B(p,j) for the tile's rows and all 32 columns, A row
// r's current element at a + r·arow advancing astep bytes per step, B a
// packed sliver (128 bytes per step); C's rows ldcb&^(1<<63) bytes apart,
// C = tile when bit 63 of ldcb is clear, C += tile when set. The driver
// gives partial-column tiles a scratch C (out) and stores them itself.

// AVX2_PROLOGUE loads the arguments and the A row pointers (TILE_ARGS),
// and zeroes the accumulators.
#define AVX2_PROLOGUE \
	TILE_ARGS; \
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
	VXORPS Y11, Y11, Y11

// AVX2_STEP1: one k step of 1 row.
#define AVX2_STEP1 \
	VBROADCASTSS (SI), Y12; \
	VMOVUPS 0(DI), Y15; \
	VFMADD231PS Y15, Y12, Y0; \
	VMOVUPS 32(DI), Y15; \
	VFMADD231PS Y15, Y12, Y1; \
	VMOVUPS 64(DI), Y15; \
	VFMADD231PS Y15, Y12, Y2; \
	VMOVUPS 96(DI), Y15; \
	VFMADD231PS Y15, Y12, Y3; \
	ADDQ $128, DI; \
	ADDQ DX, SI; \
	DECQ CX

// AVX2_STEP2: one k step of 2 rows.
#define AVX2_STEP2 \
	VBROADCASTSS (SI), Y12; \
	VBROADCASTSS (AX), Y13; \
	VMOVUPS 0(DI), Y15; \
	VFMADD231PS Y15, Y12, Y0; \
	VFMADD231PS Y15, Y13, Y4; \
	VMOVUPS 32(DI), Y15; \
	VFMADD231PS Y15, Y12, Y1; \
	VFMADD231PS Y15, Y13, Y5; \
	VMOVUPS 64(DI), Y15; \
	VFMADD231PS Y15, Y12, Y2; \
	VFMADD231PS Y15, Y13, Y6; \
	VMOVUPS 96(DI), Y15; \
	VFMADD231PS Y15, Y12, Y3; \
	VFMADD231PS Y15, Y13, Y7; \
	ADDQ $128, DI; \
	ADDQ DX, SI; \
	ADDQ DX, AX; \
	DECQ CX

// AVX2_STEP3: one k step of 3 rows.
#define AVX2_STEP3 \
	VBROADCASTSS (SI), Y12; \
	VBROADCASTSS (AX), Y13; \
	VBROADCASTSS (BX), Y14; \
	VMOVUPS 0(DI), Y15; \
	VFMADD231PS Y15, Y12, Y0; \
	VFMADD231PS Y15, Y13, Y4; \
	VFMADD231PS Y15, Y14, Y8; \
	VMOVUPS 32(DI), Y15; \
	VFMADD231PS Y15, Y12, Y1; \
	VFMADD231PS Y15, Y13, Y5; \
	VFMADD231PS Y15, Y14, Y9; \
	VMOVUPS 64(DI), Y15; \
	VFMADD231PS Y15, Y12, Y2; \
	VFMADD231PS Y15, Y13, Y6; \
	VFMADD231PS Y15, Y14, Y10; \
	VMOVUPS 96(DI), Y15; \
	VFMADD231PS Y15, Y12, Y3; \
	VFMADD231PS Y15, Y13, Y7; \
	VFMADD231PS Y15, Y14, Y11; \
	ADDQ $128, DI; \
	ADDQ DX, SI; \
	ADDQ DX, AX; \
	ADDQ DX, BX; \
	DECQ CX

// AVX2_ROW stores one tile row into C at DI and moves DI R13 bytes on;
// AVX2_ADD_ROW adds C's row to it first.
#define AVX2_ROW(y0, y1, y2, y3) \
	VMOVUPS y0, (DI); \
	VMOVUPS y1, 32(DI); \
	VMOVUPS y2, 64(DI); \
	VMOVUPS y3, 96(DI); \
	ADDQ R13, DI

#define AVX2_ADD_ROW(y0, y1, y2, y3) \
	VADDPS (DI), y0, y0; \
	VADDPS 32(DI), y1, y1; \
	VADDPS 64(DI), y2, y2; \
	VADDPS 96(DI), y3, y3; \
	AVX2_ROW(y0, y1, y2, y3)

#define AVX2_ROWS1(row) \
	row(Y0, Y1, Y2, Y3)

#define AVX2_ROWS2(row) \
	AVX2_ROWS1(row); \
	row(Y4, Y5, Y6, Y7)

#define AVX2_ROWS3(row) \
	AVX2_ROWS2(row); \
	row(Y8, Y9, Y10, Y11)

// AVX2_KERNEL(step, tilerows) is a whole kernel: the k loop, then C = tile
// or C += tile on the rows tilerows names.
#define AVX2_KERNEL(step, tilerows) \
	AVX2_PROLOGUE; \
loop: \
	step; \
	JNZ  loop; \
	MOVQ c+40(FP), DI; \
	MOVQ ldcb+48(FP), R13; \
	BTRQ $63, R13; \
	JCS  accum; \
	tilerows(AVX2_ROW); \
	VZEROUPPER; \
	RET; \
accum: \
	tilerows(AVX2_ADD_ROW); \
	VZEROUPPER; \
	RET

// func fma3x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr)
TEXT ·fma3x32v(SB), NOSPLIT, $0-56
	AVX2_KERNEL(AVX2_STEP3, AVX2_ROWS3)

// func fma2x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr)
TEXT ·fma2x32v(SB), NOSPLIT, $0-56
	AVX2_KERNEL(AVX2_STEP2, AVX2_ROWS2)

// func fma1x32v(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr)
TEXT ·fma1x32v(SB), NOSPLIT, $0-56
	AVX2_KERNEL(AVX2_STEP1, AVX2_ROWS1)
