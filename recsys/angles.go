package recsys

import (
	"math"

	"romae/nn"
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

// tokenFeatures writes x[numFeatures] for token k of a window of capacity
// maxLen, at time t.
func tokenFeatures[T tensor.Float](x []T, k, maxLen int, t float64) {
	x[0] = T(float64(maxLen-1-k) / float64(maxLen-1))
	x[1] = T(t/secondsPerYear - 55)
	sd, cd := math.Sincos(2 * math.Pi * math.Mod(t, secondsPerDay) / secondsPerDay)
	sw, cw := math.Sincos(2 * math.Pi * math.Mod(t, secondsPerWeek) / secondsPerWeek)
	x[2], x[3], x[4], x[5] = T(sd), T(cd), T(sw), T(cw)
}

// angleNet is SIREN-RoPE's f = f_sin + f_mlp, as the reference builds it:
//
//	f_sin(x) = W3 sin(ω0(W2 sin(ω0(W1 x + b1)) + b2)) + b3
//	f_mlp(x) = M2 relu(M1 x + c1) + c2
//
// either branch optional (the ablations). Linear weights are [out, in].
type angleNet[T tensor.Float] struct {
	hidden, out int
	w0          float64
	// nil when the branch is absent
	sinW1, sinB1, sinW2, sinB2, sinW3, sinB3 *tensor.Param[T]
	mlpW1, mlpB1, mlpW2, mlpB2               *tensor.Param[T]
}

// netActs are one forward pass's activations, all [n, width].
type netActs[T tensor.Float] struct {
	n                              int
	pre1, h1, d1, pre2, h2, d2, fs []T // sine branch; d = ω0·cos(ω0·pre)
	mpre, mh                       []T // ReLU branch
	f                              []T // output [n, out]
	dF, dH, dPre                   []T
}

// forward computes f [n, out] of x [n, numFeatures].
func (a *angleNet[T]) forward(acts *netActs[T], x []T, n int) []T {
	F, Hd, O := numFeatures, a.hidden, a.out
	acts.n = n
	acts.f = grow(acts.f, n*O)
	clear(acts.f)
	if a.sinW1 != nil {
		for _, p := range []*[]T{&acts.pre1, &acts.h1, &acts.d1, &acts.pre2, &acts.h2, &acts.d2} {
			*p = grow(*p, n*Hd)
		}
		acts.fs = grow(acts.fs, n*O)
		nn.LinearForward(acts.pre1, x, a.sinW1.W, a.sinB1.W, n, F, Hd)
		sine(acts.h1, acts.d1, acts.pre1, a.w0)
		nn.LinearForward(acts.pre2, acts.h1, a.sinW2.W, a.sinB2.W, n, Hd, Hd)
		sine(acts.h2, acts.d2, acts.pre2, a.w0)
		nn.LinearForward(acts.fs, acts.h2, a.sinW3.W, a.sinB3.W, n, Hd, O)
		copy(acts.f, acts.fs)
	}
	if a.mlpW1 != nil {
		acts.mpre, acts.mh = grow(acts.mpre, n*Hd), grow(acts.mh, n*Hd)
		acts.fs = grow(acts.fs, n*O)
		nn.LinearForward(acts.mpre, x, a.mlpW1.W, a.mlpB1.W, n, F, Hd)
		for i, v := range acts.mpre {
			acts.mh[i] = max(v, 0)
		}
		nn.LinearForward(acts.fs, acts.mh, a.mlpW2.W, a.mlpB2.W, n, Hd, O)
		for i, v := range acts.fs {
			acts.f[i] += v
		}
	}
	return acts.f
}

// backward accumulates the parameter gradients for dF [n, out] (the
// features have no parameters, so no input gradient).
func (a *angleNet[T]) backward(acts *netActs[T], x, dF []T) {
	n, F, Hd, O := acts.n, numFeatures, a.hidden, a.out
	acts.dH, acts.dPre = grow(acts.dH, n*Hd), grow(acts.dPre, n*Hd)
	if a.mlpW1 != nil {
		nn.LinearBackward(acts.dH, a.mlpW2.G, a.mlpB2.G, dF, acts.mh, a.mlpW2.W, n, Hd, O, false)
		for i, v := range acts.mpre {
			if v <= 0 {
				acts.dH[i] = 0
			}
		}
		nn.LinearBackward(nil, a.mlpW1.G, a.mlpB1.G, acts.dH, x, a.mlpW1.W, n, F, Hd, false)
	}
	if a.sinW1 != nil {
		nn.LinearBackward(acts.dH, a.sinW3.G, a.sinB3.G, dF, acts.h2, a.sinW3.W, n, Hd, O, false)
		mul(acts.dPre, acts.dH, acts.d2)
		nn.LinearBackward(acts.dH, a.sinW2.G, a.sinB2.G, acts.dPre, acts.h1, a.sinW2.W, n, Hd, Hd, false)
		mul(acts.dPre, acts.dH, acts.d1)
		nn.LinearBackward(nil, a.sinW1.G, a.sinB1.G, acts.dPre, x, a.sinW1.W, n, F, Hd, false)
	}
}

// sine: out = sin(ω0·pre) and deriv = ω0·cos(ω0·pre), one Sincos each.
func sine[T tensor.Float](out, deriv, pre []T, w0 float64) {
	for i, v := range pre {
		s, c := math.Sincos(w0 * float64(v))
		out[i], deriv[i] = T(s), T(w0*c)
	}
}

// mul: dst = a ⊙ b.
func mul[T tensor.Float](dst, a, b []T) {
	for i, v := range a {
		dst[i] = v * b[i]
	}
}
