package nn

import (
	"math/rand/v2"
	"testing"
)

// Hot-op benchmarks at RoMAE-tiny's fine-tuning shapes (32 samples × 201
// tokens, d 180, 3 heads of 60, ffn 720), float32, so regressions in the
// non-GEMM kernels show up: go test ./nn -run '^$' -bench .

const (
	bB, bH, bL, bHD, bD, bF = 32, 3, 201, 60, 180, 720
)

func randF32(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func hm(x []float32) Heads[float32] { return HeadMajor(x, bH, bL, bHD) }

func BenchmarkAttentionForward(b *testing.B) {
	n := bB * bH * bL * bHD
	q, k, v, out := randF32(n, 1), randF32(n, 2), randF32(n, 3), make([]float32, n)
	prob := make([]float32, bB*bH*bL*bL)
	pad := make([]bool, bB*bL)
	for i := range pad {
		pad[i] = i%bL > 190
	}
	b.ResetTimer()
	for range b.N {
		AttentionForward(hm(out), hm(q), hm(k), hm(v), prob, nil, pad, nil, bB, bH, bL, bHD)
	}
}

func BenchmarkAttentionBackward(b *testing.B) {
	n := bB * bH * bL * bHD
	q, k, v, out, dOut := randF32(n, 1), randF32(n, 2), randF32(n, 3), make([]float32, n), randF32(n, 4)
	prob := make([]float32, bB*bH*bL*bL)
	AttentionForward(hm(out), hm(q), hm(k), hm(v), prob, nil, nil, nil, bB, bH, bL, bHD)
	dq, dk, dv := make([]float32, n), make([]float32, n), make([]float32, n)
	b.ResetTimer()
	for range b.N {
		AttentionBackward(hm(dq), hm(dk), hm(dv), hm(dOut), hm(q), hm(k), hm(v), prob, nil, nil, bB, bH, bL, bHD)
	}
}

// BenchmarkSoftmaxRows is the softmax alone (no GEMMs) over [B,H,L,L].
func BenchmarkSoftmaxRows(b *testing.B) {
	s := randF32(bB*bH*bL*bL, 5)
	pad := make([]bool, bB*bL)
	b.Run("float32", func(b *testing.B) {
		bias, keep, release := padVectors32[float32](pad, bB*bL)
		defer release()
		for range b.N {
			for bh := range bB * bH {
				softmaxMatrix(s[bh*bL*bL:(bh+1)*bL*bL], bL, 1, pad, bias, keep, bh/bH, bL, 0, bL)
			}
		}
	})
}

func BenchmarkSiLU(b *testing.B) {
	n := bB * bL * bF
	in, out, d := randF32(n, 6), make([]float32, n), randF32(n, 7)
	b.Run("forward", func(b *testing.B) {
		for range b.N {
			SiLUForward(out, in, n)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for range b.N {
			SiLUBackward(out, d, in, n)
		}
	})
}

func BenchmarkRMSNorm(b *testing.B) {
	n := bB * bL
	in, g, out, rstd := randF32(n*bD, 8), randF32(bD, 9), make([]float32, n*bD), make([]float32, n)
	dOut, dIn, dG := randF32(n*bD, 10), make([]float32, n*bD), make([]float32, bD)
	b.Run("forward", func(b *testing.B) {
		for range b.N {
			RMSNormForward(out, rstd, in, g, n, bD, 1e-12)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for range b.N {
			RMSNormBackward(dIn, dG, dOut, in, g, rstd, n, bD, true)
		}
	})
}

func BenchmarkResidualAdd(b *testing.B) {
	n := bB * bL * bD
	x, br, out := randF32(n, 11), randF32(n, 12), make([]float32, n)
	for range b.N {
		ResidualAdd(out, x, br, nil, bB, bL, bD)
	}
}

// BenchmarkAttentionLayout: the same attention reading q, k, v (and
// writing dq, dk, dv) head-major or in place in a fused [B·L, 3d]
// q|k|v tensor.
func BenchmarkAttentionLayout(b *testing.B) {
	n, d := bB*bH*bL*bHD, bH*bHD
	prob := make([]float32, bB*bH*bL*bL)
	hmQ, hmK, hmV, hmO := randF32(n, 1), randF32(n, 2), randF32(n, 3), make([]float32, n)
	qkv, out, dqkv, dOut := randF32(3*n, 4), make([]float32, n), make([]float32, 3*n), randF32(n, 5)
	tm := func(x []float32, ld int) Heads[float32] { return TokenMajor(x, ld, bL, bHD) }
	b.Run("forward/head-major", func(b *testing.B) {
		for range b.N {
			AttentionForward(hm(hmO), hm(hmQ), hm(hmK), hm(hmV), prob, nil, nil, nil, bB, bH, bL, bHD)
		}
	})
	b.Run("forward/token-major", func(b *testing.B) {
		for range b.N {
			AttentionForward(tm(out, d), tm(qkv, 3*d), tm(qkv[d:], 3*d), tm(qkv[2*d:], 3*d), prob, nil, nil, nil, bB, bH, bL, bHD)
		}
	})
	dq, dk, dv := make([]float32, n), make([]float32, n), make([]float32, n)
	b.Run("backward/head-major", func(b *testing.B) {
		for range b.N {
			AttentionBackward(hm(dq), hm(dk), hm(dv), hm(dOut), hm(hmQ), hm(hmK), hm(hmV), prob, nil, nil, bB, bH, bL, bHD)
		}
	})
	b.Run("backward/token-major", func(b *testing.B) {
		for range b.N {
			AttentionBackward(tm(dqkv, 3*d), tm(dqkv[d:], 3*d), tm(dqkv[2*d:], 3*d), tm(dOut, d), tm(qkv, 3*d), tm(qkv[d:], 3*d), tm(qkv[2*d:], 3*d),
				prob, nil, nil, bB, bH, bL, bHD)
		}
	})
}
