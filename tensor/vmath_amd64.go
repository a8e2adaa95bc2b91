//go:build goexperiment.simd && amd64

package tensor

import (
	"math"
	"simd/archsimd"

	"romae/internal/simdpart"
)

var hasAVX512 = archsimd.X86.AVX512()

// vectorLanes is the float32 lanes of the element-wise kernels: their
// sums (softmax, norms) group values by it (Numerics).
func vectorLanes() int {
	if hasAVX512 {
		return 16
	}
	return 8
}

// exp16 is Exp32 on 16 lanes (same reduction and polynomial), with the
// 2^n step done by VSCALEFPS, which also gets overflow (+Inf) and gradual
// underflow right. x is clamped into [exp32Min, exp32Max+ε] first, so −Inf
// gives a tiny non-negative number: callers that need an exact 0 multiply
// by a keep mask.
func exp16(x archsimd.Float32x16) archsimd.Float32x16 {
	k := &exp16K
	x = x.Max(archsimd.LoadFloat32x16(&k.min)).Min(archsimd.LoadFloat32x16(&k.max))
	n := x.Mul(archsimd.LoadFloat32x16(&k.log2e)).RoundToEvenScaled(0)
	r := n.MulAdd(archsimd.LoadFloat32x16(&k.negLn2Hi), x)
	r = n.MulAdd(archsimd.LoadFloat32x16(&k.negLn2Lo), r)
	p := archsimd.LoadFloat32x16(&k.p0)
	p = p.MulAdd(r, archsimd.LoadFloat32x16(&k.p1))
	p = p.MulAdd(r, archsimd.LoadFloat32x16(&k.p2))
	p = p.MulAdd(r, archsimd.LoadFloat32x16(&k.p3))
	p = p.MulAdd(r, archsimd.LoadFloat32x16(&k.p4))
	p = p.MulAdd(r, archsimd.LoadFloat32x16(&k.p5))
	return p.MulAdd(r.Mul(r), r).Add(archsimd.LoadFloat32x16(&k.one)).Scale(n)
}

// exp16K holds exp16's constants as whole vectors. A broadcast constant
// is rebuilt where it is used, inside the loop (a scalar load and a
// VBROADCASTSS each: 24 of a softmax iteration's ~45 instructions); a
// vector load folds into the instruction that uses it.
var exp16K = struct {
	min, max, log2e, negLn2Hi, negLn2Lo, p0, p1, p2, p3, p4, p5, one [16]float32
}{
	splat16(exp32Min), splat16(89), splat16(exp32Log2e), splat16(-exp32Ln2Hi), splat16(-exp32Ln2Lo),
	splat16(exp32P0), splat16(exp32P1), splat16(exp32P2), splat16(exp32P3), splat16(exp32P4), splat16(exp32P5),
	splat16(1),
}

func splat16(v float32) (s [16]float32) {
	for i := range s {
		s[i] = v
	}
	return s
}

func siluVec(out, in []float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return siluVec8(out, in)
		}
		return 0
	}
	var zero archsimd.Float32x16 // not Broadcast(0): that builds 0 with a legacy-SSE XORPS
	one := archsimd.BroadcastFloat32x16(1)
	i := 0
	for ; i+16 <= len(out); i += 16 {
		x := archsimd.LoadFloat32x16Slice(in[i:])
		e := exp16(zero.Sub(x))
		x.Div(e.Add(one)).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func siluGradVec(dIn, dOut, in []float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return siluGradVec8(dIn, dOut, in)
		}
		return 0
	}
	var zero archsimd.Float32x16
	one := archsimd.BroadcastFloat32x16(1)
	i := 0
	for ; i+16 <= len(dIn); i += 16 {
		x := archsimd.LoadFloat32x16Slice(in[i:])
		s := one.Div(exp16(zero.Sub(x)).Add(one))
		// dOut·s·(1 + x·(1−s))
		t := x.Mul(one.Sub(s)).Add(one)
		archsimd.LoadFloat32x16Slice(dOut[i:]).Mul(s).Mul(t).StoreSlice(dIn[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func scaleVec(x []float32, a float32) {
	if !hasAVX512 {
		if hasAVX2FMA {
			scaleVec8(x, a)
		} else {
			scaleTail(x, a)
		}
		return
	}
	va := archsimd.BroadcastFloat32x16(a)
	i := 0
	for ; i+16 <= len(x); i += 16 {
		archsimd.LoadFloat32x16Slice(x[i:]).Mul(va).StoreSlice(x[i:])
	}
	if i < len(x) {
		simdpart.Store16(simdpart.Load16(x[i:]).Mul(va), x[i:])
	}
	archsimd.ClearAVXUpperBits()
}

// laneTail[16−n:32−n] loads as n lanes of 0 then 16−n lanes of −Inf;
// laneKeep[16−n:32−n] as n ones then zeros. They turn the zero-filled
// lanes of a masked tail load into neutral elements (of max, of a sum),
// so attention rows (201 keys = 12·16 + 9) have no scalar tail.
var laneTail, laneKeep = func() (t, k [32]float32) {
	for i := 16; i < 32; i++ {
		t[i] = float32(math.Inf(-1))
	}
	for i := range 16 {
		k[i] = 1
	}
	return
}()

func softmaxMax(s []float32, scale float32, bias []float32) float32 {
	mx := float32(math.Inf(-1))
	if !hasAVX512 {
		j := 0
		if hasAVX2FMA {
			mx, j = softmaxMax8(s, scale, bias)
		}
		for ; j < len(s); j++ {
			v := s[j] * scale
			if bias != nil {
				v += bias[j]
			}
			mx = max(mx, v)
		}
		return mx
	}
	vs := archsimd.BroadcastFloat32x16(scale)
	vm := archsimd.BroadcastFloat32x16(mx)
	j := 0
	for ; j+16 <= len(s); j += 16 {
		v := archsimd.LoadFloat32x16Slice(s[j:]).Mul(vs)
		if bias != nil {
			v = v.Add(archsimd.LoadFloat32x16Slice(bias[j:]))
		}
		vm = vm.Max(v)
	}
	if n := len(s) - j; n > 0 {
		v := simdpart.Load16(s[j:]).Mul(vs).Add(archsimd.LoadFloat32x16Slice(laneTail[16-n:]))
		if bias != nil {
			v = v.Add(simdpart.Load16(bias[j:len(s)]))
		}
		vm = vm.Max(v)
	}
	return hmax(vm)
}

func softmaxExp(s []float32, scale, mx float32, bias, keep []float32) float32 {
	if !hasAVX512 {
		var sum float32
		j := 0
		if hasAVX2FMA {
			sum, j = softmaxExp8(s, scale, mx, keep)
		}
		for ; j < len(s); j++ {
			v := s[j]*scale - mx
			if keep != nil && keep[j] == 0 {
				s[j] = 0
				continue
			}
			e := Exp32(v)
			s[j] = e
			sum += e
		}
		return sum
	}
	// Every exponent is capped at 0, its value for the row's maximum: a
	// masked key (or a zero-filled tail lane) can score far above the
	// unmasked maximum, and e^(>88.7) = +Inf would turn its ×0 into NaN.
	vs, vmx := archsimd.BroadcastFloat32x16(scale), archsimd.BroadcastFloat32x16(-mx)
	var acc, zero archsimd.Float32x16
	j := 0
	for ; j+16 <= len(s); j += 16 {
		e := exp16(archsimd.LoadFloat32x16Slice(s[j:]).MulAdd(vs, vmx).Min(zero))
		if keep != nil {
			e = e.Mul(archsimd.LoadFloat32x16Slice(keep[j:]))
		}
		e.StoreSlice(s[j:])
		acc = acc.Add(e)
	}
	if n := len(s) - j; n > 0 {
		e := exp16(simdpart.Load16(s[j:]).MulAdd(vs, vmx).Min(zero))
		if keep != nil {
			e = e.Mul(simdpart.Load16(keep[j:len(s)]))
		} else {
			e = e.Mul(archsimd.LoadFloat32x16Slice(laneKeep[16-n:]))
		}
		simdpart.Store16(e, s[j:])
		acc = acc.Add(e)
	}
	return hsum(acc)
}

func expVec(out, in []float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return expVec8(out, in)
		}
		return 0
	}
	i := 0
	for ; i+16 <= len(out); i += 16 {
		exp16(archsimd.LoadFloat32x16Slice(in[i:])).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func ld(s []float32) archsimd.Float32x16 { return archsimd.LoadFloat32x16Slice(s) }
func bc(v float32) archsimd.Float32x16   { return archsimd.BroadcastFloat32x16(v) }

// hsum and hmax reduce the 16 lanes in registers (halving shuffles), not
// through a store and 16 dependent scalar steps: they end every softmax
// and dot-product row, so their latency counts. They end the caller's
// vector code: the upper halves are cleared (VZEROUPPER) before the
// float32 result goes back to scalar code (see avxsse_amd64_test.go).
func hsum(v archsimd.Float32x16) float32 {
	v8 := v.GetLo().Add(v.GetHi())
	v4 := v8.GetLo().Add(v8.GetHi())
	v4 = v4.AddPairs(v4)
	r := v4.AddPairs(v4).GetElem(0)
	archsimd.ClearAVXUpperBits()
	return r
}

func hmax(v archsimd.Float32x16) float32 {
	v8 := v.GetLo().Max(v.GetHi())
	v4 := v8.GetLo().Max(v8.GetHi())
	v4 = v4.Max(v4.SelectFromPair(2, 3, 0, 1, v4))
	r := v4.Max(v4.SelectFromPair(1, 0, 3, 2, v4)).GetElem(0)
	archsimd.ClearAVXUpperBits()
	return r
}

func sumSqVec(x []float32) (float32, int) {
	if !hasAVX512 {
		if hasAVX2FMA {
			return sumSqVec8(x)
		}
		return 0, 0
	}
	if len(x) < 16 {
		return 0, 0
	}
	var acc archsimd.Float32x16
	i := 0
	for ; i+16 <= len(x); i += 16 {
		v := ld(x[i:])
		acc = v.MulAdd(v, acc)
	}
	return hsum(acc), i
}

func dot3Vec(a, b, c []float32) (float32, int) {
	if !hasAVX512 {
		if hasAVX2FMA {
			return dot3Vec8(a, b, c)
		}
		return 0, 0
	}
	if len(a) < 16 {
		return 0, 0
	}
	var acc archsimd.Float32x16
	i := 0
	for ; i+16 <= len(a); i += 16 {
		acc = ld(a[i:]).Mul(ld(b[i:])).MulAdd(ld(c[i:]), acc)
	}
	return hsum(acc), i
}

func dotVec(a, b []float32) (float32, int) {
	if !hasAVX512 {
		if hasAVX2FMA {
			return dotVec8(a, b)
		}
		return 0, 0
	}
	if len(a) < 16 {
		return 0, 0
	}
	var acc archsimd.Float32x16
	i := 0
	for ; i+16 <= len(a); i += 16 {
		acc = ld(a[i:]).MulAdd(ld(b[i:]), acc)
	}
	if i < len(a) { // masked tail: the zero-filled lanes add nothing
		acc = simdpart.Load16(a[i:]).MulAdd(simdpart.Load16(b[i:len(a)]), acc)
	}
	return hsum(acc), len(a)
}

func scaleMulVec(y, x, g []float32, s float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return scaleMulVec8(y, x, g, s)
		}
		return 0
	}
	vs, i := bc(s), 0
	for ; i+16 <= len(y); i += 16 {
		ld(x[i:]).Mul(vs).Mul(ld(g[i:])).StoreSlice(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// rotateVec rotates all n pairs (a short last group through masked loads
// and stores: RoPE axes rotate ~11 pairs); sign −1 rotates backwards.
func rotateVec(y1, y2, x1, x2, c, s []float32, sign float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return rotateVec8(y1, y2, x1, x2, c, s, sign)
		}
		return 0
	}
	n, vsg := len(c), bc(sign)
	for i := 0; i < n; i += 16 {
		e := min(i+16, n)
		a, b := simdpart.Load16(x1[i:e]), simdpart.Load16(x2[i:e])
		vc, vs := simdpart.Load16(c[i:e]), simdpart.Load16(s[i:e]).Mul(vsg)
		simdpart.Store16(a.Mul(vc).Sub(b.Mul(vs)), y1[i:e])
		simdpart.Store16(a.MulAdd(vs, b.Mul(vc)), y2[i:e])
	}
	archsimd.ClearAVXUpperBits()
	return n
}

func addScaledVec(out, x, y []float32, s float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return addScaledVec8(out, x, y, s)
		}
		return 0
	}
	vs, i := bc(s), 0
	for ; i+16 <= len(out); i += 16 {
		ld(y[i:]).MulAdd(vs, ld(x[i:])).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// movingAverageVec: Mul, Mul, Add, never MulAdd, to round as the scalar
// tail does.
func movingAverageVec(avg, x []float32, d float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return movingAverageVec8(avg, x, d)
		}
		return 0
	}
	vd, vr, i := bc(d), bc(1-d), 0
	for ; i+16 <= len(avg); i += 16 {
		ld(avg[i:]).Mul(vd).Add(ld(x[i:]).Mul(vr)).StoreSlice(avg[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func rmsGradVec(dx, dy, g, x []float32, s, c float32, accum bool) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return rmsGradVec8(dx, dy, g, x, s, c, accum)
		}
		return 0
	}
	vs, vnc, i := bc(s), bc(-c), 0
	for ; i+16 <= len(dx); i += 16 {
		v := ld(x[i:]).MulAdd(vnc, ld(dy[i:]).Mul(ld(g[i:]))).Mul(vs)
		if accum {
			v = v.Add(ld(dx[i:]))
		}
		v.StoreSlice(dx[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func mulAccVec(acc, a, b []float32, s float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return mulAccVec8(acc, a, b, s)
		}
		return 0
	}
	vs, i := bc(s), 0
	for ; i+16 <= len(acc); i += 16 {
		ld(a[i:]).Mul(ld(b[i:])).MulAdd(vs, ld(acc[i:])).StoreSlice(acc[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func softmaxGradVec(ds, p []float32, dot, scale float32) int {
	if !hasAVX512 {
		if hasAVX2FMA {
			return softmaxGradVec8(ds, p, dot, scale)
		}
		return 0
	}
	vd, vs, i := bc(dot), bc(scale), 0
	for ; i+16 <= len(ds); i += 16 {
		ld(p[i:]).Mul(ld(ds[i:]).Sub(vd)).Mul(vs).StoreSlice(ds[i:])
	}
	if i < len(ds) {
		simdpart.Store16(simdpart.Load16(p[i:len(ds)]).Mul(simdpart.Load16(ds[i:]).Sub(vd)).Mul(vs), ds[i:])
	}
	archsimd.ClearAVXUpperBits()
	return len(ds)
}
