package optim

import (
	"math"
	"sync"

	"romae/tensor"
)

// ClipGradNorm is torch.nn.utils.clip_grad_norm_ with norm_type 2: it
// returns the L2 norm of all gradients taken together and, if it exceeds
// maxNorm, scales every gradient by maxNorm/(norm+1e-6).
//
// "Exceeds" is PyTorch's test, coef = maxNorm/(norm+1e-6) < 1, so a norm
// within 1e-6 below maxNorm is also (negligibly) scaled. The squares are
// summed in float64 — PyTorch sums in float32 — because a 5M-element sum in
// float32 loses digits; the sum runs over fixed 32K-element blocks added in
// order, so the result does not depend on the number of cores.
//
// A NaN or Inf norm is returned with the gradients untouched: scaling by it
// would poison every weight, and the caller should report the step instead.
func ClipGradNorm(params []*tensor.Param[float32], maxNorm float64) float64 {
	c := clipPool.Get().(*clipTask)
	defer clipPool.Put(c)
	c.params = params
	c.offs = append(c.offs[:0], 0)
	for _, p := range params {
		c.offs = append(c.offs, c.offs[len(c.offs)-1]+len(p.G))
	}
	n := c.offs[len(c.offs)-1]
	nb := (n + clipBlock - 1) / clipBlock
	if cap(c.partial) < nb {
		c.partial = make([]float64, nb)
	}
	c.partial = c.partial[:nb]
	c.scaling = false
	parallelRange(c, nb, parallelMin/clipBlock)
	var ss float64
	for _, s := range c.partial {
		ss += s
	}
	norm := math.Sqrt(ss)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		c.params = nil
		return norm
	}
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		c.scaling, c.coef = true, float32(coef)
		parallelRange(c, nb, parallelMin/clipBlock)
	}
	c.params = nil // don't keep the model alive from the pool
	return norm
}

// clipBlock is the summation block. Its fixed boundaries fix the order of
// the float64 additions, so the norm is the same however many cores share
// the blocks; 32K elements keeps per-block overhead negligible.
const clipBlock = 1 << 15

// clipTask is pooled so ClipGradNorm does not allocate in steady state.
type clipTask struct {
	params  []*tensor.Param[float32]
	offs    []int
	partial []float64
	scaling bool
	coef    float32
}

var clipPool = sync.Pool{New: func() any { return new(clipTask) }}

// runRange handles blocks [lo, hi): global elements [lo·B, hi·B).
func (c *clipTask) runRange(lo, hi int) {
	for b := lo; b < hi; b++ {
		elo, ehi := b*clipBlock, (b+1)*clipBlock
		var ss float64
		for i := searchOffs(c.offs, elo); i < len(c.params) && c.offs[i] < ehi; i++ {
			g := c.params[i].G
			off := c.offs[i]
			seg := g[max(elo-off, 0):min(ehi-off, len(g))]
			if c.scaling {
				tensor.Scale32(seg, c.coef)
			} else {
				ss += sumSquares(seg)
			}
		}
		if !c.scaling {
			c.partial[b] = ss
		}
	}
}

// searchOffs returns the index of the parameter holding global element e.
func searchOffs(offs []int, e int) int {
	lo, hi := 0, len(offs)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if offs[m+1] > e {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// sumSquares is Σ x² in float64: AVX-512 where available, else four
// scalar accumulators to break the add dependency chain.
func sumSquares(x []float32) float64 {
	s0, i := sumSquaresVec(x)
	var s1, s2, s3 float64
	for ; i+4 <= len(x); i += 4 {
		a, b, c, d := float64(x[i]), float64(x[i+1]), float64(x[i+2]), float64(x[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(x); i++ {
		v := float64(x[i])
		s0 += v * v
	}
	return (s0 + s1) + (s2 + s3)
}
