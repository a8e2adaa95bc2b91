//go:build goexperiment.simd && amd64

package recsys

import (
	"math"
	"simd/archsimd"
)

var hasAVX512 = archsimd.X86.AVX512()

// Cephes sinf/cosf: π/2 in three parts for the reduction (exact products
// with quadrant numbers below 2^13), minimax polynomials on [−π/4, π/4].
const (
	sinDP1 = 1.5703125
	sinDP2 = 4.837512969970703125e-4
	sinDP3 = 7.54978995489188216e-8
	// sineVecMax bounds |ω0·pre| for the vector path; larger arguments
	// (none in practice) go to math.Sincos.
	sineVecMax = 8192
)

// sineVec writes out = sin(ω0·pre), deriv = ω0·cos(ω0·pre) for the
// leading 16-element blocks of pre, 16 lanes at a time, and returns how
// many elements it did (the caller finishes the rest). Accurate to about
// 1e-7 absolute; a block with an argument beyond sineVecMax (none in
// practice) goes through math.Sincos. SIREN-RoPE's 2 × hidden sines per token were most of its
// step-time overhead through math.Sincos.
func sineVec(out, deriv, pre []float32, w0 float32) int {
	if !hasAVX512 {
		return 0
	}
	vw0 := archsimd.BroadcastFloat32x16(w0)
	twoOverPi := archsimd.BroadcastFloat32x16(0.63661977236758134308)
	limit := archsimd.BroadcastFloat32x16(sineVecMax)
	absMask := archsimd.BroadcastInt32x16(0x7fffffff)
	three, one := archsimd.BroadcastInt32x16(3), archsimd.BroadcastInt32x16(1)
	zero := archsimd.BroadcastInt32x16(0)
	i := 0
	for ; i+16 <= len(pre); i += 16 {
		x := archsimd.LoadFloat32x16Slice(pre[i:]).Mul(vw0)
		if x.AsInt32x16().And(absMask).AsFloat32x16().Greater(limit).ToBits() != 0 {
			archsimd.ClearAVXUpperBits() // before scalar float64 work and calls
			for k := i; k < i+16; k++ {
				s, c := math.Sincos(float64(w0) * float64(pre[k]))
				out[k], deriv[k] = float32(s), float32(float64(w0)*c)
			}
			continue
		}
		j := x.Mul(twoOverPi).RoundToEvenScaled(0)
		r := j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP1), x)
		r = j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP2), r)
		r = j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP3), r)
		z := r.Mul(r)
		ps := archsimd.BroadcastFloat32x16(-1.9515295891e-4)
		ps = ps.MulAdd(z, archsimd.BroadcastFloat32x16(8.3321608736e-3))
		ps = ps.MulAdd(z, archsimd.BroadcastFloat32x16(-1.6666654611e-1))
		s := ps.Mul(z).MulAdd(r, r)
		pc := archsimd.BroadcastFloat32x16(2.443315711809948e-5)
		pc = pc.MulAdd(z, archsimd.BroadcastFloat32x16(-1.388731625493765e-3))
		pc = pc.MulAdd(z, archsimd.BroadcastFloat32x16(4.166664568298827e-2))
		c := pc.Mul(z).MulAdd(z, archsimd.BroadcastFloat32x16(-0.5).MulAdd(z, archsimd.BroadcastFloat32x16(1)))
		// Quadrant q = j mod 4: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s).
		q := j.ConvertToInt32().And(three)
		odd := q.And(one).Equal(zero) // true: q even
		sinB, cosB := s.Merge(c, odd), c.Merge(s, odd)
		sinSign := q.And(archsimd.BroadcastInt32x16(2)).ShiftAllLeft(30)
		cosSign := q.Add(one).And(archsimd.BroadcastInt32x16(2)).ShiftAllLeft(30)
		sinB.AsInt32x16().Xor(sinSign).AsFloat32x16().StoreSlice(out[i:])
		cosB.AsInt32x16().Xor(cosSign).AsFloat32x16().Mul(vw0).StoreSlice(deriv[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// angleGradAcc adds g₂·y₁ − g₁·y₂ for the 8 pairs at off to acc. A function the
// compiler inlines rather than a loop over {q, k}: copying the loop's
// slice pairs took legacy-SSE moves with dirty upper state.
func angleGradAcc(acc archsimd.Float32x8, y, g []float32, off, half int) archsimd.Float32x8 {
	y1, y2 := archsimd.LoadFloat32x8Slice(y[off:]), archsimd.LoadFloat32x8Slice(y[off+half:])
	g1, g2 := archsimd.LoadFloat32x8Slice(g[off:]), archsimd.LoadFloat32x8Slice(g[off+half:])
	return g2.MulAdd(y1, acc).Sub(g1.Mul(y2))
}

// angleGradVec is rope.Table.AngleGrad for q and k in one pass:
// dAngles[r, j] += Σ_heads (g₂·y₁ − g₁·y₂) over the rotated pairs (y₁, y₂) =
// (y[j], y[j+hd/2]) of q (gradient dq) and of k (dk), all head-major
// [B,H,L,hd], 8 pairs per vector. It reports false, doing nothing, unless
// every pair rotates (R = hd/2) and R is a multiple of 8.
func angleGradVec(dAngles, yq, dq, yk, dk []float32, B, L, H, hd, R int) bool {
	half := hd / 2
	if !hasAVX512 || R != half || R%8 != 0 {
		return false
	}
	for r := 0; r < B*L; r++ {
		b, i := r/L, r%L
		da := dAngles[r*R : (r+1)*R]
		for j := 0; j < R; j += 8 {
			acc := archsimd.LoadFloat32x8Slice(da[j:])
			for h := 0; h < H; h++ {
				off := ((b*H+h)*L+i)*hd + j
				acc = angleGradAcc(acc, yq, dq, off, half)
				acc = angleGradAcc(acc, yk, dk, off, half)
			}
			acc.StoreSlice(da[j:])
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}
