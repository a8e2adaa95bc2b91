// Package rope implements romae's positional machinery: continuous axial
// p-RoPE (rotations of query/key pairs by real-valued positions on up to
// three axes), its integer-position variant with a table cached across
// batches, and the absolute sin/cos embedding used as the paper's baseline.
package rope

import (
	"fmt"
	"math"

	"romae/internal/bufs"
	"romae/tensor"
)

// Layout fixes how one head is split between positional axes. A head of
// HeadDim values has D slices of AxisDim = HeadDim/D; slice i is rotated by
// coordinate i. Inside a slice, element j pairs with j+AxisDim/2
// ("rotate-half"), and only the first R = floor(p·AxisDim/2) pairs rotate;
// the rest (the lowest frequencies) pass unchanged — p-RoPE.
type Layout struct {
	HeadDim, D, AxisDim, R int
	// InvTimescale[j] = base^(−2j/AxisDim), the angular frequency of pair j.
	InvTimescale []float64
}

// NewLayout validates the geometry the maths requires.
func NewLayout(headDim, d int, p, base float64) (Layout, error) {
	switch {
	case d < 1 || d > 3:
		return Layout{}, fmt.Errorf("rope: %d positional axes, want 1, 2 or 3", d)
	case p < 0 || p > 1 || math.IsNaN(p):
		return Layout{}, fmt.Errorf("rope: p = %v, want 0 ≤ p ≤ 1", p)
	case base <= 1:
		return Layout{}, fmt.Errorf("rope: base = %v, want > 1", base)
	case headDim%(2*d) != 0:
		return Layout{}, fmt.Errorf("rope: head dimension %d is not divisible by 2·axes = %d", headDim, 2*d)
	}
	a := headDim / d
	r := int(math.Floor(p * float64(a) / 2))
	inv := make([]float64, r)
	for j := range inv {
		inv[j] = math.Pow(base, -2*float64(j)/float64(a))
	}
	return Layout{HeadDim: headDim, D: d, AxisDim: a, R: r, InvTimescale: inv}, nil
}

// Timescales returns the authors' buffer: base^(2j/a) for rotated pairs and
// +Inf for the pairs p-RoPE leaves alone, so a loaded checkpoint's
// `attn_pos_embedding.timescale` can be checked against the config.
func (l Layout) Timescales() []float64 {
	ts := make([]float64, l.AxisDim/2)
	for j := range ts {
		if j < l.R {
			ts[j] = 1 / l.InvTimescale[j]
		} else {
			ts[j] = math.Inf(1)
		}
	}
	return ts
}

// Table holds cos and sin of every (token, axis, rotated pair) angle:
// Cos, Sin [N, D·R]. It is computed once per forward pass from the batch's
// positions and shared by every layer, since positions are real numbers that
// change with every batch.
type Table[T tensor.Float] struct {
	Layout
	N        int
	Cos, Sin []T
}

// Compute fills the table for positions[N·D] (token-major), reusing memory.
func (t *Table[T]) Compute(l Layout, positions []T, n int) {
	t.Layout, t.N = l, n
	w := l.D * l.R
	t.Cos, t.Sin = bufs.Resize(t.Cos, n*w), bufs.Resize(t.Sin, n*w)
	if w == 0 {
		return
	}
	tensor.ParallelFor(n, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for ax := 0; ax < l.D; ax++ {
				p := float64(positions[i*l.D+ax])
				for j, f := range l.InvTimescale {
					s, c := math.Sincos(p * f)
					t.Cos[i*w+ax*l.R+j], t.Sin[i*w+ax*l.R+j] = T(c), T(s)
				}
			}
		}
	})
}

// Rows is the table of tokens r0..r0+n-1 alone, sharing t's memory: for
// rotating a slice of the batch (whole samples of it) on its own. A value,
// so a caller that keeps it in a long-lived struct allocates nothing.
func (t *Table[T]) Rows(r0, n int) Table[T] {
	if r0 < 0 || n < 0 || r0+n > t.N {
		panic(fmt.Sprintf("rope: Table.Rows(%d, %d) of a %d-token table", r0, n, t.N))
	}
	w := t.D * t.R
	return Table[T]{Layout: t.Layout, N: n, Cos: t.Cos[r0*w : (r0+n)*w], Sin: t.Sin[r0*w : (r0+n)*w]}
}

// SetAngles fills the table from explicit angles[N, D·R] (the learned
// SIREN-RoPE path computes angles itself).
func (t *Table[T]) SetAngles(l Layout, angles []T, n int) {
	t.Layout, t.N = l, n
	w := l.D * l.R
	t.Cos, t.Sin = bufs.Resize(t.Cos, n*w), bufs.Resize(t.Sin, n*w)
	tensor.ParallelFor(n*w, 1024, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, c := math.Sincos(float64(angles[i]))
			t.Cos[i], t.Sin[i] = T(c), T(s)
		}
	})
}

// Rotate applies the rotation in place to x[N, H·HeadDim] (rows are tokens,
// heads side by side, as a q or k projection produces them). With inverse
// it rotates by the negative angle: that is the backward pass, because a
// rotation's transpose is its inverse.
func (t *Table[T]) Rotate(x []T, heads int, inverse bool) {
	l := t.Layout
	w, half := l.D*l.R, l.AxisDim/2
	d := heads * l.HeadDim
	tensor.ParallelFor(t.N, 32, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cs, sn := t.Cos[i*w:(i+1)*w], t.Sin[i*w:(i+1)*w]
			for h := 0; h < heads; h++ {
				head := x[i*d+h*l.HeadDim : i*d+(h+1)*l.HeadDim]
				for ax := 0; ax < l.D; ax++ {
					sl := head[ax*l.AxisDim : (ax+1)*l.AxisDim]
					c, s := cs[ax*l.R:(ax+1)*l.R], sn[ax*l.R:(ax+1)*l.R]
					for j := 0; j < l.R; j++ {
						x1, x2 := sl[j], sl[j+half]
						sj := s[j]
						if inverse {
							sj = -sj
						}
						sl[j] = x1*c[j] - x2*sj
						sl[j+half] = x2*c[j] + x1*sj
					}
				}
			}
		}
	})
}

// AngleGrad accumulates into dAngles[B·L, D·R] the gradient of the loss
// with respect to each rotation angle, given the rotated heads y and their
// gradient dy (both [B,H,L,HeadDim], as RotateSplit writes them):
// d y1/dθ = −y2, d y2/dθ = y1, summed over heads. Only learned-angle modes
// need it; reading the head layout lets the q|k|v backward stay fused.
func (t *Table[T]) AngleGrad(dAngles, y, dy []T, B, L, heads int) {
	l := t.Layout
	w, half, hd := l.D*l.R, l.AxisDim/2, l.HeadDim
	tensor.ParallelFor(B*L, 32, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/L, r%L
			da := dAngles[r*w : (r+1)*w]
			for h := 0; h < heads; h++ {
				off := ((b*heads+h)*L + i) * hd
				for ax := 0; ax < l.D; ax++ {
					ys, gs := y[off+ax*l.AxisDim:], dy[off+ax*l.AxisDim:]
					d := da[ax*l.R : (ax+1)*l.R]
					for j := range d {
						d[j] += gs[j+half]*ys[j] - gs[j]*ys[j+half]
					}
				}
			}
		}
	})
}

// RotateSplit is Rotate fused with the split into heads: dst[B,H,L,hd] ←
// rotate(src[B·L, H·hd]) in one pass over src (src is not modified). src
// rows are ld apart (ld ≥ H·hd: q, k, v side by side in one projection
// output). The table must have N = B·L rows.
func (t *Table[T]) RotateSplit(dst, src []T, ld, B, L, heads int) {
	headMajor, tokenMajor := t.layouts(ld, L, heads)
	t.rotateCopy(dst, src, headMajor, tokenMajor, B, L, heads, false)
}

// RotateSplitRows is RotateSplit of tokens lo ≤ r < hi alone (r = b·L +
// l), on the calling goroutine: for callers that run a layer a chunk of
// rows at a time on one core, rotating rows their own product has just
// written. dst and the table are the whole batch's; src holds the rows
// lo … hi−1 alone, from its start (the chunk's product output, in the
// core's scratch).
func (t *Table[T]) RotateSplitRows(dst, src []T, ld, L, heads, lo, hi int) {
	headMajor, tokenMajor := t.layouts(ld, L, heads)
	tokenMajor.Off = -lo * ld
	t.rotateRows(dst, src, headMajor, tokenMajor, L, heads, lo, hi, false)
}

// MergeRotateInverse is MergeHeads fused with the inverse rotation (the
// backward of RotateSplit): dst[B·L, H·hd] (rows ld apart) ←
// rotate⁻¹(src[B,H,L,hd]).
func (t *Table[T]) MergeRotateInverse(dst, src []T, ld, B, L, heads int) {
	headMajor, tokenMajor := t.layouts(ld, L, heads)
	t.rotateCopy(dst, src, tokenMajor, headMajor, B, L, heads, true)
}

// MergeRotateInverseSample is MergeRotateInverse of one sample (the table
// holds its L rows: Rows(b·L, L)), run on the calling goroutine: for a
// caller that is itself one of several parallel tasks and has just
// written the sample's heads, so they are still in its core's cache.
func (t *Table[T]) MergeRotateInverseSample(dst, src []T, ld, heads int) {
	headMajor, tokenMajor := t.layouts(ld, t.N, heads)
	t.rotateRows(dst, src, tokenMajor, headMajor, t.N, heads, 0, t.N, true)
}

// layouts are the strides of a head-major [B,H,L,hd] tensor and of the
// heads in rows ld apart of a token-major [B·L, ld] one.
func (t *Table[T]) layouts(ld, L, heads int) (headMajor, tokenMajor headStrides) {
	hd := t.HeadDim
	return headStrides{SB: heads * L * hd, SL: hd, SH: L * hd}, headStrides{SB: L * ld, SL: ld, SH: hd}
}

// rotateCopy writes every head of dst (at dOff) as the head of src (at
// sOff) of the same token, rotated (inverse: by minus the angles).
func (t *Table[T]) rotateCopy(dst, src []T, dOff, sOff headStrides, B, L, heads int, inverse bool) {
	tensor.ParallelFor(B*L, 32, func(lo, hi int) {
		t.rotateRows(dst, src, dOff, sOff, L, heads, lo, hi, inverse)
	})
}

// rotateRows is rotateCopy of tokens lo ≤ r < hi (r = b·L + l).
func (t *Table[T]) rotateRows(dst, src []T, dOff, sOff headStrides, L, heads, lo, hi int, inverse bool) {
	if t.rotateCopy32(dst, src, L, heads, dOff, sOff, lo, hi, inverse) {
		return
	}
	hd := t.HeadDim
	for r := lo; r < hi; r++ {
		b, l := r/L, r%L
		dt, st := dOff.token(b, l), sOff.token(b, l)
		for h := 0; h < heads; h++ {
			o, in := dst[dt+h*dOff.SH:][:hd], src[st+h*sOff.SH:][:hd]
			copy(o, in)
			t.rotateHead(o, in, r, inverse)
		}
	}
}

// headStrides locate head h of token (b, l) at Off + b·SB + l·SL + h·SH:
// head-major [B,H,L,hd] or token-major rows of a [B·L, ld] tensor (Off:
// where its row 0 would be, for a slice that starts at a later row).
type headStrides struct{ SB, SL, SH, Off int }

// token is where token (b, l)'s head 0 is; head h is SH further. The
// loops over heads take it once per token (at every head, the fourth
// field's add made RotateSplit 4% slower).
func (s headStrides) token(b, l int) int { return s.Off + b*s.SB + l*s.SL }

// rotateCopy32 runs the float32 kernel when T is float32 underneath.
func (t *Table[T]) rotateCopy32(dst, src []T, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	d32, ok := any(dst).([]float32)
	if !ok {
		return false
	}
	return rotateCopy32(d32, any(src).([]float32), any(t.Cos).([]float32), any(t.Sin).([]float32), t.Layout, L, heads, dOff, sOff, lo, hi, inverse)
}

// rotateHead writes into dst[HeadDim] token i's head src[HeadDim]
// rotated (the unrotated pairs of dst are left as they are). dst may be
// src. Fused with a copy, the caller copies the head to dst first and the
// rotation reads src, not the just-stored copy.
func (t *Table[T]) rotateHead(dst, src []T, i int, inverse bool) {
	l := t.Layout
	w, half := l.D*l.R, l.AxisDim/2
	cs, sn := t.Cos[i*w:(i+1)*w], t.Sin[i*w:(i+1)*w]
	for ax := 0; ax < l.D; ax++ {
		o := ax * l.AxisDim
		x1, x2 := src[o:o+l.R], src[o+half:o+half+l.R]
		y1, y2 := dst[o:o+l.R], dst[o+half:o+half+l.R]
		c, s := cs[ax*l.R:(ax+1)*l.R], sn[ax*l.R:(ax+1)*l.R]
		if x32, ok := any(x1).([]float32); ok {
			tensor.RotatePairs32(any(y1).([]float32), any(y2).([]float32), x32, any(x2).([]float32), any(c).([]float32), any(s).([]float32), inverse)
			continue
		}
		sign := T(1)
		if inverse {
			sign = -1
		}
		for j := range c {
			a, b, sj := x1[j], x2[j], sign*s[j]
			y1[j] = a*c[j] - b*sj
			y2[j] = b*c[j] + a*sj
		}
	}
}
