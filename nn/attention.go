package nn

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"romae/tensor"
)

// SplitHeadsLD: dst[B,H,L,hd] ← the heads of src[B·L, ld] (rows ld ≥ H·hd
// apart, e.g. one third of a fused q|k|v projection output), so each
// (sample, head) is one contiguous [L,hd] matrix.
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

// MergeHeadsLD is SplitHeadsLD's inverse: dst[B·L, ld] ← src[B,H,L,hd].
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

// Heads is a [B,H,L,hd] view of a tensor stored with any strides:
// element (b, h, l, i) is Data[b·SB + h·SH + l·LD + i]. Attention reads
// and writes through views so q, k, v and the output can live head-major
// ([B,H,L,hd], what RoPE writes) or token-major (rows of a [B·L, ld]
// activation, what the projections read and write) without copies.
type Heads[T tensor.Float] struct {
	Data       []T
	SB, SH, LD int
}

// HeadMajor views a contiguous [B,H,L,hd] tensor.
func HeadMajor[T tensor.Float](data []T, H, L, hd int) Heads[T] {
	return Heads[T]{data, H * L * hd, L * hd, hd}
}

// TokenMajor views the heads inside rows ld apart of a [B·L, ld] tensor
// whose row holds head h at columns h·hd … h·hd+hd−1 (ld ≥ H·hd; ld > H·hd
// for one third of a fused q|k|v output).
func TokenMajor[T tensor.Float](data []T, ld, L, hd int) Heads[T] {
	return Heads[T]{data, L * ld, hd, ld}
}

// at is the [L,hd] matrix (row stride LD) of sample b, head h.
func (v Heads[T]) at(b, h int) []T { return v.Data[b*v.SB+h*v.SH:] }

// check panics unless the view covers B×H×L×hd elements.
func (v Heads[T]) check(what string, B, H, L, hd int) {
	if B == 0 || H == 0 || L == 0 || hd == 0 {
		return
	}
	if v.LD < hd || v.SB < 0 || v.SH < 0 {
		panic(fmt.Sprintf("nn: attention %s: bad view strides SB=%d SH=%d LD=%d for hd=%d", what, v.SB, v.SH, v.LD, hd))
	}
	if need := (B-1)*v.SB + (H-1)*v.SH + (L-1)*v.LD + hd; len(v.Data) < need {
		panic(fmt.Sprintf("nn: attention %s: view has %d elements, needs %d (B=%d H=%d L=%d hd=%d)", what, len(v.Data), need, B, H, L, hd))
	}
}

// AttentionForward computes, for every (sample b, head h),
//
//	P = softmax(q kᵀ / sqrt(hd) − ∞·keyPad),  out = (P ⊙ dropMask) v
//
// q, k, v, out: [B,H,L,hd] views; prob: [B,H,L,L], kept for the backward
// pass, or nil when there is none (evaluation: P then lives in a per-core
// scratch matrix); keyPad: [B·L], true where the key is padding (nil: no
// padding); dropMask: [B,H,L,L] of 0 or 1/keep (nil: no attention
// dropout), and probDrop: [B,H,L,L] receives P ⊙ dropMask when dropMask
// is set. Only keys are masked, like the authors' model: padded queries
// still get an output, which every consumer ignores.
//
// Fused per (sample, head), flash-attention style: the L×L scores are
// computed, normalised and multiplied by v while they sit in the core's
// L2 (160 KB at L = 201), instead of three passes over a [B,H,L,L]
// tensor (15 MB for RoMAE-tiny fine-tuning) that does not fit in cache.
func AttentionForward[T tensor.Float](out, q, k, v Heads[T], prob, probDrop []T, keyPad []bool, dropMask []T, B, H, L, hd int) {
	for _, c := range []struct {
		name string
		v    Heads[T]
	}{{"out", out}, {"q", q}, {"k", k}, {"v", v}} {
		c.v.check(c.name, B, H, L, hd)
	}
	LL := L * L
	if prob != nil && len(prob) < B*H*LL || dropMask != nil && (len(dropMask) < B*H*LL || len(probDrop) < B*H*LL) {
		panic(fmt.Sprintf("nn: AttentionForward: prob/dropMask/probDrop shorter than B·H·L·L = %d", B*H*LL))
	}
	scale := T(1 / math.Sqrt(float64(hd)))
	bias, keep, release := padVectors32[T](keyPad, B*L)
	defer release()
	tensor.ParallelFor(B*H, 1, func(lo, hi int) {
		var scr *[]T
		if prob == nil {
			scr = getWork[T](LL)
			defer putWork(scr)
		}
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			var p []T
			if prob != nil {
				p = prob[bh*LL : (bh+1)*LL]
			} else {
				p = (*scr)[:LL]
			}
			// The 1/sqrt(hd) goes into the softmax, not the product's alpha:
			// the bf16 kernel stores alpha = 1 tiles straight into C.
			tensor.GemmSerial(false, true, L, L, hd, 1, q.at(b, h), q.LD, k.at(b, h), k.LD, 0, p, L)
			softmaxMatrix(p, scale, keyPad, bias, keep, b, L)
			pv := p
			if dropMask != nil {
				pv = probDrop[bh*LL : (bh+1)*LL]
				for i, m := range dropMask[bh*LL : (bh+1)*LL] {
					pv[i] = p[i] * m
				}
			}
			tensor.GemmSerial(false, false, L, hd, L, 1, pv, L, v.at(b, h), v.LD, 0, out.at(b, h), out.LD)
		}
	})
}

// padVectors32 turns the pad flags into the float32 softmax's per-key bias
// (0 or −Inf) and keep (1 or 0) vectors, so its row kernel is branch-free
// and vectorised. nil for float64 (which reads keyPad) or no padding.
func padVectors32[T tensor.Float](keyPad []bool, n int) (bias, keep []float32, release func()) {
	var z T
	if keyPad == nil || unsafe.Sizeof(z) != 4 {
		return nil, nil, func() {}
	}
	buf := getScratch(2 * n)
	bias, keep = (*buf)[:n], (*buf)[n:2*n]
	inf := float32(math.Inf(-1))
	for i, p := range keyPad[:n] {
		if p {
			bias[i], keep[i] = inf, 0
		} else {
			bias[i], keep[i] = 0, 1
		}
	}
	return bias, keep, func() { putScratch(buf) }
}

// softmaxMatrix replaces the L rows of sample b's scores p [L,L] by
// softmax(scale·p) in place: the vectorised float32 kernel, or the float64
// reference.
func softmaxMatrix[T tensor.Float](p []T, scale T, keyPad []bool, bias, keep []float32, b, L int) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		p32 := as32(p)
		var bs, ks []float32
		if bias != nil {
			bs, ks = bias[b*L:(b+1)*L], keep[b*L:(b+1)*L]
		}
		for r := range L {
			tensor.SoftmaxRow32(p32[r*L:(r+1)*L], float32(scale), bs, ks)
		}
		return
	}
	var pad []bool
	if keyPad != nil {
		pad = keyPad[b*L : (b+1)*L]
	}
	for r := range L {
		softmaxRow(p[r*L:(r+1)*L], scale, pad)
	}
}

// getWork returns a pooled scratch slice of n T (float32 or float64
// underneath); putWork returns it.
func getWork[T tensor.Float](n int) *[]T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return (*[]T)(unsafe.Pointer(getScratch(n)))
	}
	p := scratch64.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return (*[]T)(unsafe.Pointer(p))
}

func putWork[T tensor.Float](p *[]T) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		putScratch((*[]float32)(unsafe.Pointer(p)))
		return
	}
	scratch64.Put((*[]float64)(unsafe.Pointer(p)))
}

var scratch64 = sync.Pool{New: func() any { return new([]float64) }}

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

// softmaxRow replaces one row of scores s by softmax(scale·s), giving
// exactly zero probability to padded keys (and an all-zero row if every
// key is padding).
func softmaxRow[T tensor.Float](s []T, scale T, pad []bool) {
	for j := range s {
		s[j] *= scale
	}
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

// AttentionBackward, given dOut, writes dq, dk, dv (all [B,H,L,hd] views,
// overwritten). prob, probDrop and dropMask are what AttentionForward used
// and produced. Fused per (sample, head) like the forward pass: dP and dS
// live in a per-core L×L scratch matrix that stays in L2.
func AttentionBackward[T tensor.Float](dq, dk, dv, dOut, q, k, v Heads[T], prob, probDrop, dropMask []T, B, H, L, hd int) {
	for _, c := range []struct {
		name string
		v    Heads[T]
	}{{"dq", dq}, {"dk", dk}, {"dv", dv}, {"dOut", dOut}, {"q", q}, {"k", k}, {"v", v}} {
		c.v.check(c.name, B, H, L, hd)
	}
	LL := L * L
	if len(prob) < B*H*LL || dropMask != nil && (len(dropMask) < B*H*LL || len(probDrop) < B*H*LL) {
		panic(fmt.Sprintf("nn: AttentionBackward: prob/dropMask/probDrop shorter than B·H·L·L = %d", B*H*LL))
	}
	scale := T(1 / math.Sqrt(float64(hd)))
	tensor.ParallelFor(B*H, 1, func(lo, hi int) {
		scr := getWork[T](LL)
		defer putWork(scr)
		ds := (*scr)[:LL]
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			p := prob[bh*LL : (bh+1)*LL]
			pv := p
			var m []T
			if dropMask != nil {
				pv, m = probDrop[bh*LL:(bh+1)*LL], dropMask[bh*LL:(bh+1)*LL]
			}
			do := dOut.at(b, h)
			// dP' = dOut vᵀ ; dv = P'ᵀ dOut
			tensor.GemmSerial(false, true, L, L, hd, 1, do, dOut.LD, v.at(b, h), v.LD, 0, ds, L)
			tensor.GemmSerial(true, false, L, hd, L, 1, pv, L, do, dOut.LD, 0, dv.at(b, h), dv.LD)
			// Softmax backward row by row: dS = P ⊙ (dP − Σ dP⊙P), with the
			// dropout mask folded into dP and the 1/sqrt(hd) scale into dS.
			softmaxGradMatrix(ds, p, m, scale, L)
			// dq = dS k ; dk = dSᵀ q
			tensor.GemmSerial(false, false, L, hd, L, 1, ds, L, k.at(b, h), k.LD, 0, dq.at(b, h), dq.LD)
			tensor.GemmSerial(true, false, L, hd, L, 1, ds, L, q.at(b, h), q.LD, 0, dk.at(b, h), dk.LD)
		}
	})
}

// softmaxGradMatrix is the softmax backward of the L rows of one [L,L]
// block (mask nil: no dropout): the float32 kernel or the reference.
func softmaxGradMatrix[T tensor.Float](ds, p, mask []T, scale T, L int) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		ds32, p32 := as32(ds), as32(p)
		var m32 []float32
		if mask != nil {
			m32 = as32(mask)
		}
		for r := range L {
			var mr []float32
			if m32 != nil {
				mr = m32[r*L : (r+1)*L]
			}
			tensor.SoftmaxGrad32(ds32[r*L:(r+1)*L], p32[r*L:(r+1)*L], mr, float32(scale))
		}
		return
	}
	softmaxBackward(ds, p, mask, scale, L, L)
}

// as32 reinterprets a []T whose element is float32 underneath.
func as32[T tensor.Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// softmaxBackward is the generic (float64) row-wise softmax backward of
// rows rows of length L.
func softmaxBackward[T tensor.Float](dScores, prob, dropMask []T, scale T, rows, L int) {
	for r := range rows {
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
}
