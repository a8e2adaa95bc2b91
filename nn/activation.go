package nn

import (
	"math"

	"romae/tensor"
)

// SiLUForward: out = in · σ(in), element-wise over n values.
func SiLUForward[T tensor.Float](out, in []T, n int) {
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			out[i] = x / (1 + T(math.Exp(-float64(x))))
		}
	})
}

// SiLUBackward: dIn = dOut · σ(x)·(1 + x·(1−σ(x))), overwritten.
func SiLUBackward[T tensor.Float](dIn, dOut, in []T, n int) {
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			s := 1 / (1 + T(math.Exp(-float64(x))))
			dIn[i] = dOut[i] * s * (1 + x*(1-s))
		}
	})
}
