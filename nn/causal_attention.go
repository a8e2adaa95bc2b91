package nn

import (
	"fmt"

	"romae/tensor"
)

// CausalAttentionForward is AttentionForward with a causal mask, for
// sequence models that must not see the future: row i attends to keys
// j ≤ i only (and never to keys marked in keyPad):
//
//	P = softmax(q kᵀ / sqrt(hd) − ∞·[j > i] − ∞·keyPad),  out = P v
//
// q, k, v, out: [B,H,L,hd] views; prob: [B,H,L,L], kept for the backward
// pass with exact zeros above the diagonal, or nil in evaluation (P then
// lives in a per-core scratch matrix); keyPad: [B·L] (nil: none). A row
// whose allowed keys are all padding gets an all-zero output.
//
// The scores are one full L×L product per (sample, head), half of it
// discarded: the sequences this serves (event histories, L ≈ 50) are short
// enough that a blocked triangular product would not pay for its code.
func CausalAttentionForward[T tensor.Float](out, q, k, v Heads[T], prob []T, keyPad []bool, B, H, L, hd int) {
	checkViews(B, H, L, hd, "out, q, k, v", out, q, k, v)
	LL := L * L
	if prob != nil && len(prob) < B*H*LL {
		panic(fmt.Sprintf("nn: CausalAttentionForward: prob shorter than B·H·L·L = %d", B*H*LL))
	}
	attentionPerHead(out, nil, q, k, v, prob, nil, keyPad, nil, B, H, L, 0, L, hd, causalSoftmax[T])
}

// causalSoftmax replaces each row r0 ≤ r < r1 of sample b's scores p
// (rows ld apart) by the softmax of its first r+1 entries, zeroing the
// rest.
func causalSoftmax[T tensor.Float](p []T, ld int, scale T, keyPad []bool, bias, keep []float32, b, L, r0, r1 int) {
	if _, ok := any(p).([]float32); ok {
		p32 := as32(p)
		for r := r0; r < r1; r++ {
			var bs, ks []float32
			if bias != nil {
				bs, ks = bias[b*L:b*L+r+1], keep[b*L:b*L+r+1]
			}
			tensor.SoftmaxRow32(p32[r*ld:r*ld+r+1], float32(scale), bs, ks)
			clear(p32[r*ld+r+1 : r*ld+L])
		}
		return
	}
	for r := r0; r < r1; r++ {
		var pad []bool
		if keyPad != nil {
			pad = keyPad[b*L : b*L+r+1]
		}
		softmaxRow(p[r*ld:r*ld+r+1], scale, pad)
		clear(p[r*ld+r+1 : r*ld+L])
	}
}

// CausalAttentionBackward, given dOut, overwrites dq, dk, dv ([B,H,L,hd]
// views) for the prob [B,H,L,L] that CausalAttentionForward kept. It is
// AttentionBackward's computation: the softmax gradient P ⊙ (dP − Σ dP⊙P)
// is exactly zero wherever P is, so the masked entries need no special
// case — the forward pass's zeros carry the mask.
func CausalAttentionBackward[T tensor.Float](dq, dk, dv, dOut, q, k, v Heads[T], prob []T, B, H, L, hd int) {
	AttentionBackward(dq, dk, dv, dOut, q, k, v, prob, nil, nil, B, H, L, hd)
}
