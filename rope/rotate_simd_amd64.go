//go:build goexperiment.simd && amd64

package rope

import (
	"simd/archsimd"

	"romae/internal/simdpart"
)

var (
	hasAVX512  = archsimd.X86.AVX512()
	hasAVX2FMA = archsimd.X86.AVX2() && archsimd.X86.FMA()
)

// rotateCopy32 is the float32 kernel of RotateSplit and MergeRotateInverse:
// for tokens r in [lo, hi) (r = b·L + l) and each head h, the head at
// dst[dOff(b,l,h):] becomes the head at src[sOff(b,l,h):] rotated (by
// minus the angles when inverse). A token's cos/sin vectors are loaded
// once for all its heads. Each half of an axis slice is loaded and stored
// once, 16 lanes at a time: the p-RoPE pairs that do not rotate go
// through the same arithmetic with cos 1 and sin 0, which gives them back
// unchanged (up to the sign of a zero), rather than a copy of the head
// that the rotated pairs then overwrite (half the loads and stores; 30%
// faster on cached data, BenchmarkRotateSplit). On CPUs without AVX-512
// rotateCopy32x8 does the same 8 lanes at a time. It returns false, doing
// nothing, where it does not apply (no AVX2 and FMA, no rotated pairs, an
// axis half wider than 64, or without AVX-512 one narrower than 8).
func rotateCopy32(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	half, R, w := l.AxisDim/2, l.R, l.D*l.R
	if R == 0 || half > 16*maxChunks {
		return false
	}
	if !hasAVX512 {
		return hasAVX2FMA && rotateCopy32x8(dst, src, cos, sin, l, L, heads, dOff, sOff, lo, hi, inverse)
	}
	chunks := (half + 15) / 16
	if chunks == 1 && l.D <= 3 && oneChunkKernel {
		rotateCopy32One(dst, src, cos, sin, l, L, heads, dOff, sOff, lo, hi, inverse)
		return true
	}
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
		st, dt := sOff.token(b, i), dOff.token(b, i)
		for h := range heads {
			in, out := src[st+h*sOff.SH:][:l.HeadDim], dst[dt+h*dOff.SH:][:l.HeadDim]
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

// rotateCopy32One is rotateCopy32 where each axis half fits one vector
// (half ≤ 16: RoMAE-tiny's heads of 60 on 2 axes have halves of 15) and
// there are at most 3 axes, with each token's cos and sin vectors in
// registers, its position in the batch counted, not divided out, and the
// masks of its short loads and stores built once (simdpart.Load16 tests
// the length and builds one on every call). The general kernel kept the
// vectors in arrays on the stack and reloaded them: 70 ns a token of 3
// heads on cached data against 38 here (one AMX Xeon core, the merge of
// one sample's dq); bf16 inference paired 0.92 (5 rounds), fp32 0.975,
// bf16 fine-tuning 0.97, fp32 within noise. Every lane's arithmetic is
// the same (TestRotateCopy32One).
func rotateCopy32One(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) {
	half, R, w, ad, D := l.AxisDim/2, l.R, l.D*l.R, l.AxisDim, l.D
	var padFrom [16]float32 // 1 in the lanes of pairs that do not rotate
	for j := R; j < 16; j++ {
		padFrom[j] = 1
	}
	pad := archsimd.LoadFloat32x16(&padFrom)
	sign := archsimd.BroadcastFloat32x16(1)
	if inverse {
		sign = archsimd.BroadcastFloat32x16(-1)
	}
	mr, mh := simdpart.Mask16(R), simdpart.Mask16(half)
	var c1, s1, c2, s2 archsimd.Float32x16
	b, i := lo/L, lo%L
	for r := lo; r < hi; r++ {
		cs, sn := cos[r*w:][:w], sin[r*w:][:w]
		c0 := simdpart.LoadMasked16(cs, mr).Add(pad)
		s0 := simdpart.LoadMasked16(sn, mr).Mul(sign)
		if D > 1 {
			c1 = simdpart.LoadMasked16(cs[R:], mr).Add(pad)
			s1 = simdpart.LoadMasked16(sn[R:], mr).Mul(sign)
		}
		if D > 2 {
			c2 = simdpart.LoadMasked16(cs[2*R:], mr).Add(pad)
			s2 = simdpart.LoadMasked16(sn[2*R:], mr).Mul(sign)
		}
		st, dt := sOff.token(b, i), dOff.token(b, i)
		for h := range heads {
			in, out := src[st+h*sOff.SH:][:D*ad], dst[dt+h*dOff.SH:][:D*ad]
			rotateHalves(in, out, half, mh, c0, s0)
			if D > 1 {
				rotateHalves(in[ad:], out[ad:], half, mh, c1, s1)
			}
			if D > 2 {
				rotateHalves(in[2*ad:], out[2*ad:], half, mh, c2, s2)
			}
		}
		if i++; i == L {
			b, i = b+1, 0
		}
	}
	archsimd.ClearAVXUpperBits()
}

// rotateHalves rotates one axis slice: its halves x1 = in[:half] and x2 =
// in[half:2·half] (both loaded before either is stored: out may be in;
// mh is the mask of half lanes, and in and out hold 2·half values: the
// caller's [:D·AxisDim] reslices checked that) become x1·c − x2·s and
// x1·s + x2·c in out.
func rotateHalves(in, out []float32, half int, mh archsimd.Mask32x16, c, s archsimd.Float32x16) {
	x1 := simdpart.LoadMasked16(in, mh)
	x2 := simdpart.LoadMasked16(in[half:], mh)
	simdpart.StoreMasked16(x1.Mul(c).Sub(x2.Mul(s)), out, mh)
	simdpart.StoreMasked16(x1.MulAdd(s, x2.Mul(c)), out[half:], mh)
}

// oneChunkKernel lets rotateCopy32 take rotateCopy32One where it applies
// (false: the general kernel), a variable so tests can compare both.
var oneChunkKernel = true

// rotateCopy32x8 is rotateCopy32 in 8-lane vectors (AVX2 and FMA), for
// CPUs without AVX-512, on axis halves of 8 or more (false otherwise).
// Before it, each head was copied and its rotated pairs then rotated by
// tensor.RotatePairs32, the last (R mod 8) pairs one at a time.
//
// A half that is not a multiple of 8 (15 for RoMAE-tiny's heads of 60 on
// 2 axes) ends in a chunk that overlaps the one before it (lanes half−8 …
// half−1) rather than a masked one. BenchmarkRotateSplit on one core of
// a Zen 4 with AVX-512 off: 1.18 ms before, 0.96 ms with masked last
// chunks (VMASKMOVPS), 0.53 ms with overlapping ones (AVX-512: 0.48).
// Overlapping lanes get the same value twice; the last chunk is loaded
// before any other is stored, so dst may be src.
func rotateCopy32x8(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	half, R, w := l.AxisDim/2, l.R, l.D*l.R
	if half < 8 {
		return false
	}
	chunks := (half + 7) / 8
	last := chunks - 1
	// Chunk q's lanes are pairs off[q] … off[q]+7; pad is 1 in the lanes
	// of pairs that do not rotate (cos 1, sin 0).
	var off [2 * maxChunks]int
	var padFrom [2 * maxChunks][8]float32
	for q := range chunks {
		off[q] = min(8*q, half-8)
		for t := range 8 {
			if off[q]+t >= R {
				padFrom[q][t] = 1
			}
		}
	}
	var c, s [3][2 * maxChunks]archsimd.Float32x8
	var pad [2 * maxChunks]archsimd.Float32x8
	for q := range chunks {
		pad[q] = archsimd.LoadFloat32x8(&padFrom[q])
	}
	sign := archsimd.BroadcastFloat32x8(1)
	if inverse {
		sign = archsimd.BroadcastFloat32x8(-1)
	}
	for r := lo; r < hi; r++ {
		b, i := r/L, r%L
		for ax := range l.D {
			o := r*w + ax*R
			for q := range chunks {
				j0, j1 := min(off[q], R), min(off[q]+8, R) // this chunk's rotated pairs
				c[ax][q] = simdpart.Load8(cos[o+j0 : o+j1]).Add(pad[q])
				s[ax][q] = simdpart.Load8(sin[o+j0 : o+j1]).Mul(sign)
			}
		}
		st, dt := sOff.token(b, i), dOff.token(b, i)
		for h := range heads {
			in, out := src[st+h*sOff.SH:][:l.HeadDim], dst[dt+h*dOff.SH:][:l.HeadDim]
			for ax := range l.D {
				o := ax * l.AxisDim
				cq, sq := c[ax][last], s[ax][last]
				x1 := archsimd.LoadFloat32x8Slice(in[o+off[last]:])
				x2 := archsimd.LoadFloat32x8Slice(in[o+half+off[last]:])
				y1, y2 := x1.Mul(cq).Sub(x2.Mul(sq)), x1.MulAdd(sq, x2.Mul(cq))
				for q := range last {
					cq, sq := c[ax][q], s[ax][q]
					x1 := archsimd.LoadFloat32x8Slice(in[o+8*q:])
					x2 := archsimd.LoadFloat32x8Slice(in[o+half+8*q:])
					x1.Mul(cq).Sub(x2.Mul(sq)).StoreSlice(out[o+8*q:])
					x1.MulAdd(sq, x2.Mul(cq)).StoreSlice(out[o+half+8*q:])
				}
				y1.StoreSlice(out[o+off[last]:])
				y2.StoreSlice(out[o+half+off[last]:])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}

// maxChunks bounds the 16-lane chunks of an axis half rotateCopy32 keeps
// in registers per token (half ≤ 64: a head of 128 on one axis).
const maxChunks = 4
