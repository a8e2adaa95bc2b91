package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"romae/internal/gradcheck"
)

// prefixInputs are one PrefixAttention test problem: B samples of L rows,
// the first prefix of which are the visible block.
type prefixInputs struct {
	B, H, L, P, hd int
	q, k, v, r     []float64
	keyPad         []bool
	mask           []float64 // dropout mask [B,H,L,P+1], nil: none
}

func newPrefixInputs(B, H, L, P, hd int, pad, drop bool, seed uint64) *prefixInputs {
	n := B * H * L * hd
	in := &prefixInputs{B: B, H: H, L: L, P: P, hd: hd,
		q: gradcheck.Rand(n, seed), k: gradcheck.Rand(n, seed+1), v: gradcheck.Rand(n, seed+2), r: gradcheck.Rand(n, seed+3)}
	if pad {
		in.keyPad = make([]bool, B*L)
		for b := 0; b < B; b++ {
			// A padded visible key in every sample with a prefix, and the
			// last query of the last sample padded (a padded query).
			if P > 1 {
				in.keyPad[b*L+P-1-b%P] = true
			}
		}
		if P < L {
			in.keyPad[B*L-1] = true
		}
	}
	if drop {
		in.mask = make([]float64, B*H*L*(P+1))
		DropoutMask(in.mask, 0.3, rand.New(rand.NewPCG(seed, 9)))
	}
	return in
}

// prefixReference is the dense float64 definition: full L×L scores with
// −∞ wherever the structured mask or the key padding forbids the pair.
func prefixReference(in *prefixInputs) []float64 {
	B, H, L, P, hd := in.B, in.H, in.L, in.P, in.hd
	W := P + 1
	out := make([]float64, B*H*L*hd)
	scale := 1 / math.Sqrt(float64(hd))
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			base := (b*H + h) * L * hd
			for i := 0; i < L; i++ {
				s := make([]float64, L)
				mx := math.Inf(-1)
				for j := 0; j < L; j++ {
					allowed := j < P || (i >= P && j == i)
					if !allowed || in.keyPad != nil && in.keyPad[b*L+j] {
						s[j] = math.Inf(-1)
						continue
					}
					for c := 0; c < hd; c++ {
						s[j] += in.q[base+i*hd+c] * in.k[base+j*hd+c]
					}
					s[j] *= scale
					mx = math.Max(mx, s[j])
				}
				if math.IsInf(mx, -1) {
					continue // every key masked: zero output
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for j := range s {
					p := s[j] / sum
					if in.mask != nil {
						col := j
						if j >= P {
							col = P // a query's own key sits in the last column
						}
						p *= in.mask[((b*H+h)*L+i)*W+col]
					}
					for c := 0; c < hd; c++ {
						out[base+i*hd+c] += p * in.v[base+j*hd+c]
					}
				}
			}
		}
	}
	return out
}

var prefixShapes = []struct {
	name           string
	B, H, L, P, hd int
	pad, drop      bool
}{
	{"nopad", 2, 2, 7, 4, 4, false, false},
	{"pad", 2, 2, 7, 4, 4, true, false},
	{"pad+dropout", 2, 2, 7, 3, 4, true, true},
	{"prefix=L", 2, 1, 5, 5, 4, true, false},
	{"prefix=0", 2, 1, 4, 0, 4, false, true},
	{"prefix=1", 1, 2, 6, 1, 6, false, false},
}

func TestPrefixAttentionMatchesDenseMask(t *testing.T) {
	for _, sh := range prefixShapes {
		t.Run(sh.name, func(t *testing.T) {
			in := newPrefixInputs(sh.B, sh.H, sh.L, sh.P, sh.hd, sh.pad, sh.drop, 1)
			B, H, L, P, hd := in.B, in.H, in.L, in.P, in.hd
			hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			out, prob := make([]float64, B*H*L*hd), make([]float64, B*H*L*(P+1))
			var pd []float64
			if in.mask != nil {
				pd = make([]float64, len(in.mask))
			}
			PrefixAttentionForward(hm(out), hm(in.q), hm(in.k), hm(in.v), prob, pd, in.keyPad, in.mask, B, H, L, P, hd)
			closeAll(t, "out", out, prefixReference(in))
			if in.mask == nil {
				// Evaluation mode (no prob kept) computes the same.
				outEval := make([]float64, len(out))
				PrefixAttentionForward(hm(outEval), hm(in.q), hm(in.k), hm(in.v), nil, nil, in.keyPad, nil, B, H, L, P, hd)
				closeAll(t, "out (no prob kept)", outEval, out)
			}
		})
	}
}

func TestPrefixAttentionGradients(t *testing.T) {
	for _, sh := range prefixShapes {
		t.Run(sh.name, func(t *testing.T) {
			in := newPrefixInputs(sh.B, sh.H, sh.L, sh.P, sh.hd, sh.pad, sh.drop, 2)
			B, H, L, P, hd := in.B, in.H, in.L, in.P, in.hd
			hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			out, prob := make([]float64, B*H*L*hd), make([]float64, B*H*L*(P+1))
			var pd []float64
			if in.mask != nil {
				pd = make([]float64, len(in.mask))
			}
			loss := func() float64 {
				PrefixAttentionForward(hm(out), hm(in.q), hm(in.k), hm(in.v), prob, pd, in.keyPad, in.mask, B, H, L, P, hd)
				return gradcheck.Dot(out, in.r)
			}
			loss()
			dq, dk, dv := make([]float64, len(in.q)), make([]float64, len(in.k)), make([]float64, len(in.v))
			// Garbage in the outputs must be overwritten.
			for i := range dq {
				dq[i], dk[i], dv[i] = math.NaN(), math.NaN(), math.NaN()
			}
			PrefixAttentionBackward(hm(dq), hm(dk), hm(dv), hm(in.r), hm(in.q), hm(in.k), hm(in.v), prob, pd, in.mask, B, H, L, P, hd)
			for name, v := range map[string][2][]float64{"q": {in.q, dq}, "k": {in.k, dk}, "v": {in.v, dv}} {
				if err := gradcheck.Check(name, v[0], v[1], loss, 400); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// Token-major views (what the model passes) give what head-major ones give,
// and the float32 kernels agree with the float64 reference.
func TestPrefixAttentionViewsAndFloat32(t *testing.T) {
	for _, tc := range []struct{ pad, drop bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("pad=%v,dropout=%v", tc.pad, tc.drop), func(t *testing.T) {
			B, H, L, P, hd := 3, 2, 41, 13, 8
			in := newPrefixInputs(B, H, L, P, hd, tc.pad, tc.drop, 3)
			n, W := B*H*L*hd, P+1
			hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			out, prob := make([]float64, n), make([]float64, B*H*L*W)
			var pd []float64
			if in.mask != nil {
				pd = make([]float64, len(in.mask))
			}
			PrefixAttentionForward(hm(out), hm(in.q), hm(in.k), hm(in.v), prob, pd, in.keyPad, in.mask, B, H, L, P, hd)
			dq, dk, dv := make([]float64, n), make([]float64, n), make([]float64, n)
			PrefixAttentionBackward(hm(dq), hm(dk), hm(dv), hm(in.r), hm(in.q), hm(in.k), hm(in.v), prob, pd, in.mask, B, H, L, P, hd)

			// float64 through token-major views of a fused [B·L, 3d+1] tensor.
			d, ld := H*hd, 3*H*hd+1
			wide := make([]float64, B*L*ld)
			dOut := make([]float64, B*L*d)
			for i, x := range [][]float64{in.q, in.k, in.v} {
				MergeHeadsLD(wide[i*d:], x, ld, B, L, H, hd)
			}
			MergeHeadsLD(dOut, in.r, d, B, L, H, hd)
			tm := func(x []float64) Heads[float64] { return TokenMajor(x, ld, L, hd) }
			outTM, probTM := make([]float64, B*L*d), make([]float64, B*H*L*W)
			var pdTM []float64
			if in.mask != nil {
				pdTM = make([]float64, len(in.mask))
			}
			PrefixAttentionForward(TokenMajor(outTM, d, L, hd), tm(wide), tm(wide[d:]), tm(wide[2*d:]), probTM, pdTM, in.keyPad, in.mask, B, H, L, P, hd)
			got := make([]float64, n)
			SplitHeadsLD(got, outTM, d, B, L, H, hd)
			closeAll(t, "out (token-major)", got, out)
			dWide := make([]float64, B*L*ld)
			PrefixAttentionBackward(tm(dWide), tm(dWide[d:]), tm(dWide[2*d:]), TokenMajor(dOut, d, L, hd), tm(wide), tm(wide[d:]), tm(wide[2*d:]),
				probTM, pdTM, in.mask, B, H, L, P, hd)
			for i, want := range [][]float64{dq, dk, dv} {
				SplitHeadsLD(got, dWide[i*d:], ld, B, L, H, hd)
				closeAll(t, []string{"dq", "dk", "dv"}[i]+" (token-major)", got, want)
			}

			// float32.
			h32 := func(x []float32) Heads[float32] { return HeadMajor(x, H, L, hd) }
			var mask32, pd32 []float32
			if in.mask != nil {
				mask32, pd32 = to32(in.mask), make([]float32, len(in.mask))
			}
			q32, k32, v32, r32 := to32(in.q), to32(in.k), to32(in.v), to32(in.r)
			out32, prob32 := make([]float32, n), make([]float32, B*H*L*W)
			PrefixAttentionForward(h32(out32), h32(q32), h32(k32), h32(v32), prob32, pd32, in.keyPad, mask32, B, H, L, P, hd)
			close32(t, "out", out32, out, 1e-5)
			close32(t, "prob", prob32, prob, 1e-5)
			if in.mask == nil {
				outEval := make([]float32, n)
				PrefixAttentionForward(h32(outEval), h32(q32), h32(k32), h32(v32), nil, nil, in.keyPad, nil, B, H, L, P, hd)
				for i := range outEval {
					if outEval[i] != out32[i] {
						t.Fatalf("float32 out without prob[%d] = %v, with prob %v", i, outEval[i], out32[i])
					}
				}
			}
			dq32, dk32, dv32 := make([]float32, n), make([]float32, n), make([]float32, n)
			PrefixAttentionBackward(h32(dq32), h32(dk32), h32(dv32), h32(r32), h32(q32), h32(k32), h32(v32), prob32, pd32, mask32, B, H, L, P, hd)
			close32(t, "dq", dq32, dq, 1e-5)
			close32(t, "dk", dk32, dk, 1e-5)
			close32(t, "dv", dv32, dv, 1e-5)
		})
	}
}

// A query's output must not change when other queries are added, and the
// prefix rows must not depend on the queries at all.
func TestPrefixAttentionQueryIndependence(t *testing.T) {
	H, P, hd := 2, 9, 8
	many := newPrefixInputs(1, H, P+50, P, hd, false, false, 4)
	L := P + 50
	// The same prefix and the query at row P+17 alone.
	one := &prefixInputs{B: 1, H: H, L: P + 1, P: P, hd: hd}
	pick := func(x []float64) []float64 {
		y := make([]float64, H*(P+1)*hd)
		for h := 0; h < H; h++ {
			copy(y[h*(P+1)*hd:], x[h*L*hd:h*L*hd+P*hd])
			copy(y[(h*(P+1)+P)*hd:], x[(h*L+P+17)*hd:(h*L+P+18)*hd])
		}
		return y
	}
	one.q, one.k, one.v = pick(many.q), pick(many.k), pick(many.v)
	for _, f32 := range []bool{false, true} {
		var gotMany, gotOne []float64
		if f32 {
			run := func(in *prefixInputs) []float64 {
				out := make([]float32, H*in.L*hd)
				h := func(x []float32) Heads[float32] { return HeadMajor(x, H, in.L, hd) }
				PrefixAttentionForward(h(out), h(to32(in.q)), h(to32(in.k)), h(to32(in.v)), nil, nil, nil, nil, 1, H, in.L, P, hd)
				y := make([]float64, len(out))
				for i, v := range out {
					y[i] = float64(v)
				}
				return y
			}
			gotMany, gotOne = run(many), run(one)
		} else {
			run := func(in *prefixInputs) []float64 {
				out := make([]float64, H*in.L*hd)
				h := func(x []float64) Heads[float64] { return HeadMajor(x, H, in.L, hd) }
				PrefixAttentionForward(h(out), h(in.q), h(in.k), h(in.v), nil, nil, nil, nil, 1, H, in.L, P, hd)
				return out
			}
			gotMany, gotOne = run(many), run(one)
		}
		want := pick(gotMany)
		for i := range want {
			if math.Abs(gotOne[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("float32=%v: element %d alone %v, among 50 queries %v", f32, i, gotOne[i], want[i])
			}
		}
	}
}
