package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkAttentionProducts times attention's six per-(sample, head)
// products at RoMAE-tiny's shape (201 tokens, heads of 60) one after
// another as nn runs them, on operands in cache, on the fp32 back end in
// use: the scores q·kᵀ and the output p·v of the forward pass, then dp =
// dOut·vᵀ, dv = pᵀ·dOut, dq = ds·k and dk = dsᵀ·q of the backward pass.
// Each reports its own GFLOP/s, so the weakest stands out next to the
// linear layers' products (BenchmarkSgemm).
func BenchmarkAttentionProducts(b *testing.B) {
	const L, hd, ld, hld = 201, 60, 208, 64 // score rows and head outputs in whole lines, as nn keeps them
	rng := rand.New(rand.NewPCG(9, 10))
	mat := func(n int) []float32 { return to32(randSlice(rng, n)) }
	q, k, v, dOut := mat(L*hd), mat(L*hd), mat(L*hd), mat(L*hd)
	s, ds, p := mat(L*ld), mat(L*ld), mat(L*L)
	out := make([]float32, L*hld)
	for _, pr := range []struct {
		name           string
		transA, transB bool
		m, n, k        int
		a              []float32
		lda            int
		b              []float32
		ldb            int
		c              []float32
		ldc            int
	}{
		{"scores_qkT", false, true, L, L, hd, q, hd, k, hd, s, ld},
		{"output_pv", false, false, L, hd, L, s, ld, v, hd, out, hld},
		{"dp_dOutvT", false, true, L, L, hd, dOut, hd, v, hd, ds, ld},
		{"dv_pTdOut", true, false, L, hd, L, p, L, dOut, hd, out, hld},
		{"dq_dsk", false, false, L, hd, L, ds, ld, k, hd, out, hld},
		{"dk_dsTq", true, false, L, hd, L, ds, ld, q, hd, out, hld},
	} {
		b.Run(fmt.Sprintf("%s/%dx%dx%d", pr.name, pr.m, pr.n, pr.k), func(b *testing.B) {
			for range b.N {
				GemmSerial(pr.transA, pr.transB, pr.m, pr.n, pr.k, 1, pr.a, pr.lda, pr.b, pr.ldb, 0, pr.c, pr.ldc)
			}
			b.ReportMetric(2*float64(pr.m*pr.n*pr.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
