package nn

import (
	"math"
	"testing"

	"romae/internal/gradcheck"
)

// causalReference is the dense float64 definition: scores with −∞ above
// the diagonal and on padded keys, a row with no allowed key giving 0.
func causalReference(q, k, v []float64, keyPad []bool, B, H, L, hd int) []float64 {
	out := make([]float64, B*H*L*hd)
	scale := 1 / math.Sqrt(float64(hd))
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			base := (b*H + h) * L * hd
			for i := 0; i < L; i++ {
				s := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := 0; j <= i; j++ {
					s[j] = math.Inf(-1)
					if keyPad != nil && keyPad[b*L+j] {
						continue
					}
					s[j] = scale * gradcheck.Dot(q[base+i*hd:base+(i+1)*hd], k[base+j*hd:base+(j+1)*hd])
					mx = math.Max(mx, s[j])
				}
				if math.IsInf(mx, -1) {
					continue
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for j := range s {
					for c := 0; c < hd; c++ {
						out[base+i*hd+c] += s[j] / sum * v[base+j*hd+c]
					}
				}
			}
		}
	}
	return out
}

func causalInputs(pad bool) (q, k, v []float64, keyPad []bool, B, H, L, hd int) {
	B, H, L, hd = 2, 2, 6, 4
	n := B * H * L * hd
	q, k, v = gradcheck.Rand(n, 1), gradcheck.Rand(n, 2), gradcheck.Rand(n, 3)
	if pad {
		// Left padding in sample 0 (row 0 then sees nothing), trailing
		// padding in sample 1.
		keyPad = make([]bool, B*L)
		keyPad[0], keyPad[L+4], keyPad[L+5] = true, true, true
	}
	return
}

// Both precisions, with and without a kept prob matrix, agree with the
// dense definition.
func TestCausalAttentionMatchesReference(t *testing.T) {
	for _, pad := range []bool{false, true} {
		q, k, v, keyPad, B, H, L, hd := causalInputs(pad)
		want := causalReference(q, k, v, keyPad, B, H, L, hd)
		hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
		for _, keepProb := range []bool{true, false} {
			out := make([]float64, len(want))
			var prob []float64
			if keepProb {
				prob = make([]float64, B*H*L*L)
			}
			CausalAttentionForward(hm(out), hm(q), hm(k), hm(v), prob, keyPad, B, H, L, hd)
			for i := range want {
				if math.Abs(out[i]-want[i]) > 1e-12 {
					t.Fatalf("pad %v prob %v: float64 out[%d] = %v, want %v", pad, keepProb, i, out[i], want[i])
				}
			}
			q32, k32, v32 := to32(q), to32(k), to32(v)
			out32 := make([]float32, len(want))
			var prob32 []float32
			if keepProb {
				prob32 = make([]float32, B*H*L*L)
			}
			hm32 := func(x []float32) Heads[float32] { return HeadMajor(x, H, L, hd) }
			CausalAttentionForward(hm32(out32), hm32(q32), hm32(k32), hm32(v32), prob32, keyPad, B, H, L, hd)
			for i := range want {
				if math.Abs(float64(out32[i])-want[i]) > 1e-5 {
					t.Fatalf("pad %v prob %v: float32 out[%d] = %v, want %v", pad, keepProb, i, out32[i], want[i])
				}
			}
		}
	}
}

// Changing the queries, keys and values of later tokens leaves every
// earlier row's output bit for bit unchanged: nothing flows from the future.
func TestCausalAttentionIgnoresFuture(t *testing.T) {
	q, k, v, _, B, H, L, hd := causalInputs(false)
	hm := func(x []float32) Heads[float32] { return HeadMajor(x, H, L, hd) }
	q32, k32, v32 := to32(q), to32(k), to32(v)
	before := make([]float32, len(q))
	CausalAttentionForward(hm(before), hm(q32), hm(k32), hm(v32), nil, nil, B, H, L, hd)
	const cut = 3 // tokens 3.. change
	for bh := 0; bh < B*H; bh++ {
		for i := cut; i < L; i++ {
			for c := 0; c < hd; c++ {
				j := (bh*L+i)*hd + c
				q32[j], k32[j], v32[j] = q32[j]+1, k32[j]-2, v32[j]*3
			}
		}
	}
	after := make([]float32, len(q))
	CausalAttentionForward(hm(after), hm(q32), hm(k32), hm(v32), nil, nil, B, H, L, hd)
	for bh := 0; bh < B*H; bh++ {
		for i := 0; i < L; i++ {
			for c := 0; c < hd; c++ {
				j := (bh*L+i)*hd + c
				if changed := after[j] != before[j]; changed != (i >= cut) {
					t.Fatalf("row %d of (sample·head) %d: changed = %v", i, bh, changed)
				}
			}
		}
	}
}

func TestCausalAttentionGradients(t *testing.T) {
	for _, pad := range []bool{false, true} {
		q, k, v, keyPad, B, H, L, hd := causalInputs(pad)
		r := gradcheck.Rand(len(q), 4)
		hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
		out, prob := make([]float64, len(q)), make([]float64, B*H*L*L)
		loss := func() float64 {
			CausalAttentionForward(hm(out), hm(q), hm(k), hm(v), prob, keyPad, B, H, L, hd)
			return gradcheck.Dot(out, r)
		}
		loss()
		dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
		CausalAttentionBackward(hm(dq), hm(dk), hm(dv), hm(r), hm(q), hm(k), hm(v), prob, B, H, L, hd)
		for name, x := range map[string][2][]float64{"q": {q, dq}, "k": {k, dk}, "v": {v, dv}} {
			if err := gradcheck.Check(name, x[0], x[1], loss, 0); err != nil {
				t.Errorf("pad %v: %v", pad, err)
			}
		}
	}
}
