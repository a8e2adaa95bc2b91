package data

import (
	"math"
	"math/rand/v2"
)

// Augment is training-time data augmentation applied to a collated batch,
// so that a model fitted to a few dozen series sees a different version of
// each at every step. All are natural for irregular data: RoMAE sees only
// the tokens and their real positions, so dropping tokens is another
// plausible irregular sampling of the same object, and a series played a
// little faster or slower is one multiply of its token times away (RoPE
// then sees every time difference scaled alike).
type Augment struct {
	Drop     float64 // fraction of each sample's tokens hidden (made padding) at random; at least one stays
	Jitter   float64 // σ of Gaussian noise added to every value (values are in normalised units)
	Scale    float64 // σ of a per-sample factor 1 + σ·N(0,1) multiplying every value
	Warp     float64 // σ of a per-sample factor e^(σ·N(0,1)) stretching the time axis
	TimeAxis int     // the position axis Warp stretches
}

// Active reports whether a does anything.
func (a Augment) Active() bool { return a.Drop > 0 || a.Jitter > 0 || a.Scale > 0 || a.Warp > 0 }

// Apply augments b in place with rng. Per-token targets are left alone, so
// callers skip per-token regression.
func (a Augment) Apply(b *Batch, rng *rand.Rand) {
	c := b.C
	for s := 0; s < b.B; s++ {
		n := b.Lengths[s]
		if a.Drop > 0 && n > 1 {
			k := min(int(a.Drop*float64(n)+rng.Float64()), n-1) // stochastic rounding
			for _, j := range rng.Perm(n)[:k] {
				i := s*b.L + j
				b.Pad[i] = true
				clear(b.Values[i*c : (i+1)*c])
			}
		}
		if a.Warp > 0 {
			w := float32(math.Exp(a.Warp * rng.NormFloat64()))
			for j := 0; j < n; j++ {
				b.Positions[(s*b.L+j)*b.D+a.TimeAxis] *= w
			}
		}
		f := float32(1)
		if a.Scale > 0 {
			f = float32(1 + a.Scale*rng.NormFloat64())
		}
		for j := 0; j < n; j++ {
			i := s*b.L + j
			if b.Pad[i] {
				continue
			}
			v := b.Values[i*c : (i+1)*c]
			for k := range v {
				v[k] *= f
				if a.Jitter > 0 {
					v[k] += float32(a.Jitter * rng.NormFloat64())
				}
			}
		}
	}
}
