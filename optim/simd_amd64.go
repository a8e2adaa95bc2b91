//go:build goexperiment.simd && amd64

package optim

import "simd/archsimd"

var (
	hasAVX512  = archsimd.X86.AVX512()
	hasAVX2FMA = archsimd.X86.AVX2() && archsimd.X86.FMA()
)

// adamVec is adamKernel's update on 16 lanes at a time, with the same
// operations in the same order and no fused multiply-adds, so every value
// rounds exactly as the scalar loop (and PyTorch) does: IEEE division and
// square root are correctly rounded in both. It returns how many leading
// elements it updated; the scalar loop does the rest. The update is
// memory-bound once vectorised (w, g, m, v read, w, m, v written).
// small is the caller's lerpW < 0.5: a float compare here would run as
// legacy SSE after the broadcasts (see docs/performance.md).
func adamVec(w, g, m, v []float32, dm float32, k *adamScalars, small bool) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return adamVec8(w, g, m, v, dm, k, small)
		}
		return 0
	}
	lw, b2, omb2 := archsimd.BroadcastFloat32x16(k.lerpW), archsimd.BroadcastFloat32x16(k.beta2), archsimd.BroadcastFloat32x16(k.oneMinusBeta2)
	bc2s, eps, ns := archsimd.BroadcastFloat32x16(k.bc2Sqrt), archsimd.BroadcastFloat32x16(k.eps), archsimd.BroadcastFloat32x16(k.negStepSize)
	vdm, olw := archsimd.BroadcastFloat32x16(dm), archsimd.BroadcastFloat32x16(1-k.lerpW)
	i := 0
	for ; i+16 <= len(w); i += 16 {
		gi, mi := archsimd.LoadFloat32x16Slice(g[i:]), archsimd.LoadFloat32x16Slice(m[i:])
		if small {
			mi = mi.Add(lw.Mul(gi.Sub(mi)))
		} else {
			mi = gi.Sub(gi.Sub(mi).Mul(olw))
		}
		vi := archsimd.LoadFloat32x16Slice(v[i:]).Mul(b2).Add(omb2.Mul(gi).Mul(gi))
		mi.StoreSlice(m[i:])
		vi.StoreSlice(v[i:])
		wi := archsimd.LoadFloat32x16Slice(w[i:]).Mul(vdm)
		wi.Add(ns.Mul(mi).Div(vi.Sqrt().Div(bc2s).Add(eps))).StoreSlice(w[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// adamVec8 is adamVec on 8 lanes, for CPUs without AVX-512.
func adamVec8(w, g, m, v []float32, dm float32, k *adamScalars, small bool) int {
	lw, b2, omb2 := archsimd.BroadcastFloat32x8(k.lerpW), archsimd.BroadcastFloat32x8(k.beta2), archsimd.BroadcastFloat32x8(k.oneMinusBeta2)
	bc2s, eps, ns := archsimd.BroadcastFloat32x8(k.bc2Sqrt), archsimd.BroadcastFloat32x8(k.eps), archsimd.BroadcastFloat32x8(k.negStepSize)
	vdm, olw := archsimd.BroadcastFloat32x8(dm), archsimd.BroadcastFloat32x8(1-k.lerpW)
	i := 0
	for ; i+8 <= len(w); i += 8 {
		gi, mi := archsimd.LoadFloat32x8Slice(g[i:]), archsimd.LoadFloat32x8Slice(m[i:])
		if small {
			mi = mi.Add(lw.Mul(gi.Sub(mi)))
		} else {
			mi = gi.Sub(gi.Sub(mi).Mul(olw))
		}
		vi := archsimd.LoadFloat32x8Slice(v[i:]).Mul(b2).Add(omb2.Mul(gi).Mul(gi))
		mi.StoreSlice(m[i:])
		vi.StoreSlice(v[i:])
		wi := archsimd.LoadFloat32x8Slice(w[i:]).Mul(vdm)
		wi.Add(ns.Mul(mi).Div(vi.Sqrt().Div(bc2s).Add(eps))).StoreSlice(w[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// sumSquaresVec is Σ x² in float64 over the leading multiple of 16
// elements (converted 8 at a time, two accumulators; 4 at a time, four
// accumulators, without AVX-512); it returns the sum and how many
// elements it covered.
func sumSquaresVec(x []float32) (float64, int) {
	if len(x) < 16 {
		return 0, 0
	}
	if !hasAVX512 {
		if hasAVX2FMA {
			return sumSquaresVec4(x)
		}
		return 0, 0
	}
	var acc0, acc1 archsimd.Float64x8
	i := 0
	for ; i+16 <= len(x); i += 16 {
		a := archsimd.LoadFloat32x8Slice(x[i:]).ConvertToFloat64()
		b := archsimd.LoadFloat32x8Slice(x[i+8:]).ConvertToFloat64()
		acc0, acc1 = a.MulAdd(a, acc0), b.MulAdd(b, acc1)
	}
	var t [8]float64
	acc0.Add(acc1).Store(&t)
	archsimd.ClearAVXUpperBits() // before the scalar float64 sum
	return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7])), i
}

func sumSquaresVec4(x []float32) (float64, int) {
	var acc0, acc1, acc2, acc3 archsimd.Float64x4
	i := 0
	for ; i+16 <= len(x); i += 16 {
		a := archsimd.LoadFloat32x4Slice(x[i:]).ConvertToFloat64()
		b := archsimd.LoadFloat32x4Slice(x[i+4:]).ConvertToFloat64()
		c := archsimd.LoadFloat32x4Slice(x[i+8:]).ConvertToFloat64()
		d := archsimd.LoadFloat32x4Slice(x[i+12:]).ConvertToFloat64()
		acc0, acc1, acc2, acc3 = a.MulAdd(a, acc0), b.MulAdd(b, acc1), c.MulAdd(c, acc2), d.MulAdd(d, acc3)
	}
	var t [4]float64
	acc0.Add(acc1).Add(acc2.Add(acc3)).Store(&t)
	archsimd.ClearAVXUpperBits() // before the scalar float64 sum
	return (t[0] + t[1]) + (t[2] + t[3]), i
}
