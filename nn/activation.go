package nn

import (
	"math"

	"romae/tensor"
)

// SiLUForward: out = in · σ(in), element-wise over n values. float32 runs
// tensor.SiLU32 (float32 exp, AVX-512 where present).
func SiLUForward[T tensor.Float](out, in []T, n int) {
	if o32, ok := any(out).([]float32); ok {
		i32 := any(in).([]float32)
		tensor.ParallelFor(n, 4096, func(lo, hi int) { tensor.SiLU32(o32[lo:hi], i32[lo:hi]) })
		return
	}
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			out[i] = x / (1 + T(math.Exp(-float64(x))))
		}
	})
}

// SiLUForwardBF16 is SiLUForward in float32 on a [rows, cols] matrix that
// also stores out, rounded as it is computed, in outBF (resized to
// [rows, cols]): the form in which a bf16 product reads it
// (tensor.GemmBF16Rows) without rounding and packing it again. out may be
// nil when no backward pass needs it; rows then go through scratch.
func SiLUForwardBF16(outBF *tensor.BF16Rows, out, in []float32, rows, cols int) {
	outBF.Resize(rows, cols)
	step := max(1, 4096/cols) // rows per piece: 16 KiB of float32
	tensor.ParallelFor(rows, step, func(lo, hi int) {
		sink := newRowSink(out, step, cols)
		defer sink.release()
		for r0 := lo; r0 < hi; r0 += step {
			r1 := min(r0+step, hi)
			y := sink.rows(r0, r1)
			tensor.SiLU32(y, in[r0*cols:r1*cols])
			outBF.Store(r0, r1-r0, y, cols)
		}
	})
}

// rowSink is where a layer that also stores its output in bf16 writes the
// float32 rows of one piece: out itself, or, when out is nil (no backward
// pass keeps it), one worker's scratch, reused for every piece.
type rowSink struct {
	out  []float32
	buf  *[]float32
	cols int
}

// newRowSink is a sink for pieces of up to chunk rows of out [?, cols].
func newRowSink(out []float32, chunk, cols int) rowSink {
	s := rowSink{out: out, cols: cols}
	if out == nil {
		s.buf = getScratch(chunk * cols)
	}
	return s
}

// rows is where rows r0..r1 go.
func (s rowSink) rows(r0, r1 int) []float32 {
	if s.out != nil {
		return s.out[r0*s.cols : r1*s.cols]
	}
	return (*s.buf)[:(r1-r0)*s.cols]
}

func (s rowSink) release() {
	if s.buf != nil {
		putScratch(s.buf)
	}
}

// SiLUBackward: dIn = dOut · σ(x)·(1 + x·(1−σ(x))), overwritten; dIn may
// be dOut (element by element, each read before it is written).
func SiLUBackward[T tensor.Float](dIn, dOut, in []T, n int) {
	if d32, ok := any(dIn).([]float32); ok {
		g32, i32 := any(dOut).([]float32), any(in).([]float32)
		tensor.ParallelFor(n, 4096, func(lo, hi int) { tensor.SiLUGrad32(d32[lo:hi], g32[lo:hi], i32[lo:hi]) })
		return
	}
	tensor.ParallelFor(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := in[i]
			s := 1 / (1 + T(math.Exp(-float64(x))))
			dIn[i] = dOut[i] * s * (1 + x*(1-s))
		}
	})
}
