package recsys

import (
	"math"

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

// tokenFeatures writes the features of token r — slot k of a window of
// capacity maxLen, at time t — into column r of x [numFeatures, n], with
// the day and week angles in rows 2 and 4; cycleFeatures then turns those
// into their sines and cosines, for every token at once.
func tokenFeatures[T tensor.Float](x []T, n, r, k, maxLen int, t float64) {
	x[r] = T(float64(maxLen-1-k) / float64(maxLen-1))
	x[n+r] = T(t/secondsPerYear - 55)
	x[2*n+r] = T(2 * math.Pi * phase(t, secondsPerDay))
	x[4*n+r] = T(2 * math.Pi * phase(t, secondsPerWeek))
}

// cycleFeatures replaces the angles in rows 2 and 4 of x [numFeatures, n]
// by their sines, and writes their cosines into rows 3 and 5.
func cycleFeatures[T tensor.Float](x []T, n int) {
	for _, row := range []int{2, 4} {
		a := x[row*n : (row+1)*n]
		sine(a, x[(row+1)*n:(row+2)*n], a, 1)
	}
}

// phase is t/period modulo 1, in [0, 1): exact for whole seconds (k·period
// is exact below 2^53), and much cheaper than math.Mod.
func phase(t, period float64) float64 {
	k := math.Floor(t / period)
	return (t - k*period) / period
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
// kernel's tiles, where X·Wᵀ would leave most of them empty.
type angleNet[T tensor.Float] struct {
	hidden, out int
	w0          float64
	// nil when the branch is absent
	sinW1, sinB1, sinW2, sinB2, sinW3, sinB3 *tensor.Param[T]
	mlpW1, mlpB1, mlpW2, mlpB2               *tensor.Param[T]
}

// netActs are one forward pass's activations, all [width, n].
type netActs[T tensor.Float] struct {
	n                          int
	pre1, h1, d1, pre2, h2, d2 []T // sine branch; d = ω0·cos(ω0·pre)
	mpre, mh                   []T // ReLU branch
	f                          []T // output [out, n]
	dF, dH, dPre               []T
	ones                       []T // n 1s, for the bias gradients' row sums
}

// forward computes f [out, n] of x [numFeatures, n].
func (a *angleNet[T]) forward(acts *netActs[T], x []T, n int) []T {
	F, Hd, O := numFeatures, a.hidden, a.out
	acts.n = n
	acts.f = grow(acts.f, O*n)
	clear(acts.f)
	if a.sinW1 != nil {
		for _, p := range []*[]T{&acts.pre1, &acts.h1, &acts.d1, &acts.pre2, &acts.h2, &acts.d2} {
			*p = grow(*p, Hd*n)
		}
		layerForward(acts.pre1, x, a.sinW1.W, a.sinB1.W, n, F, Hd, false)
		sine(acts.h1, acts.d1, acts.pre1, a.w0)
		layerForward(acts.pre2, acts.h1, a.sinW2.W, a.sinB2.W, n, Hd, Hd, false)
		sine(acts.h2, acts.d2, acts.pre2, a.w0)
		layerForward(acts.f, acts.h2, a.sinW3.W, a.sinB3.W, n, Hd, O, true)
	}
	if a.mlpW1 != nil {
		acts.mpre, acts.mh = grow(acts.mpre, Hd*n), grow(acts.mh, Hd*n)
		layerForward(acts.mpre, x, a.mlpW1.W, a.mlpB1.W, n, F, Hd, false)
		for i, v := range acts.mpre {
			acts.mh[i] = max(v, 0)
		}
		layerForward(acts.f, acts.mh, a.mlpW2.W, a.mlpB2.W, n, Hd, O, true)
	}
	return acts.f
}

// backward accumulates the parameter gradients for dF [out, n] (the
// features have no parameters, so no input gradient).
func (a *angleNet[T]) backward(acts *netActs[T], x, dF []T) {
	n, F, Hd, O := acts.n, numFeatures, a.hidden, a.out
	acts.dH, acts.dPre = grow(acts.dH, Hd*n), grow(acts.dPre, Hd*n)
	for len(acts.ones) < n {
		acts.ones = append(acts.ones, 1)
	}
	if a.mlpW1 != nil {
		layerBackward(acts.dH, a.mlpW2.G, a.mlpB2.G, dF, acts.mh, a.mlpW2.W, acts.ones, n, Hd, O)
		for i, v := range acts.mpre {
			if v <= 0 {
				acts.dH[i] = 0
			}
		}
		layerBackward(nil, a.mlpW1.G, a.mlpB1.G, acts.dH, x, a.mlpW1.W, acts.ones, n, F, Hd)
	}
	if a.sinW1 != nil {
		layerBackward(acts.dH, a.sinW3.G, a.sinB3.G, dF, acts.h2, a.sinW3.W, acts.ones, n, Hd, O)
		mul(acts.dPre, acts.dH, acts.d2)
		layerBackward(acts.dH, a.sinW2.G, a.sinB2.G, acts.dPre, acts.h1, a.sinW2.W, acts.ones, n, Hd, Hd)
		mul(acts.dPre, acts.dH, acts.d1)
		layerBackward(nil, a.sinW1.G, a.sinB1.G, acts.dPre, x, a.sinW1.W, acts.ones, n, F, Hd)
	}
}

// layerForward: out[o, n] = w[o, i]·in[i, n] + b[o] (each row of out gets
// its bias), added to out when accum.
func layerForward[T tensor.Float](out, in, w, b []T, n, i, o int, accum bool) {
	for r := 0; r < o; r++ {
		row := out[r*n : (r+1)*n]
		if !accum {
			clear(row)
		}
		for j := range row {
			row[j] += b[r]
		}
	}
	tensor.Gemm(false, false, o, n, i, 1, w, i, in, n, 1, out, n)
}

// layerBackward, given dOut [o, n]: dW[o, i] += dOut·inᵀ, dB[o] += the
// row sums of dOut, and (unless dIn is nil) dIn[i, n] = wᵀ·dOut. ones
// holds at least n 1s.
func layerBackward[T tensor.Float](dIn, dW, dB, dOut, in, w, ones []T, n, i, o int) {
	// dW's o·i entries are dot products of length n: row by row, they skip
	// the GEMM's packing of two long, thin operands.
	for r := 0; r < o; r++ {
		for c := 0; c < i; c++ {
			dW[r*i+c] += dot(dOut[r*n:(r+1)*n], in[c*n:(c+1)*n])
		}
	}
	if dIn != nil {
		tensor.Gemm(true, false, i, n, o, 1, w, i, dOut, n, 0, dIn, n)
	}
	for r := 0; r < o; r++ {
		dB[r] += sum(dOut[r*n:(r+1)*n], ones)
	}
}

// sum is Σ x; float32 goes through the vector dot product with ones, a
// run of 1s at least as long as x.
func sum[T tensor.Float](x, ones []T) T {
	if x32, ok := any(x).([]float32); ok {
		return T(tensor.Dot32(x32, any(ones).([]float32)[:len(x32)]))
	}
	var s T
	for _, v := range x {
		s += v
	}
	return s
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

// mul: dst = a ⊙ b.
func mul[T tensor.Float](dst, a, b []T) {
	for i, v := range a {
		dst[i] = v * b[i]
	}
}
