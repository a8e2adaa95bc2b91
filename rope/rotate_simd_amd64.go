//go:build goexperiment.simd && amd64

package rope

import "simd/archsimd"

var hasAVX512 = archsimd.X86.AVX512()

// rotateCopy32 is the float32 kernel of RotateSplit and MergeRotateInverse:
// for tokens r in [lo, hi) (r = b·L + l) and each head h, the head at
// dst[dOff(b,l,h):] becomes the head at src[sOff(b,l,h):] rotated (by
// minus the angles when inverse). A token's cos/sin vectors are loaded
// once for all its heads, and each head is copied and rotated in
// registers, with no per-head calls. It returns false, doing nothing, where
// it does not apply (no AVX-512, or more than 16 rotated pairs per axis).
func rotateCopy32(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	if !hasAVX512 || l.R == 0 || l.R > 16 {
		return false
	}
	hd, half, R, w := l.HeadDim, l.AxisDim/2, l.R, l.D*l.R
	// Zeroed before the first vector instruction: Go zeroes memory with
	// the legacy-SSE MOVUPS X15, which would run with dirty upper state.
	var c, s [3]archsimd.Float32x16
	sign := archsimd.BroadcastFloat32x16(1)
	if inverse {
		sign = archsimd.BroadcastFloat32x16(-1)
	}
	for r := lo; r < hi; r++ {
		b, i := r/L, r%L
		for ax := range l.D {
			o := r*w + ax*R
			c[ax] = loadPart(cos[o : o+R])
			s[ax] = loadPart(sin[o : o+R]).Mul(sign)
		}
		for h := range heads {
			in, out := src[sOff.at(b, i, h):][:hd], dst[dOff.at(b, i, h):][:hd]
			for o := 0; o < hd; o += 16 {
				e := min(o+16, hd)
				storePart(loadPart(in[o:e]), out[o:e])
			}
			for ax := range l.D {
				o := ax * l.AxisDim
				x1 := loadPart(in[o : o+R])
				x2 := loadPart(in[o+half : o+half+R])
				storePart(x1.Mul(c[ax]).Sub(x2.Mul(s[ax])), out[o:o+R])
				storePart(x1.MulAdd(s[ax], x2.Mul(c[ax])), out[o+half:o+half+R])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}
