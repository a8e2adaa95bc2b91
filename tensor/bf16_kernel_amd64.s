//go:build goexperiment.simd && amd64

#include "textflag.h"

// func dpbf16x8x32(kp int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, out *[256]float32)
//
// out[r*32+j] = Σ_p A(r,p)·B(p,j) over kp k-pairs, bf16 operands and
// float32 accumulation (VDPBF16PS, AVX512_BF16). A row r's current pair is
// the uint32 at a + r·arow, advancing astep bytes per pair; B is a packed
// sliver of 32 uint32 lanes (128 bytes) per pair. Accumulators Z16–Z31
// (row r: Z16+2r, Z17+2r), B in Z0/Z1, A broadcasts Z2–Z9; X15 untouched.
// The Go assembler has no VDPBF16PS mnemonic, so the instructions are
// spelled as bytes (encodings from GNU as, shown above each).
TEXT ·dpbf16x8x32(SB), NOSPLIT, $0-48
	MOVQ kp+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ astep+16(FP), DX
	MOVQ arow+24(FP), R13
	MOVQ b+32(FP), DI
	LEAQ (SI)(R13*1), AX
	LEAQ (AX)(R13*1), BX
	LEAQ (BX)(R13*1), R8
	LEAQ (R8)(R13*1), R9
	LEAQ (R9)(R13*1), R10
	LEAQ (R10)(R13*1), R11
	LEAQ (R11)(R13*1), R12
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

loop:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VPBROADCASTD (SI), Z2
	VPBROADCASTD (AX), Z3
	VPBROADCASTD (BX), Z4
	VPBROADCASTD (R8), Z5
	VPBROADCASTD (R9), Z6
	VPBROADCASTD (R10), Z7
	VPBROADCASTD (R11), Z8
	VPBROADCASTD (R12), Z9
	// vdpbf16ps zmm2, zmm0, zmm16
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc2
	// vdpbf16ps zmm2, zmm1, zmm17
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xca
	// vdpbf16ps zmm3, zmm0, zmm18
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd3
	// vdpbf16ps zmm3, zmm1, zmm19
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdb
	// vdpbf16ps zmm4, zmm0, zmm20
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe4
	// vdpbf16ps zmm4, zmm1, zmm21
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xec
	// vdpbf16ps zmm5, zmm0, zmm22
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf5
	// vdpbf16ps zmm5, zmm1, zmm23
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xfd
	// vdpbf16ps zmm6, zmm0, zmm24
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc6
	// vdpbf16ps zmm6, zmm1, zmm25
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xce
	// vdpbf16ps zmm7, zmm0, zmm26
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd7
	// vdpbf16ps zmm7, zmm1, zmm27
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdf
	// vdpbf16ps zmm8, zmm0, zmm28
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe0
	// vdpbf16ps zmm8, zmm1, zmm29
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xe8
	// vdpbf16ps zmm9, zmm0, zmm30
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf1
	// vdpbf16ps zmm9, zmm1, zmm31
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xf9
	ADDQ $128, DI
	ADDQ DX, SI
	ADDQ DX, AX
	ADDQ DX, BX
	ADDQ DX, R8
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	ADDQ DX, R12
	DECQ CX
	JNZ  loop

	MOVQ out+40(FP), DI
	VMOVUPS Z16, 0(DI)
	VMOVUPS Z17, 64(DI)
	VMOVUPS Z18, 128(DI)
	VMOVUPS Z19, 192(DI)
	VMOVUPS Z20, 256(DI)
	VMOVUPS Z21, 320(DI)
	VMOVUPS Z22, 384(DI)
	VMOVUPS Z23, 448(DI)
	VMOVUPS Z24, 512(DI)
	VMOVUPS Z25, 576(DI)
	VMOVUPS Z26, 640(DI)
	VMOVUPS Z27, 704(DI)
	VMOVUPS Z28, 768(DI)
	VMOVUPS Z29, 832(DI)
	VMOVUPS Z30, 896(DI)
	VMOVUPS Z31, 960(DI)
	VZEROUPPER
	RET

// func dpbf16x8x32c(kp int, a unsafe.Pointer, astep, arow uintptr, b unsafe.Pointer, c unsafe.Pointer, ldcb uintptr)
//
// dpbf16x8x32 storing the full tile straight into C, as fma8x32c.
TEXT ·dpbf16x8x32c(SB), NOSPLIT, $0-56
	MOVQ kp+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ astep+16(FP), DX
	MOVQ arow+24(FP), R13
	MOVQ b+32(FP), DI
	LEAQ (SI)(R13*1), AX
	LEAQ (AX)(R13*1), BX
	LEAQ (BX)(R13*1), R8
	LEAQ (R8)(R13*1), R9
	LEAQ (R9)(R13*1), R10
	LEAQ (R10)(R13*1), R11
	LEAQ (R11)(R13*1), R12
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

loop:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VPBROADCASTD (SI), Z2
	VPBROADCASTD (AX), Z3
	VPBROADCASTD (BX), Z4
	VPBROADCASTD (R8), Z5
	VPBROADCASTD (R9), Z6
	VPBROADCASTD (R10), Z7
	VPBROADCASTD (R11), Z8
	VPBROADCASTD (R12), Z9
	// vdpbf16ps zmm2, zmm0, zmm16
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc2
	// vdpbf16ps zmm2, zmm1, zmm17
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xca
	// vdpbf16ps zmm3, zmm0, zmm18
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd3
	// vdpbf16ps zmm3, zmm1, zmm19
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdb
	// vdpbf16ps zmm4, zmm0, zmm20
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe4
	// vdpbf16ps zmm4, zmm1, zmm21
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xec
	// vdpbf16ps zmm5, zmm0, zmm22
	BYTE $0x62; BYTE $0xe2; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf5
	// vdpbf16ps zmm5, zmm1, zmm23
	BYTE $0x62; BYTE $0xe2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xfd
	// vdpbf16ps zmm6, zmm0, zmm24
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xc6
	// vdpbf16ps zmm6, zmm1, zmm25
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xce
	// vdpbf16ps zmm7, zmm0, zmm26
	BYTE $0x62; BYTE $0x62; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xd7
	// vdpbf16ps zmm7, zmm1, zmm27
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xdf
	// vdpbf16ps zmm8, zmm0, zmm28
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xe0
	// vdpbf16ps zmm8, zmm1, zmm29
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xe8
	// vdpbf16ps zmm9, zmm0, zmm30
	BYTE $0x62; BYTE $0x42; BYTE $0x7e; BYTE $0x48; BYTE $0x52; BYTE $0xf1
	// vdpbf16ps zmm9, zmm1, zmm31
	BYTE $0x62; BYTE $0x42; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xf9
	ADDQ $128, DI
	ADDQ DX, SI
	ADDQ DX, AX
	ADDQ DX, BX
	ADDQ DX, R8
	ADDQ DX, R9
	ADDQ DX, R10
	ADDQ DX, R11
	ADDQ DX, R12
	DECQ CX
	JNZ  loop

	MOVQ c+40(FP), DI
	MOVQ ldcb+48(FP), R13
	BTRQ $63, R13
	JCS  accum
	VMOVUPS Z16, (DI)
	VMOVUPS Z17, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z18, (DI)
	VMOVUPS Z19, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z20, (DI)
	VMOVUPS Z21, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z22, (DI)
	VMOVUPS Z23, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z24, (DI)
	VMOVUPS Z25, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z26, (DI)
	VMOVUPS Z27, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z28, (DI)
	VMOVUPS Z29, 64(DI)
	ADDQ R13, DI
	VMOVUPS Z30, (DI)
	VMOVUPS Z31, 64(DI)
	ADDQ R13, DI
	VZEROUPPER
	RET

accum:
	VADDPS (DI), Z16, Z16
	VADDPS 64(DI), Z17, Z17
	VMOVUPS Z16, (DI)
	VMOVUPS Z17, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z18, Z18
	VADDPS 64(DI), Z19, Z19
	VMOVUPS Z18, (DI)
	VMOVUPS Z19, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z20, Z20
	VADDPS 64(DI), Z21, Z21
	VMOVUPS Z20, (DI)
	VMOVUPS Z21, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z22, Z22
	VADDPS 64(DI), Z23, Z23
	VMOVUPS Z22, (DI)
	VMOVUPS Z23, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z24, Z24
	VADDPS 64(DI), Z25, Z25
	VMOVUPS Z24, (DI)
	VMOVUPS Z25, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z26, Z26
	VADDPS 64(DI), Z27, Z27
	VMOVUPS Z26, (DI)
	VMOVUPS Z27, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z28, Z28
	VADDPS 64(DI), Z29, Z29
	VMOVUPS Z28, (DI)
	VMOVUPS Z29, 64(DI)
	ADDQ R13, DI
	VADDPS (DI), Z30, Z30
	VADDPS 64(DI), Z31, Z31
	VMOVUPS Z30, (DI)
	VMOVUPS Z31, 64(DI)
	ADDQ R13, DI
	VZEROUPPER
	RET

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func cvtPairs32(dst *uint32, src *float32, blocks int)
//
// blocks×32 consecutive floats → blocks×16 bf16 pairs (the lower k index
// in the low half), rounded to nearest even by VCVTNE2PS2BF16: one
// instruction per 32 floats where the archsimd version needs ~12.
// Its lower 16 words come from the r/m operand (Z2 = floats 0–15), the
// upper 16 from vvvv (Z1 = floats 16–31), so word i is float i.
TEXT ·cvtPairs32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	TESTQ CX, CX
	JZ   cvtdone

cvtloop:
	VMOVUPS (SI), Z2
	VMOVUPS 64(SI), Z1
	// vcvtne2ps2bf16 zmm0, zmm1, zmm2
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xc2
	VMOVUPS Z0, (DI)
	ADDQ $128, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  cvtloop

cvtdone:
	VZEROUPPER
	RET

// Two rows r0, r1 (ldb bytes apart) of 16 floats → 16 uint32 lanes
// bf16(r0[j]) | bf16(r1[j])<<16: VCVTNE2PS2BF16 puts r0's 16 words below
// r1's, and VPERMW with idx (Z3: 0,16,1,17,…) interleaves them.
#define CVT_INTERLEAVE(off) \
	VMOVUPS off(SI), Z2; \
	VMOVUPS off(SI)(DX*1), Z1; \
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xc2; \
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
