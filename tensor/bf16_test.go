package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The bf16 path must equal, to float32 accumulation error, the exact
// product of the bf16-rounded operands: every shape class of the model
// (NN, NT, TN, TT; odd k; edge rows/columns; alpha/beta; k-split; the
// single-core GemmSerial that attention runs per (sample, head)).
// Every bf16 kernel this CPU runs is checked (SetBackend forces it), not
// only the one the dispatch picks.
func TestBF16Gemm(t *testing.T) {
	if !BF16Supported() {
		if err := SetPrecision(PrecisionBF16); err == nil {
			t.Fatal("SetPrecision(bf16) accepted on a build/CPU without bf16")
		}
		t.Skip("no bf16 path here")
	}
	prev := bf16Kernel.Load()
	defer bf16Kernel.Store(prev)
	tested := 0
	for _, name := range BF16Kernels() {
		if name == bf16KernelNames[bf16OnFP32] {
			continue
		}
		if err := SetBackend(name); err != nil {
			t.Fatal(err)
		}
		t.Run(name, checkBF16Gemm)
		tested++
	}
	if tested == 0 {
		t.Fatal("bf16 supported but no bf16 kernel listed")
	}
}

// checkBF16Gemm runs the product shapes on the current bf16 kernel.
func checkBF16Gemm(t *testing.T) {
	defer SetPrecision(PrecisionFP32)
	rng := rand.New(rand.NewPCG(9, 9))
	type sh struct{ m, n, k, batch int }
	shapes := []sh{{1, 1, 1, 1}, {3, 5, 7, 1}, {8, 32, 2, 1}, {9, 33, 17, 1}, {37, 70, 513, 1},
		{200, 180, 180, 1}, {130, 45, 1030, 1}, {20, 33, 5000, 1}, {21, 19, 13, 5}, {201, 60, 201, 4},
		{40, 800, 523, 1}} // M split with op(B) packed once: two column blocks, an odd last k block
	for _, s := range shapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-1, 0.25}} {
					lda, ldb, ldc := s.k+1, s.n+2, s.n+3
					if tA {
						lda = s.m + 1
					}
					if tB {
						ldb = s.k + 2
					}
					ar, br := s.m, s.k
					if tA {
						ar = s.k
					}
					if tB {
						br = s.n
					}
					sa, sb, sc := ar*lda, br*ldb, s.m*ldc
					a, b, c := make([]float32, sa*s.batch), make([]float32, sb*s.batch), make([]float32, sc*s.batch)
					for i := range a {
						a[i] = float32(rng.NormFloat64())
					}
					for i := range b {
						b[i] = float32(rng.NormFloat64())
					}
					for i := range c {
						c[i] = float32(rng.NormFloat64())
					}
					c0 := append([]float32(nil), c...)
					if err := SetPrecision(PrecisionBF16); err != nil {
						t.Fatal(err)
					}
					switch {
					case s.batch == 1 && s.m%2 == 0:
						Gemm(tA, tB, s.m, s.n, s.k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					case s.batch == 1:
						GemmSerial(tA, tB, s.m, s.n, s.k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					default:
						for q := range s.batch {
							GemmSerial(tA, tB, s.m, s.n, s.k, ab[0], a[q*sa:], lda, b[q*sb:], ldb, ab[1], c[q*sc:], ldc)
						}
					}
					SetPrecision(PrecisionFP32)
					for q := range s.batch {
						checkBF16Product(t, q, s.m, s.n, s.k, tA, tB, ab, a[q*sa:], lda, b[q*sb:], ldb, c0[q*sc:], c[q*sc:], ldc)
					}
				}
			}
		}
	}
}

// checkBF16Product compares product number batch of a batch (named in a
// failure), got = alpha·op(A)·op(B) + beta·C0, against float64 sums of
// the bf16-rounded operands. op(A) and op(B)ᵀ are rounded once into
// contiguous rows, so each element is one dot product: the per-element
// rounding and strided reads made the reference the larger part of the
// test under the race detector.
func checkBF16Product(t *testing.T, batch, m, n, k int, tA, tB bool, ab [2]float32, a []float32, lda int, b []float32, ldb int, c0, got []float32, ldc int) {
	t.Helper()
	round := func(x float32) float64 { return float64(RoundBF16(x)) }
	opA, opBT := opRows(m, k, tA, a, lda, round), opRows(n, k, !tB, b, ldb, round)
	for i := range m {
		ai := opA[i*k : i*k+k]
		for j := range n {
			bj := opBT[j*k : j*k+k]
			var want, mag float64
			for p, av := range ai {
				x := av * bj[p]
				want += x
				mag += max(x, -x) // not math.Abs: its bit casts are checkptr calls under -race
			}
			cij := float64(c0[i*ldc+j])
			want = float64(ab[0])*want + float64(ab[1])*cij
			g := got[i*ldc+j]
			// Written so that NaN fails.
			if !(math.Abs(float64(g)-want) <= 1e-5*(mag+math.Abs(cij))+1e-6) {
				t.Fatalf("m%d n%d k%d tA=%v tB=%v ab=%v: C[%d][%d,%d] = %v, want %v", m, n, k, tA, tB, ab, batch, i, j, g, want)
			}
		}
	}
}

func TestRoundBF16(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{1, 1}, {-2.5, -2.5}, {1 + 1.0/256, 1}, {1 + 3.0/256, 1 + 4.0/256}, // ties to even
		{1 + 1.0/128, 1 + 1.0/128}, {3.14159265, 3.140625},
	} {
		if got := RoundBF16(c.in); got != c.want {
			t.Errorf("RoundBF16(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if v := RoundBF16(float32(math.Inf(1))); !math.IsInf(float64(v), 1) {
		t.Errorf("RoundBF16(+Inf) = %v", v)
	}
	if v := RoundBF16(float32(math.NaN())); v == v {
		t.Errorf("RoundBF16(NaN) = %v", v)
	}
}
