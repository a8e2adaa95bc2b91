package nn

import (
	"math"

	"romae/tensor"
)

// SiLUForward: out = in · σ(in), element-wise over n values. float32 runs
// tensor.SiLU32 (float32 exp, AVX-512 where present).
func SiLUForward[T tensor.Float](out, in []T, n int) {
	if o32, ok := any(out).([]float32); ok {
		i32 := any(in).([]float32)
		tensor.ParallelFor(n, 4096, func(lo, hi int) { tensor.SiLU32(o32[lo:hi], i32[lo:hi]) })
		return
	}
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			out[i] = x / (1 + T(math.Exp(-float64(x))))
		}
	})
}

// SiLUBackward: dIn = dOut · σ(x)·(1 + x·(1−σ(x))), overwritten.
func SiLUBackward[T tensor.Float](dIn, dOut, in []T, n int) {
	if d32, ok := any(dIn).([]float32); ok {
		g32, i32 := any(dOut).([]float32), any(in).([]float32)
		tensor.ParallelFor(n, 4096, func(lo, hi int) { tensor.SiLUGrad32(d32[lo:hi], g32[lo:hi], i32[lo:hi]) })
		return
	}
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			s := 1 / (1 + T(math.Exp(-float64(x))))
			dIn[i] = dOut[i] * s * (1 + x*(1-s))
		}
	})
}
