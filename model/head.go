package model

import (
	"math/rand/v2"

	"romae/internal/bufs"
	"romae/nn"
	"romae/tensor"
)

// head is the paper's output head, used both for reconstruction and for
// tasks: Dropout → RMSNorm → Linear(d → out) with bias.
type head[T tensor.Float] struct {
	norm *tensor.Param[T]
	out  linear[T]
	drop float64
	eps  float64
}

// headActs: in, dropped, norm [n,d]; rstd [n]; mask [n,d]; y [n,out].
type headActs[T tensor.Float] struct {
	n                             int
	in, mask, dropped, norm, rstd []T
	y, dy, dNorm, dIn             []T
}

func (a *headActs[T]) resize(h *head[T], n int, train bool) {
	d, o := h.out.in, h.out.out
	a.n = n
	a.in, a.dropped, a.norm = bufs.Resize(a.in, n*d), bufs.Resize(a.dropped, n*d), bufs.Resize(a.norm, n*d)
	a.rstd, a.y, a.dy = bufs.Resize(a.rstd, n), bufs.Resize(a.y, n*o), bufs.Resize(a.dy, n*o)
	a.dNorm, a.dIn = bufs.Resize(a.dNorm, n*d), bufs.Resize(a.dIn, n*d)
	a.mask = growIf(a.mask, n*d, train && h.drop > 0)
}

// forward reads a.in and writes a.y.
func (h *head[T]) forward(a *headActs[T], rng rand.Source) {
	d, o := h.out.in, h.out.out
	x := a.in
	if len(a.mask) > 0 {
		nn.DropoutMask(a.mask, h.drop, rng)
		nn.DropoutForward(a.dropped, a.in, a.mask)
		x = a.dropped
	}
	nn.RMSNormForward(a.norm, a.rstd, x, h.norm.W, a.n, d, h.eps)
	nn.LinearForward(a.y, a.norm, h.out.w.W, h.out.b.W, a.n, d, o)
}

// backward reads a.dy and writes a.dIn.
func (h *head[T]) backward(a *headActs[T]) {
	d, o := h.out.in, h.out.out
	x := a.in
	if len(a.mask) > 0 {
		x = a.dropped
	}
	nn.LinearBackward(a.dNorm, h.out.w.G, h.out.b.G, a.dy, a.norm, h.out.w.W, a.n, d, o, false)
	nn.RMSNormBackward(a.dIn, h.norm.G, a.dNorm, x, h.norm.W, a.rstd, a.n, d, false)
	if len(a.mask) > 0 {
		nn.DropoutForward(a.dIn, a.dIn, a.mask)
	}
}
