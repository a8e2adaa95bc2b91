//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "tile8x32_amd64.h"

// FMA_STEP is one k step: B's two vectors, eight A broadcasts, 16 FMAs.
#define FMA_STEP \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	VBROADCASTSS (SI), Z2; \
	VBROADCASTSS (AX), Z3; \
	VBROADCASTSS (BX), Z4; \
	VBROADCASTSS (R8), Z5; \
	VBROADCASTSS (R9), Z6; \
	VBROADCASTSS (R10), Z7; \
	VBROADCASTSS (R11), Z8; \
	VBROADCASTSS (R12), Z9; \
	VFMADD231PS Z2, Z0, Z16; \
	VFMADD231PS Z2, Z1, Z17; \
	VFMADD231PS Z3, Z0, Z18; \
	VFMADD231PS Z3, Z1, Z19; \
	VFMADD231PS Z4, Z0, Z20; \
	VFMADD231PS Z4, Z1, Z21; \
	VFMADD231PS Z5, Z0, Z22; \
	VFMADD231PS Z5, Z1, Z23; \
	VFMADD231PS Z6, Z0, Z24; \
	VFMADD231PS Z6, Z1, Z25; \
	VFMADD231PS Z7, Z0, Z26; \
	VFMADD231PS Z7, Z1, Z27; \
	VFMADD231PS Z8, Z0, Z28; \
	VFMADD231PS Z8, Z1, Z29; \
	VFMADD231PS Z9, Z0, Z30; \
	VFMADD231PS Z9, Z1, Z31; \
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
	TILE_PROLOGUE

loop:
	FMA_STEP
	JNZ  loop
	TILE_STORE_OUT
	VZEROUPPER
	RET

// func fma8x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// fma8x32 storing the tile's first cols columns (1–32) of all 8 rows
// straight into C (rows ldcb&^(1<<63) bytes apart): C = acc when bit 63
// of ldcb is clear (beta 0), C += acc when set (beta 1). alpha must be 1;
// other cases, and tiles of fewer rows, use fma8x32.
TEXT ·fma8x32c(SB), NOSPLIT, $0-64
	TILE_PROLOGUE

loop:
	FMA_STEP
	JNZ  loop
	TILE_C_EPILOGUE
