package model

import (
	"math"
	"math/rand/v2"
	"strconv"

	"romae/rope"
	"romae/tensor"
)

// newSiren registers a SIREN-RoPE network's parameters under prefix and
// returns it with its views bound once the buffer is allocated (bind).
func newSiren[T tensor.Float](ps *paramSet[T], prefix string, spec rope.SirenSpec, l rope.Layout) (*rope.Siren[T], func()) {
	s := &rope.Siren[T]{Spec: spec, Layout: l}
	F, H, O := spec.Features(), spec.Hidden, len(spec.Axes)*l.R
	w0 := spec.Omega0
	// SIREN initialisation: first layer U(−1/n, 1/n); later sine-branch
	// layers U(−√(6/n)/ω0, √(6/n)/ω0) with n the fan-in.
	first := tensor.Uniform[T](1 / float64(F))
	hidden := tensor.Uniform[T](math.Sqrt(6/float64(H)) / w0)
	var binds []func()
	add := func(dst *rope.Weights[T], name string, init func([]T, *rand.Rand), decay bool, shape ...int) {
		p := ps.Add(prefix+"."+name, decay, init, shape...)
		binds = append(binds, func() { dst.W, dst.G = p.W, p.G })
	}
	add(&s.SinW1, "sin.0.weight", first, true, H, F)
	add(&s.SinB1, "sin.0.bias", first, false, H)
	add(&s.SinW2, "sin.1.weight", hidden, true, H, H)
	add(&s.SinB2, "sin.1.bias", hidden, false, H)
	add(&s.SinW3, "sin.2.weight", hidden, true, O, H)
	add(&s.SinB3, "sin.2.bias", tensor.Constant[T](0), false, O)
	add(&s.MlpW1, "mlp.0.weight", tensor.TruncNormal[T](0.02), true, H, F)
	add(&s.MlpB1, "mlp.0.bias", tensor.Constant[T](0), false, H)
	add(&s.MlpW2, "mlp.1.weight", tensor.TruncNormal[T](0.02), true, O, H)
	add(&s.MlpB2, "mlp.1.bias", tensor.Constant[T](0), false, O)
	s.Emb = make([]rope.Weights[T], len(spec.CatAxes))
	for k, size := range spec.CatSizes {
		add(&s.Emb[k], "embed."+itoa(k), tensor.TruncNormal[T](0.02), false, size, spec.CatDim)
	}
	add(&s.Scale, "scale", tensor.Constant[T](math.Pi), false, O)
	add(&s.Gate, "gate", tensor.Constant[T](1), false, 1)
	return s, func() {
		for _, b := range binds {
			b()
		}
	}
}

func itoa(k int) string { return strconv.Itoa(k) }
