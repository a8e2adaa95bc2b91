package rope

import (
	"fmt"
	"math"

	"romae/internal/bufs"
	"romae/tensor"
)

// IntCache serves RoPE for integer positions (image patches, regular time
// steps): cos/sin per integer coordinate are computed once and reused by
// every later batch, the caching the paper's "RoPE (quantized)" row relies
// on. It grows when a larger coordinate appears.
type IntCache[T tensor.Float] struct {
	layout   Layout
	max      int // coordinates 0..max−1 are cached
	cos, sin []T // [max, R]
}

// Fill writes the table for positions[N·D]; every coordinate must be a
// non-negative integer, else the error names the token and axis.
func (c *IntCache[T]) Fill(t *Table[T], l Layout, positions []T, n int) error {
	if c.layout.HeadDim != l.HeadDim || c.layout.D != l.D || c.layout.R != l.R {
		c.layout, c.max, c.cos, c.sin = l, 0, nil, nil
	}
	for i, p := range positions[:n*l.D] {
		if p < 0 || p != T(math.Round(float64(p))) || math.IsInf(float64(p), 0) {
			return fmt.Errorf("rope-int: token %d axis %d has position %v; integer positions ≥ 0 required (use pos_encoding rope for real-valued positions)", i/l.D, i%l.D, p)
		}
		if int(p) >= c.max {
			c.extend(int(p) + 1)
		}
	}
	t.Layout, t.N = l, n
	w := l.D * l.R
	t.Cos, t.Sin = bufs.Resize(t.Cos, n*w), bufs.Resize(t.Sin, n*w)
	for i := 0; i < n; i++ {
		for ax := 0; ax < l.D; ax++ {
			p := int(positions[i*l.D+ax])
			copy(t.Cos[i*w+ax*l.R:][:l.R], c.cos[p*l.R:][:l.R])
			copy(t.Sin[i*w+ax*l.R:][:l.R], c.sin[p*l.R:][:l.R])
		}
	}
	return nil
}

func (c *IntCache[T]) extend(upTo int) {
	n := max(upTo, 2*c.max, 256)
	l := c.layout
	cos, sin := make([]T, n*l.R), make([]T, n*l.R)
	copy(cos, c.cos)
	copy(sin, c.sin)
	for p := c.max; p < n; p++ {
		for j, f := range l.InvTimescale {
			s, co := math.Sincos(float64(p) * f)
			cos[p*l.R+j], sin[p*l.R+j] = T(co), T(s)
		}
	}
	c.cos, c.sin, c.max = cos, sin, n
}
