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
// 0–15/16–31 (16 k pairs × 16 columns, VNNI). Whole tiles are 16 rows of
// 64 bytes; a short last row tile or sliver has fewer (amxConfigFor).

#define LDTILECFG_AX   BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE    BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0

// Single instructions (GNU as 2.40's encodings). C tiles: tmm0/tmm1 rows
// 0–15 columns 0–15/16–31 at (DI)(R12*1) and 0x40(DI)(R12*1), tmm2/tmm3
// rows 16–31 at R11. A: tmm4 rows 0–15 at (SI)(DX*1), tmm5 rows 16–31 at
// (BX)(DX*1). B: tmm6/tmm7 columns 0–15/16–31 at (R9)(R10*1), +0x40.
#define ZERO0 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define ZERO1 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8
#define ZERO2 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0
#define ZERO3 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
#define LOADC0 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x27
#define LOADC1 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x27; BYTE $0x40
#define LOADC2 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x23
#define LOADC3 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x23; BYTE $0x40
#define STOREC0 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x27
#define STOREC1 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x27; BYTE $0x40
#define STOREC2 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x23
#define STOREC3 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x23; BYTE $0x40
#define LOADA0 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16
#define LOADA1 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x13
#define LOADB0 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x11
#define LOADB1 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x11; BYTE $0x40
// tdpbf16ps tmmB, tmmA, tmmC: C += A·B
#define DP_0_4_6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4
#define DP_1_4_7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc
#define DP_2_5_6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5
#define DP_3_5_7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd

// Flags of amxStrip: which of the 2×2 tiles exist. Without amxCols2 the
// tiles of columns 16–31 (tmm1, tmm3, tmm7) are not configured, without
// amxRows2 those of rows 16–31 (tmm2, tmm3, tmm5): an instruction naming
// an unconfigured tile faults, so they are skipped.
#define amxCols2 1
#define amxRows2 2

// func amxStrip(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bstride uintptr, c unsafe.Pointer, ldc uintptr, slivers int, flags int, accum bool, cfg *amxConfig)
//
// For each of `slivers` 32-column slivers s: C_s (float32, rows ldc bytes
// apart, at c + 128s bytes) = (accum ? C_s : 0) + A·B_s over `chunks` k
// chunks of 32, fp32 accumulation. A: packed bf16 rows lda bytes apart,
// chunk q at a + 64q (rows 16–31 at a + 16·lda), the same for every
// sliver (so it stays in L1). B_s: a packed 32-column sliver at
// b + s·bstride, k pair p at +128p, so chunk q at +2048q. How many rows
// and columns of each tile exist is cfg's (amxConfigFor: a short last
// row tile or sliver is loaded and stored as it is, no padding written);
// flags says which tiles exist at all.
// Self-contained: LDTILECFG first, TILERELEASE last, so no tile state
// outlives the call (goroutines migrate between threads; the kernel
// saves live tile state in signal frames). One configuration per strip,
// not per 32×32 block: LDTILECFG and TILERELEASE cost about as much as a
// block's 4 k chunks.
TEXT ·amxStrip(SB), NOSPLIT, $0-88
	MOVQ cfg+80(FP), AX
	LDTILECFG_AX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), DX
	MOVQ b+24(FP), R13
	MOVQ $128, R10
	MOVQ c+40(FP), DI
	MOVQ ldc+48(FP), R12
	MOVQ R12, R11
	SHLQ $4, R11
	ADDQ DI, R11
	MOVQ slivers+56(FP), R8
	TESTQ R8, R8
	JLE  done

sliver:
	MOVQ AX, SI
	MOVQ DX, BX
	SHLQ $4, BX
	ADDQ SI, BX
	MOVQ R13, R9
	MOVQ chunks+0(FP), CX
	CMPQ flags+64(FP), $3
	JNE  edge

	// All four tiles.
	CMPB accum+72(FP), $0
	JEQ  zero4
	LOADC0
	LOADC1
	LOADC2
	LOADC3
	JMP  count4

zero4:
	ZERO0
	ZERO1
	ZERO2
	ZERO3

count4:
	TESTQ CX, CX
	JLE  store4

loop4:
	LOADA0
	LOADB0
	DP_0_4_6
	LOADB1
	DP_1_4_7
	LOADA1
	DP_2_5_6
	DP_3_5_7
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $2048, R9
	DECQ CX
	JNZ  loop4

store4:
	STOREC0
	STOREC1
	STOREC2
	STOREC3
	JMP  next

	// A short row tile or sliver: the tiles flags names.
edge:
	CMPB accum+72(FP), $0
	JEQ  ezero
	LOADC0
	TESTQ $amxCols2, flags+64(FP)
	JZ   eload2
	LOADC1

eload2:
	TESTQ $amxRows2, flags+64(FP)
	JZ   ecount
	LOADC2
	TESTQ $amxCols2, flags+64(FP)
	JZ   ecount
	LOADC3
	JMP  ecount

ezero:
	ZERO0
	TESTQ $amxCols2, flags+64(FP)
	JZ   ezero2
	ZERO1

ezero2:
	TESTQ $amxRows2, flags+64(FP)
	JZ   ecount
	ZERO2
	TESTQ $amxCols2, flags+64(FP)
	JZ   ecount
	ZERO3

ecount:
	TESTQ CX, CX
	JLE  estore

eloop:
	LOADA0
	LOADB0
	DP_0_4_6
	TESTQ $amxCols2, flags+64(FP)
	JZ   erows
	LOADB1
	DP_1_4_7

erows:
	TESTQ $amxRows2, flags+64(FP)
	JZ   enext
	LOADA1
	DP_2_5_6
	TESTQ $amxCols2, flags+64(FP)
	JZ   enext
	DP_3_5_7

enext:
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $2048, R9
	DECQ CX
	JNZ  eloop

estore:
	STOREC0
	TESTQ $amxCols2, flags+64(FP)
	JZ   estore2
	STOREC1

estore2:
	TESTQ $amxRows2, flags+64(FP)
	JZ   next
	STOREC2
	TESTQ $amxCols2, flags+64(FP)
	JZ   next
	STOREC3

next:
	ADDQ $128, DI
	ADDQ $128, R11
	ADDQ bstride+32(FP), R13
	DECQ R8
	JNZ  sliver

done:
	TILERELEASE
	RET
