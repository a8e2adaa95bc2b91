//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkAttentionBF16 times the per-(sample, head) bf16 products of
// RoMAE-tiny's attention (L = 201 tokens, head dim 60, q/k/v rows 540
// apart) and the packing inside them, one core.
func BenchmarkAttentionBF16(b *testing.B) {
	if !BF16Supported() {
		b.Skip("no bf16 path here")
	}
	const L, hd, ld = 201, 60, 540
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	q, k, v, p := fill(L*ld), fill(L*ld), fill(L*ld), fill(L*L)
	out := make([]float32, L*ld)
	d := make([]uint32, 208*L)
	prev := bf16On.Load()
	bf16On.Store(true)
	defer bf16On.Store(prev)
	b.Run("qkT", func(b *testing.B) {
		for range b.N {
			GemmSerial(false, true, L, L, hd, 1, q, ld, k, ld, 0, p, L)
		}
	})
	b.Run("pv", func(b *testing.B) {
		for range b.N {
			GemmSerial(false, false, L, hd, L, 1, p, L, v, ld, 0, out, ld)
		}
	})
	b.Run("packKT", func(b *testing.B) { // op(B) = kᵀ: 7 slivers of 30 pairs
		for range b.N {
			for j := 0; j < L; j += 32 {
				packBF16B(true, k, ld, 0, j, hd, min(32, L-j), d)
			}
		}
	})
	b.Run("packV", func(b *testing.B) { // op(B) = v: 2 slivers of 101 pairs
		for range b.N {
			for j := 0; j < hd; j += 32 {
				packBF16B(false, v, ld, 0, j, L, min(32, hd-j), d)
			}
		}
	})
	b.Run("packQ", func(b *testing.B) { // op(A) = q, 201 rows of 60
		for range b.N {
			packBF16A(false, q, ld, 0, 0, L, hd, d)
		}
	})
	b.Run("packP", func(b *testing.B) { // op(A) = p, 201 rows of 201
		for range b.N {
			packBF16A(false, p, L, 0, 0, L, L, d)
		}
	})
	b.Run("packPT", func(b *testing.B) { // op(A) = pᵀ (dv = pᵀ dOut), 201 rows of 201
		for range b.N {
			packBF16A(true, p, L, 0, 0, L, L, d)
		}
	})
	b.Run("packQT", func(b *testing.B) { // op(A) = qᵀ 60 rows of 201 (dk = dSᵀ q has op(B) = q; this is the weight-gradient shape)
		for range b.N {
			packBF16A(true, q, ld, 0, 0, hd, L, d)
		}
	})
}

// BenchmarkAttentionScores is attention's score product q kᵀ (L = 201,
// head dim 60) on the bf16 kernel in use, one core, stored with rows 201
// floats apart (straddling cache lines) or 208 (whole lines), into one
// cached L×L matrix or spread over 96 of them (15 MB, as into training's
// kept probabilities): why nn keeps the scores in an aligned per-core
// scratch matrix (scoreLD).
func BenchmarkAttentionScores(b *testing.B) {
	if !BF16Supported() {
		b.Skip("no bf16 path here")
	}
	const L, hd, ld = 201, 60, 540
	rng := rand.New(rand.NewPCG(1, 2))
	q, k := make([]float32, L*ld), make([]float32, L*ld)
	for i := range q {
		q[i], k[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	prev := bf16On.Load()
	bf16On.Store(true)
	defer bf16On.Store(prev)
	for _, ldc := range []int{201, 208} {
		for _, n := range []int{1, 96} {
			p := make([]float32, n*L*ldc)
			b.Run(fmt.Sprintf("ldc%d/matrices%d", ldc, n), func(b *testing.B) {
				for i := range b.N {
					GemmSerial(false, true, L, L, hd, 1, q, ld, k, ld, 0, p[i%n*L*ldc:], ldc)
				}
			})
		}
	}
}
