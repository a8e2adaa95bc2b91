package tensor

import "math"

// Float32 element-wise kernels for the hot non-GEMM ops: exp (softmax),
// SiLU and its derivative. They are float32 throughout: the float64
// math.Exp they replace cost ~20 ns per element, about a fifth of a
// training step (see docs/performance.md). The AVX-512 versions (simd
// builds) use the same polynomial, so results agree to an ulp or so.

// exp32 constants: x = n·ln2 + r with |r| ≤ ln2/2, ln2 split in a part
// exact in float32 (hi) and the rest (lo) so r carries no rounding from n;
// e^r from Cephes expf's degree-6 minimax polynomial.
const (
	exp32Log2e = 1.44269504088896341
	exp32Ln2Hi = 0.693359375
	exp32Ln2Lo = -2.12194440e-4
	exp32Max   = 88.72283935546875 // above: +Inf
	exp32Min   = -103.97207708     // below: 0
	exp32P0    = 1.9875691500e-4
	exp32P1    = 1.3981999507e-3
	exp32P2    = 8.3334519073e-3
	exp32P3    = 4.1665795894e-2
	exp32P4    = 1.6666665459e-1
	exp32P5    = 5.0000001201e-1
)

// Exp32 is e^x in float32 arithmetic: relative error below 1e-6 for
// results in the normal range (|x| ≲ 87), +Inf above 88.72, 0 below −104,
// NaN for NaN.
func Exp32(x float32) float32 {
	switch {
	case x > exp32Max:
		return float32(math.Inf(1))
	case x < exp32Min:
		return 0
	case x != x:
		return x
	}
	n := float32(math.RoundToEven(float64(x * exp32Log2e)))
	r := x - n*exp32Ln2Hi
	r -= n * exp32Ln2Lo
	p := float32(exp32P0)
	p = p*r + exp32P1
	p = p*r + exp32P2
	p = p*r + exp32P3
	p = p*r + exp32P4
	p = p*r + exp32P5
	p = p*(r*r) + r + 1
	return ldexp32(p, int(n))
}

// ldexp32 is p·2^e for p in [0.5, 2) and e in [−150, 128].
func ldexp32(p float32, e int) float32 {
	if e > 127 {
		return p * 2 * float32frombits(uint32(e-1+127)<<23)
	}
	if e < -126 {
		// Two steps so the denormal result rounds once.
		return p * float32frombits(uint32(e+64+127)<<23) * float32frombits(uint32(-64+127)<<23)
	}
	return p * float32frombits(uint32(e+127)<<23)
}

func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

// Sigmoid32 is 1/(1+e^−x) in float32.
func Sigmoid32(x float32) float32 { return 1 / (1 + Exp32(-x)) }

// SiLU32 writes out[i] = in[i]·σ(in[i]) for every i; out may alias in.
func SiLU32(out, in []float32) {
	in = in[:len(out)]
	i := siluVec(out, in)
	for ; i < len(out); i++ {
		x := in[i]
		out[i] = x * Sigmoid32(x)
	}
}

// SiLUGrad32 writes dIn[i] = dOut[i]·σ(x)·(1 + x·(1−σ(x))), x = in[i].
func SiLUGrad32(dIn, dOut, in []float32) {
	dOut, in = dOut[:len(dIn)], in[:len(dIn)]
	i := siluGradVec(dIn, dOut, in)
	for ; i < len(dIn); i++ {
		x := in[i]
		s := Sigmoid32(x)
		dIn[i] = dOut[i] * s * (1 + x*(1-s))
	}
}

// SoftmaxRow32 replaces s by softmax(scale·s + bias) where bias is 0 or
// −Inf per column (nil: all 0) and keep is 1 where bias is 0 and 0 where
// it is −Inf, so masked columns get exactly 0. A row whose columns are
// all masked becomes all zeros.
func SoftmaxRow32(s []float32, scale float32, bias, keep []float32) {
	if bias != nil {
		bias, keep = bias[:len(s)], keep[:len(s)]
	}
	mx := softmaxMax(s, scale, bias)
	if math.IsInf(float64(mx), -1) {
		clear(s)
		return
	}
	sum := softmaxExp(s, scale, mx, bias, keep)
	inv := 1 / sum
	scaleVec(s, inv)
}

// Scale32 is x *= a.
func Scale32(x []float32, a float32) { scaleVec(x, a) }

// scaleTail is x *= a for the elements vector code did not cover.
func scaleTail(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// Exp32Slice writes out[i] = e^in[i] (Exp32, vectorised where possible).
func Exp32Slice(out, in []float32) {
	in = in[:len(out)]
	i := expVec(out, in)
	for ; i < len(out); i++ {
		out[i] = Exp32(in[i])
	}
}

// Float32 row primitives for the normalisation and softmax backward passes
// (vectorised on AVX-512 builds). All take equal-length slices.

// SumSq32 is Σ x².
func SumSq32(x []float32) float32 {
	s, i := sumSqVec(x)
	for ; i < len(x); i++ {
		s += x[i] * x[i]
	}
	return s
}

// Dot3_32 is Σ a·b·c.
func Dot3_32(a, b, c []float32) float32 {
	b, c = b[:len(a)], c[:len(a)]
	s, i := dot3Vec(a, b, c)
	for ; i < len(a); i++ {
		s += a[i] * b[i] * c[i]
	}
	return s
}

// Dot32 is Σ a·b.
func Dot32(a, b []float32) float32 {
	b = b[:len(a)]
	s, i := dotVec(a, b)
	for ; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

// ScaleMul32 is y = s·x⊙g.
func ScaleMul32(y, x, g []float32, s float32) {
	x, g = x[:len(y)], g[:len(y)]
	i := scaleMulVec(y, x, g, s)
	for ; i < len(y); i++ {
		y[i] = x[i] * s * g[i]
	}
}

// RMSNormGrad32 is dx = s·(dy⊙g − c·x), or dx += that when accum.
func RMSNormGrad32(dx, dy, g, x []float32, s, c float32, accum bool) {
	dy, g, x = dy[:len(dx)], g[:len(dx)], x[:len(dx)]
	i := rmsGradVec(dx, dy, g, x, s, c, accum)
	for ; i < len(dx); i++ {
		v := s * (dy[i]*g[i] - x[i]*c)
		if accum {
			dx[i] += v
		} else {
			dx[i] = v
		}
	}
}

// MulAcc32 is acc += s·a⊙b.
func MulAcc32(acc, a, b []float32, s float32) {
	a, b = a[:len(acc)], b[:len(acc)]
	i := mulAccVec(acc, a, b, s)
	for ; i < len(acc); i++ {
		acc[i] += a[i] * b[i] * s
	}
}

// SoftmaxGrad32 is ds = p⊙(ds⊙mask − Σ p⊙ds⊙mask)·scale (mask nil: 1),
// the softmax backward of one row.
func SoftmaxGrad32(ds, p, mask []float32, scale float32) {
	p = p[:len(ds)]
	if mask != nil {
		mask = mask[:len(ds)]
		for j := range ds {
			ds[j] *= mask[j]
		}
	}
	dot := Dot32(p, ds)
	i := softmaxGradVec(ds, p, dot, scale)
	for ; i < len(ds); i++ {
		ds[i] = p[i] * (ds[i] - dot) * scale
	}
}

// AddScaled32 is out = x + s·y (out may alias x).
func AddScaled32(out, x, y []float32, s float32) {
	x, y = x[:len(out)], y[:len(out)]
	i := addScaledVec(out, x, y, s)
	for ; i < len(out); i++ {
		out[i] = x[i] + s*y[i]
	}
}

// RotatePairs32 writes into (y1[j], y2[j]) the pairs (x1[j], x2[j])
// rotated by the angles whose cosines and sines are c[j], s[j] (by minus
// those angles when inverse): RoPE's rotate-half on one axis of one head.
// y may be x (in place). Reading x and writing y separately lets RoPE
// fused with a head split read its source rather than the copy it has
// just stored, which would stall on store-to-load forwarding.
func RotatePairs32(y1, y2, x1, x2, c, s []float32, inverse bool) {
	n := len(c)
	y1, y2, x1, x2, s = y1[:n], y2[:n], x1[:n], x2[:n], s[:n]
	sign := float32(1)
	if inverse {
		sign = -1
	}
	for i := rotateVec(y1, y2, x1, x2, c, s, sign); i < n; i++ {
		a, b, si := x1[i], x2[i], sign*s[i]
		y1[i], y2[i] = a*c[i]-b*si, b*c[i]+a*si
	}
}

// MovingAverage32 is avg = d·avg + (1−d)·x, element-wise over several
// cores: the weights' moving average (train.ema), folded in after every
// optimiser step. Each element is two products and a sum, each rounded
// (no fused multiply-add), so the vector lanes, the scalar tail and any
// core count give the same bits.
func MovingAverage32(avg, x []float32, d float32) {
	x = x[:len(avg)]
	ParallelFor(len(avg), 1<<14, func(lo, hi int) {
		a, v := avg[lo:hi], x[lo:hi]
		for i := movingAverageVec(a, v, d); i < len(a); i++ {
			a[i] = d*a[i] + (1-d)*v[i]
		}
	})
}

// Add32 is dst += src.
func Add32(dst, src []float32) { addTo(dst, src) }
