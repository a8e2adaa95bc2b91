//go:build goexperiment.simd && amd64

package rope

import (
	"simd/archsimd"

	"romae/internal/simdpart"
)

var hasAVX512 = archsimd.X86.AVX512()

// rotateCopy32 is the float32 kernel of RotateSplit and MergeRotateInverse:
// for tokens r in [lo, hi) (r = b·L + l) and each head h, the head at
// dst[dOff(b,l,h):] becomes the head at src[sOff(b,l,h):] rotated (by
// minus the angles when inverse). A token's cos/sin vectors are loaded
// once for all its heads. Each half of an axis slice is loaded and stored
// once, 16 lanes at a time: the p-RoPE pairs that do not rotate go
// through the same arithmetic with cos 1 and sin 0, which gives them back
// unchanged (up to the sign of a zero), rather than a copy of the head
// that the rotated pairs then overwrite (half the loads and stores; 30%
// faster on cached data, BenchmarkRotateSplit). It returns false, doing
// nothing, where it does not apply (no AVX-512, no rotated pairs, or an
// axis half wider than 64).
func rotateCopy32(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	half, R, w := l.AxisDim/2, l.R, l.D*l.R
	if !hasAVX512 || R == 0 || half > 16*maxChunks {
		return false
	}
	chunks := (half + 15) / 16
	// Built before the first vector instruction: Go zeroes memory with
	// the legacy-SSE MOVUPS X15, which would run with dirty upper state.
	var onesFrom [maxChunks][16]float32 // the unrotated pairs' cos
	for j := R; j < 16*maxChunks; j++ {
		onesFrom[j/16][j%16] = 1
	}
	var c, s [3][maxChunks]archsimd.Float32x16
	var pad [maxChunks]archsimd.Float32x16
	for q := range chunks {
		pad[q] = archsimd.LoadFloat32x16(&onesFrom[q])
	}
	sign := archsimd.BroadcastFloat32x16(1)
	if inverse {
		sign = archsimd.BroadcastFloat32x16(-1)
	}
	for r := lo; r < hi; r++ {
		b, i := r/L, r%L
		for ax := range l.D {
			o := r*w + ax*R
			for q := range chunks {
				j0, j1 := min(16*q, R), min(16*q+16, R) // this chunk's rotated pairs
				c[ax][q] = simdpart.Load16(cos[o+j0 : o+j1]).Add(pad[q])
				s[ax][q] = simdpart.Load16(sin[o+j0 : o+j1]).Mul(sign)
			}
		}
		for h := range heads {
			in, out := src[sOff.at(b, i, h):][:l.HeadDim], dst[dOff.at(b, i, h):][:l.HeadDim]
			for ax := range l.D {
				for q := range chunks {
					o, e := ax*l.AxisDim+16*q, ax*l.AxisDim+min(16*q+16, half)
					x1 := simdpart.Load16(in[o:e])
					x2 := simdpart.Load16(in[o+half : e+half])
					cq, sq := c[ax][q], s[ax][q]
					simdpart.Store16(x1.Mul(cq).Sub(x2.Mul(sq)), out[o:e])
					simdpart.Store16(x1.MulAdd(sq, x2.Mul(cq)), out[o+half:e+half])
				}
			}
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}

// maxChunks bounds the 16-lane chunks of an axis half rotateCopy32 keeps
// in registers per token (half ≤ 64: a head of 128 on one axis).
const maxChunks = 4
