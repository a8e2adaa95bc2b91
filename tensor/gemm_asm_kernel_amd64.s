//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "tile8x32_amd64.h"

// FMA_LO: columns 0–15 of rows 0–7 (B in Z0, A broadcasts in Z2–Z9);
// FMA_HI: columns 16–31 (B in Z1); FMA_HI_Y: columns 16–23, on the ymm
// halves (B in Y1), whose upper lanes stay zero. FMA_LO4/FMA_HI4 and
// FMA_LO1/FMA_HI1 are the same for rows 0–3 and row 0.
#define FMA_LO1 \
	VFMADD231PS Z2, Z0, Z16

#define FMA_LO4 \
	FMA_LO1; \
	VFMADD231PS Z3, Z0, Z18; \
	VFMADD231PS Z4, Z0, Z20; \
	VFMADD231PS Z5, Z0, Z22

#define FMA_LO \
	FMA_LO4; \
	VFMADD231PS Z6, Z0, Z24; \
	VFMADD231PS Z7, Z0, Z26; \
	VFMADD231PS Z8, Z0, Z28; \
	VFMADD231PS Z9, Z0, Z30

#define FMA_HI1 \
	VFMADD231PS Z2, Z1, Z17

#define FMA_HI4 \
	FMA_HI1; \
	VFMADD231PS Z3, Z1, Z19; \
	VFMADD231PS Z4, Z1, Z21; \
	VFMADD231PS Z5, Z1, Z23

#define FMA_HI \
	FMA_HI4; \
	VFMADD231PS Z6, Z1, Z25; \
	VFMADD231PS Z7, Z1, Z27; \
	VFMADD231PS Z8, Z1, Z29; \
	VFMADD231PS Z9, Z1, Z31

#define FMA_HI_Y \
	VFMADD231PS Y2, Y1, Y17; \
	VFMADD231PS Y3, Y1, Y19; \
	VFMADD231PS Y4, Y1, Y21; \
	VFMADD231PS Y5, Y1, Y23; \
	VFMADD231PS Y6, Y1, Y25; \
	VFMADD231PS Y7, Y1, Y27; \
	VFMADD231PS Y8, Y1, Y29; \
	VFMADD231PS Y9, Y1, Y31

// FMA_STEP is one k step: B's two vectors, eight A broadcasts, 16 FMAs.
#define FMA_STEP \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A(VBROADCASTSS); \
	FMA_LO; \
	FMA_HI; \
	TILE_ADVANCE

// FMA_STEP4 and FMA_STEP1 are FMA_STEP for rows 0–3 and row 0 alone.
#define FMA_STEP4 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A4(VBROADCASTSS); \
	FMA_LO4; \
	FMA_HI4; \
	TILE_ADVANCE1

#define FMA_STEP1 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A1(VBROADCASTSS); \
	FMA_LO1; \
	FMA_HI1; \
	TILE_ADVANCE1

// FMA_STEP_24 is FMA_STEP for tiles of at most 24 columns: columns 16–23
// on ymm halves. On a CPU that splits zmm work into two 256-bit halves
// (Zen 4) a ymm FMA costs half a zmm one, so 24 columns cost 3/4 of 32;
// elsewhere the same.
#define FMA_STEP_24 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Y1; \
	TILE_BROADCAST_A(VBROADCASTSS); \
	FMA_LO; \
	FMA_HI_Y; \
	TILE_ADVANCE

// FMA_STEP_16 is FMA_STEP for tiles of at most 16 columns: half the
// multiply-adds, the column 16–31 accumulators left at zero.
#define FMA_STEP_16 \
	VMOVUPS (DI), Z0; \
	TILE_BROADCAST_A(VBROADCASTSS); \
	FMA_LO; \
	TILE_ADVANCE

// func fma8x32(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, out *[256]float32)
//
// out[r*32+j] = Σ_p A(r,p)·B(p,j) over `steps` k steps in float32. A row r's
// current element is at a + r·arow, advancing astep bytes per step; B is a
// packed 32-wide sliver (128 bytes per step). 8×32 tile: 16 accumulators
// (Z16–Z31), 2 B vectors (Z0, Z1), 8 broadcasts (Z2–Z9): twice the rows of
// the archsimd kernel, which the Go compiler's register allocation limits
// to 4×32 (see gemm_simd_kernel_amd64.go). X15 is left alone.
TEXT ·fma8x32(SB), NOSPLIT, $0-48
	TILE_KERNEL_OUT(FMA_STEP)

// func fma8x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32 storing the tile's first cols columns (1–32) of all 8 rows
// straight into C (rows ldcb&^(1<<63) bytes apart): C = acc when bit 63
// of ldcb is clear (beta 0), C += acc when set (beta 1). alpha must be 1;
// other cases, and tiles of fewer rows, use fma8x32.
TEXT ·fma8x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(FMA_STEP)

// func fma8x24c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32c for a last sliver of 17–24 columns (n = 180 leaves 20): the
// same B sliver layout (128 bytes per step), of which it reads 96.
TEXT ·fma8x24c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(FMA_STEP_24)

// func fma8x16c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32c for a last sliver of 1–16 columns (n = 720 leaves 16, 201
// leaves 9): half the work, reading 64 of the sliver's 128 bytes a step.
TEXT ·fma8x16c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(FMA_STEP_16)

// func fma4x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32c for the first 4 rows only: a short last panel (m = 180 and
// 540 leave 4 rows) costs half an 8-row tile, and A's rows 4–7 are not
// read, so they need not exist.
TEXT ·fma4x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C_ROWS(FMA_STEP4, TILE_ROWS4)

// func fma1x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32c for the first row only (m = 201 leaves 1 row). Its two
// accumulators wait on the multiply-add latency, so a step costs about a
// quarter of an 8-row one rather than an eighth.
TEXT ·fma1x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C_ROWS(FMA_STEP1, TILE_ROWS1)
