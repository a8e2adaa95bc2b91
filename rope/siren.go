package rope

import (
	"fmt"
	"math"

	"romae/internal/bufs"
	"romae/nn"
	"romae/tensor"
)

// SIREN-RoPE (arXiv 2604.24717) learns rotation angles instead of fixing
// them: for a learned axis a and rotated pair j of token i,
//
//	Θ_iaj = f(x_i)_aj · s_aj + pos_ia · θ_j · λ
//
// with θ_j the p-RoPE frequency, s a learned per-pair scale (init π), λ a
// learned gate (init 1), and f = f_sin + f_mlp a dual-branch network of the
// token's features x_i: normalised time, sin/cos of chosen periods and
// embeddings of categorical metadata. Axes not learned keep plain p-RoPE
// angles, and pairs beyond the p fraction stay unrotated. With s = 0 the
// angles are exactly p-RoPE's (λ = 1).

// SirenSpec configures the learned-angle network.
type SirenSpec struct {
	Axes      []int     `json:"axes" yaml:"axes" help:"SIREN-RoPE: position axes whose angles are learned (default: the last, time)"`
	TimeAxis  int       `json:"time_axis" yaml:"time_axis" help:"SIREN-RoPE: axis holding time (-1: the last)"`
	TimeScale float64   `json:"time_scale" yaml:"time_scale" help:"SIREN-RoPE: normalised time = position / time_scale"`
	Periods   []float64 `json:"periods" yaml:"periods" help:"SIREN-RoPE: periods for sin/cos cyclical features, in position units (e.g. 1,7 for day and week when time is in days)"`
	CatAxes   []int     `json:"cat_axes" yaml:"cat_axes" help:"SIREN-RoPE: position axes holding integer categories (e.g. band) embedded as metadata"`
	CatSizes  []int     `json:"cat_sizes" yaml:"cat_sizes" help:"SIREN-RoPE: number of categories of each cat_axes entry"`
	CatDim    int       `json:"cat_dim" yaml:"cat_dim" help:"SIREN-RoPE: embedding width per categorical feature"`
	Hidden    int       `json:"hidden" yaml:"hidden" help:"SIREN-RoPE: hidden width of the sine and ReLU branches"`
	Omega0    float64   `json:"omega0" yaml:"omega0" help:"SIREN-RoPE: sine frequency ω0"`
}

// Validate checks the spec against d position axes.
func (s *SirenSpec) Validate(d int) error {
	if len(s.Axes) == 0 {
		return fmt.Errorf("siren.axes: at least one learned axis is required")
	}
	seen := map[int]bool{}
	for _, a := range s.Axes {
		if a < 0 || a >= d || seen[a] {
			return fmt.Errorf("siren.axes: %v is not a set of distinct axes in [0, %d)", s.Axes, d)
		}
		seen[a] = true
	}
	switch {
	case s.TimeAxis < 0 || s.TimeAxis >= d:
		return fmt.Errorf("siren.time_axis %d: want 0..%d", s.TimeAxis, d-1)
	case !(s.TimeScale > 0):
		return fmt.Errorf("siren.time_scale %v: want > 0", s.TimeScale)
	case len(s.CatAxes) != len(s.CatSizes):
		return fmt.Errorf("siren: %d cat_axes but %d cat_sizes", len(s.CatAxes), len(s.CatSizes))
	case s.Hidden < 1 || !(s.Omega0 > 0):
		return fmt.Errorf("siren: hidden %d and omega0 %v must be positive", s.Hidden, s.Omega0)
	case len(s.CatAxes) > 0 && s.CatDim < 1:
		return fmt.Errorf("siren.cat_dim %d: want ≥ 1", s.CatDim)
	}
	for i, a := range s.CatAxes {
		if a < 0 || a >= d || s.CatSizes[i] < 1 {
			return fmt.Errorf("siren: categorical axis %d (size %d) invalid for %d axes", a, s.CatSizes[i], d)
		}
	}
	for _, p := range s.Periods {
		if !(p > 0) || math.IsInf(p, 0) {
			return fmt.Errorf("siren.periods: %v must be positive and finite", p)
		}
	}
	return nil
}

// Features is the width of x_i.
func (s *SirenSpec) Features() int { return 1 + 2*len(s.Periods) + s.CatDim*len(s.CatAxes) }

// Siren is the network's parameters (views into a model's buffers, set by
// the owner) for one rotation layout. Shapes: F features, H hidden, O =
// len(Axes)·R learned angles; Linear weights are [out, in].
type Siren[T tensor.Float] struct {
	Spec   SirenSpec
	Layout Layout
	// sine branch: sin(ω0(W1 x + b1)) → sin(ω0(W2 h + b2)) → W3 h + b3
	SinW1, SinB1, SinW2, SinB2, SinW3, SinB3 Weights[T]
	// ReLU branch: relu(M1 x + c1) → M2 h + c2
	MlpW1, MlpB1, MlpW2, MlpB2 Weights[T]
	Emb                        []Weights[T] // per categorical axis [size, CatDim]
	Scale                      Weights[T]   // s [O]
	Gate                       Weights[T]   // λ [1]
}

// Weights pairs a parameter's values and gradient.
type Weights[T tensor.Float] struct{ W, G []T }

// SirenActs keeps one forward pass's activations for the backward pass.
type SirenActs[T tensor.Float] struct {
	n                        int
	x, pre1, h1, pre2, h2    []T // sine branch
	dh1, dh2                 []T // ω0·cos(ω0·pre): the sine layers' derivatives, kept from forward
	mpre, mh                 []T // ReLU branch
	f, fm                    []T // branch outputs [n,O]
	angles, dF, dH, dPre, dX []T
	skip                     []bool
}

// Forward computes angles [n, D·R] for positions [n·D]; rows where skip is
// true (the [CLS] token) get angle 0, the identity rotation, like plain RoPE
// at position 0.
func (s *Siren[T]) Forward(a *SirenActs[T], pos []T, n int, skip []bool) []T {
	sp, l := &s.Spec, s.Layout
	F, H, O, D, R := sp.Features(), sp.Hidden, len(sp.Axes)*l.R, l.D, l.R
	a.n, a.skip = n, skip
	a.x, a.pre1, a.h1 = bufs.Resize(a.x, n*F), bufs.Resize(a.pre1, n*H), bufs.Resize(a.h1, n*H)
	a.pre2, a.h2, a.mpre, a.mh = bufs.Resize(a.pre2, n*H), bufs.Resize(a.h2, n*H), bufs.Resize(a.mpre, n*H), bufs.Resize(a.mh, n*H)
	a.dh1, a.dh2 = bufs.Resize(a.dh1, n*H), bufs.Resize(a.dh2, n*H)
	a.f, a.fm, a.angles = bufs.Resize(a.f, n*O), bufs.Resize(a.fm, n*O), bufs.Resize(a.angles, n*D*R)
	// Features: normalised time, cycles, category embeddings.
	tensor.ParallelFor(n, 64, func(lo, hi int) { s.features(a.x, pos, lo, hi) })
	// f_sin
	nn.LinearForward(a.pre1, a.x, s.SinW1.W, s.SinB1.W, n, F, H)
	sineForward(a.h1, a.dh1, a.pre1, sp.Omega0)
	nn.LinearForward(a.pre2, a.h1, s.SinW2.W, s.SinB2.W, n, H, H)
	sineForward(a.h2, a.dh2, a.pre2, sp.Omega0)
	nn.LinearForward(a.f, a.h2, s.SinW3.W, s.SinB3.W, n, H, O)
	// f_mlp
	nn.LinearForward(a.mpre, a.x, s.MlpW1.W, s.MlpB1.W, n, F, H)
	for i, v := range a.mpre {
		a.mh[i] = max(v, 0)
	}
	nn.LinearForward(a.fm, a.mh, s.MlpW2.W, s.MlpB2.W, n, H, O)
	for i := range a.f {
		a.f[i] += a.fm[i]
	}
	// Θ = f·s + pos·θ·λ on learned axes, pos·θ elsewhere.
	tensor.ParallelFor(n, 64, func(lo, hi int) { s.angles(a, pos, lo, hi) })
	return a.angles
}

// features fills rows [lo,hi) of x [n, F] for positions pos [n·D].
func (s *Siren[T]) features(xs, pos []T, lo, hi int) {
	sp, D := &s.Spec, s.Layout.D
	F := sp.Features()
	for i := lo; i < hi; i++ {
		x := xs[i*F : (i+1)*F]
		t := float64(pos[i*D+sp.TimeAxis])
		x[0] = T(t / sp.TimeScale)
		for k, p := range sp.Periods {
			sn, cs := math.Sincos(2 * math.Pi * t / p)
			x[1+2*k], x[2+2*k] = T(sn), T(cs)
		}
		off := 1 + 2*len(sp.Periods)
		for k, ax := range sp.CatAxes {
			c := s.category(pos[i*D+ax], k)
			copy(x[off+k*sp.CatDim:off+(k+1)*sp.CatDim], s.Emb[k].W[c*sp.CatDim:(c+1)*sp.CatDim])
		}
	}
}

// angles fills rows [lo,hi) of a.angles from the branch outputs a.f.
func (s *Siren[T]) angles(a *SirenActs[T], pos []T, lo, hi int) {
	l := s.Layout
	O, D, R := len(s.Spec.Axes)*l.R, l.D, l.R
	lambda := float64(s.Gate.W[0])
	learned := s.learnedIndex()
	for i := lo; i < hi; i++ {
		row := a.angles[i*D*R : (i+1)*D*R]
		if a.skip != nil && a.skip[i] {
			clear(row)
			continue
		}
		for ax := 0; ax < D; ax++ {
			p := float64(pos[i*D+ax])
			k := learned[ax]
			for j := 0; j < R; j++ {
				base := p * l.InvTimescale[j]
				if k < 0 {
					row[ax*R+j] = T(base)
					continue
				}
				o := k*R + j
				row[ax*R+j] = T(float64(a.f[i*O+o])*float64(s.Scale.W[o]) + base*lambda)
			}
		}
	}
}

// Backward accumulates parameter gradients from dAngles [n, D·R].
func (s *Siren[T]) Backward(a *SirenActs[T], pos, dAngles []T) {
	sp, l := &s.Spec, s.Layout
	n, F, H, O, D, R := a.n, sp.Features(), sp.Hidden, len(sp.Axes)*l.R, l.D, l.R
	a.dF, a.dH, a.dPre, a.dX = bufs.Resize(a.dF, n*O), bufs.Resize(a.dH, n*H), bufs.Resize(a.dPre, n*H), bufs.Resize(a.dX, n*F)
	clear(a.dF)
	learned := s.learnedIndex()
	for i := 0; i < n; i++ {
		if a.skip != nil && a.skip[i] {
			continue
		}
		for ax := 0; ax < D; ax++ {
			k := learned[ax]
			if k < 0 {
				continue
			}
			p := float64(pos[i*D+ax])
			for j := 0; j < R; j++ {
				g := dAngles[i*D*R+ax*R+j]
				o := k*R + j
				a.dF[i*O+o] = g * s.Scale.W[o]
				s.Scale.G[o] += g * a.f[i*O+o]
				s.Gate.G[0] += g * T(p*l.InvTimescale[j])
			}
		}
	}
	// f_mlp backward
	nn.LinearBackward(a.dH, s.MlpW2.G, s.MlpB2.G, a.dF, a.mh, s.MlpW2.W, n, H, O, false)
	for i, v := range a.mpre {
		if v <= 0 {
			a.dH[i] = 0
		}
	}
	nn.LinearBackward(a.dX, s.MlpW1.G, s.MlpB1.G, a.dH, a.x, s.MlpW1.W, n, F, H, false)
	// f_sin backward (adds into dX)
	nn.LinearBackward(a.dH, s.SinW3.G, s.SinB3.G, a.dF, a.h2, s.SinW3.W, n, H, O, false)
	sineBackward(a.dPre, a.dH, a.dh2)
	nn.LinearBackward(a.dH, s.SinW2.G, s.SinB2.G, a.dPre, a.h1, s.SinW2.W, n, H, H, false)
	sineBackward(a.dPre, a.dH, a.dh1)
	nn.LinearBackward(a.dX, s.SinW1.G, s.SinB1.G, a.dPre, a.x, s.SinW1.W, n, F, H, true)
	// Embedding gradients (the time features have no parameters).
	off := 1 + 2*len(sp.Periods)
	for i := 0; i < n; i++ {
		for k, ax := range sp.CatAxes {
			c := s.category(pos[i*D+ax], k)
			g := s.Emb[k].G[c*sp.CatDim : (c+1)*sp.CatDim]
			for j := range g {
				g[j] += a.dX[i*F+off+k*sp.CatDim+j]
			}
		}
	}
}

// category maps a position coordinate to a category index, clamped to the
// table (out-of-range ids are validated by the model before training).
func (s *Siren[T]) category(v T, k int) int {
	c := int(math.Round(float64(v)))
	return min(max(c, 0), s.Spec.CatSizes[k]-1)
}

// learnedIndex maps each axis to its index in Spec.Axes, or −1.
func (s *Siren[T]) learnedIndex() [3]int {
	idx := [3]int{-1, -1, -1}
	for k, a := range s.Spec.Axes {
		idx[a] = k
	}
	return idx
}

// sineForward: out = sin(ω0·pre) and its derivative dOut = ω0·cos(ω0·pre)
// for the backward pass, in one Sincos per element.
func sineForward[T tensor.Float](out, dOut, pre []T, w0 float64) {
	tensor.ParallelFor(len(pre), 1024, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sn, cs := math.Sincos(w0 * float64(pre[i]))
			out[i], dOut[i] = T(sn), T(w0*cs)
		}
	})
}

// sineBackward: dPre = dOut ⊙ ω0·cos(ω0·pre) (deriv, from sineForward).
func sineBackward[T tensor.Float](dPre, dOut, deriv []T) {
	for i, g := range dOut {
		dPre[i] = g * deriv[i]
	}
}
