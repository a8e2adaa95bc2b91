//go:build goexperiment.simd && amd64 && linux

#include "textflag.h"

// Intel AMX. The Go assembler has no AMX mnemonics, so each instruction
// is spelled as bytes; the encodings are GNU as 2.40's for the operands
// named (VEX.128 0F38 map: 49 = LDTILECFG/TILERELEASE/TILEZERO, 4B =
// TILELOADD (F2) / TILESTORED (F3), 5C = TDPBF16PS (F3), vvvv = ~B tile).
// TestAMXEncoding disassembles this function from the test binary with
// GNU objdump and checks every instruction and operand.
//
// Tiles: tmm0–3 hold C (32×32 fp32 as 2×2 tiles of 16×16), tmm4/tmm5 A
// rows 0–15/16–31 (16 rows × 32 bf16 = one k chunk), tmm6/tmm7 B columns
// 0–15/16–31 (16 k pairs × 16 columns, VNNI). Every tile is 16 rows of
// 64 bytes (amxConfig).

#define LDTILECFG_AX   BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE    BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0

// tilezero %tmm0 … %tmm3
#define ZERO_C \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8

// tileloadd (%rdi,%r12,1),%tmm0; 0x40(%rdi,%r12,1),%tmm1;
// (%r11,%r12,1),%tmm2; 0x40(%r11,%r12,1),%tmm3
#define LOAD_C \
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x27; \
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x27; BYTE $0x40; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x23; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x23; BYTE $0x40

// tilestored %tmm0,(%rdi,%r12,1); %tmm1,0x40(%rdi,%r12,1);
// %tmm2,(%r11,%r12,1); %tmm3,0x40(%r11,%r12,1)
#define STORE_C \
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x27; \
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x27; BYTE $0x40; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x23; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x23; BYTE $0x40

// One k chunk (16 pairs = 32 k):
//	tileloadd (%rsi,%rdx,1),%tmm4
//	tileloadd (%r9,%r10,1),%tmm6
//	tdpbf16ps %tmm6,%tmm4,%tmm0
//	tileloadd 0x40(%r9,%r10,1),%tmm7
//	tdpbf16ps %tmm7,%tmm4,%tmm1
//	tileloadd (%rbx,%rdx,1),%tmm5
//	tdpbf16ps %tmm6,%tmm5,%tmm2
//	tdpbf16ps %tmm7,%tmm5,%tmm3
#define CHUNK \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x11; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4; \
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x11; BYTE $0x40; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x13; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5; \
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd

// func amxTile32(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, accum bool, cfg *amxConfig)
//
// C[32×32] (float32, rows ldc bytes apart) = (accum ? C : 0) + A·B over
// `chunks` k chunks of 32. A: packed bf16 rows lda bytes apart, chunk q
// at a + 64q (rows 16–31 at a + 16·lda). B: a packed 32-column sliver,
// k pair p at b + 128p, so chunk q at b + 2048q. fp32 accumulation.
// Self-contained: LDTILECFG first, TILERELEASE last, so no tile state
// outlives the call (goroutines migrate between threads; the kernel
// saves live tile state in signal frames).
TEXT ·amxTile32(SB), NOSPLIT, $0-64
	MOVQ cfg+56(FP), AX
	LDTILECFG_AX
	MOVQ chunks+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), DX
	MOVQ DX, BX
	SHLQ $4, BX
	ADDQ SI, BX
	MOVQ b+24(FP), R9
	MOVQ $128, R10
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R12
	MOVQ R12, R11
	SHLQ $4, R11
	ADDQ DI, R11
	MOVBLZX accum+48(FP), R8
	TESTQ R8, R8
	JZ   zero
	LOAD_C
	JMP  count

zero:
	ZERO_C

	// chunks ≤ 0 (no driver call passes it) stores C as loaded or
	// zeroed rather than running the loop until the loads fault.
count:
	TESTQ CX, CX
	JLE  store

loop:
	CHUNK
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $2048, R9
	DECQ CX
	JNZ  loop

store:
	STORE_C
	TILERELEASE
	RET
