package tensor

import "fmt"

// LinearGrads is the backward pass of a linear layer out = in·Wᵀ (in
// [n, i], W [o, i], out [n, o]) given dOut [n, o]:
//
//	dIn = dOut·W, added to dIn when accumIn (dIn nil: not computed)  [n, i]
//	dW += dOutᵀ·in                                                     [o, i]
//
// Each is what Gemm computes, to the bit. Where both run on the fp32
// assembly kernels or on a bf16 kernel (AMX, VDPBF16PS) over several
// cores, they run together, a k piece of the weight gradient at a time:
// each piece's rows of dIn are computed right before that piece's part
// of dW, so the rows of dOut both products read come from memory once,
// and the second product finds them in L2. One after the other, each read
// all of dOut (4.6 to 18.5 MB for RoMAE-tiny fine-tuning) from memory.
// AMX Xeon, 2 cores, BenchmarkLinearGrads under ROMAE_PRECISION=bf16:
// q|k|v 2.98 → 2.53 ms, Wo 1.33 → 1.11, W1 3.68 → 3.26, W2 2.87 → 2.82
// (every layer, 10.9 → 9.7 ms); the bf16 fine-tuning step paired median
// 0.985 over 14 rounds, at the edge of the noise.
func LinearGrads[T Float](dIn, dW, dOut, in, w []T, n, i, o int, accumIn bool) {
	if dIn != nil {
		checkGemm("LinearGrads dIn", false, false, n, i, o, len(dOut), o, len(w), i, len(dIn), i)
	}
	checkGemm("LinearGrads dW", true, false, o, i, n, len(dOut), o, len(in), i, len(dW), i)
	if dIn != nil && is32[T]() && fuseLinearGrads && linearGrads32(as32(dIn), as32(dW), as32(dOut), as32(in), nil, as32(w), n, i, o, accumIn) {
		return
	}
	linearDIn(dIn, dOut, w, n, i, o, accumIn)
	Gemm(true, false, o, i, n, 1, dOut, o, in, i, 1, dW, i)
}

// linearDIn is LinearGrads's dIn = dOut·W (added to dIn when accumIn; dIn
// nil: nothing) as its own product.
func linearDIn[T Float](dIn, dOut, w []T, n, i, o int, accumIn bool) {
	if dIn == nil {
		return
	}
	var beta T
	if accumIn {
		beta = 1
	}
	Gemm(false, false, n, i, o, 1, dOut, o, w, i, beta, dIn, i)
}

// fuseLinearGrads lets LinearGrads run its two products together where
// it can (false: one after the other), a variable so tests and
// benchmarks can compare both.
var fuseLinearGrads = true

// LinearGradsBF16In is LinearGrads with the layer input given as the bf16
// rows a bf16 product read it from in the forward pass ([n, i]), for a
// training pass that keeps its activations in bf16 only: the weight
// gradient's product packs them in place of rounding float32 rows it
// would read back from memory (half the bytes, no conversion). dIn and dW
// are the same to the bit as LinearGrads on in widened back to float32
// (rounding a bf16 value again leaves it as it is). Where products run on
// no bf16 kernel (no training pass keeps bf16 rows then), it runs
// LinearGrads on them widened.
func LinearGradsBF16In(dIn, dW, dOut []float32, in *BF16Rows, w []float32, n, i, o int, accumIn bool) {
	if r, c := in.Shape(); r != n || c != i {
		panic(fmt.Sprintf("tensor.LinearGradsBF16In: input %d×%d, want %d×%d", r, c, n, i))
	}
	if dIn != nil {
		checkGemm("LinearGradsBF16In dIn", false, false, n, i, o, len(dOut), o, len(w), i, len(dIn), i)
	}
	checkGemm("LinearGradsBF16In dW", true, false, o, i, n, len(dOut), o, n*i, i, len(dW), i)
	if dIn != nil && fuseLinearGrads && linearGrads32(dIn, dW, dOut, nil, in, w, n, i, o, accumIn) {
		return
	}
	if dWFromRows(dW, dOut, in, n, i, o) { // the two products one after the other, as LinearGrads
		linearDIn(dIn, dOut, w, n, i, o, accumIn)
		return
	}
	LinearGrads(dIn, dW, dOut, in.Float32(), w, n, i, o, accumIn)
}
