package nn

import (
	"math"
	"math/rand/v2"

	"romae/tensor"
)

// DropoutMask fills mask[n] with 0 (dropped, probability rate) or 1/(1−rate)
// (kept), the inverted-dropout convention, so evaluation needs no rescaling.
// Element i is dropped when the i-th value drawn from src, read as
// rand.Rand.Float64 reads it, is below rate: the same masks from a
// *rand.PCG as from a *rand.Rand over it, and src is left alike. From a
// *rand.PCG they are drawn on several cores, several values at a time
// (pcg.go), which is why training passes the generator itself.
func DropoutMask[T tensor.Float](mask []T, rate float64, src rand.Source) {
	keep := T(1 / (1 - rate))
	if rate >= 1 {
		keep = 0 // every element dropped; keepIf would multiply +Inf by 0
	}
	// Float64() < rate ⟺ u<<11>>11 < rate·2⁵³ (u<<11>>11 < 2⁵³ is exact in
	// float64 and the scaling by 2⁻⁵³ is exact) ⟺ u<<11>>11 < ⌈rate·2⁵³⌉.
	thr := uint64(math.Ceil(rate * (1 << 53)))
	if p, ok := src.(*rand.PCG); ok && pcgMatches {
		s0, _ := pcgState(p) // readable: pcgMatches read one
		tensor.ParallelFor(len(mask), 1<<13, func(lo, hi int) {
			dropoutFill(mask[lo:hi], pcgStep.pow(uint64(lo)).apply(s0), thr, keep)
		})
		if err := setPCGState(p, pcgStep.pow(uint64(len(mask))).apply(s0)); err != nil {
			panic("nn: " + err.Error()) // pcgMatches saw this encoding accepted
		}
		return
	}
	for i := range mask {
		mask[i] = keepIf(src.Uint64(), thr, keep)
	}
}

// keepIf is keep when the value u, as Float64 reads it, is at or above
// the threshold thr = ⌈rate·2⁵³⌉, else 0, without a branch to mispredict
// at every rate-th element.
func keepIf[T tensor.Float](u, thr uint64, keep T) T {
	return T(int64(1^(u<<11>>11-thr)>>63)) * keep
}

// dropoutFill sets mask from the values that follow PCG state s, four
// independent steps in flight.
func dropoutFill[T tensor.Float](mask []T, s u128, thr uint64, keep T) {
	s0 := pcgStep.apply(s)
	s1 := pcgStep.apply(s0)
	s2 := pcgStep.apply(s1)
	s3 := pcgStep.apply(s2)
	i := 0
	for ; i+4 <= len(mask); i += 4 {
		m := mask[i : i+4 : i+4]
		m[0] = keepIf(pcgOutput(s0), thr, keep)
		m[1] = keepIf(pcgOutput(s1), thr, keep)
		m[2] = keepIf(pcgOutput(s2), thr, keep)
		m[3] = keepIf(pcgOutput(s3), thr, keep)
		s0, s1, s2, s3 = pcgStep4.apply(s0), pcgStep4.apply(s1), pcgStep4.apply(s2), pcgStep4.apply(s3)
	}
	left := [4]u128{s0, s1, s2, s3}
	for j, s := range left[:len(mask)-i] {
		mask[i+j] = keepIf(pcgOutput(s), thr, keep)
	}
}

// DropPathScales draws stochastic depth for one residual branch: per sample
// 0 (branch dropped) with probability rate, else 1/(1−rate).
func DropPathScales[T tensor.Float](scale []T, rate float64, src rand.Source) {
	DropoutMask(scale, rate, src)
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
