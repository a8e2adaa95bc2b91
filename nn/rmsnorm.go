package nn

import (
	"math"

	"romae/tensor"
)

// RMSNormForward: out[n,d] = in / sqrt(mean(in²) + eps) · g[d]; rstd[n]
// keeps 1/sqrt(mean(in²)+eps) per row for the backward pass. The mean of
// squares is accumulated in float64 because eps is tiny (1e-12 in the
// authors' model) and padded rows are all zero.
func RMSNormForward[T tensor.Float](out, rstd, in, g []T, n, d int, eps float64) {
	if o32, ok := any(out).([]float32); ok {
		rmsNormForward32(o32, any(rstd).([]float32), any(in).([]float32), any(g).([]float32), n, d, eps, nil)
		return
	}
	tensor.ParallelFor(n, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x := in[r*d : (r+1)*d]
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			s := T(1 / math.Sqrt(ss/float64(d)+eps))
			rstd[r] = s
			y := out[r*d : (r+1)*d]
			for j, v := range x {
				y[j] = v * s * g[j]
			}
		}
	})
}

// RMSNormBackward, with x̂ = in·rstd and dOut[n,d]:
//
//	dG[d]    += Σ_rows dOut · x̂
//	dIn[n,d]  = rstd · (dOut·g − x̂ · mean(dOut·g·x̂))
//
// dIn is overwritten, or added to when accumIn (the residual stream's
// gradient collects both branches). dG is accumulated serially over rows so
// results do not depend on the number of cores.
func RMSNormBackward[T tensor.Float](dIn, dG, dOut, in, g, rstd []T, n, d int, accumIn bool) {
	if d32, ok := any(dIn).([]float32); ok {
		rmsNormBackward32(d32, any(dG).([]float32), any(dOut).([]float32), any(in).([]float32), any(g).([]float32), any(rstd).([]float32), n, d, accumIn)
		return
	}
	tensor.ParallelFor(n, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x, dy, dx := in[r*d:(r+1)*d], dOut[r*d:(r+1)*d], dIn[r*d:(r+1)*d]
			s := rstd[r]
			var dot T
			for j := range x {
				dot += dy[j] * g[j] * x[j]
			}
			c := dot * s * s / T(d)
			if accumIn {
				for j := range x {
					dx[j] += s * (dy[j]*g[j] - x[j]*c)
				}
			} else {
				for j := range x {
					dx[j] = s * (dy[j]*g[j] - x[j]*c)
				}
			}
		}
	})
	for r := 0; r < n; r++ {
		x, dy := in[r*d:(r+1)*d], dOut[r*d:(r+1)*d]
		s := rstd[r]
		for j := range x {
			dG[j] += dy[j] * x[j] * s
		}
	}
}

// rmsNormForward32 is the float32 path: vectorised rows, the sum of
// squares in float32 (rows are d ≤ a few thousand values; the relative
// error is ~1e-7, far inside what float32 activations carry anyway).
// outBF, when set, gets out in bf16 too, each 16-row chunk rounded
// while it is in L1; out may then be nil (kept for no backward pass), and
// the chunk goes through scratch.
func rmsNormForward32(out, rstd, in, g []float32, n, d int, eps float64, outBF *tensor.BF16Rows) {
	tensor.ParallelFor(n, 16, func(lo, hi int) {
		sink := newRowSink(out, 16, d)
		defer sink.release()
		for r0 := lo; r0 < hi; r0 += 16 {
			r1 := min(r0+16, hi)
			yc := sink.rows(r0, r1)
			for r := r0; r < r1; r++ {
				rstd[r] = RMSNormRow32(yc[(r-r0)*d:(r-r0+1)*d], in[r*d:(r+1)*d], g, eps)
			}
			if outBF != nil {
				outBF.Store(r0, r1-r0, yc, d)
			}
		}
	})
}

// RMSNormRow32 is one row of the float32 RMSNormForward: out = x·rstd·g,
// returning rstd. For callers that run a layer a few rows at a time on one
// core; every row is computed as RMSNormForward computes it.
func RMSNormRow32(out, x, g []float32, eps float64) float32 {
	s := float32(1 / math.Sqrt(float64(tensor.SumSq32(x))/float64(len(x))+eps))
	tensor.ScaleMul32(out, x, g, s)
	return s
}

// RMSNormForwardBF16 is RMSNormForward in float32 that also stores out,
// rounded as it is computed, in outBF (resized to [n, d]): the form in
// which a bf16 product reads it (tensor.GemmBF16Rows) without rounding
// and packing it again. out may be nil when no backward pass needs it.
func RMSNormForwardBF16(outBF *tensor.BF16Rows, out, rstd, in, g []float32, n, d int, eps float64) {
	outBF.Resize(n, d)
	rmsNormForward32(out, rstd, in, g, n, d, eps, outBF)
}

// rmsNormBlock is the row block whose dG partial sums rmsNormBackward32
// keeps apart: blocks are fixed by n, not by the number of cores, and are
// summed in order, so dG does not depend on GOMAXPROCS.
const rmsNormBlock = 64

func rmsNormBackward32(dIn, dG, dOut, in, g, rstd []float32, n, d int, accumIn bool) {
	nb := (n + rmsNormBlock - 1) / rmsNormBlock
	buf := getScratch(nb * d)
	defer putScratch(buf)
	part := *buf
	tensor.ParallelFor(nb, 1, func(lo, hi int) {
		for blk := lo; blk < hi; blk++ {
			acc := part[blk*d : (blk+1)*d]
			clear(acc)
			for r := blk * rmsNormBlock; r < min(n, (blk+1)*rmsNormBlock); r++ {
				x, dy := in[r*d:(r+1)*d], dOut[r*d:(r+1)*d]
				s := rstd[r]
				c := tensor.Dot3_32(dy, g, x) * s * s / float32(d)
				tensor.RMSNormGrad32(dIn[r*d:(r+1)*d], dy, g, x, s, c, accumIn)
				tensor.MulAcc32(acc, dy, x, s)
			}
		}
	})
	for blk := 0; blk < nb; blk++ {
		tensor.Add32(dG[:d], part[blk*d:(blk+1)*d])
	}
}
