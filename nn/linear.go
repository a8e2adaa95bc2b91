package nn

import "romae/tensor"

// LinearForward: out[n,o] = in[n,i] · w[o,i]ᵀ + b[o]. Weights are stored
// [out, in] like PyTorch so the authors' checkpoints load without transposes.
// b may be nil.
func LinearForward[T tensor.Float](out, in, w, b []T, n, i, o int) {
	if b != nil {
		for r := 0; r < n; r++ {
			copy(out[r*o:(r+1)*o], b[:o])
		}
		tensor.Gemm(false, true, n, o, i, 1, in, i, w, i, 1, out, o)
		return
	}
	tensor.Gemm(false, true, n, o, i, 1, in, i, w, i, 0, out, o)
}

// LinearForwardPacked: out[n,o] = in[n,i] · w[o,i]ᵀ with w packed once
// (tensor.PackWeight), for a model whose weights no longer change.
func LinearForwardPacked[T tensor.Float](out, in []T, w *tensor.PackedWeight[T], n int) {
	o, i := w.Shape()
	tensor.GemmPacked(n, 1, in, i, w, 0, out, o)
}

// LinearForwardBF16: out[n,o] = in[n,i] · w[o,i]ᵀ with in already rounded
// to bf16 by its producer (RMSNormForwardBF16, SiLUForwardBF16), read from
// w packed once when pw is set.
func LinearForwardBF16(out []float32, in *tensor.BF16Rows, w []float32, pw *tensor.PackedWeight[float32], o int) {
	if pw != nil {
		tensor.GemmPackedBF16Rows(in, 1, pw, 0, out, o)
		return
	}
	_, i := in.Shape()
	tensor.GemmBF16Rows(in, true, o, 1, w, i, 0, out, o)
}

// LinearBackward, given dOut[n,o]:
//
//	dIn[n,i]  = dOut · w          (overwritten, or added to when accumIn)
//	dW[o,i]  += dOutᵀ · in
//	dB[o]    += Σ_rows dOut       (skipped when dB is nil)
//
// dIn may be nil when the input needs no gradient (the raw data).
func LinearBackward[T tensor.Float](dIn, dW, dB, dOut, in, w []T, n, i, o int, accumIn bool) {
	tensor.LinearGrads(dIn, dW, dOut, in, w, n, i, o, accumIn)
	if dB != nil {
		for r := 0; r < n; r++ {
			row := dOut[r*o : (r+1)*o]
			for j, g := range row {
				dB[j] += g
			}
		}
	}
}

// LinearBackwardBF16 is LinearBackward without a bias, with in given as
// the bf16 rows LinearForwardBF16 read (a bf16 training pass keeps its
// product inputs that way only): dIn overwritten, dW added to, the same
// bits as LinearBackward on the float32 input under bf16 products
// (tensor.LinearGradsBF16In).
func LinearBackwardBF16(dIn, dW, dOut []float32, in *tensor.BF16Rows, w []float32, n, i, o int) {
	tensor.LinearGradsBF16In(dIn, dW, dOut, in, w, n, i, o, false)
}
