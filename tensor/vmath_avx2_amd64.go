//go:build goexperiment.simd && amd64

package tensor

// 8-lane (AVX2 + FMA) versions of the exp-based kernels, for CPUs without
// AVX-512 (AMD Zen 1–3, Intel Haswell to the client cores). Without them
// softmax and SiLU ran Exp32 one element at a time: a third of the CPU
// time of a fine-tuning step there. Same reduction and polynomial as
// Exp32; each loop leaves the rest (len mod 8) to the caller's scalar code
// and clears the upper halves first: on Intel a legacy-SSE instruction
// after dirty 256-bit state pays a transition (avxsse_amd64_test.go).

import (
	"math"
	"simd/archsimd"

	"romae/internal/simdpart"
)

var hasAVX2FMA = archsimd.X86.AVX2() && archsimd.X86.FMA()

// exp8K holds exp8's constants as whole vectors (see exp16K); the
// assembly reads them at 32-byte offsets in this field order.
var exp8K = struct {
	min, max, log2e, negLn2Hi, negLn2Lo, p0, p1, p2, p3, p4, p5, one [8]float32
}{
	splat8(exp32Min), splat8(89), splat8(exp32Log2e), splat8(-exp32Ln2Hi), splat8(-exp32Ln2Lo),
	splat8(exp32P0), splat8(exp32P1), splat8(exp32P2), splat8(exp32P3), splat8(exp32P4), splat8(exp32P5),
	splat8(1),
}

// exp8Bias is the float32 exponent bias as a vector, for the assembly.
var exp8Bias = [8]int32{127, 127, 127, 127, 127, 127, 127, 127}

func splat8(v float32) (s [8]float32) {
	for i := range s {
		s[i] = v
	}
	return s
}

// The exp-based loops run in assembly (vmath_avx2_kernel_amd64.s), on
// the operations of exp8 (vmath_avx2_kernel_amd64_test.go, which holds
// them to it bit for bit): Exp32's on 8 lanes. AVX2 has no VSCALEFPS, so
// 2^n is built from exponent bits, in two factors 2^(n>>1)·2^(n−n>>1):
// each stays a normal number for every n in [−150, 129], so gradual
// underflow rounds once (in the last multiply) and overflow gives +Inf, as
// ldexp32 does. x is clamped as in exp16. Each covers the leading
// multiple of 8 elements and returns how many.

func siluVec8(out, in []float32) int {
	n := len(out) &^ 7
	if n > 0 {
		_ = in[n-1]
		siluAVX2(&out[0], &in[0], n)
	}
	return n
}

func siluGradVec8(dIn, dOut, in []float32) int {
	n := len(dIn) &^ 7
	if n > 0 {
		_, _ = dOut[n-1], in[n-1]
		siluGradAVX2(&dIn[0], &dOut[0], &in[0], n)
	}
	return n
}

func expVec8(out, in []float32) int {
	n := len(out) &^ 7
	if n > 0 {
		_ = in[n-1]
		expAVX2(&out[0], &in[0], n)
	}
	return n
}

// softmaxMax8 is softmaxMax's vector part: the maximum of scale·s + bias
// over s[:j], j a multiple of 8 (−Inf when j = 0).
func softmaxMax8(s []float32, scale float32, bias []float32) (mx float32, j int) {
	vs := archsimd.BroadcastFloat32x8(scale)
	vm := archsimd.BroadcastFloat32x8(float32(math.Inf(-1)))
	for ; j+8 <= len(s); j += 8 {
		v := archsimd.LoadFloat32x8Slice(s[j:]).Mul(vs)
		if bias != nil {
			v = v.Add(archsimd.LoadFloat32x8Slice(bias[j:]))
		}
		vm = vm.Max(v)
	}
	return hmax8(vm), j
}

// softmaxExp8 is softmaxExp's vector part over s[:j], j a multiple of 8:
// s = e^(scale·s − mx) (0 where keep is 0), and the sum of those. The
// exponent is capped at 0 as in softmaxExp.
func softmaxExp8(s []float32, scale, mx float32, keep []float32) (sum float32, j int) {
	j = len(s) &^ 7
	if j == 0 {
		return 0, 0
	}
	var kp *float32
	if keep != nil {
		_ = keep[j-1]
		kp = &keep[0]
	}
	var acc [8]float32
	softmaxExpAVX2(&s[0], j, scale, -mx, kp, &acc)
	return hsum8(archsimd.LoadFloat32x8(&acc)), j
}

// hsum8 and hmax8 are hsum and hmax on 8 lanes, ending the vector code
// the same way.
func hsum8(v archsimd.Float32x8) float32 {
	v4 := v.GetLo().Add(v.GetHi())
	v4 = v4.AddPairs(v4)
	r := v4.AddPairs(v4).GetElem(0)
	archsimd.ClearAVXUpperBits()
	return r
}

func hmax8(v archsimd.Float32x8) float32 {
	v4 := v.GetLo().Max(v.GetHi())
	v4 = v4.Max(v4.SelectFromPair(2, 3, 0, 1, v4))
	r := v4.Max(v4.SelectFromPair(1, 0, 3, 2, v4)).GetElem(0)
	archsimd.ClearAVXUpperBits()
	return r
}

// The row primitives in 8 lanes: each but scaleVec8 returns how many
// leading elements it covered (a multiple of 8) and leaves the rest to the
// caller's scalar loop, after clearing the upper halves.

func lds8(s []float32) archsimd.Float32x8 { return archsimd.LoadFloat32x8Slice(s) }
func bcs8(v float32) archsimd.Float32x8   { return archsimd.BroadcastFloat32x8(v) }

// scaleVec8 is scaleVec whole: its tail through masked loads and stores.
func scaleVec8(x []float32, a float32) {
	va, i := bcs8(a), 0
	for ; i+8 <= len(x); i += 8 {
		lds8(x[i:]).Mul(va).StoreSlice(x[i:])
	}
	if i < len(x) {
		simdpart.Store8(simdpart.Load8(x[i:]).Mul(va), x[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func sumSqVec8(x []float32) (float32, int) {
	var acc archsimd.Float32x8
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := lds8(x[i:])
		acc = v.MulAdd(v, acc)
	}
	return hsum8(acc), i
}

func dot3Vec8(a, b, c []float32) (float32, int) {
	var acc archsimd.Float32x8
	i := 0
	for ; i+8 <= len(a); i += 8 {
		acc = lds8(a[i:]).Mul(lds8(b[i:])).MulAdd(lds8(c[i:]), acc)
	}
	return hsum8(acc), i
}

func dotVec8(a, b []float32) (float32, int) {
	var acc archsimd.Float32x8
	i := 0
	for ; i+8 <= len(a); i += 8 {
		acc = lds8(a[i:]).MulAdd(lds8(b[i:]), acc)
	}
	return hsum8(acc), i
}

func scaleMulVec8(y, x, g []float32, s float32) int {
	vs, i := bcs8(s), 0
	for ; i+8 <= len(y); i += 8 {
		lds8(x[i:]).Mul(vs).Mul(lds8(g[i:])).StoreSlice(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func rotateVec8(y1, y2, x1, x2, c, s []float32, sign float32) int {
	vsg, i := bcs8(sign), 0
	for ; i+8 <= len(c); i += 8 {
		a, b := lds8(x1[i:]), lds8(x2[i:])
		vc, vs := lds8(c[i:]), lds8(s[i:]).Mul(vsg)
		a.Mul(vc).Sub(b.Mul(vs)).StoreSlice(y1[i:])
		a.MulAdd(vs, b.Mul(vc)).StoreSlice(y2[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func addScaledVec8(out, x, y []float32, s float32) int {
	vs, i := bcs8(s), 0
	for ; i+8 <= len(out); i += 8 {
		lds8(y[i:]).MulAdd(vs, lds8(x[i:])).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func movingAverageVec8(avg, x []float32, d float32) int {
	vd, vr, i := bcs8(d), bcs8(1-d), 0
	for ; i+8 <= len(avg); i += 8 {
		lds8(avg[i:]).Mul(vd).Add(lds8(x[i:]).Mul(vr)).StoreSlice(avg[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func rmsGradVec8(dx, dy, g, x []float32, s, c float32, accum bool) int {
	vs, vnc, i := bcs8(s), bcs8(-c), 0
	for ; i+8 <= len(dx); i += 8 {
		v := lds8(x[i:]).MulAdd(vnc, lds8(dy[i:]).Mul(lds8(g[i:]))).Mul(vs)
		if accum {
			v = v.Add(lds8(dx[i:]))
		}
		v.StoreSlice(dx[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func mulAccVec8(acc, a, b []float32, s float32) int {
	vs, i := bcs8(s), 0
	for ; i+8 <= len(acc); i += 8 {
		lds8(a[i:]).Mul(lds8(b[i:])).MulAdd(vs, lds8(acc[i:])).StoreSlice(acc[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func softmaxGradVec8(ds, p []float32, dot, scale float32) int {
	vd, vs, i := bcs8(dot), bcs8(scale), 0
	for ; i+8 <= len(ds); i += 8 {
		lds8(p[i:]).Mul(lds8(ds[i:]).Sub(vd)).Mul(vs).StoreSlice(ds[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// The assembly loops (vmath_avx2_kernel_amd64.s); n a multiple of 8.
//
//go:noescape
func expAVX2(out, in *float32, n int)

//go:noescape
func siluAVX2(out, in *float32, n int)

//go:noescape
func siluGradAVX2(dIn, dOut, in *float32, n int)

//go:noescape
func softmaxExpAVX2(s *float32, n int, scale, negMx float32, keep *float32, acc *[8]float32)
