package tensor

import (
	"fmt"
	"testing"
)

// benchShape is one product from RoMAE-tiny training: batch 32 × 200
// tokens = 6400 rows, d=180, ffn=720, 3 heads of 60 (so 96 (sample, head)
// pairs per attention call).
type benchShape struct {
	name           string
	transA, transB bool
	m, n, k        int
	batch          int // >1: independent products spread over the cores, GemmSerial each (as attention runs them)
}

var benchShapes = []benchShape{
	{"qkv_6400x180x180_NN", false, false, 6400, 180, 180, 1},
	{"ffn1_6400x720x180_NN", false, false, 6400, 720, 180, 1},
	{"ffn2_6400x180x720_NN", false, false, 6400, 180, 720, 1},
	{"dx_6400x180x720_NT", false, true, 6400, 180, 720, 1},
	{"dw_180x180x6400_TN", true, false, 180, 180, 6400, 1},
	{"dw_720x180x6400_TN", true, false, 720, 180, 6400, 1},
	{"dw_180x720x6400_TN", true, false, 180, 720, 6400, 1},
	{"attnQK_96x200x200x60_NT", false, true, 200, 200, 60, 96},
	{"attnPV_96x200x60x200_NN", false, false, 200, 60, 200, 96},
}

// BenchmarkSgemm: go test ./tensor -run '^$' -bench Sgemm (add
// GOEXPERIMENT=simd and/or -tags openblas to include those back ends).
func BenchmarkSgemm(b *testing.B) {
	prev := BackendName()
	defer SetBackend(prev)
	for _, be := range Backends() {
		for _, sh := range benchShapes {
			b.Run(fmt.Sprintf("%s/%s", be.Name(), sh.name), func(b *testing.B) {
				SetBackend(be.Name())
				benchShapeRun(b, sh)
			})
		}
	}
}

// operands are deterministic operands for sh (batch items side by side)
// with their leading dimensions and per-item sizes.
func (sh benchShape) operands() (a, bb, c []float32, lda, ldb, sa, sb, sc int) {
	lda, ldb = sh.k, sh.n
	if sh.transA {
		lda = sh.m
	}
	if sh.transB {
		ldb = sh.k
	}
	sa, sb, sc = sh.m*sh.k, sh.k*sh.n, sh.m*sh.n
	a, bb, c = make([]float32, sa*sh.batch), make([]float32, sb*sh.batch), make([]float32, sc*sh.batch)
	for i := range a {
		a[i] = float32(i%7) * 0.25
	}
	for i := range bb {
		bb[i] = float32(i%5) * 0.5
	}
	return a, bb, c, lda, ldb, sa, sb, sc
}

// benchShapeRun times sh on the current back end and reports GFLOP/s.
func benchShapeRun(b *testing.B, sh benchShape) {
	a, bb, c, lda, ldb, sa, sb, sc := sh.operands()
	b.ResetTimer()
	for range b.N {
		if sh.batch == 1 {
			Gemm(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
		} else {
			ParallelFor(sh.batch, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					GemmSerial(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a[i*sa:], lda, bb[i*sb:], ldb, 0, c[i*sc:], sh.n)
				}
			})
		}
	}
	flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k) * float64(sh.batch)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
