//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "tile8x32_amd64.h"

// DPBF16_LO: columns 0–15 of rows 0–7, one VDPBF16PS each (B pairs in
// Z0, A pair broadcasts in Z2–Z9); DPBF16_HI: columns 16–31 (B in Z1);
// DPBF16_HI_Y: columns 16–23 on the ymm halves (B in Y1); the …4 and …1
// forms: rows 0–3 and row 0. The Go assembler has no VDPBF16PS mnemonic,
// so the instructions are bytes, from GNU as:
//
//	DPBF16_LO    vdpbf16ps zmm2…zmm9, zmm0, zmm16, zmm18 … zmm30
//	DPBF16_HI    vdpbf16ps zmm2…zmm9, zmm1, zmm17, zmm19 … zmm31
//	DPBF16_HI_Y  vdpbf16ps ymm2…ymm9, ymm1, ymm17, ymm19 … ymm31
//
// (row r: r/m = Z2+r, destination Z16+2r or Z17+2r; the ymm forms differ
// from the zmm ones in EVEX.L'L, byte 4: 0x48 → 0x28, as
// "62 e2 76 28 52 ca" = vdpbf16ps ymm2, ymm1, ymm17).
#define DPBF16_LO1 \
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc2

#define DPBF16_LO4 \
	DPBF16_LO1; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd3; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe4; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf5

#define DPBF16_LO \
	DPBF16_LO4; \
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc6; \
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd7; \
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe0; \
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf1

#define DPBF16_HI1 \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xca

#define DPBF16_HI4 \
	DPBF16_HI1; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdb; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xec; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xfd

#define DPBF16_HI \
	DPBF16_HI4; \
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xce; \
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdf; \
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xe8; \
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xf9

#define DPBF16_HI_Y \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xca; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xdb; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xec; \
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xfd; \
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xce; \
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xdf; \
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xe8; \
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x28; BYTE $0x52; BYTE $0xf9

// DPBF16_STEP is one k pair: B's two vectors, eight A pair broadcasts, 16
// VDPBF16PS.
#define DPBF16_STEP \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A(VPBROADCASTD); \
	DPBF16_LO; \
	DPBF16_HI; \
	TILE_ADVANCE

// DPBF16_STEP4 and DPBF16_STEP1 are DPBF16_STEP for rows 0–3 and row 0.
#define DPBF16_STEP4 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A4(VPBROADCASTD); \
	DPBF16_LO4; \
	DPBF16_HI4; \
	TILE_ADVANCE1

#define DPBF16_STEP1 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	TILE_BROADCAST_A1(VPBROADCASTD); \
	DPBF16_LO1; \
	DPBF16_HI1; \
	TILE_ADVANCE1

// DPBF16_STEP_24 and DPBF16_STEP_16 are DPBF16_STEP for tiles of at most
// 24 and 16 columns, as FMA_STEP_24 and FMA_STEP_16.
#define DPBF16_STEP_24 \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Y1; \
	TILE_BROADCAST_A(VPBROADCASTD); \
	DPBF16_LO; \
	DPBF16_HI_Y; \
	TILE_ADVANCE

#define DPBF16_STEP_16 \
	VMOVUPS (DI), Z0; \
	TILE_BROADCAST_A(VPBROADCASTD); \
	DPBF16_LO; \
	TILE_ADVANCE

// func dpbf16x8x32(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, out *[256]float32)
//
// out[r*32+j] = Σ_p A(r,p)·B(p,j) over `steps` k pairs, bf16 operands and
// float32 accumulation (VDPBF16PS, AVX512_BF16). A row r's current pair is
// the uint32 at a + r·arow, advancing astep bytes per pair; B is a packed
// sliver of 32 uint32 lanes (128 bytes) per pair. Accumulators Z16–Z31
// (row r: Z16+2r, Z17+2r), B in Z0/Z1, A broadcasts Z2–Z9; X15 untouched.
// The Go assembler has no VDPBF16PS mnemonic, so the instructions are
// spelled as bytes (encodings from GNU as, listed at DPBF16_LO).
TEXT ·dpbf16x8x32(SB), NOSPLIT, $0-48
	TILE_KERNEL_OUT(DPBF16_STEP)

// func dpbf16x8x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// dpbf16x8x32 storing the tile's first cols columns straight into C, as
// fma8x32c.
TEXT ·dpbf16x8x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(DPBF16_STEP)

// func dpbf16x8x24c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// dpbf16x8x32c for a last sliver of 17–24 columns (fma8x24c).
TEXT ·dpbf16x8x24c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(DPBF16_STEP_24)

// func dpbf16x8x16c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// dpbf16x8x32c for a last sliver of 1–16 columns (fma8x16c).
TEXT ·dpbf16x8x16c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C(DPBF16_STEP_16)

// func dpbf16x4x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// dpbf16x8x32c for the first 4 rows only, as fma4x32c.
TEXT ·dpbf16x4x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C_ROWS(DPBF16_STEP4, TILE_ROWS4)

// func dpbf16x1x32c(steps int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr, cols int)
//
// dpbf16x8x32c for the first row only, as fma1x32c.
TEXT ·dpbf16x1x32c(SB), NOSPLIT, $0-64
	TILE_KERNEL_C_ROWS(DPBF16_STEP1, TILE_ROWS1)

// func cvtPairs(dst *uint32, src *float32, n int)
//
// n consecutive floats → (n+1)/2 bf16 pairs (the lower k index in the low
// half; for odd n the last pair's high half is zero), rounded to nearest
// even by VCVTNE2PS2BF16: one instruction per 32 floats where the
// archsimd version needs ~12. Its lower 16 words come from the r/m
// operand (Z2 = floats 0–15), the upper 16 from vvvv (Z1 = floats 16–31),
// so word i is float i. The last n mod 32 floats go through masked loads
// (zero lanes past n; masked-off lanes never fault) and a masked store of
// the pairs' words, so a row of any length is one call and nothing past
// dst[(n+1)/2-1] is written.
TEXT ·cvtPairs(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	CMPQ CX, $32
	JLT  cvttail

cvtloop:
	VMOVUPS (SI), Z2
	VMOVUPS 64(SI), Z1
	// vcvtne2ps2bf16 zmm0, zmm1, zmm2
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xc2
	VMOVUPS Z0, (DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JGE  cvtloop

cvttail:
	TESTQ CX, CX
	JZ   cvtdone
	// K1/K2: floats 0–15 and 16–31 of the (1<<n)-1 load mask.
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	SHRL $16, AX
	KMOVW AX, K2
	VMOVUPS.Z (SI), K1, Z2
	VMOVUPS.Z 64(SI), K2, Z1
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xc2
	// K3: the 2·((n+1)/2) words of whole pairs (n < 32, so ≤ 32 bits).
	INCL CX
	ANDL $~1, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVD AX, K3
	VMOVDQU16 Z0, K3, (DI)

cvtdone:
	VZEROUPPER
	RET

// Two rows r0, r1 (ldb bytes apart) of 16 floats → 16 uint32 lanes
// bf16(r0[j]) | bf16(r1[j])<<16: VCVTNE2PS2BF16 puts r0's 16 words below
// r1's, and VPERMW with idx (Z3: 0,16,1,17,…) interleaves them.
#define CVT_INTERLEAVE(off) \
	VMOVUPS off(SI), Z2;; \
	VMOVUPS off(SI)(DX*1), Z1;; \
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xc2;; \
	BYTE $0x62; BYTE $0xf2; BYTE $0xe5; BYTE $0x48; BYTE $0x8d; BYTE $0xc0

// func packBSliverPairs(dst *uint32, src *float32, ldb uintptr, kp int, idx *uint16)
//
// A full 32-wide B sliver, kp complete k pairs: pair p reads rows 2p and
// 2p+1 (src + 2p·ldb bytes) and writes dst[p·32 : p·32+32]. Rounding is
// VCVTNE2PS2BF16's (nearest even, as bf16Bits, denormals flushed).
TEXT ·packBSliverPairs(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), DX
	MOVQ kp+24(FP), CX
	MOVQ idx+32(FP), AX
	VMOVDQU16 (AX), Z3
	LEAQ (DX)(DX*1), R8
	TESTQ CX, CX
	JZ   bsdone

bsloop:
	CVT_INTERLEAVE(0)
	VMOVDQU32 Z0, (DI)
	CVT_INTERLEAVE(64)
	VMOVDQU32 Z0, 64(DI)
	ADDQ R8, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  bsloop

bsdone:
	VZEROUPPER
	RET

// func packATPairs(dst *uint32, src *float32, lda uintptr, groups int, panel uintptr, idx *uint16)
//
// One k pair of a transposed A: rows r0 = src, r1 = src + lda bytes hold
// 16·groups consecutive output rows. Group g's 16 lanes split into two
// 8-row panels: the low 8 at dst + 2g·panel bytes, the high 8 at
// dst + (2g+1)·panel (panel = kp·32 bytes, the caller adds p·32).
TEXT ·packATPairs(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lda+16(FP), DX
	MOVQ groups+24(FP), CX
	MOVQ panel+32(FP), R9
	MOVQ idx+40(FP), AX
	VMOVDQU16 (AX), Z3
	LEAQ (R9)(R9*1), R8
	TESTQ CX, CX
	JZ   atdone

atloop:
	CVT_INTERLEAVE(0)
	VMOVDQU32 Y0, (DI)
	// vextracti32x8 ymm4, zmm0, 1
	BYTE $0x62; BYTE $0xf3; BYTE $0x7d; BYTE $0x48; BYTE $0x3b; BYTE $0xc4; BYTE $0x01
	VMOVDQU32 Y4, (DI)(R9*1)
	ADDQ $64, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  atloop

atdone:
	VZEROUPPER
	RET

// TRANSPOSE_LANES stores the 4×4 transpose of the 128-bit lanes of X, Y,
// Z, W as four rows: row L (at DI + L·R9) = lane L of X, Y, Z and W.
#define TRANSPOSE_LANES(X, Y, Z, W) \
	VSHUFI32X4 $0x44, Y, X, Z16; \
	VSHUFI32X4 $0xEE, Y, X, Z17; \
	VSHUFI32X4 $0x44, W, Z, Z18; \
	VSHUFI32X4 $0xEE, W, Z, Z19; \
	VSHUFI32X4 $0x88, Z18, Z16, Z20; \
	VSHUFI32X4 $0xDD, Z18, Z16, Z21; \
	VSHUFI32X4 $0x88, Z19, Z17, Z22; \
	VSHUFI32X4 $0xDD, Z19, Z17, Z23; \
	MOVQ DI, AX; \
	VMOVDQU32 Z20, (AX); \
	ADDQ R9, AX; \
	VMOVDQU32 Z21, (AX); \
	ADDQ R9, AX; \
	VMOVDQU32 Z22, (AX); \
	ADDQ R9, AX; \
	VMOVDQU32 Z23, (AX)

// func transpose16x16(dst *uint32, dstStride uintptr, src *uint32, srcStride uintptr)
//
// dst row i, column j = src row j, column i, for a 16×16 block of 32-bit
// values (rows strides bytes apart), all in registers: 16 loads, 64
// shuffles in three stages (dwords and then qwords within 128-bit lanes,
// then 128-bit lanes across rows four apart), 16 stores. Written in
// assembly because Go keeps a [16]Uint32x16 array in memory: the archsimd
// transpose16 before it loaded and stored every row at every stage.
TEXT ·transpose16x16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), DX
	VMOVDQU32 (SI), Z0
	ADDQ DX, SI
	VMOVDQU32 (SI), Z1
	ADDQ DX, SI
	VMOVDQU32 (SI), Z2
	ADDQ DX, SI
	VMOVDQU32 (SI), Z3
	ADDQ DX, SI
	VMOVDQU32 (SI), Z4
	ADDQ DX, SI
	VMOVDQU32 (SI), Z5
	ADDQ DX, SI
	VMOVDQU32 (SI), Z6
	ADDQ DX, SI
	VMOVDQU32 (SI), Z7
	ADDQ DX, SI
	VMOVDQU32 (SI), Z8
	ADDQ DX, SI
	VMOVDQU32 (SI), Z9
	ADDQ DX, SI
	VMOVDQU32 (SI), Z10
	ADDQ DX, SI
	VMOVDQU32 (SI), Z11
	ADDQ DX, SI
	VMOVDQU32 (SI), Z12
	ADDQ DX, SI
	VMOVDQU32 (SI), Z13
	ADDQ DX, SI
	VMOVDQU32 (SI), Z14
	ADDQ DX, SI
	VMOVDQU32 (SI), Z15
	// Stage 1: t(2i), t(2i+1) = dwords of rows 2i and 2i+1 interleaved, low and high halves of each lane.
	VPUNPCKLDQ Z1, Z0, Z16
	VPUNPCKHDQ Z1, Z0, Z17
	VPUNPCKLDQ Z3, Z2, Z18
	VPUNPCKHDQ Z3, Z2, Z19
	VPUNPCKLDQ Z5, Z4, Z20
	VPUNPCKHDQ Z5, Z4, Z21
	VPUNPCKLDQ Z7, Z6, Z22
	VPUNPCKHDQ Z7, Z6, Z23
	VPUNPCKLDQ Z9, Z8, Z24
	VPUNPCKHDQ Z9, Z8, Z25
	VPUNPCKLDQ Z11, Z10, Z26
	VPUNPCKHDQ Z11, Z10, Z27
	VPUNPCKLDQ Z13, Z12, Z28
	VPUNPCKHDQ Z13, Z12, Z29
	VPUNPCKLDQ Z15, Z14, Z30
	VPUNPCKHDQ Z15, Z14, Z31
	// Stage 2: per group g of four rows, Z(4g+j) lane L = column 4L+j of rows 4g…4g+3.
	VPUNPCKLQDQ Z18, Z16, Z0
	VPUNPCKHQDQ Z18, Z16, Z1
	VPUNPCKLQDQ Z19, Z17, Z2
	VPUNPCKHQDQ Z19, Z17, Z3
	VPUNPCKLQDQ Z22, Z20, Z4
	VPUNPCKHQDQ Z22, Z20, Z5
	VPUNPCKLQDQ Z23, Z21, Z6
	VPUNPCKHQDQ Z23, Z21, Z7
	VPUNPCKLQDQ Z26, Z24, Z8
	VPUNPCKHQDQ Z26, Z24, Z9
	VPUNPCKLQDQ Z27, Z25, Z10
	VPUNPCKHQDQ Z27, Z25, Z11
	VPUNPCKLQDQ Z30, Z28, Z12
	VPUNPCKHQDQ Z30, Z28, Z13
	VPUNPCKLQDQ Z31, Z29, Z14
	VPUNPCKHQDQ Z31, Z29, Z15
	// Stage 3: for column j of each lane, rows j, 4+j, 8+j and 12+j of the result are
	// lane L of Z(j), Z(4+j), Z(8+j), Z(12+j) side by side (TRANSPOSE_LANES).
	MOVQ R8, R9
	SHLQ $2, R9
	TRANSPOSE_LANES(Z0, Z4, Z8, Z12)
	ADDQ R8, DI
	TRANSPOSE_LANES(Z1, Z5, Z9, Z13)
	ADDQ R8, DI
	TRANSPOSE_LANES(Z2, Z6, Z10, Z14)
	ADDQ R8, DI
	TRANSPOSE_LANES(Z3, Z7, Z11, Z15)
	VZEROUPPER
	RET
