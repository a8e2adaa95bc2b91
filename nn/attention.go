package nn

import (
	"math"
	"sync"

	"romae/tensor"
)

// SplitHeads: dst[B,H,L,hd] ← src[B,L,H·hd], so each (sample, head) is one
// contiguous [L,hd] matrix and attention becomes uniform-stride batched GEMMs.
func SplitHeads[T tensor.Float](dst, src []T, B, L, H, hd int) {
	d := H * hd
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, l := r/L, r%L
			row := src[r*d : (r+1)*d]
			for h := 0; h < H; h++ {
				copy(dst[((b*H+h)*L+l)*hd:][:hd], row[h*hd:(h+1)*hd])
			}
		}
	})
}

// SplitHeadsLD is SplitHeads from src rows ld apart (ld ≥ H·hd), e.g. one
// third of a fused q|k|v projection output.
func SplitHeadsLD[T tensor.Float](dst, src []T, ld, B, L, H, hd int) {
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, l := r/L, r%L
			for h := 0; h < H; h++ {
				copy(dst[((b*H+h)*L+l)*hd:][:hd], src[r*ld+h*hd:][:hd])
			}
		}
	})
}

// MergeHeadsLD is MergeHeads into dst rows ld apart (ld ≥ H·hd).
func MergeHeadsLD[T tensor.Float](dst, src []T, ld, B, L, H, hd int) {
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, l := r/L, r%L
			for h := 0; h < H; h++ {
				copy(dst[r*ld+h*hd:][:hd], src[((b*H+h)*L+l)*hd:][:hd])
			}
		}
	})
}

// MergeHeads: dst[B,L,H·hd] ← src[B,H,L,hd], the inverse of SplitHeads.
func MergeHeads[T tensor.Float](dst, src []T, B, L, H, hd int) {
	d := H * hd
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, l := r/L, r%L
			row := dst[r*d : (r+1)*d]
			for h := 0; h < H; h++ {
				copy(row[h*hd:(h+1)*hd], src[((b*H+h)*L+l)*hd:][:hd])
			}
		}
	})
}

// AttentionForward computes, for every (sample b, head h),
//
//	P = softmax(q kᵀ / sqrt(hd) − ∞·keyPad),  out = (P ⊙ dropMask) v
//
// q, k, v, out: [B,H,L,hd]; prob: [B,H,L,L], kept for the backward pass;
// keyPad: [B·L], true where the key is padding (nil: no padding);
// dropMask: [B,H,L,L] of 0 or 1/keep (nil: no attention dropout), and
// probDrop: [B,H,L,L] receives P ⊙ dropMask when dropMask is set.
// Only keys are masked, like the authors' model: padded queries still get
// an output, which every consumer ignores.
func AttentionForward[T tensor.Float](out, prob, probDrop, q, k, v []T, keyPad []bool, dropMask []T, B, H, L, hd int) {
	scale := T(1 / math.Sqrt(float64(hd)))
	tensor.GemmBatched(false, true, L, L, hd, scale, q, hd, L*hd, k, hd, L*hd, 0, prob, L, L*L, B*H)
	if p32, ok := any(prob).([]float32); ok {
		softmaxRows32(p32, keyPad, B, H, L)
	} else {
		softmaxRows(prob, keyPad, B, H, L)
	}
	pv := prob
	if dropMask != nil {
		n := B * H * L * L
		tensor.ParallelFor(n, 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				probDrop[i] = prob[i] * dropMask[i]
			}
		})
		pv = probDrop
	}
	tensor.GemmBatched(false, false, L, hd, L, 1, pv, L, L*L, v, hd, L*hd, 0, out, hd, L*hd, B*H)
}

// softmaxRows32 is the float32 row softmax over prob[B,H,L,L]: the pad
// flags become per-key bias (0 or −Inf) and keep (1 or 0) vectors once per
// call, so the row kernel is branch-free and vectorised.
func softmaxRows32(prob []float32, keyPad []bool, B, H, L int) {
	var bias, keep []float32
	if keyPad != nil {
		buf := getScratch(2 * B * L)
		defer putScratch(buf)
		bias, keep = (*buf)[:B*L], (*buf)[B*L:2*B*L]
		inf := float32(math.Inf(-1))
		for i, p := range keyPad[:B*L] {
			if p {
				bias[i], keep[i] = inf, 0
			} else {
				bias[i], keep[i] = 0, 1
			}
		}
	}
	tensor.ParallelFor(B*H*L, 32, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b := r / (H * L)
			var bs, ks []float32
			if bias != nil {
				bs, ks = bias[b*L:(b+1)*L], keep[b*L:(b+1)*L]
			}
			tensor.SoftmaxRow32(prob[r*L:(r+1)*L], 1, bs, ks)
		}
	})
}

var scratch = sync.Pool{New: func() any { return new([]float32) }}

func getScratch(n int) *[]float32 {
	p := scratch.Get().(*[]float32)
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

func putScratch(p *[]float32) { scratch.Put(p) }

// softmaxRows is the generic (float64) row softmax over prob[B,H,L,L].
func softmaxRows[T tensor.Float](prob []T, keyPad []bool, B, H, L int) {
	tensor.ParallelFor(B*H*L, 32, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b := r / (H * L)
			var pad []bool
			if keyPad != nil {
				pad = keyPad[b*L : (b+1)*L]
			}
			softmaxRow(prob[r*L:(r+1)*L], pad)
		}
	})
}

// softmaxRow normalises one row of scores in place, giving exactly zero
// probability to padded keys (and an all-zero row if every key is padding).
func softmaxRow[T tensor.Float](s []T, pad []bool) {
	mx := T(math.Inf(-1))
	for j, v := range s {
		if (pad == nil || !pad[j]) && v > mx {
			mx = v
		}
	}
	if math.IsInf(float64(mx), -1) {
		clear(s)
		return
	}
	var sum T
	for j, v := range s {
		if pad != nil && pad[j] {
			s[j] = 0
			continue
		}
		e := T(math.Exp(float64(v - mx)))
		s[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := range s {
		s[j] *= inv
	}
}

// AttentionBackward, given dOut[B,H,L,hd], writes dq, dk, dv [B,H,L,hd]
// (overwritten). dScores [B,H,L,L] is scratch. prob, probDrop and dropMask
// are what AttentionForward used and produced.
func AttentionBackward[T tensor.Float](dq, dk, dv, dScores, dOut, q, k, v, prob, probDrop, dropMask []T, B, H, L, hd int) {
	scale := T(1 / math.Sqrt(float64(hd)))
	pv := prob
	if dropMask != nil {
		pv = probDrop
	}
	// dP' = dOut vᵀ ; dv = P'ᵀ dOut
	tensor.GemmBatched(false, true, L, L, hd, 1, dOut, hd, L*hd, v, hd, L*hd, 0, dScores, L, L*L, B*H)
	tensor.GemmBatched(true, false, L, hd, L, 1, pv, L, L*L, dOut, hd, L*hd, 0, dv, hd, L*hd, B*H)
	// Softmax backward row by row: dS = P ⊙ (dP − Σ dP⊙P), with the dropout
	// mask folded into dP and the 1/sqrt(hd) scale folded into dS.
	if ds32, ok := any(dScores).([]float32); ok {
		p32, m32 := any(prob).([]float32), any(dropMask).([]float32)
		tensor.ParallelFor(B*H*L, 32, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				var m []float32
				if m32 != nil {
					m = m32[r*L : (r+1)*L]
				}
				tensor.SoftmaxGrad32(ds32[r*L:(r+1)*L], p32[r*L:(r+1)*L], m, float32(scale))
			}
		})
	} else {
		softmaxBackward(dScores, prob, dropMask, scale, B*H*L, L)
	}
	// dq = dS k ; dk = dSᵀ q
	tensor.GemmBatched(false, false, L, hd, L, 1, dScores, L, L*L, k, hd, L*hd, 0, dq, hd, L*hd, B*H)
	tensor.GemmBatched(true, false, L, hd, L, 1, dScores, L, L*L, q, hd, L*hd, 0, dk, hd, L*hd, B*H)
}

// softmaxBackward is the generic (float64) row-wise softmax backward.
func softmaxBackward[T tensor.Float](dScores, prob, dropMask []T, scale T, rows, L int) {
	tensor.ParallelFor(rows, 32, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p := prob[r*L : (r+1)*L]
			ds := dScores[r*L : (r+1)*L]
			if dropMask != nil {
				m := dropMask[r*L : (r+1)*L]
				for j := range ds {
					ds[j] *= m[j]
				}
			}
			var dot T
			for j, pj := range p {
				dot += pj * ds[j]
			}
			for j, pj := range p {
				ds[j] = pj * (ds[j] - dot) * scale
			}
		}
	})
}
