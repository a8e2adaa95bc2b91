package recsys

import (
	"math"
	"math/rand/v2"

	"romae/tensor"
)

// paramSet collects parameter specs, then carves them out of one weight
// and one gradient buffer, initialised in declaration order from one seed.
// Parameters every variant has are declared first, so two variants built
// with the same seed start from the same shared weights.
type paramSet[T tensor.Float] struct {
	params []*tensor.Param[T]
	init   []func(w []T, rng *rand.Rand)
}

func (ps *paramSet[T]) add(name string, decay bool, init func([]T, *rand.Rand), shape ...int) *tensor.Param[T] {
	p := &tensor.Param[T]{Name: name, Shape: shape, Decay: decay}
	ps.params = append(ps.params, p)
	ps.init = append(ps.init, init)
	return p
}

// allocate gives every parameter its views and initial values.
func (ps *paramSet[T]) allocate(seed uint64) (w, g []T) {
	n := 0
	for _, p := range ps.params {
		n += tensor.Numel(p.Shape)
	}
	w, g = make([]T, n), make([]T, n)
	rng := rand.New(rand.NewPCG(seed, 0x7265637379)) // "recsy"
	off := 0
	for i, p := range ps.params {
		k := tensor.Numel(p.Shape)
		p.W, p.G = w[off:off+k:off+k], g[off:off+k:off+k]
		ps.init[i](p.W, rng)
		off += k
	}
	return w, g
}

// truncNormal draws N(0, std²) truncated at ±2·std.
func truncNormal[T tensor.Float](std float64) func([]T, *rand.Rand) {
	return func(w []T, rng *rand.Rand) {
		for i := range w {
			v := rng.NormFloat64()
			for math.Abs(v) > 2 {
				v = rng.NormFloat64()
			}
			w[i] = T(v * std)
		}
	}
}

func constant[T tensor.Float](c float64) func([]T, *rand.Rand) {
	return func(w []T, _ *rand.Rand) {
		for i := range w {
			w[i] = T(c)
		}
	}
}

// uniform draws U(−a, a), SIREN's initialisation.
func uniform[T tensor.Float](a float64) func([]T, *rand.Rand) {
	return func(w []T, rng *rand.Rand) {
		for i := range w {
			w[i] = T((2*rng.Float64() - 1) * a)
		}
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
