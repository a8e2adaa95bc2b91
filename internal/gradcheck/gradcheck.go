// Package gradcheck compares hand-written gradients with central finite
// differences in float64, the check every backward pass in romae must pass.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Tolerances: a coordinate passes when |analytic − numeric| ≤ Abs + Rel·max(|analytic|, |numeric|).
// With step 1e-6 in float64, central differences of smooth functions are
// accurate to ~1e-9 relative, so these bounds catch any real mistake.
const (
	Step = 1e-6
	Rel  = 1e-5
	Abs  = 1e-8
)

// Check perturbs up to maxChecks coordinates of x (all when maxChecks ≤ 0 or
// len(x) ≤ maxChecks, else a seeded random subset) and compares
// (f(x+h) − f(x−h)) / 2h with grad. f must recompute the loss from x.
// It returns an error describing the worst failing coordinate.
func Check(name string, x, grad []float64, f func() float64, maxChecks int) error {
	if len(x) != len(grad) {
		return fmt.Errorf("%s: %d values, %d gradients", name, len(x), len(grad))
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	if maxChecks > 0 && len(x) > maxChecks {
		rng := rand.New(rand.NewPCG(uint64(len(x)), 7))
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		idx = idx[:maxChecks]
	}
	worst, worstI, worstA, worstN := 0.0, -1, 0.0, 0.0
	for _, i := range idx {
		orig := x[i]
		x[i] = orig + Step
		fp := f()
		x[i] = orig - Step
		fm := f()
		x[i] = orig
		num := (fp - fm) / (2 * Step)
		a := grad[i]
		excess := math.Abs(a-num) - (Abs + Rel*math.Max(math.Abs(a), math.Abs(num)))
		if math.IsNaN(excess) || excess > worst {
			worst, worstI, worstA, worstN = excess, i, a, num
			if math.IsNaN(excess) {
				break
			}
		}
	}
	if worstI >= 0 {
		return fmt.Errorf("%s[%d]: analytic %.10g, numeric %.10g", name, worstI, worstA, worstN)
	}
	return nil
}

// Dot is Σ a·b, used to turn a tensor output into a scalar loss with a
// fixed random projection (so every output element gets a distinct weight).
func Dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Rand returns n seeded N(0,1) values.
func Rand(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}
