//go:build goexperiment.simd && amd64

#include "textflag.h"

// The exp-based loops of vmath_avx2_amd64.go (SiLU, its gradient, the
// softmax exponentials, exp) in assembly, two vectors of 8 an iteration.
// The Go compiler's version of the same loop loaded every constant into a
// register before using it, spilled a pointer and checked bounds three
// times a vector: ~70 instructions per 8 elements around a dependency
// chain ~80 cycles long, so few vectors were in flight at once. Here the
// constants are memory operands (one fused load-and-compute each), 1 and
// the exponent bias stay in Y15 and Y14, and the two vectors' chains are
// interleaved. The operations are exp8's, in its order and with the same
// operands (FMAs fused where exp8 fuses them, nowhere else), so every
// result has the same bits as exp8's.
//
// n is a multiple of 8 in every function; each ends with VZEROUPPER.

// EXP8x2(X, N, P, T, X2, N2, P2, T2): P = exp8(X) and P2 = exp8(X2), the
// two vectors' instructions interleaved; X, N, T and X2, N2, T2 are
// clobbered. A loop's last lone vector runs it with X2 a copy of X.
#define EXP8x2(X, N, P, T, X2, N2, P2, T2) \
	VMAXPS ·exp8K+0(SB), X, X; \
	VMAXPS ·exp8K+0(SB), X2, X2; \
	VMINPS ·exp8K+32(SB), X, X; \
	VMINPS ·exp8K+32(SB), X2, X2; \
	VMULPS ·exp8K+64(SB), X, N; \
	VMULPS ·exp8K+64(SB), X2, N2; \
	VROUNDPS $0, N, N; \
	VROUNDPS $0, N2, N2; \
	VFMADD231PS ·exp8K+96(SB), N, X; \
	VFMADD231PS ·exp8K+96(SB), N2, X2; \
	VFMADD231PS ·exp8K+128(SB), N, X; \
	VFMADD231PS ·exp8K+128(SB), N2, X2; \
	VMOVUPS ·exp8K+160(SB), P; \
	VMOVUPS ·exp8K+160(SB), P2; \
	VFMADD213PS ·exp8K+192(SB), X, P; \
	VFMADD213PS ·exp8K+192(SB), X2, P2; \
	VFMADD213PS ·exp8K+224(SB), X, P; \
	VFMADD213PS ·exp8K+224(SB), X2, P2; \
	VFMADD213PS ·exp8K+256(SB), X, P; \
	VFMADD213PS ·exp8K+256(SB), X2, P2; \
	VFMADD213PS ·exp8K+288(SB), X, P; \
	VFMADD213PS ·exp8K+288(SB), X2, P2; \
	VFMADD213PS ·exp8K+320(SB), X, P; \
	VFMADD213PS ·exp8K+320(SB), X2, P2; \
	VMULPS X, X, T; \
	VMULPS X2, X2, T2; \
	VFMADD213PS X, T, P; \
	VFMADD213PS X2, T2, P2; \
	VADDPS Y15, P, P; \
	VADDPS Y15, P2, P2; \
	VCVTTPS2DQ N, N; \
	VCVTTPS2DQ N2, N2; \
	VPSRAD $1, N, T; \
	VPSRAD $1, N2, T2; \
	VPSUBD T, N, N; \
	VPSUBD T2, N2, N2; \
	VPADDD Y14, T, T; \
	VPADDD Y14, T2, T2; \
	VPSLLD $23, T, T; \
	VPSLLD $23, T2, T2; \
	VPADDD Y14, N, N; \
	VPADDD Y14, N2, N2; \
	VPSLLD $23, N, N; \
	VPSLLD $23, N2, N2; \
	VMULPS T, P, P; \
	VMULPS T2, P2, P2; \
	VMULPS N, P, P; \
	VMULPS N2, P2, P2

// LOAD_CONSTS: 1 in Y15, the exponent bias in Y14, 0 in Y13.
#define LOAD_CONSTS \
	VMOVUPS ·exp8K+352(SB), Y15; \
	VMOVDQU ·exp8Bias(SB), Y14; \
	VXORPS Y13, Y13, Y13

// func expAVX2(out, in *float32, n int)
// out = exp8(in).
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	LOAD_CONSTS
	SHLQ $2, CX
	ADDQ SI, CX // end of in
exp16:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JA exp8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y4
	EXP8x2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y2, (DI)
	VMOVUPS Y6, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	JMP exp16
exp8:
	CMPQ SI, CX
	JAE expdone
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y4
	EXP8x2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y2, (DI)
expdone:
	VZEROUPPER
	RET

// DENOMx2: Y3 = exp8(0 − Y0) + 1 and Y8 = exp8(0 − Y5) + 1, the
// denominators of SiLU and of the sigmoid in its gradient; Y1, Y2, Y4,
// Y6, Y7 and Y9 are clobbered.
#define DENOMx2 \
	VSUBPS Y0, Y13, Y1; \
	VSUBPS Y5, Y13, Y6; \
	EXP8x2(Y1, Y2, Y3, Y4, Y6, Y7, Y8, Y9); \
	VADDPS Y15, Y3, Y3; \
	VADDPS Y15, Y8, Y8

// func siluAVX2(out, in *float32, n int)
// out = x / (exp8(0 − x) + 1).
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	LOAD_CONSTS
	SHLQ $2, CX
	ADDQ SI, CX
silu16:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JA silu8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y5
	DENOMx2
	VDIVPS Y3, Y0, Y0
	VDIVPS Y8, Y5, Y5
	VMOVUPS Y0, (DI)
	VMOVUPS Y5, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	JMP silu16
silu8:
	CMPQ SI, CX
	JAE siludone
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y5
	DENOMx2
	VDIVPS Y3, Y0, Y0
	VMOVUPS Y0, (DI)
siludone:
	VZEROUPPER
	RET

// func siluGradAVX2(dIn, dOut, in *float32, n int)
// s = 1 / (exp8(0 − x) + 1); dIn = (dOut·s)·(x·(1 − s) + 1).
TEXT ·siluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dIn+0(FP), DI
	MOVQ dOut+8(FP), DX
	MOVQ in+16(FP), SI
	MOVQ n+24(FP), CX
	LOAD_CONSTS
	SHLQ $2, CX
	ADDQ SI, CX
sgrad16:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JA sgrad8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y5
	DENOMx2
	VDIVPS Y3, Y15, Y3 // s
	VDIVPS Y8, Y15, Y8
	VSUBPS Y3, Y15, Y1 // 1 − s
	VSUBPS Y8, Y15, Y6
	VMULPS Y0, Y1, Y0
	VMULPS Y5, Y6, Y5
	VADDPS Y15, Y0, Y0 // t
	VADDPS Y15, Y5, Y5
	VMULPS (DX), Y3, Y3 // dOut·s
	VMULPS 32(DX), Y8, Y8
	VMULPS Y3, Y0, Y0
	VMULPS Y8, Y5, Y5
	VMOVUPS Y0, (DI)
	VMOVUPS Y5, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	JMP sgrad16
sgrad8:
	CMPQ SI, CX
	JAE sgraddone
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y5
	DENOMx2
	VDIVPS Y3, Y15, Y3
	VSUBPS Y3, Y15, Y1
	VMULPS Y0, Y1, Y0
	VADDPS Y15, Y0, Y0
	VMULPS (DX), Y3, Y3
	VMULPS Y3, Y0, Y0
	VMOVUPS Y0, (DI)
sgraddone:
	VZEROUPPER
	RET

// func softmaxExpAVX2(s *float32, n int, scale, negMx float32, keep *float32, acc *[8]float32)
// s = exp8(min(s·scale + negMx, 0)) (· keep when keep is not nil); acc
// is set to their lane-wise sum, added in order, one vector after another.
TEXT ·softmaxExpAVX2(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y12
	VBROADCASTSS negMx+20(FP), Y11
	MOVQ keep+24(FP), DX
	MOVQ acc+32(FP), BX
	LOAD_CONSTS
	VXORPS Y10, Y10, Y10 // the sum
	SHLQ $2, CX
	ADDQ SI, CX
sm16:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JA sm8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y4
	VFMADD213PS Y11, Y12, Y0
	VFMADD213PS Y11, Y12, Y4
	VMINPS Y13, Y0, Y0
	VMINPS Y13, Y4, Y4
	EXP8x2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	TESTQ DX, DX
	JZ sm16nokeep
	VMULPS (DX), Y2, Y2
	VMULPS 32(DX), Y6, Y6
	ADDQ $64, DX
sm16nokeep:
	VMOVUPS Y2, (SI)
	VMOVUPS Y6, 32(SI)
	VADDPS Y2, Y10, Y10
	VADDPS Y6, Y10, Y10
	ADDQ $64, SI
	JMP sm16
sm8:
	CMPQ SI, CX
	JAE smdone
	VMOVUPS (SI), Y0
	VFMADD213PS Y11, Y12, Y0
	VMINPS Y13, Y0, Y0
	VMOVUPS Y0, Y4
	EXP8x2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	TESTQ DX, DX
	JZ sm8nokeep
	VMULPS (DX), Y2, Y2
sm8nokeep:
	VMOVUPS Y2, (SI)
	VADDPS Y2, Y10, Y10
smdone:
	VMOVUPS Y10, (BX)
	VZEROUPPER
	RET
