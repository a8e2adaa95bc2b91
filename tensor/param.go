package tensor

import (
	"math"
	"math/rand/v2"
)

// Param is one named weight tensor and its gradient. W and G are views into
// the model's contiguous parameter and gradient buffers, so optimisers and
// checkpoints can work either tensor by tensor or on the whole buffer.
type Param[T Float] struct {
	Name  string
	Shape []int
	W, G  []T
	// Decay marks tensors subject to weight decay: weight matrices yes;
	// norm gains, biases and the learned [CLS]/[MASK] vectors no.
	Decay bool
}

// Numel is the number of elements of a shape.
func Numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// ParamSet collects parameter specs, then carves them out of one contiguous
// weight buffer and one gradient buffer and initialises them in declaration
// order, so that a seed always gives the same weights.
type ParamSet[T Float] struct {
	Params []*Param[T]
	init   []func(w []T, rng *rand.Rand)
}

// Add declares a parameter of the given shape, initialised by init.
func (ps *ParamSet[T]) Add(name string, decay bool, init func([]T, *rand.Rand), shape ...int) *Param[T] {
	p := &Param[T]{Name: name, Shape: shape, Decay: decay}
	ps.Params = append(ps.Params, p)
	ps.init = append(ps.init, init)
	return p
}

// Allocate gives every parameter its views into w and g and initialises it
// from rng.
func (ps *ParamSet[T]) Allocate(rng *rand.Rand) (w, g []T) {
	n := 0
	for _, p := range ps.Params {
		n += Numel(p.Shape)
	}
	w, g = make([]T, n), make([]T, n)
	off := 0
	for i, p := range ps.Params {
		k := Numel(p.Shape)
		p.W, p.G = w[off:off+k:off+k], g[off:off+k:off+k]
		ps.init[i](p.W, rng)
		off += k
	}
	return w, g
}

// TruncNormal draws N(0, std²) truncated at ±2·std, the usual ViT/MAE init.
func TruncNormal[T Float](std float64) func([]T, *rand.Rand) {
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

// Constant sets every value to c.
func Constant[T Float](c float64) func([]T, *rand.Rand) {
	return func(w []T, _ *rand.Rand) {
		for i := range w {
			w[i] = T(c)
		}
	}
}

// Uniform draws U(−a, a), SIREN's initialisation.
func Uniform[T Float](a float64) func([]T, *rand.Rand) {
	return func(w []T, rng *rand.Rand) {
		for i := range w {
			w[i] = T((2*rng.Float64() - 1) * a)
		}
	}
}
