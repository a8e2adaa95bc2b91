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
