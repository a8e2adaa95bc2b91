package recsys

import (
	"math"

	"romae/internal/bufs"
	"romae/tensor"
)

// The reference's six per-token features x_k (hailingc/siren_rope):
//
//	0  order, reversed and scaled to [0,1]: (MaxLen−1−k)/(MaxLen−1)
//	1  t / 1 year − 55 (t in seconds since 1970; 0 in 2025)
//	2  sin(2π t / 1 day),  3  cos(2π t / 1 day)
//	4  sin(2π t / 1 week), 5  cos(2π t / 1 week)
//
// The reference counts the order from the newest event of the sequence.
// Here several targets share a window, so counting from its last event
// would tell an earlier target how many events follow it; the order is
// counted from the window's capacity instead, which carries the same
// within-window information and nothing about the future.
const numFeatures = 6

const (
	secondsPerDay  = 86400
	secondsPerWeek = 7 * secondsPerDay
	secondsPerYear = 365.25 * secondsPerDay
)

// windowFeatures writes the features of the tokens of windows of L slots
// (capacity maxLen) at times ts into x [numFeatures, n]: the order in row
// 0, the day and week angles in rows 2 and 4, which cycleFeatures then
// turns into their sines and cosines for every token at once.
func windowFeatures[T tensor.Float](x []T, n, L, maxLen int, ts []float64) {
	for k := 0; k < L; k++ {
		x[k] = T(float64(maxLen-1-k) / float64(maxLen-1))
	}
	for r0 := L; r0 < n; r0 += L {
		copy(x[r0:r0+L], x[:L])
	}
	r := 0
	if x32, ok := any(x).([]float32); ok {
		r = timeFeaturesVec(x32, n, ts)
	}
	for ; r < n; r++ {
		t := ts[r]
		x[n+r] = T(t*(1/secondsPerYear) - 55)
		x[2*n+r] = T(2 * math.Pi * phase(t, secondsPerDay))
		x[4*n+r] = T(2 * math.Pi * phase(t, secondsPerWeek))
	}
}

// cycleFeatures replaces the angles in rows 2 and 4 of x [numFeatures, n]
// by their sines, and writes their cosines into rows 3 and 5.
func cycleFeatures[T tensor.Float](x []T, n int) {
	for _, row := range []int{2, 4} {
		a := x[row*n : (row+1)*n]
		sine(a, x[(row+1)*n:(row+2)*n], a, 1)
	}
}

// phase is t/period modulo 1, in [0, 1): t − k·period is exact for whole
// seconds (k·period is exact below 2^53), and a quotient rounded to the
// wrong side of a whole number, or truncated rather than floored below 0,
// is corrected by one period. Multiplying by the constant 1/period rather
// than dividing, and converting rather than calling math.Floor, keep it
// cheap: it runs for every token of every step.
func phase(t, period float64) float64 {
	inv := 1 / period
	rem := t - float64(int64(t*inv))*period
	if rem < 0 {
		rem += period
	} else if rem >= period {
		rem -= period
	}
	return rem * inv
}

// angleNet is SIREN-RoPE's f = f_sin + f_mlp, as the reference builds it:
//
//	f_sin(x) = W3 sin(ω0(W2 sin(ω0(W1 x + b1)) + b2)) + b3
//	f_mlp(x) = M2 relu(M1 x + c1) + c2
//
// either branch optional (the ablations). Linear weights are [out, in].
// Activations are feature-major ([width, n], one row per unit, tokens
// along the row): the layers are 6 to 16 units wide and run over every
// token, and as W·X products the long token dimension fills the GEMM
// kernel's tiles, where X·Wᵀ would leave most of them empty. Both
// branches' first layers read x and both last layers write f, so a pass
// is three products, the biases riding on a row of ones:
//
//	[pre1; mpre] = [W1 b1; M1 c1] · [x; 1]
//	pre2         = [W2 b2] · [h1; 1]                 h1 = sin(ω0·pre1)
//	f            = [W3 M2 b3+c2] · [h2; mh; 1]       h2 = sin(ω0·pre2), mh = relu(mpre)
//
// and the weight gradients are three products too (the bias gradients
// their last columns): on the experiment's small model the angle network
// is a fixed cost per token beside a small Transformer, and each product
// or pass over [width, n] it saves shows in the step time.
type angleNet[T tensor.Float] struct {
	hidden, out int
	w0          float64
	// nil when the branch is absent
	sinW1, sinB1, sinW2, sinB2, sinW3, sinB3 *tensor.Param[T]
	mlpW1, mlpB1, mlpW2, mlpB2               *tensor.Param[T]
}

// netActs are one forward pass's stacked weights and activations, all
// activations [rows, n] (hs, hm: the sine and ReLU branches' widths, 0
// when absent). Backward reuses preA and d2 for gradients: a pass is
// differentiated once.
type netActs[T tensor.Float] struct {
	n          int
	wA, wB, wC []T // [hs+hm, F+1], [hs, hs+1], [out, hs+hm+1]
	preA       []T // [hs+hm, n]: pre1, then mpre; backward: dLoss/d[pre1; mpre]
	h1         []T // [hs+1, n]: sin(ω0·pre1), then 1s
	d1, d2     []T // [hs, n]: ω0·cos(ω0·pre1), ω0·cos(ω0·pre2); backward: d2 ⊙ dLoss/dh2
	hid        []T // [hs+hm+1, n]: pre2 → h2, mh, then 1s
	f          []T // output [out, n]
	dF         []T // dLoss/df [out, n], the caller's
	dW         []T // one product's weight gradient
}

// featureRows is the angle network's input height: the features and a
// row of 1s (the first layer's bias).
const featureRows = numFeatures + 1

// widths are the sine and ReLU branches' hidden widths (0: no branch).
func (a *angleNet[T]) widths() (hs, hm int) {
	if a.sinW1 != nil {
		hs = a.hidden
	}
	if a.mlpW1 != nil {
		hm = a.hidden
	}
	return hs, hm
}

// stack copies the weights into the three products' matrices.
func (a *angleNet[T]) stack(acts *netActs[T]) {
	F, O := numFeatures, a.out
	hs, hm := a.widths()
	K := hs + hm + 1
	acts.wA, acts.wB, acts.wC = bufs.Resize(acts.wA, (hs+hm)*featureRows), bufs.Resize(acts.wB, hs*(hs+1)), bufs.Resize(acts.wC, O*K)
	if hs > 0 {
		copyBlock(acts.wA, featureRows, 0, 0, a.sinW1.W, hs, F)
		copyBlock(acts.wA, featureRows, 0, F, a.sinB1.W, hs, 1)
		copyBlock(acts.wB, hs+1, 0, 0, a.sinW2.W, hs, hs)
		copyBlock(acts.wB, hs+1, 0, hs, a.sinB2.W, hs, 1)
		copyBlock(acts.wC, K, 0, 0, a.sinW3.W, O, hs)
	}
	if hm > 0 {
		copyBlock(acts.wA, featureRows, hs, 0, a.mlpW1.W, hm, F)
		copyBlock(acts.wA, featureRows, hs, F, a.mlpB1.W, hm, 1)
		copyBlock(acts.wC, K, 0, hs, a.mlpW2.W, O, hm)
	}
	for o := 0; o < O; o++ {
		var b T
		if hs > 0 {
			b = a.sinB3.W[o]
		}
		if hm > 0 {
			b += a.mlpB2.W[o]
		}
		acts.wC[o*K+K-1] = b
	}
}

// forward computes f [out, n] of x [featureRows, n] (the features, then
// a row of 1s).
func (a *angleNet[T]) forward(acts *netActs[T], x []T, n int) []T {
	hs, hm := a.widths()
	K := hs + hm + 1
	acts.n = n
	a.stack(acts)
	acts.preA, acts.hid, acts.f = bufs.Resize(acts.preA, (hs+hm)*n), bufs.Resize(acts.hid, K*n), bufs.Resize(acts.f, a.out*n)
	tensor.Gemm(false, false, hs+hm, n, featureRows, 1, acts.wA, featureRows, x, n, 0, acts.preA, n)
	if hs > 0 {
		acts.h1, acts.d1, acts.d2 = bufs.Resize(acts.h1, (hs+1)*n), bufs.Resize(acts.d1, hs*n), bufs.Resize(acts.d2, hs*n)
		sine(acts.h1[:hs*n], acts.d1, acts.preA[:hs*n], a.w0)
		fill(acts.h1[hs*n:], 1)
		h2 := acts.hid[:hs*n]
		tensor.Gemm(false, false, hs, n, hs+1, 1, acts.wB, hs+1, acts.h1, n, 0, h2, n)
		sine(h2, acts.d2, h2, a.w0)
	}
	if hm > 0 {
		relu(acts.hid[hs*n:(hs+hm)*n], acts.preA[hs*n:])
	}
	fill(acts.hid[(K-1)*n:], 1)
	tensor.Gemm(false, false, a.out, n, K, 1, acts.wC, K, acts.hid, n, 0, acts.f, n)
	return acts.f
}

// backward accumulates the parameter gradients for dF [out, n] (the
// features have no parameters, so no input gradient).
func (a *angleNet[T]) backward(acts *netActs[T], x, dF []T) {
	n, F, O := acts.n, numFeatures, a.out
	hs, hm := a.widths()
	K := hs + hm + 1
	acts.dW = bufs.Resize(acts.dW, max(O*K, hs*(hs+1), (hs+hm)*featureRows))
	dW := acts.dW
	// f = wC·hid
	gram(dW, dF, O, acts.hid, K, n)
	if hs > 0 {
		addBlock(a.sinW3.G, O, hs, dW, K, 0, 0)
		addBlock(a.sinB3.G, O, 1, dW, K, 0, K-1)
	}
	if hm > 0 {
		addBlock(a.mlpW2.G, O, hm, dW, K, 0, hs)
		addBlock(a.mlpB2.G, O, 1, dW, K, 0, K-1)
	}
	dA := acts.preA // dLoss/d[h2; mh], then d[pre1; mpre]
	tensor.Gemm(true, false, hs+hm, n, O, 1, acts.wC, K, dF, n, 0, dA, n)
	if hm > 0 {
		reluGrad(dA[hs*n:], acts.hid[hs*n:(hs+hm)*n]) // mh > 0 where mpre > 0
	}
	if hs > 0 {
		// pre2 = wB·[h1; 1], h1 = sin(ω0·pre1)
		dP2 := acts.d2
		mul(dP2, dA[:hs*n], acts.d2)
		gram(dW, dP2, hs, acts.h1, hs+1, n)
		addBlock(a.sinW2.G, hs, hs, dW, hs+1, 0, 0)
		addBlock(a.sinB2.G, hs, 1, dW, hs+1, 0, hs)
		tensor.Gemm(true, false, hs, n, hs, 1, acts.wB, hs+1, dP2, n, 0, dA, n)
		mul(dA[:hs*n], dA[:hs*n], acts.d1)
	}
	// [pre1; mpre] = wA·x
	gram(dW, dA, hs+hm, x, featureRows, n)
	if hs > 0 {
		addBlock(a.sinW1.G, hs, F, dW, featureRows, 0, 0)
		addBlock(a.sinB1.G, hs, 1, dW, featureRows, 0, F)
	}
	if hm > 0 {
		addBlock(a.mlpW1.G, hm, F, dW, featureRows, hs, 0)
		addBlock(a.mlpB1.G, hm, 1, dW, featureRows, hs, F)
	}
}

// copyBlock copies w [rows, cols] into dst (row stride ld) at (r0, c0).
func copyBlock[T tensor.Float](dst []T, ld, r0, c0 int, w []T, rows, cols int) {
	for r := 0; r < rows; r++ {
		copy(dst[(r0+r)*ld+c0:(r0+r)*ld+c0+cols], w[r*cols:(r+1)*cols])
	}
}

// addBlock adds the [rows, cols] block of src (row stride ld) at (r0, c0)
// to g [rows, cols].
func addBlock[T tensor.Float](g []T, rows, cols int, src []T, ld, r0, c0 int) {
	for r := 0; r < rows; r++ {
		addScaled(g[r*cols:(r+1)*cols], src[(r0+r)*ld+c0:(r0+r)*ld+c0+cols], 1)
	}
}

// gram: c [ra, rb] = a·bᵀ for a [ra, n], b [rb, n] — a layer's weight
// gradient, dOut·inᵀ over all tokens. float32 runs the vector kernel
// where there is one (gramVec): the GEMM packs both long, thin operands
// and fills few of its tiles at these widths.
func gram[T tensor.Float](c, a []T, ra int, b []T, rb, n int) {
	if c32, ok := any(c).([]float32); ok && gramVec(c32, any(a).([]float32), ra, any(b).([]float32), rb, n) {
		return
	}
	tensor.Gemm(false, true, ra, rb, n, 1, a, n, b, n, 0, c, rb)
}

// sine: out = sin(ω0·pre) and deriv = ω0·cos(ω0·pre); float32 runs the
// vector kernel where there is one (sineVec).
func sine[T tensor.Float](out, deriv, pre []T, w0 float64) {
	i := 0
	if o32, ok := any(out).([]float32); ok {
		i = sineVec(o32, any(deriv).([]float32), any(pre).([]float32), float32(w0))
	}
	for ; i < len(pre); i++ {
		s, c := math.Sincos(w0 * float64(pre[i]))
		out[i], deriv[i] = T(s), T(w0*c)
	}
}

// relu: out = max(pre, 0).
func relu[T tensor.Float](out, pre []T) {
	i := 0
	if o32, ok := any(out).([]float32); ok {
		i = reluVec(o32, any(pre).([]float32))
	}
	for ; i < len(out); i++ {
		out[i] = max(pre[i], 0)
	}
}

// reluGrad zeroes d where h = relu(pre) is 0.
func reluGrad[T tensor.Float](d, h []T) {
	i := 0
	if d32, ok := any(d).([]float32); ok {
		i = reluGradVec(d32, any(h).([]float32))
	}
	for ; i < len(d); i++ {
		if h[i] <= 0 {
			d[i] = 0
		}
	}
}

// mul: dst = a ⊙ b (dst may be a or b).
func mul[T tensor.Float](dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		tensor.ScaleMul32(d32, any(a).([]float32), any(b).([]float32), 1) // (a·1)·b: exact
		return
	}
	for i, v := range a[:len(dst)] {
		dst[i] = v * b[i]
	}
}

// fill sets every element of s to v.
func fill[T tensor.Float](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}
