package optim

import (
	"fmt"
	"runtime"
	"testing"

	"romae/tensor"
)

// benchParams is ~5.5M parameters shaped like the biggest common model: per
// layer four d×d attention matrices, two d×4d MLP matrices and two
// undecayed norm gains, with d = 256 and seven layers.
func benchParams() []*tensor.Param[float32] {
	const d = 256
	var sizes []int
	var decay []bool
	for len(sizes) == 0 || total(sizes) < 5_000_000 {
		sizes = append(sizes, d*d, d*d, d*d, d*d, d*4*d, 4*d*d, d, d)
		decay = append(decay, true, true, true, true, true, true, false, false)
	}
	ps := newParams(sizes, decay, 1)
	fillGrads(ps, 1)
	return ps
}

func total(s []int) int {
	n := 0
	for _, x := range s {
		n += x
	}
	return n
}

// Each benchmark runs on one core and on all of them, which is the
// measurement behind parallelMin and the decision to split at all.
func benchProcs(b *testing.B, f func(b *testing.B)) {
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			f(b)
		})
	}
}

func benchStep(b *testing.B, o Optimizer) {
	ps := benchParams()
	n := 0
	for _, p := range ps {
		n += len(p.W)
	}
	benchProcs(b, func(b *testing.B) {
		o.Step(ps, 1e-9)
		b.SetBytes(int64(n) * 4)
		b.ReportAllocs()
		for b.Loop() {
			o.Step(ps, 1e-9)
		}
	})
}

func BenchmarkAdamWStep5M(b *testing.B)       { benchStep(b, NewAdamW()) }
func BenchmarkSGDMomentumStep5M(b *testing.B) { benchStep(b, &SGD{Momentum: 0.9, WeightDecay: 1e-4}) }

func BenchmarkClipGradNorm5M(b *testing.B) {
	ps := benchParams()
	benchProcs(b, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ClipGradNorm(ps, 1e9) // measure the norm pass; scaling is one more stream
		}
	})
}
