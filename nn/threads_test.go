package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"romae/tensor"
)

// The element-wise float32 kernels run a 16-lane vector body and a scalar
// tail that rounds differently; split over cores, every piece has its own
// tail unless the pieces start on 16-element boundaries. Their results
// must not depend on how many cores share the work (a training run is
// then the same on 1 and 2 cores), for sizes that split unevenly.
func TestElementwiseSameOnAnyCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer tensor.SetThreads(0)
	for _, n := range []int{16000, 12345, 50001} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		in, dOut := make([]float32, n), make([]float32, n)
		for i := range in {
			in[i], dOut[i] = float32(6*rng.NormFloat64()), float32(rng.NormFloat64())
		}
		var act, grad [3][]float32
		for k, threads := range []int{1, 2, 3} {
			tensor.SetThreads(threads)
			act[k], grad[k] = make([]float32, n), make([]float32, n)
			SiLUForward(act[k], in, n)
			SiLUBackward(grad[k], dOut, in, n)
		}
		for k := 1; k < 3; k++ {
			for i := range in {
				if act[k][i] != act[0][i] || grad[k][i] != grad[0][i] {
					t.Errorf("n %d, element %d: SiLU %v / gradient %v on %d cores, %v / %v on one", n, i, act[k][i], grad[k][i], k+1, act[0][i], grad[0][i])
					break
				}
			}
		}
	}
}

// TestAttentionQueryParts: with fewer (sample, head) pairs than two per
// core, attentionPerHead cuts each head's queries into parts (queryParts)
// so every core has work. Outputs and kept probabilities must equal the
// one-task-per-head pass bit for bit: a lone sample, two samples of one
// head, padded keys, attention dropout, a row range that starts
// mid-sequence, and 1 to 3 cores.
func TestAttentionQueryParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer tensor.SetThreads(0)
	defer func(v bool) { splitQueries = v }(splitQueries)
	const L, hd = 150, 20
	for _, tc := range []struct {
		B, H, r0, r1 int
		pad, drop    bool
	}{{1, 3, 0, L, false, false}, {1, 3, 0, L, true, true}, {2, 1, 0, L, true, false}, {1, 2, 37, 141, false, true}} {
		n, nll := tc.B*tc.H*L*hd, tc.B*tc.H*L*L
		q, k, v := randF32(n, 1), randF32(n, 2), randF32(n, 3)
		var pad []bool
		if tc.pad {
			pad = make([]bool, tc.B*L)
			for i := range pad {
				pad[i] = i%L > 130
			}
		}
		var mask, probDrop []float32
		if tc.drop {
			mask, probDrop = randF32(nll, 4), make([]float32, nll)
			for i := range mask {
				mask[i] = float32(max(0, int(mask[i]+1))) // 0, 1, 2, …
			}
		}
		hmB := func(x []float32) Heads[float32] { return HeadMajor(x, tc.H, L, hd) }
		run := func(split bool, threads int) (out, prob, pd []float32) {
			splitQueries = split
			tensor.SetThreads(threads)
			out, prob = make([]float32, n), make([]float32, nll)
			if tc.drop {
				clear(probDrop)
			}
			AttentionForwardRows(hmB(out), hmB(q), hmB(k), hmB(v), prob, probDrop, pad, mask, tc.B, tc.H, L, tc.r0, tc.r1, hd)
			return out, prob, append([]float32(nil), probDrop...)
		}
		wantOut, wantProb, wantPD := run(false, 1)
		for _, threads := range []int{2, 3} {
			gotOut, gotProb, gotPD := run(true, threads)
			if parts, _ := queryParts(tc.B*tc.H, tc.r1-tc.r0); parts < 2 {
				t.Fatalf("%+v on %d cores: not cut into parts", tc, threads)
			}
			sameBits32(t, fmt.Sprintf("%+v on %d cores, in parts against one task per head", tc, threads),
				f32Pair{"out", gotOut, wantOut}, f32Pair{"prob", gotProb, wantProb}, f32Pair{"probDrop", gotPD, wantPD})
		}
	}
}

// TestAttentionBackwardStore checks that the backward's gradients are the
// same bit for bit whether its per-head products store straight into dq,
// dk and dv or through the aligned scratch and copyRows (headStore), and
// whether dq and dk go to their views or to sampleDone per sample, for
// head-major and token-major gradients (rows 3·H·hd apart, as in the
// fused q|k|v gradient), all query rows or some, with and without dropout;
// and that dq is zero outside the query rows either way.
func TestAttentionBackwardStore(t *testing.T) {
	defer tensor.SetThreads(0)
	defer func(v bool) { storeDirect = v }(storeDirect)
	const L, hd = 37, 12
	for _, tc := range []struct {
		B, H, r0, r1 int
		tokenMajor   bool
		drop         bool
	}{{2, 3, 0, L, false, false}, {2, 3, 0, L, true, true}, {3, 2, 5, 30, true, false}, {1, 3, 0, 1, false, true}} {
		n, nll := tc.B*tc.H*L*hd, tc.B*tc.H*L*L
		q, k, v, dOut := randF32(n, 1), randF32(n, 2), randF32(n, 3), randF32(n, 4)
		hmB := func(x []float32) Heads[float32] { return HeadMajor(x, tc.H, L, hd) }
		prob, out := make([]float32, nll), make([]float32, n)
		var mask, probDrop []float32
		if tc.drop {
			mask, probDrop = randF32(nll, 5), make([]float32, nll)
			for i := range mask {
				mask[i] = float32(max(0, int(mask[i]+1)))
			}
		}
		AttentionForwardRows(hmB(out), hmB(q), hmB(k), hmB(v), prob, probDrop, nil, mask, tc.B, tc.H, L, tc.r0, tc.r1, hd)
		ld := 3 * tc.H * hd // one row of a fused q|k|v gradient
		run := func(direct bool, threads int) (dq, dk, dv []float32) {
			storeDirect = direct
			tensor.SetThreads(threads)
			grads := make([][]float32, 3)
			views := make([]Heads[float32], 3)
			for i := range grads {
				if tc.tokenMajor {
					grads[i] = randF32(tc.B*L*ld, uint64(10+i)) // stale values the backward must overwrite
					views[i] = TokenMajor(grads[i][i*tc.H*hd:], ld, L, hd)
				} else {
					grads[i] = randF32(n, uint64(10+i))
					views[i] = hmB(grads[i])
				}
			}
			if st := newHeadStore[float32](nil, 0); st.direct != direct {
				t.Fatalf("storeDirect = %v but newHeadStore chose direct = %v under precision %s", direct, st.direct, tensor.Precision())
			}
			AttentionBackwardRows(views[0], views[1], views[2], hmB(dOut), hmB(q), hmB(k), hmB(v), prob, probDrop, mask, tc.B, tc.H, L, tc.r0, tc.r1, hd, nil)
			return grads[0], grads[1], grads[2]
		}
		// Each sample's dq and dk handed to sampleDone instead (from the
		// core's scratch), copied out into head-major ones.
		hooked := func(threads int) (dq, dk, dv []float32) {
			storeDirect = true
			tensor.SetThreads(threads)
			dq, dk, dv = make([]float32, n), make([]float32, n), randF32(n, 12)
			per := tc.H * L * hd
			var mu sync.Mutex
			AttentionBackwardRows(Heads[float32]{}, Heads[float32]{}, hmB(dv), hmB(dOut), hmB(q), hmB(k), hmB(v), prob, probDrop, mask, tc.B, tc.H, L, tc.r0, tc.r1, hd,
				func(b int, sq, sk []float32) {
					mu.Lock()
					defer mu.Unlock()
					copy(dq[b*per:(b+1)*per], sq)
					copy(dk[b*per:(b+1)*per], sk)
				})
			return dq, dk, dv
		}
		wq, wk, wv := run(false, 1)
		if !tc.tokenMajor { // compare head-major gradients with the hook's
			for _, threads := range []int{1, 2} {
				gq, gk, gv := hooked(threads)
				sameBits32(t, fmt.Sprintf("%+v on %d threads, through sampleDone against stored in the views", tc, threads),
					f32Pair{"dq", gq, wq}, f32Pair{"dk", gk, wk}, f32Pair{"dv", gv, wv})
			}
		}
		for _, threads := range []int{1, 2} {
			gq, gk, gv := run(true, threads)
			sameBits32(t, fmt.Sprintf("%+v on %d threads, stored straight against through the scratch", tc, threads),
				f32Pair{"dq", gq, wq}, f32Pair{"dk", gk, wk}, f32Pair{"dv", gv, wv})
		}
		dq := HeadMajor(wq, tc.H, L, hd)
		if tc.tokenMajor {
			dq = TokenMajor(wq, ld, L, hd)
		}
		for b := range tc.B {
			for h := range tc.H {
				for r := range L {
					if r >= tc.r0 && r < tc.r1 {
						continue
					}
					for i, x := range dq.at(b, h)[r*dq.LD:][:hd] {
						if x != 0 {
							t.Fatalf("%+v: dq[%d,%d,%d,%d] = %v outside the query rows, want 0", tc, b, h, r, i, x)
						}
					}
				}
			}
		}
	}
}

// f32Pair is a named result and what it must equal, for sameBits32.
type f32Pair struct {
	name      string
	got, want []float32
}

// sameBits32 fails t unless every pair is equal bit for bit; ctx says
// which runs were compared.
func sameBits32(t *testing.T, ctx string, pairs ...f32Pair) {
	t.Helper()
	for _, c := range pairs {
		for i := range c.want {
			if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
				t.Fatalf("%s: %s[%d] = %v, want %v", ctx, c.name, i, c.got[i], c.want[i])
			}
		}
	}
}
