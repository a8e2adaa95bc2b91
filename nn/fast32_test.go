package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"romae/internal/gradcheck"
)

// The float64 finite-difference checks cover the generic code; float32
// takes specialised (vectorised, float32-exp) paths. These tests run both
// on the same inputs and require agreement to float32 accuracy, so the
// float32 paths inherit the float64 paths' verified gradients.

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func close32(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	var scale float64
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol*math.Max(scale, 1e-3) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d]: float32 %v, float64 %v", what, i, got[i], want[i])
		}
	}
}

func TestFloat32PathsMatchFloat64(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pad, drop bool
	}{{"nopad", false, false}, {"pad", true, false}, {"pad+dropout", true, true}} {
		t.Run("attention/"+tc.name, func(t *testing.T) {
			B, H, L, hd := 2, 3, 37, 8
			n := B * H * L * hd
			q, k, v, r := gradcheck.Rand(n, 1), gradcheck.Rand(n, 2), gradcheck.Rand(n, 3), gradcheck.Rand(n, 4)
			var pad []bool
			if tc.pad {
				pad = make([]bool, B*L)
				for i := range pad {
					pad[i] = i%5 == 4 || i >= 2*L-6
				}
			}
			var mask64, pd64 []float64
			var mask32, pd32 []float32
			if tc.drop {
				mask64, pd64 = make([]float64, B*H*L*L), make([]float64, B*H*L*L)
				DropoutMask(mask64, 0.2, rand.New(rand.NewPCG(5, 6)))
				mask32, pd32 = to32(mask64), make([]float32, B*H*L*L)
			}
			out64, prob64 := make([]float64, n), make([]float64, B*H*L*L)
			h64 := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			h32 := func(x []float32) Heads[float32] { return HeadMajor(x, H, L, hd) }
			AttentionForward(h64(out64), h64(q), h64(k), h64(v), prob64, pd64, pad, mask64, B, H, L, hd)
			q32, k32, v32, r32 := to32(q), to32(k), to32(v), to32(r)
			out32, prob32 := make([]float32, n), make([]float32, B*H*L*L)
			AttentionForward(h32(out32), h32(q32), h32(k32), h32(v32), prob32, pd32, pad, mask32, B, H, L, hd)
			close32(t, "out", out32, out64, 1e-5)
			close32(t, "prob", prob32, prob64, 1e-5)
			for i := range prob32 {
				if pad != nil && pad[(i/(H*L*L))*L+i%L] && prob32[i] != 0 {
					t.Fatalf("padded key has probability %v", prob32[i])
				}
			}
			dq, dk, dv := make([]float64, n), make([]float64, n), make([]float64, n)
			AttentionBackward(h64(dq), h64(dk), h64(dv), h64(r), h64(q), h64(k), h64(v), prob64, pd64, mask64, B, H, L, hd)
			dq32, dk32, dv32 := make([]float32, n), make([]float32, n), make([]float32, n)
			AttentionBackward(h32(dq32), h32(dk32), h32(dv32), h32(r32), h32(q32), h32(k32), h32(v32), prob32, pd32, mask32, B, H, L, hd)
			close32(t, "dq", dq32, dq, 1e-5)
			close32(t, "dk", dk32, dk, 1e-5)
			close32(t, "dv", dv32, dv, 1e-5)
		})
	}
	t.Run("silu", func(t *testing.T) {
		n := 10000
		in, r := gradcheck.Rand(n, 7), gradcheck.Rand(n, 8)
		for i := range in {
			in[i] *= 8
		}
		out, d := make([]float64, n), make([]float64, n)
		SiLUForward(out, in, n)
		SiLUBackward(d, r, in, n)
		out32, d32 := make([]float32, n), make([]float32, n)
		SiLUForward(out32, to32(in), n)
		SiLUBackward(d32, to32(r), to32(in), n)
		close32(t, "silu", out32, out, 1e-6)
		close32(t, "dsilu", d32, d, 1e-6)
		// In place (dIn = dOut, as the model's backward pass runs it):
		// the same bits, float32 and float64.
		inPlace32 := to32(r)
		SiLUBackward(inPlace32, inPlace32, to32(in), n)
		inPlace := append([]float64(nil), r...)
		SiLUBackward(inPlace, inPlace, in, n)
		for i := range d32 {
			if math.Float32bits(inPlace32[i]) != math.Float32bits(d32[i]) || inPlace[i] != d[i] {
				t.Fatalf("dsilu[%d] in place: %v and %v, out of place %v and %v", i, inPlace32[i], inPlace[i], d32[i], d[i])
			}
		}
	})
	for _, accum := range []bool{false, true} {
		t.Run("rmsnorm", func(t *testing.T) {
			n, d := 300, 180
			in, g, r := gradcheck.Rand(n*d, 9), gradcheck.Rand(d, 10), gradcheck.Rand(n*d, 11)
			for i := d; i < 2*d; i++ {
				in[i] = 0 // an all-zero (padded) row
			}
			out, rstd := make([]float64, n*d), make([]float64, n)
			RMSNormForward(out, rstd, in, g, n, d, 1e-12)
			dIn, dG := gradcheck.Rand(n*d, 12), gradcheck.Rand(d, 13)
			dIn32, dG32 := to32(dIn), to32(dG)
			RMSNormBackward(dIn, dG, r, in, g, rstd, n, d, accum)
			out32, rstd32 := make([]float32, n*d), make([]float32, n)
			in32, g32 := to32(in), to32(g)
			RMSNormForward(out32, rstd32, in32, g32, n, d, 1e-12)
			RMSNormBackward(dIn32, dG32, to32(r), in32, g32, rstd32, n, d, accum)
			close32(t, "out", out32, out, 1e-5)
			close32(t, "dIn", dIn32, dIn, 1e-5)
			close32(t, "dG", dG32, dG, 1e-5)
		})
	}
	for _, drop := range []bool{false, true} {
		t.Run("residual", func(t *testing.T) {
			B, L, d := 3, 7, 37 // rows of 37: vector body plus a tail
			x, br := gradcheck.Rand(B*L*d, 14), gradcheck.Rand(B*L*d, 15)
			var scale []float64
			if drop {
				scale = []float64{0, 2, 1.25}
			}
			out := make([]float64, B*L*d)
			ResidualAdd(out, x, br, scale, B, L, d)
			out32 := make([]float32, B*L*d)
			var scale32 []float32
			if drop {
				scale32 = to32(scale)
			}
			ResidualAdd(out32, to32(x), to32(br), scale32, B, L, d)
			close32(t, "residual", out32, out, 1e-6)
		})
	}
}
