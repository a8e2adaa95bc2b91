package model

import (
	"fmt"
	"math/rand/v2"

	"romae/tensor"
)

// Parameter tensors are named as in the authors' PyTorch code, so their
// checkpoints load by name and ours can be read by their code.

// linear is a Linear layer's weight [out,in] and optional bias [out].
type linear[T tensor.Float] struct {
	w, b    *tensor.Param[T]
	in, out int
}

// block is one pre-norm Transformer layer.
type block[T tensor.Float] struct {
	attnNorm, ffnNorm *tensor.Param[T]
	wq, wk, wv, wo    linear[T]
	w1, w2            linear[T]
}

// paramSet declares RoMAE's parameters (tensor.ParamSet) under the
// authors' names, layer by layer.
type paramSet[T tensor.Float] struct{ tensor.ParamSet[T] }

func (ps *paramSet[T]) linear(name string, in, out int, bias bool) linear[T] {
	l := linear[T]{in: in, out: out, w: ps.Add(name+".weight", true, tensor.TruncNormal[T](0.02), out, in)}
	if bias {
		l.b = ps.Add(name+".bias", false, tensor.Constant[T](0), out)
	}
	return l
}

func (ps *paramSet[T]) norm(name string, d int) *tensor.Param[T] {
	return ps.Add(name+".weight", false, tensor.Constant[T](1), d)
}

func (ps *paramSet[T]) block(prefix string, s Size) block[T] {
	d := s.DModel
	return block[T]{
		attnNorm: ps.norm(prefix+".attention_norm", d),
		wq:       ps.linear(prefix+".attention.wq", d, d, false),
		wk:       ps.linear(prefix+".attention.wk", d, d, false),
		wv:       ps.linear(prefix+".attention.wv", d, d, false),
		wo:       ps.linear(prefix+".attention.wo", d, d, false),
		ffnNorm:  ps.norm(prefix+".ffn_norm", d),
		w1:       ps.linear(prefix+".feed_forward.w1", d, s.FFN, false),
		w2:       ps.linear(prefix+".feed_forward.w2", s.FFN, d, false),
	}
}

// allocate gives every parameter its views into w and g and initialises it
// from seed, in declaration order so a seed always gives the same model.
func (ps *paramSet[T]) allocate(seed uint64) (w, g []T) {
	return ps.Allocate(rand.New(rand.NewPCG(seed, 0x526f4d4145)))
}

// Param returns the named parameter.
func (m *Model[T]) Param(name string) (*tensor.Param[T], error) {
	for _, p := range m.Params {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("model has no parameter %q", name)
}

// ZeroGrad clears every gradient before a step.
func (m *Model[T]) ZeroGrad() { clear(m.G) }

// NumParams counts all parameters.
func (m *Model[T]) NumParams() int { return len(m.W) }

// PackWeights lays every Transformer block's weights out once in the order
// the matrix kernel in use reads them (the fp32 kernel's, or rounded bf16
// pairs for a bf16 kernel: tensor.PackWeight), for a model that from now on only
// runs inference (a server, a batch of predictions): forward passes that
// do not train then skip re-packing every weight in every product, which
// for a lone sample was a fifth of the CPU time (docs/performance.md).
// Outputs are bit-identical. It costs one more copy of the block weights
// in memory. A training forward pass, whose weights are about to change,
// drops the packed copies, as does loading weights into the model; call
// PackWeights again after changing W any other way.
func (m *Model[T]) PackWeights() {
	m.enc.pack()
	if len(m.dec.blocks) > 0 {
		m.dec.pack()
	}
	for _, o := range m.others {
		o.PackWeights()
	}
}

// dropPacked forgets the packed weights (PackWeights): W is about to change.
func (m *Model[T]) dropPacked() {
	m.enc.packed, m.dec.packed = nil, nil
	for _, o := range m.others {
		o.dropPacked()
	}
}
