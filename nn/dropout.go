package nn

import (
	"math/rand/v2"

	"romae/tensor"
)

// DropoutMask fills mask[n] with 0 (dropped, probability rate) or 1/(1−rate)
// (kept), the inverted-dropout convention, so evaluation needs no rescaling.
func DropoutMask[T tensor.Float](mask []T, rate float64, rng *rand.Rand) {
	keep := T(1 / (1 - rate))
	for i := range mask {
		if rng.Float64() < rate {
			mask[i] = 0
		} else {
			mask[i] = keep
		}
	}
}

// DropoutForward: out = in ⊙ mask. The backward pass is the same product
// applied to the gradient (DropoutForward(dIn, dOut, mask)).
func DropoutForward[T tensor.Float](out, in, mask []T) {
	tensor.ParallelFor(len(out), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = in[i] * mask[i]
		}
	})
}

// DropPathScales draws stochastic depth for one residual branch: per sample
// 0 (branch dropped) with probability rate, else 1/(1−rate).
func DropPathScales[T tensor.Float](scale []T, rate float64, rng *rand.Rand) {
	DropoutMask(scale, rate, rng)
}

// ResidualForward: x[B,L,d] += scale[b] · branch (scale nil: no drop path).
// Its backward is dBranch = scale[b] · dx, with dx passing through unchanged.
func ResidualForward[T tensor.Float](x, branch, scale []T, B, L, d int) {
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s := T(1)
			if scale != nil {
				s = scale[r/L]
			}
			xr, br := x[r*d:(r+1)*d], branch[r*d:(r+1)*d]
			for j := range xr {
				xr[j] += s * br[j]
			}
		}
	})
}

// ResidualAdd: out[B,L,d] = x + scale[b]·branch (scale nil: no drop path),
// ResidualForward into a separate output in one pass (out may alias x).
func ResidualAdd[T tensor.Float](out, x, branch, scale []T, B, L, d int) {
	if o32, ok := any(out).([]float32); ok {
		x32, b32, s32 := any(x).([]float32), any(branch).([]float32), any(scale).([]float32)
		tensor.ParallelFor(B*L, 64, func(lo, hi int) {
			if s32 == nil {
				tensor.AddScaled32(o32[lo*d:hi*d], x32[lo*d:hi*d], b32[lo*d:hi*d], 1)
				return
			}
			for r := lo; r < hi; r++ {
				tensor.AddScaled32(o32[r*d:(r+1)*d], x32[r*d:(r+1)*d], b32[r*d:(r+1)*d], s32[r/L])
			}
		})
		return
	}
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s := T(1)
			if scale != nil {
				s = scale[r/L]
			}
			o, xr, br := out[r*d:(r+1)*d], x[r*d:(r+1)*d], branch[r*d:(r+1)*d]
			for j := range o {
				o[j] = xr[j] + s*br[j]
			}
		}
	})
}

// ScaleRows: out[B,L,d] = scale[b] · in, the backward of a drop-path branch.
func ScaleRows[T tensor.Float](out, in, scale []T, B, L, d int) {
	if scale == nil {
		copy(out[:B*L*d], in)
		return
	}
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s := scale[r/L]
			o, x := out[r*d:(r+1)*d], in[r*d:(r+1)*d]
			for j := range o {
				o[j] = s * x[j]
			}
		}
	})
}
