package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"romae/internal/gradcheck"
	"romae/tensor"
)

// Each case builds a scalar loss L = Σ R ⊙ op(inputs) with a fixed random R,
// runs the op's backward pass on dOut = R, and compares every input and
// parameter gradient with central finite differences in float64.
type gradCase struct {
	name string
	// setup returns the tensors to check with their analytic gradients,
	// computed by the backward pass, and the loss as a function of them.
	setup func() (vars map[string][2][]float64, loss func() float64)
}

func TestGradients(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			vars, loss := c.setup()
			for name, v := range vars {
				if err := gradcheck.Check(name, v[0], v[1], loss, 200); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func gradCases() []gradCase {
	return []gradCase{
		{"linear/bias", func() (map[string][2][]float64, func() float64) { return linearCase(true) }},
		{"linear/nobias", func() (map[string][2][]float64, func() float64) { return linearCase(false) }},
		{"rmsnorm", rmsnormCase},
		{"silu", siluCase},
		{"attention/pad", func() (map[string][2][]float64, func() float64) { return attentionCase(true, false) }},
		{"attention/nopad", func() (map[string][2][]float64, func() float64) { return attentionCase(false, false) }},
		{"attention/dropout", func() (map[string][2][]float64, func() float64) { return attentionCase(true, true) }},
		{"residual/droppath", residualCase},
		{"crossentropy/plain", func() (map[string][2][]float64, func() float64) { return ceCase(nil, 0) }},
		{"crossentropy/weights+smoothing", func() (map[string][2][]float64, func() float64) {
			return ceCase([]float64{0.5, 2, 1, 3}, 0.1)
		}},
		{"maskedmse", mseCase},
	}
}

func linearCase(bias bool) (map[string][2][]float64, func() float64) {
	n, i, o := 5, 7, 4
	in, w, r := gradcheck.Rand(n*i, 1), gradcheck.Rand(o*i, 2), gradcheck.Rand(n*o, 3)
	var b, dB []float64
	if bias {
		b, dB = gradcheck.Rand(o, 4), make([]float64, o)
	}
	out := make([]float64, n*o)
	loss := func() float64 { LinearForward(out, in, w, b, n, i, o); return gradcheck.Dot(out, r) }
	dIn, dW := make([]float64, n*i), make([]float64, o*i)
	LinearBackward(dIn, dW, dB, r, in, w, n, i, o, false)
	vars := map[string][2][]float64{"in": {in, dIn}, "w": {w, dW}}
	if bias {
		vars["b"] = [2][]float64{b, dB}
	}
	return vars, loss
}

func rmsnormCase() (map[string][2][]float64, func() float64) {
	n, d := 4, 9
	in, g, r := gradcheck.Rand(n*d, 1), gradcheck.Rand(d, 2), gradcheck.Rand(n*d, 3)
	out, rstd := make([]float64, n*d), make([]float64, n)
	loss := func() float64 { RMSNormForward(out, rstd, in, g, n, d, 1e-12); return gradcheck.Dot(out, r) }
	loss()
	dIn, dG := make([]float64, n*d), make([]float64, d)
	RMSNormBackward(dIn, dG, r, in, g, rstd, n, d, false)
	return map[string][2][]float64{"in": {in, dIn}, "g": {g, dG}}, loss
}

func siluCase() (map[string][2][]float64, func() float64) {
	n := 50
	in, r := gradcheck.Rand(n, 1), gradcheck.Rand(n, 2)
	out := make([]float64, n)
	loss := func() float64 { SiLUForward(out, in, n); return gradcheck.Dot(out, r) }
	dIn := make([]float64, n)
	SiLUBackward(dIn, r, in, n)
	return map[string][2][]float64{"in": {in, dIn}}, loss
}

func attentionCase(pad, dropout bool) (map[string][2][]float64, func() float64) {
	B, H, L, hd := 2, 2, 5, 4
	hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
	q, k, v := gradcheck.Rand(B*H*L*hd, 1), gradcheck.Rand(B*H*L*hd, 2), gradcheck.Rand(B*H*L*hd, 3)
	r := gradcheck.Rand(B*H*L*hd, 4)
	var keyPad []bool
	if pad {
		keyPad = make([]bool, B*L)
		keyPad[3], keyPad[4], keyPad[L+4] = true, true, true
	}
	var mask, probDrop []float64
	if dropout {
		mask, probDrop = make([]float64, B*H*L*L), make([]float64, B*H*L*L)
		DropoutMask(mask, 0.3, rand.New(rand.NewPCG(1, 2)))
	}
	out, prob := make([]float64, B*H*L*hd), make([]float64, B*H*L*L)
	loss := func() float64 {
		AttentionForward(hm(out), hm(q), hm(k), hm(v), prob, probDrop, keyPad, mask, B, H, L, hd)
		return gradcheck.Dot(out, r)
	}
	loss()
	dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
	AttentionBackward(hm(dq), hm(dk), hm(dv), hm(r), hm(q), hm(k), hm(v), prob, probDrop, mask, B, H, L, hd)
	return map[string][2][]float64{"q": {q, dq}, "k": {k, dk}, "v": {v, dv}}, loss
}

func residualCase() (map[string][2][]float64, func() float64) {
	B, L, d := 3, 2, 4
	x0, branch, r := gradcheck.Rand(B*L*d, 1), gradcheck.Rand(B*L*d, 2), gradcheck.Rand(B*L*d, 3)
	scale := []float64{0, 2, 1.25}
	x := make([]float64, len(x0))
	loss := func() float64 {
		copy(x, x0)
		ResidualForward(x, branch, scale, B, L, d)
		return gradcheck.Dot(x, r)
	}
	dBranch := make([]float64, len(branch))
	ScaleRows(dBranch, r, scale, B, L, d)
	return map[string][2][]float64{"x": {x0, r}, "branch": {branch, dBranch}}, loss
}

func ceCase(weights []float64, smoothing float64) (map[string][2][]float64, func() float64) {
	n, K := 5, 4
	logits := gradcheck.Rand(n*K, 1)
	labels := []int{0, 3, -1, 2, 1}
	d := make([]float64, n*K)
	loss := func() float64 { return CrossEntropy(make([]float64, n*K), logits, labels, weights, smoothing, n, K) }
	CrossEntropy(d, logits, labels, weights, smoothing, n, K)
	return map[string][2][]float64{"logits": {logits, d}}, loss
}

func mseCase() (map[string][2][]float64, func() float64) {
	n, c := 6, 3
	pred, target := gradcheck.Rand(n*c, 1), gradcheck.Rand(n*c, 2)
	valid := []bool{true, false, true, true, false, true}
	d := make([]float64, n*c)
	loss := func() float64 { return MaskedMSE(make([]float64, n*c), pred, target, valid, n, c) }
	MaskedMSE(d, pred, target, valid, n, c)
	return map[string][2][]float64{"pred": {pred, d}}, loss
}

// Values the gradient checks cannot see: the losses themselves.
func TestLossValues(t *testing.T) {
	// Uniform logits over K classes give log K whatever the label.
	logits := make([]float64, 2*4)
	got := CrossEntropy(make([]float64, 8), logits, []int{1, 3}, nil, 0, 2, 4)
	if math.Abs(got-math.Log(4)) > 1e-12 {
		t.Errorf("cross-entropy of uniform logits = %v, want log 4", got)
	}
	// Padding rows are excluded from the MSE's denominator.
	pred, target := []float64{1, 1, 5, 5}, []float64{0, 0, 0, 0}
	if got := MaskedMSE(make([]float64, 4), pred, target, []bool{true, false}, 2, 2); got != 1 {
		t.Errorf("masked MSE = %v, want 1", got)
	}
	// A fully padded attention row gives zero probabilities, not NaN.
	row := []float64{1, 2}
	softmaxRow(row, 1, []bool{true, true})
	if row[0] != 0 || row[1] != 0 {
		t.Errorf("all-padded softmax row = %v, want zeros", row)
	}
}

func TestNormalizePatches(t *testing.T) {
	x := []float64{1, 2, 3, 4, 10, 10, 10, 10}
	NormalizePatches(x, 2, 4)
	var m, v float64
	for _, e := range x[:4] {
		m += e
	}
	for _, e := range x[:4] {
		v += (e - m/4) * (e - m/4)
	}
	if math.Abs(m) > 1e-12 || math.Abs(v/3-1) > 1e-5 {
		t.Errorf("normalised patch mean %v var %v, want 0 and ≈1", m/4, v/3)
	}
	for _, e := range x[4:] {
		if e != 0 {
			t.Errorf("constant patch normalises to %v, want 0", e)
		}
	}
}

// Attention through token-major views (rows of a wider [B·L, ld] tensor,
// as the model passes a fused q|k|v output and its merged output) and
// without a kept prob (evaluation) must give what head-major contiguous
// tensors give.
func TestAttentionViews(t *testing.T) {
	B, H, L, hd := 3, 2, 7, 4
	d, ld := H*hd, 3*H*hd+1
	for _, tc := range []struct {
		name      string
		pad, drop bool
	}{{"plain", false, false}, {"pad+dropout", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			wide := gradcheck.Rand(B*L*ld, 1) // q | k | v | spare column per row
			q, k, v := make([]float64, B*H*L*hd), make([]float64, B*H*L*hd), make([]float64, B*H*L*hd)
			SplitHeadsLD(q, wide, ld, B, L, H, hd)
			SplitHeadsLD(k, wide[d:], ld, B, L, H, hd)
			SplitHeadsLD(v, wide[2*d:], ld, B, L, H, hd)
			var keyPad []bool
			var mask, pdHM, pdTM []float64
			if tc.pad {
				keyPad = make([]bool, B*L)
				keyPad[5], keyPad[6], keyPad[L+2] = true, true, true
			}
			if tc.drop {
				mask = make([]float64, B*H*L*L)
				DropoutMask(mask, 0.3, rand.New(rand.NewPCG(3, 4)))
				pdHM, pdTM = make([]float64, len(mask)), make([]float64, len(mask))
			}
			hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			tm := func(x []float64) Heads[float64] { return TokenMajor(x, ld, L, hd) }

			outHM, probHM := make([]float64, B*H*L*hd), make([]float64, B*H*L*L)
			AttentionForward(hm(outHM), hm(q), hm(k), hm(v), probHM, pdHM, keyPad, mask, B, H, L, hd)
			merged := make([]float64, B*L*d)
			MergeHeadsLD(merged, outHM, d, B, L, H, hd)

			outTM, probTM := make([]float64, B*L*ld), make([]float64, B*H*L*L)
			AttentionForward(tm(outTM), tm(wide), tm(wide[d:]), tm(wide[2*d:]), probTM, pdTM, keyPad, mask, B, H, L, hd)
			gotMerged := make([]float64, B*L*d)
			for r := range B * L {
				copy(gotMerged[r*d:(r+1)*d], outTM[r*ld:])
			}
			closeAll(t, "out (token-major)", gotMerged, merged)
			closeAll(t, "prob (token-major)", probTM, probHM)
			if !tc.drop {
				outEval := make([]float64, B*H*L*hd)
				AttentionForward(hm(outEval), hm(q), hm(k), hm(v), nil, nil, keyPad, nil, B, H, L, hd)
				closeAll(t, "out (no prob kept)", outEval, outHM)
			}

			dOut := gradcheck.Rand(B*L*d, 2)
			dOutHM := make([]float64, B*H*L*hd)
			SplitHeadsLD(dOutHM, dOut, d, B, L, H, hd)
			dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
			AttentionBackward(hm(dq), hm(dk), hm(dv), hm(dOutHM), hm(q), hm(k), hm(v), probHM, pdHM, mask, B, H, L, hd)
			dWide := make([]float64, B*L*ld)
			AttentionBackward(tm(dWide), tm(dWide[d:]), tm(dWide[2*d:]), TokenMajor(dOut, d, L, hd), tm(wide), tm(wide[d:]), tm(wide[2*d:]),
				probTM, pdTM, mask, B, H, L, hd)
			for i, want := range [][]float64{dq, dk, dv} {
				got := make([]float64, B*H*L*hd)
				SplitHeadsLD(got, dWide[i*d:], ld, B, L, H, hd)
				closeAll(t, []string{"dq", "dk", "dv"}[i]+" (token-major)", got, want)
			}
		})
	}
}

// TestAttentionForwardBF16Out: AttentionForwardRowsBF16 stores, in the
// selected query rows, exactly the bf16 rounding of what
// AttentionForwardRows writes in token order (the same products and
// softmax), with the same probabilities; each row's padding pairs are
// zero and the other rows are left as they were. An odd head width is
// refused.
func TestAttentionForwardBF16Out(t *testing.T) {
	B, H, L, hd := 2, 3, 37, 6
	n, d := B*H*L*hd, H*hd
	q, k, v := to32(gradcheck.Rand(n, 11)), to32(gradcheck.Rand(n, 12)), to32(gradcheck.Rand(n, 13))
	keyPad := make([]bool, B*L)
	keyPad[3], keyPad[L+20] = true, true
	mask := make([]float32, B*H*L*L)
	DropoutMask(mask, 0.2, rand.New(rand.NewPCG(5, 6)))
	hm := func(x []float32) Heads[float32] { return HeadMajor(x, H, L, hd) }
	for _, tc := range []struct {
		name   string
		r0, r1 int
		drop   bool
	}{{"all", 0, L, false}, {"all/dropout", 0, L, true}, {"cls", 0, 1, false}, {"middle/dropout", 5, 30, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var m []float32
			if tc.drop {
				m = mask
			}
			out := make([]float32, B*L*d)
			prob, pd := make([]float32, B*H*L*L), make([]float32, B*H*L*L)
			AttentionForwardRows(TokenMajor(out, d, L, hd), hm(q), hm(k), hm(v), prob, pd, keyPad, m, B, H, L, tc.r0, tc.r1, hd)
			var want, got tensor.BF16Rows
			want.Resize(B*L, d)
			want.Store(0, B*L, out, d)
			got.Resize(B*L, d)
			poison := make([]float32, B*L*d)
			for i := range poison {
				poison[i] = float32(math.NaN())
			}
			got.Store(0, B*L, poison, d)
			gotProb, gotPD := make([]float32, B*H*L*L), make([]float32, B*H*L*L)
			AttentionForwardRowsBF16(&got, hm(q), hm(k), hm(v), gotProb, gotPD, keyPad, m, B, H, L, tc.r0, tc.r1, hd)
			w, g := want.Float32(), got.Float32()
			for r := range B * L {
				in := r%L >= tc.r0 && r%L < tc.r1
				for j := range d {
					wv, gv := w[r*d+j], g[r*d+j]
					if in && math.Float32bits(gv) != math.Float32bits(wv) || !in && !math.IsNaN(float64(gv)) {
						t.Fatalf("row %d (in the query rows: %v), column %d: %v, want %v", r, in, j, gv, wv)
					}
				}
			}
			for i := range prob {
				if r := i / L % L; r >= tc.r0 && r < tc.r1 && math.Float32bits(gotProb[i]) != math.Float32bits(prob[i]) {
					t.Fatalf("prob[%d] = %v, want %v", i, gotProb[i], prob[i])
				}
			}
		})
	}
	t.Run("odd head width", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("hd = 5 accepted")
			}
		}()
		var o tensor.BF16Rows
		o.Resize(L, 5)
		x := make([]float32, L*5)
		AttentionForwardRowsBF16(&o, HeadMajor(x, 1, L, 5), HeadMajor(x, 1, L, 5), HeadMajor(x, 1, L, 5), nil, nil, nil, nil, 1, 1, L, 0, L, 5)
	})
}

// TestAttentionRows checks AttentionForwardRows and AttentionBackwardRows
// against the whole-sequence functions: the selected query rows of out and
// prob equal the full pass's, every other row is left untouched (NaN
// here), and given a dOut that is zero outside the rows, dk and dv equal
// the full backward's and dq is the full one's in the rows and zero
// elsewhere (written, not left as it was).
func TestAttentionRows(t *testing.T) {
	B, H, L, hd := 2, 2, 7, 4
	n := B * H * L * hd
	nan := math.NaN()
	poisoned := func(size int) []float64 {
		x := make([]float64, size)
		for i := range x {
			x[i] = nan
		}
		return x
	}
	for _, tc := range []struct {
		name      string
		r0, r1    int
		pad, drop bool
	}{
		{"all", 0, L, true, true},
		{"cls", 0, 1, false, false},
		{"cls/pad+dropout", 0, 1, true, true},
		{"middle", 2, 5, true, false},
		{"tail/dropout", 4, L, false, true},
		{"last", L - 1, L, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, k, v := gradcheck.Rand(n, 1), gradcheck.Rand(n, 2), gradcheck.Rand(n, 3)
			var keyPad []bool
			var mask []float64
			if tc.pad {
				keyPad = make([]bool, B*L)
				keyPad[5], keyPad[L+1] = true, true
			}
			if tc.drop {
				mask = make([]float64, B*H*L*L)
				DropoutMask(mask, 0.3, rand.New(rand.NewPCG(3, 4)))
			}
			hm := func(x []float64) Heads[float64] { return HeadMajor(x, H, L, hd) }
			inRows := func(i, rowLen int) bool { r := i / rowLen % L; return r >= tc.r0 && r < tc.r1 }

			out, prob, pd := make([]float64, n), make([]float64, B*H*L*L), make([]float64, B*H*L*L)
			AttentionForward(hm(out), hm(q), hm(k), hm(v), prob, pd, keyPad, mask, B, H, L, hd)
			gotOut, gotProb, gotPD := poisoned(n), poisoned(B*H*L*L), poisoned(B*H*L*L)
			AttentionForwardRows(hm(gotOut), hm(q), hm(k), hm(v), gotProb, gotPD, keyPad, mask, B, H, L, tc.r0, tc.r1, hd)
			for _, c := range []struct {
				what      string
				got, want []float64
				rowLen    int
			}{{"out", gotOut, out, hd}, {"prob", gotProb, prob, L}, {"probDrop", gotPD, pd, L}} {
				if c.what == "probDrop" && !tc.drop {
					continue
				}
				for i := range c.want {
					switch {
					case inRows(i, c.rowLen) && !(math.Abs(c.got[i]-c.want[i]) <= 1e-12*math.Max(1, math.Abs(c.want[i]))):
						t.Fatalf("%s[%d] = %v, want %v", c.what, i, c.got[i], c.want[i])
					case !inRows(i, c.rowLen) && !math.IsNaN(c.got[i]):
						t.Fatalf("%s[%d] = %v outside the query rows, want it left as it was", c.what, i, c.got[i])
					}
				}
			}

			dOut := gradcheck.Rand(n, 4)
			for i := range dOut {
				if !inRows(i, hd) {
					dOut[i] = 0
				}
			}
			dq, dk, dv := make([]float64, n), make([]float64, n), make([]float64, n)
			AttentionBackward(hm(dq), hm(dk), hm(dv), hm(dOut), hm(q), hm(k), hm(v), prob, pd, mask, B, H, L, hd)
			for _, hook := range []bool{false, true} {
				gotDQ, gotDK, gotDV := poisoned(n), poisoned(n), poisoned(n)
				// sampleDone must see each sample's gradients final: it
				// snapshots its dq and dk (which it alone gets) and dv,
				// compared below with the reference.
				per := n / B
				var snap [][3][]float64
				var done func(b int, dq, dk []float64)
				dqV, dkV := hm(gotDQ), hm(gotDK)
				if hook {
					dqV, dkV = Heads[float64]{}, Heads[float64]{}
					snap = make([][3][]float64, B)
					var mu sync.Mutex
					done = func(b int, dq, dk []float64) {
						mu.Lock()
						defer mu.Unlock()
						if snap[b][0] != nil {
							t.Errorf("sampleDone(%d) called twice", b)
						}
						if len(dq) != per || len(dk) != per {
							t.Errorf("sampleDone(%d): dq, dk of %d, %d values, want %d", b, len(dq), len(dk), per)
						}
						for i, g := range [][]float64{dq, dk, gotDV[b*per : (b+1)*per]} {
							snap[b][i] = append([]float64(nil), g...)
						}
					}
				}
				// Only the selected rows of prob and probDrop may be read.
				AttentionBackwardRows(dqV, dkV, hm(gotDV), hm(dOut), hm(q), hm(k), hm(v), gotProb, gotPD, mask, B, H, L, tc.r0, tc.r1, hd, done)
				if !hook {
					closeAll(t, "dq", gotDQ, dq)
					closeAll(t, "dk", gotDK, dk)
				}
				closeAll(t, "dv", gotDV, dv)
				for b := range snap {
					if snap[b][0] == nil {
						t.Fatalf("sampleDone(%d) never called", b)
					}
					for i, g := range [][]float64{dq, dk, dv} {
						closeAll(t, fmt.Sprintf("%s of sample %d at sampleDone", []string{"dq", "dk", "dv"}[i], b), snap[b][i], g[b*per:(b+1)*per])
					}
				}
			}
		})
	}
}

func closeAll(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= 1e-12*math.Max(1, math.Abs(want[i]))) { // NaN fails too
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
