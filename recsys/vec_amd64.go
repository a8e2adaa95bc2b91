//go:build goexperiment.simd && amd64

package recsys

import (
	"math"
	"simd/archsimd"
)

var hasAVX512 = archsimd.X86.AVX512()

// Cephes sinf/cosf: π/2 in three parts for the reduction (exact products
// with quadrant numbers below 2^13), minimax polynomials on [−π/4, π/4].
const (
	sinDP1 = 1.5703125
	sinDP2 = 4.837512969970703125e-4
	sinDP3 = 7.54978995489188216e-8
	// sineVecMax bounds |ω0·pre| for the vector path; larger arguments
	// (none in practice) go to math.Sincos.
	sineVecMax = 8192
)

// sineVec writes out = sin(ω0·pre), deriv = ω0·cos(ω0·pre) for the
// leading 16-element blocks of pre, 16 lanes at a time, and returns how
// many elements it did (the caller finishes the rest). Accurate to about
// 1e-7 absolute; a block with an argument beyond sineVecMax (none in
// practice) goes through math.Sincos. SIREN-RoPE's 2 × hidden sines per token were most of its
// step-time overhead through math.Sincos.
func sineVec(out, deriv, pre []float32, w0 float32) int {
	if !hasAVX512 {
		return 0
	}
	vw0 := archsimd.BroadcastFloat32x16(w0)
	twoOverPi := archsimd.BroadcastFloat32x16(0.63661977236758134308)
	limit := archsimd.BroadcastFloat32x16(sineVecMax)
	absMask := archsimd.BroadcastInt32x16(0x7fffffff)
	three, one := archsimd.BroadcastInt32x16(3), archsimd.BroadcastInt32x16(1)
	zero := archsimd.BroadcastInt32x16(0)
	i := 0
	for ; i+16 <= len(pre); i += 16 {
		x := archsimd.LoadFloat32x16Slice(pre[i:]).Mul(vw0)
		if x.AsInt32x16().And(absMask).AsFloat32x16().Greater(limit).ToBits() != 0 {
			archsimd.ClearAVXUpperBits() // before scalar float64 work and calls
			for k := i; k < i+16; k++ {
				s, c := math.Sincos(float64(w0) * float64(pre[k]))
				out[k], deriv[k] = float32(s), float32(float64(w0)*c)
			}
			continue
		}
		j := x.Mul(twoOverPi).RoundToEvenScaled(0)
		r := j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP1), x)
		r = j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP2), r)
		r = j.MulAdd(archsimd.BroadcastFloat32x16(-sinDP3), r)
		z := r.Mul(r)
		ps := archsimd.BroadcastFloat32x16(-1.9515295891e-4)
		ps = ps.MulAdd(z, archsimd.BroadcastFloat32x16(8.3321608736e-3))
		ps = ps.MulAdd(z, archsimd.BroadcastFloat32x16(-1.6666654611e-1))
		s := ps.Mul(z).MulAdd(r, r)
		pc := archsimd.BroadcastFloat32x16(2.443315711809948e-5)
		pc = pc.MulAdd(z, archsimd.BroadcastFloat32x16(-1.388731625493765e-3))
		pc = pc.MulAdd(z, archsimd.BroadcastFloat32x16(4.166664568298827e-2))
		c := pc.Mul(z).MulAdd(z, archsimd.BroadcastFloat32x16(-0.5).MulAdd(z, archsimd.BroadcastFloat32x16(1)))
		// Quadrant q = j mod 4: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s).
		q := j.ConvertToInt32().And(three)
		odd := q.And(one).Equal(zero) // true: q even
		sinB, cosB := s.Merge(c, odd), c.Merge(s, odd)
		sinSign := q.And(archsimd.BroadcastInt32x16(2)).ShiftAllLeft(30)
		cosSign := q.Add(one).And(archsimd.BroadcastInt32x16(2)).ShiftAllLeft(30)
		sinB.AsInt32x16().Xor(sinSign).AsFloat32x16().StoreSlice(out[i:])
		cosB.AsInt32x16().Xor(cosSign).AsFloat32x16().Mul(vw0).StoreSlice(deriv[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// angleGradAcc adds g₂·y₁ − g₁·y₂ for the 16 pairs at off to acc. A
// function the compiler inlines rather than a loop over {q, k}: copying
// the loop's slice pairs took legacy-SSE moves with dirty upper state.
func angleGradAcc(acc archsimd.Float32x16, y, g []float32, off, half int) archsimd.Float32x16 {
	y1, y2 := archsimd.LoadFloat32x16Slice(y[off:]), archsimd.LoadFloat32x16Slice(y[off+half:])
	g1, g2 := archsimd.LoadFloat32x16Slice(g[off:]), archsimd.LoadFloat32x16Slice(g[off+half:])
	return g2.MulAdd(y1, acc).Sub(g1.Mul(y2))
}

// swapHalves is the permutation that exchanges the halves of 16 lanes.
var swapHalves = [16]uint32{8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}

// angleGradVec is rope.Table.AngleGrad for q and k in one pass:
// dAngles[r, j] += Σ_heads (g₂·y₁ − g₁·y₂) over the rotated pairs (y₁, y₂) =
// (y[j], y[j+hd/2]) of q (gradient dq) and of k (dk), all head-major
// [B,H,L,hd]: 16 pairs per vector where hd/2 is a multiple of 16, and for
// hd = 16 (the recsys experiment's heads) a whole head row per vector,
// g ⊙ swap(y) = [g₁·y₂ | g₂·y₁] summed over heads, the halves' difference
// at the end. It reports false, doing nothing, unless every pair rotates
// (R = hd/2) and R is 8 or a multiple of 16.
func angleGradVec(dAngles, yq, dq, yk, dk []float32, B, L, H, hd, R int) bool {
	half := hd / 2
	if !hasAVX512 || R != half || R != 8 && R%16 != 0 {
		return false
	}
	switch {
	case half == 8:
		swap := archsimd.LoadUint32x16(&swapHalves)
		for r := 0; r < B*L; r++ {
			b, i := r/L, r%L
			var acc archsimd.Float32x16
			for h := 0; h < H; h++ {
				off := ((b*H+h)*L + i) * 16
				q, k := archsimd.LoadFloat32x16Slice(yq[off:]), archsimd.LoadFloat32x16Slice(yk[off:])
				acc = archsimd.LoadFloat32x16Slice(dq[off:]).MulAdd(q.Permute(swap), acc)
				acc = archsimd.LoadFloat32x16Slice(dk[off:]).MulAdd(k.Permute(swap), acc)
			}
			da := dAngles[r*8:]
			archsimd.LoadFloat32x8Slice(da).Add(acc.GetHi().Sub(acc.GetLo())).StoreSlice(da)
		}
	default:
		for r := 0; r < B*L; r++ {
			b, i := r/L, r%L
			da := dAngles[r*R : (r+1)*R]
			for j := 0; j < R; j += 16 {
				acc := archsimd.LoadFloat32x16Slice(da[j:])
				for h := 0; h < H; h++ {
					off := ((b*H+h)*L+i)*hd + j
					acc = angleGradAcc(acc, yq, dq, off, half)
					acc = angleGradAcc(acc, yk, dk, off, half)
				}
				acc.StoreSlice(da[j:])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
	return true
}

// gramVec is gram for float32: c [ra, rb] = a·bᵀ for a [ra, n], b [rb, n],
// in 2×4 blocks of dot products (8 accumulators, 6 loads for 8 FMAs per
// 16 tokens: the compiler keeps vectors in 15 registers, and a larger
// block spills), a block past the last row of a or b repeating that row
// and dropping the copies. It reports false, doing nothing, without
// AVX-512.
func gramVec(c, a []float32, ra int, b []float32, rb, n int) bool {
	if !hasAVX512 {
		return false
	}
	nv := n &^ 15
	var blk [8]float32
	for r := 0; r < ra; r += 2 {
		a0, a1 := a[r*n:r*n+nv], a[min(r+1, ra-1)*n:][:nv]
		for s := 0; s < rb; s += 4 {
			col := func(j int) []float32 { j = min(s+j, rb-1); return b[j*n : j*n+nv] }
			gram2x4(&blk, a0, a1, col(0), col(1), col(2), col(3))
			for i := 0; i < min(2, ra-r); i++ {
				copy(c[(r+i)*rb+s:(r+i)*rb+min(s+4, rb)], blk[4*i:])
			}
		}
	}
	if nv < n { // the last n mod 16 tokens
		for r := 0; r < ra; r++ {
			for s := 0; s < rb; s++ {
				acc := c[r*rb+s]
				for k := nv; k < n; k++ {
					acc += a[r*n+k] * b[s*n+k]
				}
				c[r*rb+s] = acc
			}
		}
	}
	return true
}

// gram2x4 writes out[4i+j] = ai·bj (every slice the same length, a
// multiple of 16), and returns with the upper state clean.
func gram2x4(out *[8]float32, a0, a1, b0, b1, b2, b3 []float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 archsimd.Float32x16
	n := len(a0)
	a1, b0, b1, b2, b3 = a1[:n], b0[:n], b1[:n], b2[:n], b3[:n]
	for k := 0; k+16 <= n; k += 16 {
		x0, x1 := archsimd.LoadFloat32x16((*[16]float32)(a0[k:k+16])), archsimd.LoadFloat32x16((*[16]float32)(a1[k:k+16]))
		y := archsimd.LoadFloat32x16((*[16]float32)(b0[k : k+16]))
		c00, c10 = x0.MulAdd(y, c00), x1.MulAdd(y, c10)
		y = archsimd.LoadFloat32x16((*[16]float32)(b1[k : k+16]))
		c01, c11 = x0.MulAdd(y, c01), x1.MulAdd(y, c11)
		y = archsimd.LoadFloat32x16((*[16]float32)(b2[k : k+16]))
		c02, c12 = x0.MulAdd(y, c02), x1.MulAdd(y, c12)
		y = archsimd.LoadFloat32x16((*[16]float32)(b3[k : k+16]))
		c03, c13 = x0.MulAdd(y, c03), x1.MulAdd(y, c13)
	}
	sum4(c00, c01, c02, c03).StoreSlice(out[0:4])
	sum4(c10, c11, c12, c13).StoreSlice(out[4:8])
	archsimd.ClearAVXUpperBits()
}

// sum4 is the four lane sums [Σv0, Σv1, Σv2, Σv3].
func sum4(v0, v1, v2, v3 archsimd.Float32x16) archsimd.Float32x4 {
	half := func(v archsimd.Float32x16) archsimd.Float32x4 {
		h := v.GetLo().Add(v.GetHi())
		return h.GetLo().Add(h.GetHi())
	}
	return half(v0).AddPairs(half(v1)).AddPairs(half(v2).AddPairs(half(v3)))
}

// reluVec writes out = max(pre, 0) for the leading 16-element blocks and
// returns how many elements it did.
func reluVec(out, pre []float32) int {
	if !hasAVX512 {
		return 0
	}
	zero, i := archsimd.BroadcastFloat32x16(0), 0
	for ; i+16 <= len(out); i += 16 {
		archsimd.LoadFloat32x16Slice(pre[i:]).Max(zero).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// reluGradVec zeroes d where h ≤ 0 (h > 0 kept) for the leading
// 16-element blocks and returns how many elements it did.
func reluGradVec(d, h []float32) int {
	if !hasAVX512 {
		return 0
	}
	zero, i := archsimd.BroadcastFloat32x16(0), 0
	for ; i+16 <= len(d); i += 16 {
		archsimd.LoadFloat32x16Slice(d[i:]).Masked(archsimd.LoadFloat32x16Slice(h[i:]).Greater(zero)).StoreSlice(d[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// The learned angles are token-major ([N, R], as the rotation table reads
// them) and the angle network's output and gradient feature-major ([R, N],
// tokens along the vector): the kernels below turn a block of 16 tokens
// from one layout to the other in registers, in log₂R rounds of two-input
// permutations. Round s holds 2^s pairs of 16/2^s tokens in each of R
// vectors: vector (j/P)·P + t/T, lane P·(t mod T) + j mod P, for pair j
// of token t, P = 2^s, T = 16/P.
func blockLane(s, t, j int) (v, lane int) {
	P := 1 << s
	T := 16 / P
	return j/P*P + t/T, P*(t%T) + j%P
}

// permStep makes one vector of a round from two of the previous one:
// out = in[a]·in[b] permuted by idx (lanes 16… from in[b]).
type permStep struct {
	a, b int
	idx  [16]uint32
}

// blockRounds builds the rounds between feature-major (round 0) and
// token-major (round log₂R) for R pairs, in either direction.
func blockRounds(R int, toTokens bool) [][]permStep {
	K := 0
	for 1<<K < R {
		K++
	}
	rounds := make([][]permStep, K)
	for k := range rounds {
		from, to := k, k+1
		if !toTokens {
			from, to = K-k, K-k-1
		}
		steps := make([]permStep, R)
		for i := range steps {
			steps[i].a, steps[i].b = -1, -1
		}
		for t := 0; t < 16; t++ {
			for j := 0; j < R; j++ {
				v, l := blockLane(from, t, j)
				w, m := blockLane(to, t, j)
				st := &steps[w]
				switch {
				case st.a < 0 || st.a == v:
					st.a, st.idx[m] = v, uint32(l)
				case st.b < 0 || st.b == v:
					st.b, st.idx[m] = v, uint32(16+l)
				default:
					panic("recsys: a transpose round needs more than two inputs")
				}
			}
		}
		for i := range steps {
			if steps[i].b < 0 {
				steps[i].b = steps[i].a
			}
		}
		rounds[k] = steps
	}
	return rounds
}

// The rounds for R = 8 and 16, the widths the vector kernels take.
var (
	toTokens8, toFeatures8   = blockRounds(8, true), blockRounds(8, false)
	toTokens16, toFeatures16 = blockRounds(16, true), blockRounds(16, false)
)

// transposeBlock applies rounds to the first R vectors of x (y is
// scratch) and returns the array holding the result.
func transposeBlock(x, y *[16]archsimd.Float32x16, rounds [][]permStep) *[16]archsimd.Float32x16 {
	for _, steps := range rounds {
		for i := range steps {
			s := &steps[i]
			y[i] = x[s.a].ConcatPermute(x[s.b], archsimd.LoadUint32x16(&s.idx))
		}
		x, y = y, x
	}
	return x
}

// blockRoundsFor is the two directions' rounds for R pairs (nil: no
// vector path).
func blockRoundsFor(R int) (toTokens, toFeatures [][]permStep) {
	switch R {
	case 8:
		return toTokens8, toFeatures8
	case 16:
		return toTokens16, toFeatures16
	}
	return nil, nil
}

// learnedAnglesVec writes angles[r, j] = float32(λ·p_r·θ_j + f[j, r]·ω_j),
// in float64 as the scalar loop does (the same roundings, so ω = 0 gives
// RoPE on the index bit for bit), for the leading 16-token blocks of N,
// and returns how many tokens it did: none without AVX-512 or unless R is
// 8 or 16.
func learnedAnglesVec(angles, f, omega, pos []float32, lambda float64, theta []float64, N, R int) int {
	var x, y [16]archsimd.Float32x16 // zeroed here: zeroing them later would be legacy SSE
	toTok, _ := blockRoundsFor(R)
	if !hasAVX512 || toTok == nil {
		return 0
	}
	// Broadcast operands in memory, written before any vector code: a
	// scalar load or conversion between vector instructions would be
	// legacy SSE.
	var thB, omB [16][8]float64
	lam := [8]float64{lambda, lambda, lambda, lambda, lambda, lambda, lambda, lambda}
	for j := 0; j < R; j++ {
		for i := range 8 {
			thB[j][i], omB[j][i] = theta[j], float64(omega[j])
		}
	}
	vl := archsimd.LoadFloat64x8(&lam)
	nb := N &^ 15
	for r0 := 0; r0 < nb; r0 += 16 {
		p := archsimd.LoadFloat32x16Slice(pos[r0:])
		lp0, lp1 := p.GetLo().ConvertToFloat64().Mul(vl), p.GetHi().ConvertToFloat64().Mul(vl)
		for j := 0; j < R; j++ {
			th, om := archsimd.LoadFloat64x8(&thB[j]), archsimd.LoadFloat64x8(&omB[j])
			fj := archsimd.LoadFloat32x16Slice(f[j*N+r0:])
			a0 := lp0.Mul(th).Add(fj.GetLo().ConvertToFloat64().Mul(om)).ConvertToFloat32()
			a1 := lp1.Mul(th).Add(fj.GetHi().ConvertToFloat64().Mul(om)).ConvertToFloat32()
			x[j] = x[j].SetLo(a0).SetHi(a1)
		}
		out := transposeBlock(&x, &y, toTok)
		blk := angles[r0*R : (r0+16)*R]
		for v := 0; v < R; v++ {
			out[v].StoreSlice(blk[16*v:])
		}
	}
	archsimd.ClearAVXUpperBits()
	return nb
}

// anglesBackwardVec is the scalar loop of Model.anglesBackward for the
// leading 16-token blocks of N — dF[j, r] = g[r, j]·ω_j, dOmega[j] +=
// Σ_r g[r, j]·f[j, r], and the returned Σ g[r, j]·float32(p_r·θ_j) for λ
// — and reports how many tokens it did: none without AVX-512 or unless R
// is 8 or 16.
func anglesBackwardVec(dF, dOmega, dAngles, f, omega, pos []float32, theta []float64, N, R int) (dLambda float32, done int) {
	var x, y, accO [16]archsimd.Float32x16 // zeroed here: zeroing them later would be legacy SSE
	var accL archsimd.Float32x16
	var sums [17][16]float32
	_, toFeat := blockRoundsFor(R)
	if !hasAVX512 || toFeat == nil {
		return 0, 0
	}
	var thB [16][8]float64
	var omB [16][16]float32
	for j := 0; j < R; j++ {
		for i := range 8 {
			thB[j][i] = theta[j]
		}
		for i := range 16 {
			omB[j][i] = omega[j]
		}
	}
	nb := N &^ 15
	for r0 := 0; r0 < nb; r0 += 16 {
		blk := dAngles[r0*R : (r0+16)*R]
		for v := 0; v < R; v++ {
			x[v] = archsimd.LoadFloat32x16Slice(blk[16*v:])
		}
		g := transposeBlock(&x, &y, toFeat)
		p := archsimd.LoadFloat32x16Slice(pos[r0:])
		p0, p1 := p.GetLo().ConvertToFloat64(), p.GetHi().ConvertToFloat64()
		for j := 0; j < R; j++ {
			gj, fj := g[j], archsimd.LoadFloat32x16Slice(f[j*N+r0:])
			gj.Mul(archsimd.LoadFloat32x16(&omB[j])).StoreSlice(dF[j*N+r0:])
			accO[j] = gj.MulAdd(fj, accO[j])
			th := archsimd.LoadFloat64x8(&thB[j])
			pth := gj.SetLo(p0.Mul(th).ConvertToFloat32()).SetHi(p1.Mul(th).ConvertToFloat32())
			accL = gj.MulAdd(pth, accL)
		}
	}
	for j := 0; j < R; j++ {
		accO[j].Store(&sums[j])
	}
	accL.Store(&sums[16])
	archsimd.ClearAVXUpperBits()
	for j := 0; j < R; j++ {
		for _, v := range sums[j] {
			dOmega[j] += v
		}
	}
	for _, v := range sums[16] {
		dLambda += v
	}
	return dLambda, nb
}

// timeFeaturesVec writes the time features of windowFeatures — rows 1, 2
// and 4 of x [numFeatures, n] for the tokens at times ts — for the leading
// 8-token blocks, with the scalar loop's float64 operations in the same
// order (the same features bit for bit), and returns how many tokens it
// did.
func timeFeaturesVec(x []float32, n int, ts []float64) int {
	if !hasAVX512 {
		return 0
	}
	// Constants in memory, written before any vector code (1.0/: the
	// periods are untyped integer constants).
	var c [8][8]float64
	for i, v := range []float64{1 / secondsPerYear, 55, secondsPerDay, 1.0 / secondsPerDay, secondsPerWeek, 1.0 / secondsPerWeek, 2 * math.Pi, 0} {
		for l := range c[i] {
			c[i][l] = v
		}
	}
	ld := func(i int) archsimd.Float64x8 { return archsimd.LoadFloat64x8(&c[i]) }
	invYear, c55, day, invDay, week, invWeek, twoPi, zero := ld(0), ld(1), ld(2), ld(3), ld(4), ld(5), ld(6), ld(7)
	// phase's steps: truncate, one period back up if below 0 or down if
	// at or past it.
	phase := func(t, p, inv archsimd.Float64x8) archsimd.Float64x8 {
		rem := t.Sub(t.Mul(inv).TruncScaled(0).Mul(p))
		rem = rem.Add(p).Merge(rem, rem.Less(zero))
		rem = rem.Sub(p).Merge(rem, rem.GreaterEqual(p))
		return twoPi.Mul(rem.Mul(inv))
	}
	r := 0
	for ; r+8 <= n; r += 8 {
		t := archsimd.LoadFloat64x8Slice(ts[r:])
		t.Mul(invYear).Sub(c55).ConvertToFloat32().StoreSlice(x[n+r:])
		phase(t, day, invDay).ConvertToFloat32().StoreSlice(x[2*n+r:])
		phase(t, week, invWeek).ConvertToFloat32().StoreSlice(x[4*n+r:])
	}
	archsimd.ClearAVXUpperBits()
	return r
}
