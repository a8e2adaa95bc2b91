package nn

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"unsafe"

	"romae/tensor"
)

// SplitHeadsLD: dst[B,H,L,hd] ← the heads of src[B·L, ld] (rows ld ≥ H·hd
// apart, e.g. one third of a fused q|k|v projection output), so each
// (sample, head) is one contiguous [L,hd] matrix.
func SplitHeadsLD[T tensor.Float](dst, src []T, ld, B, L, H, hd int) {
	tensor.ParallelFor(B*L, 64, func(lo, hi int) {
		SplitHeadsRows(dst, src[lo*ld:], ld, L, H, hd, lo, hi)
	})
}

// SplitHeadsRows is SplitHeadsLD of tokens lo ≤ r < hi alone (r = b·L +
// l), on the calling goroutine: for callers that run a layer a chunk of
// rows at a time on one core. dst is the whole batch's; src holds rows
// lo … hi−1 alone, from its start (a chunk's product output in the
// core's scratch).
func SplitHeadsRows[T tensor.Float](dst, src []T, ld, L, H, hd, lo, hi int) {
	for r := lo; r < hi; r++ {
		b, l := r/L, r%L
		for h := 0; h < H; h++ {
			copy(dst[((b*H+h)*L+l)*hd:][:hd], src[(r-lo)*ld+h*hd:][:hd])
		}
	}
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

// checkViews checks each view (named in order by the comma-separated
// names) with check.
func checkViews[T tensor.Float](B, H, L, hd int, names string, views ...Heads[T]) {
	for i, name := range strings.Split(names, ", ") {
		views[i].check(name, B, H, L, hd)
	}
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
	AttentionForwardRows(out, q, k, v, prob, probDrop, keyPad, dropMask, B, H, L, 0, L, hd)
}

// AttentionForwardRows is AttentionForward for the queries r0 ≤ r < r1 of
// every sample alone: rows r0…r1−1 of out and of each sample and head's
// L×L block of prob and probDrop are written, the other rows are left as
// they were, and every key still takes part. A caller that reads only some
// rows of the output skips the other rows' scores, softmax and products:
// under [CLS] pooling the encoder's last block needs the [CLS] row alone.
func AttentionForwardRows[T tensor.Float](out, q, k, v Heads[T], prob, probDrop []T, keyPad []bool, dropMask []T, B, H, L, r0, r1, hd int) {
	checkViews(B, H, L, hd, "out, q, k, v", out, q, k, v)
	checkRows("AttentionForwardRows", r0, r1, L)
	checkProbs("AttentionForward", prob, probDrop, dropMask, B*H*L*L)
	attentionPerHead(out, nil, q, k, v, prob, probDrop, keyPad, dropMask, B, H, L, r0, r1, hd, softmaxMatrix[T])
}

// AttentionForwardRowsBF16 is AttentionForwardRows with the output stored
// rounded to bf16 in outBF ([B·L, H·hd], token order; resized by the
// caller), as a bf16 product reads it: each head's rows are rounded as
// they leave the core's scratch, and the output projection reads them
// without rounding and packing a float32 copy again (the same bits:
// rounding is the product's own). Only rows r0…r1−1 of each sample are
// written. hd must be even, so no pair of bf16 values spans two heads.
func AttentionForwardRowsBF16(outBF *tensor.BF16Rows, q, k, v Heads[float32], prob, probDrop []float32, keyPad []bool, dropMask []float32, B, H, L, r0, r1, hd int) {
	checkViews(B, H, L, hd, "q, k, v", q, k, v)
	checkRows("AttentionForwardRowsBF16", r0, r1, L)
	if rows, cols := outBF.Shape(); rows < B*L || cols != H*hd || hd%2 != 0 {
		panic(fmt.Sprintf("nn: AttentionForwardRowsBF16: output %d×%d for B·L = %d rows of H·hd = %d·%d", rows, cols, B*L, H, hd))
	}
	checkProbs("AttentionForwardRowsBF16", prob, probDrop, dropMask, B*H*L*L)
	attentionPerHead(Heads[float32]{}, outBF, q, k, v, prob, probDrop, keyPad, dropMask, B, H, L, r0, r1, hd, softmaxMatrix[float32])
}

// checkProbs panics unless prob (when kept) and, with dropout, dropMask
// and probDrop hold n = B·H·L·L values each.
func checkProbs[T tensor.Float](what string, prob, probDrop, dropMask []T, n int) {
	if prob != nil && len(prob) < n || dropMask != nil && (len(dropMask) < n || len(probDrop) < n) {
		panic(fmt.Sprintf("nn: %s: prob/dropMask/probDrop shorter than B·H·L·L = %d", what, n))
	}
}

// checkRows panics unless 0 ≤ r0 < r1 ≤ L: a query row range.
func checkRows(what string, r0, r1, L int) {
	if r0 < 0 || r1 <= r0 || r1 > L {
		panic(fmt.Sprintf("nn: %s: query rows [%d, %d) outside [0, %d)", what, r0, r1, L))
	}
}

// attentionPerHead is the fused driver of AttentionForwardRows(BF16) and
// CausalAttentionForward: per (sample b, head h), in parallel, the scores
// s = q kᵀ of query rows r0…r1−1 into a per-core scratch matrix, normalised
// in place by softmax(s, ld, scale, keyPad, bias, keep, b, L, r0, r1), kept
// in prob when the caller keeps it, then those rows of out = (s ⊙
// dropMask) v, or of outBF when set (out is then unused). The arguments
// are the callers', already checked.
//
// The scratch rows are scoreLD(L) apart, whole cache lines: the products
// store their tiles straight into it, and a row of 201 floats left every
// tile row straddling two lines. It stays in L2 between the two products
// (on an AMX Xeon the bf16 scores product took 25 µs per (sample, head)
// stored as into prob, 18 into one cached matrix of that layout and 15
// into an aligned cached one: tensor's BenchmarkAttentionScores). The
// fine-tuning step's bf16 time fell 7%; fp32's did not move.
func attentionPerHead[T tensor.Float](out Heads[T], outBF *tensor.BF16Rows, q, k, v Heads[T], prob, probDrop []T, keyPad []bool, dropMask []T, B, H, L, r0, r1, hd int,
	softmax func(s []T, ld int, scale T, keyPad []bool, bias, keep []float32, b, L, r0, r1 int)) {
	LL, ld := L*L, scoreLD(L)
	scale := T(1 / math.Sqrt(float64(hd)))
	bias, keep, release := padVectors32[T](keyPad, B*L)
	defer release()
	parts, blk := queryParts(B*H, r1-r0)
	tensor.ParallelFor(B*H*parts, 1, func(lo, hi int) {
		outLD := scoreLD(hd)
		scr := getWork[T](L*ld + L*outLD)
		defer putWork(scr)
		s, o := (*scr)[:L*ld], (*scr)[L*ld:]
		for task := lo; task < hi; task++ {
			bh := task / parts
			b, h := bh/H, bh%H
			r0 := r0 + task%parts*blk // this task's query rows
			r1 := min(r0+blk, r1)
			// The 1/sqrt(hd) goes into the softmax, not the product's alpha:
			// the bf16 kernel stores alpha = 1 tiles straight into C.
			nq, sr := r1-r0, s[r0*ld:]
			tensor.GemmSerial(false, true, nq, L, hd, 1, q.at(b, h)[r0*q.LD:], q.LD, k.at(b, h), k.LD, 0, sr, ld)
			// Row by row, each row's softmax is followed by its copy into
			// prob while it is in L1, and by a row of the next head's q, k
			// and v asked for into L2 (nextHead).
			next := nextHead[T]{}
			if parts == 1 && bh+1 < hi {
				nb, nh := (bh+1)/H, (bh+1)%H
				next.add(q.at(nb, nh)[r0*q.LD:], nq, q.LD, hd)
				next.add(k.at(nb, nh), L, k.LD, hd)
				next.add(v.at(nb, nh), L, v.LD, hd)
			}
			for r := r0; r < r1; r++ {
				softmax(s, ld, scale, keyPad, bias, keep, b, L, r, r+1)
				if prob != nil {
					copy(prob[bh*LL+r*L:][:L], s[r*ld:][:L])
				}
				next.row(r - r0)
			}
			pv, pld := sr, ld
			if dropMask != nil {
				pv, pld = probDrop[bh*LL+r0*L:bh*LL+r1*L], L
				for r := range nq {
					m, d := dropMask[bh*LL+(r0+r)*L:][:L], pv[r*L:(r+1)*L]
					for j, x := range sr[r*ld : r*ld+L] {
						d[j] = x * m[j]
					}
				}
			}
			tensor.GemmSerial(false, false, nq, hd, L, 1, pv, pld, v.at(b, h), v.LD, 0, o, outLD)
			if outBF != nil {
				outBF.StoreCols(b*L+r0, nq, h*hd, hd, as32(o), outLD)
			} else {
				copyRows(out.at(b, h)[r0*out.LD:], out.LD, o, outLD, nq, hd)
			}
		}
	})
}

// queryParts is how attentionPerHead cuts each (sample, head)'s rows
// rows of queries: into parts of blk rows (whole 8-row panels) when there
// are fewer (sample, head) pairs than two per core, so a lone sample's 3
// heads keep both cores of a 2-core machine busy (as 3 tasks, one core
// computed two heads while the other waited); one part otherwise. Each
// query row's scores, softmax and output are computed as in one part.
func queryParts(pairs, rows int) (parts, blk int) {
	w := tensor.Workers()
	if !splitQueries || pairs >= 2*w || rows < 64 {
		return 1, rows
	}
	parts = min((2*w+pairs-1)/pairs, rows/32)
	blk = ((rows+parts-1)/parts + 7) &^ 7
	return (rows + blk - 1) / blk, blk
}

// splitQueries lets attentionPerHead cut a few heads' queries into parts
// (queryParts; false: one task per head), a variable so tests and
// benchmarks can compare both.
var splitQueries = true

// nextHead is the operands of the (sample, head) pair a core computes
// next, asked for into L2 a row of each at a time while it computes the
// current one: the softmax of each of the current head's rows is followed
// by one row of each (tensor.PrefetchRows). Each pair's operands are tens
// of kilobytes the last layer wrote to memory (its probabilities 160 KB),
// and the products read them at the head's start, before the hardware
// prefetchers had caught each stream. Spread over the rows, not issued in
// one burst, the requests do not stall the core on full fill buffers.
// Xeon (AMX class), one core, BenchmarkAttentionForward 12.5 → 11.9 ms
// and BenchmarkAttentionBackward 20.0 → 18.7 ms (4 alternations); in the
// forward the row-by-row order alone gave about half of that.
type nextHead[T tensor.Float] struct {
	runs [7]struct {
		x           []T
		rows, ld, n int
	}
	k int
}

// add is x's rows runs of n values, ld apart.
func (p *nextHead[T]) add(x []T, rows, ld, n int) {
	p.runs[p.k].x, p.runs[p.k].rows, p.runs[p.k].ld, p.runs[p.k].n = x, rows, ld, n
	p.k++
}

// row asks for row i of each operand that has one.
func (p *nextHead[T]) row(i int) {
	for _, r := range p.runs[:p.k] {
		if i < r.rows {
			tensor.PrefetchRows(r.x[i*r.ld:], 1, r.ld, r.n)
		}
	}
}

// copyRows copies rows rows of n values, src rows sld apart, dst rows dld.
// The per-(sample, head) products of attention write their outputs (the
// head's [L, hd] block of out, dq, dk, dv) into an aligned per-core
// scratch and copyRows moves them to the heads' rows, whose 60 floats
// start 240, 720 or 2160 bytes apart: stored there by the AMX tiles, every
// row of a tile straddled two cache lines of a tensor far larger than the
// caches. AMX Xeon, bf16 fine-tuning step 0.525–0.549 → 0.500–0.516 s,
// inference 0.147–0.155 → 0.135–0.152 s, fp32 unchanged (same minutes).
func copyRows[T tensor.Float](dst []T, dld int, src []T, sld, rows, n int) {
	for r := range rows {
		copy(dst[r*dld:r*dld+n], src[r*sld:r*sld+n])
	}
}

// headStore is where the backward's per-head products (dv, dq, dk)
// store: straight into the gradient's rows with fp32 products, into the
// aligned per-core scratch o with bf16 ones, copied from there by done
// (copyRows says why the tiles want it). In fp32 the copy only cost: the
// FMA kernel's row stores keep to their lines, and the copies read back
// and rewrote three 48 KB blocks per (sample, head). AMX Xeon, one core,
// BenchmarkAttentionBackward 20.5 → 18.5 ms (3 alternations); fp32
// fine-tuning step paired 0.96 (5 rounds, every one faster). The forward
// keeps its copy: storing its output straight was within noise there.
type headStore[T tensor.Float] struct {
	direct bool
	o      []T
	ld     int
}

// storeDirect lets newHeadStore choose the direct store (false: always
// through the scratch), a variable so a test can compare both.
var storeDirect = true

func newHeadStore[T tensor.Float](o []T, ld int) headStore[T] {
	return headStore[T]{direct: storeDirect && tensor.Precision() == tensor.PrecisionFP32, o: o, ld: ld}
}

// to is the matrix and row stride the next product stores into, for
// rows of dst dld apart.
func (s headStore[T]) to(dst []T, dld int) ([]T, int) {
	if s.direct {
		return dst, dld
	}
	return s.o, s.ld
}

// done moves rows rows of n values from the scratch to dst when the
// product stored there.
func (s headStore[T]) done(dst []T, dld, rows, n int) {
	if !s.direct {
		copyRows(dst, dld, s.o, s.ld, rows, n)
	}
}

// scoreLD is the row stride of the per-core L×L score matrices: L rounded
// up to whole 64-byte lines of float32.
func scoreLD(L int) int { return (L + 15) &^ 15 }

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

// softmaxMatrix replaces rows r0…r1−1 of sample b's scores p [L,L] by
// softmax(scale·p) in place: the vectorised float32 kernel, or the float64
// reference.
func softmaxMatrix[T tensor.Float](p []T, ld int, scale T, keyPad []bool, bias, keep []float32, b, L, r0, r1 int) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		p32 := as32(p)
		var bs, ks []float32
		if bias != nil {
			bs, ks = bias[b*L:(b+1)*L], keep[b*L:(b+1)*L]
		}
		for r := r0; r < r1; r++ {
			tensor.SoftmaxRow32(p32[r*ld:r*ld+L], float32(scale), bs, ks)
		}
		return
	}
	var pad []bool
	if keyPad != nil {
		pad = keyPad[b*L : (b+1)*L]
	}
	for r := r0; r < r1; r++ {
		softmaxRow(p[r*ld:r*ld+L], scale, pad)
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
	AttentionBackwardRows(dq, dk, dv, dOut, q, k, v, prob, probDrop, dropMask, B, H, L, 0, L, hd, nil)
}

// AttentionBackwardRows is AttentionBackward after AttentionForwardRows
// with query rows r0…r1−1: only those rows of dOut and prob are read, dk
// and dv are whole, and dq is zero outside those rows (the other queries
// fed nothing).
//
// sampleDone, when not nil, takes each sample's dq and dk instead of the
// dq and dk views (pass Heads{} for both): it is called with sample b and
// its gradients dq and dk, each [H, L, hd] head-major, as soon as all its
// heads' gradients are made (dv written to its view), on the goroutine
// that made them, and they live in that core's scratch only until it
// returns. The work the caller does next on a sample's gradients (the
// inverse RoPE into the q|k|v gradient) reads them from cache, and they
// are never written to memory: each [B,H,L,hd] gradient is 4.6 MB for
// RoMAE-tiny fine-tuning, stored by the products and read back by the
// merge. AMX Xeon, bf16 fine-tuning step paired 0.964 (5 rounds, every
// one faster), fp32 within noise. The parallel tasks are then whole
// samples rather than (sample, head) pairs.
func AttentionBackwardRows[T tensor.Float](dq, dk, dv, dOut, q, k, v Heads[T], prob, probDrop, dropMask []T, B, H, L, r0, r1, hd int, sampleDone func(b int, dq, dk []T)) {
	if sampleDone == nil {
		checkViews(B, H, L, hd, "dq, dk", dq, dk)
	} else if dq.Data != nil || dk.Data != nil {
		panic("nn: AttentionBackwardRows: dq and dk views passed with sampleDone, which takes them instead")
	}
	checkViews(B, H, L, hd, "dv, dOut, q, k, v", dv, dOut, q, k, v)
	checkRows("AttentionBackwardRows", r0, r1, L)
	LL := L * L
	if len(prob) < B*H*LL || dropMask != nil && (len(dropMask) < B*H*LL || len(probDrop) < B*H*LL) {
		panic(fmt.Sprintf("nn: AttentionBackward: prob/dropMask/probDrop shorter than B·H·L·L = %d", B*H*LL))
	}
	scale := T(1 / math.Sqrt(float64(hd)))
	perTask := 1 // (sample, head) pairs per task
	if sampleDone != nil {
		perTask = H
	}
	tensor.ParallelFor(B*H/perTask, 1, func(lo, hi int) {
		ld, outLD := scoreLD(L), scoreLD(hd) // as in the forward pass: whole lines per row
		scr := getWork[T](L*ld + L*outLD)
		defer putWork(scr)
		ds, o := (*scr)[:L*ld], (*scr)[L*ld:]
		st := newHeadStore(o, outLD)
		dq, dk := dq, dk
		if sampleDone != nil { // this core's sample of dq and dk, the same for every b
			per := H * L * hd
			sp := getWork[T](2 * per)
			defer putWork(sp)
			dq, dk = Heads[T]{(*sp)[:per], 0, L * hd, hd}, Heads[T]{(*sp)[per : 2*per], 0, L * hd, hd}
		}
		nq, rows := r1-r0, r0*L
		for bh := lo * perTask; bh < hi*perTask; bh++ {
			b, h := bh/H, bh%H
			p := prob[bh*LL+rows : bh*LL+r1*L]
			pv := p
			var m []T
			if dropMask != nil {
				pv, m = probDrop[bh*LL+rows:bh*LL+r1*L], dropMask[bh*LL+rows:bh*LL+r1*L]
			}
			do := dOut.at(b, h)[r0*dOut.LD:]
			// dP' = dOut vᵀ
			tensor.GemmSerial(false, true, nq, L, hd, 1, do, dOut.LD, v.at(b, h), v.LD, 0, ds, ld)
			// Softmax backward row by row: dS = P ⊙ (dP − Σ dP⊙P), with the
			// dropout mask folded into dP and the 1/sqrt(hd) scale into dS.
			//
			// Row by row, with a row of each of the next head's operands
			// asked for into L2 after each (nextHead).
			next := nextHead[T]{}
			if n := bh + 1; n < hi*perTask {
				nb, nh := n/H, n%H
				next.add(prob[n*LL+rows:], nq, L, L)
				if dropMask != nil {
					next.add(probDrop[n*LL+rows:], nq, L, L)
					next.add(dropMask[n*LL+rows:], nq, L, L)
				}
				next.add(dOut.at(nb, nh)[r0*dOut.LD:], nq, dOut.LD, hd)
				next.add(q.at(nb, nh)[r0*q.LD:], nq, q.LD, hd)
				next.add(k.at(nb, nh), L, k.LD, hd)
				next.add(v.at(nb, nh), L, v.LD, hd)
			}
			for r := range nq {
				var mr []T
				if m != nil {
					mr = m[r*L : (r+1)*L]
				}
				softmaxGradMatrix(ds[r*ld:], ld, p[r*L:(r+1)*L], mr, scale, L, 1)
				next.row(r)
			}
			// dv = P'ᵀ dOut, after the softmax backward has streamed P into
			// the cache (P' is P without dropout): the product reads P'ᵀ in
			// place, a cache line per step, which from memory made it run at
			// 60% of its speed on a cached P (Zen 4, batch 32 × 201 tokens).
			dst, dld := st.to(dv.at(b, h), dv.LD)
			tensor.GemmSerial(true, false, L, hd, nq, 1, pv, L, do, dOut.LD, 0, dst, dld)
			st.done(dv.at(b, h), dv.LD, L, hd)
			// dq = dS k ; dk = dSᵀ q
			dqh := dq.at(b, h)
			dst, dld = st.to(dqh[r0*dq.LD:], dq.LD)
			tensor.GemmSerial(false, false, nq, hd, L, 1, ds, ld, k.at(b, h), k.LD, 0, dst, dld)
			st.done(dqh[r0*dq.LD:], dq.LD, nq, hd)
			dst, dld = st.to(dk.at(b, h), dk.LD)
			tensor.GemmSerial(true, false, L, hd, nq, 1, ds, ld, q.at(b, h)[r0*q.LD:], q.LD, 0, dst, dld)
			st.done(dk.at(b, h), dk.LD, L, hd)
			for r := range L {
				if r < r0 || r >= r1 { // not the rows just written
					clear(dqh[r*dq.LD : r*dq.LD+hd])
				}
			}
			if sampleDone != nil && h == H-1 {
				sampleDone(b, dq.Data, dk.Data)
			}
		}
	})
}

// softmaxGradMatrix is the softmax backward of the first rows rows of
// one [L,L] block, in place in ds (rows ld apart; p and mask rows L apart,
// mask nil: no dropout): the float32 kernel or the reference.
func softmaxGradMatrix[T tensor.Float](ds []T, ld int, p, mask []T, scale T, L, rows int) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		ds32, p32 := as32(ds), as32(p)
		var m32 []float32
		if mask != nil {
			m32 = as32(mask)
		}
		for r := range rows {
			var mr []float32
			if m32 != nil {
				mr = m32[r*L : (r+1)*L]
			}
			tensor.SoftmaxGrad32(ds32[r*ld:r*ld+L], p32[r*L:(r+1)*L], mr, float32(scale))
		}
		return
	}
	softmaxBackward(ds, ld, p, mask, scale, rows, L)
}

// as32 reinterprets a []T whose element is float32 underneath.
func as32[T tensor.Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// softmaxBackward is the generic (float64) row-wise softmax backward of
// rows rows of length L.
func softmaxBackward[T tensor.Float](dScores []T, ld int, prob, dropMask []T, scale T, rows, L int) {
	for r := range rows {
		p := prob[r*L : (r+1)*L]
		ds := dScores[r*ld : r*ld+L]
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

// PrefixAttentionForward is AttentionForward with a structured mask: the
// first prefix rows and keys of each sequence (a decoder's visible tokens)
// form a block that sees only itself, and every later row (a query, e.g. a
// [MASK] token) sees the prefix keys and its own key, never another query:
//
//	row i < prefix:  keys [0, prefix)
//	row i ≥ prefix:  keys [0, prefix) ∪ {i}
//
// (keys marked in keyPad are removed from both). So a query's output does
// not depend on which other queries share its sequence, and the prefix
// rows do not depend on the queries at all.
//
// The L×L score matrix is never formed: prob, probDrop and dropMask are
// [B,H,L,prefix+1], column j < prefix being key j and column prefix the
// row's weight on its own key (0 for rows < prefix). The cost is
// O(L·prefix·hd) instead of O(L²·hd).
func PrefixAttentionForward[T tensor.Float](out, q, k, v Heads[T], prob, probDrop []T, keyPad []bool, dropMask []T, B, H, L, prefix, hd int) {
	checkViews(B, H, L, hd, "out, q, k, v", out, q, k, v)
	if prefix < 0 || prefix > L {
		panic(fmt.Sprintf("nn: PrefixAttentionForward: prefix %d outside [0, L = %d]", prefix, L))
	}
	P, W := prefix, prefix+1
	LW := L * W
	if prob != nil && len(prob) < B*H*LW || dropMask != nil && (len(dropMask) < B*H*LW || len(probDrop) < B*H*LW) {
		panic(fmt.Sprintf("nn: PrefixAttentionForward: prob/dropMask/probDrop shorter than B·H·L·(prefix+1) = %d", B*H*LW))
	}
	scale := T(1 / math.Sqrt(float64(hd)))
	bias, keep, release := padVectors32[T](keyPad, B*L)
	defer release()
	tensor.ParallelFor(B*H, 1, func(lo, hi int) {
		var scr *[]T
		if prob == nil {
			scr = getWork[T](LW)
			defer putWork(scr)
		}
		rows := newPrefixRows[T](W, keyPad != nil)
		defer rows.release()
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			var p []T
			if prob != nil {
				p = prob[bh*LW : (bh+1)*LW]
			} else {
				p = (*scr)[:LW]
			}
			qa, ka, va, o := q.at(b, h), k.at(b, h), v.at(b, h), out.at(b, h)
			// Scores against the prefix keys, then each query's own key.
			tensor.GemmSerial(false, true, L, P, hd, 1, qa, q.LD, ka, k.LD, 0, p, W)
			for i := P; i < L; i++ {
				p[i*W+P] = dotT(qa[i*q.LD:][:hd], ka[i*k.LD:][:hd])
			}
			prefixSoftmax(rows, p, scale, keyPad, bias, keep, b, L, P)
			pv := p
			if dropMask != nil {
				pv = probDrop[bh*LW : (bh+1)*LW]
				for i, m := range dropMask[bh*LW : (bh+1)*LW] {
					pv[i] = p[i] * m
				}
			}
			tensor.GemmSerial(false, false, L, hd, P, 1, pv, W, va, v.LD, 0, o, out.LD)
			for i := P; i < L; i++ {
				axpyT(o[i*out.LD:][:hd], va[i*v.LD:][:hd], pv[i*W+P])
			}
		}
	})
}

// PrefixAttentionBackward is PrefixAttentionForward's backward pass: given
// dOut it overwrites dq, dk, dv. prob, probDrop and dropMask are what the
// forward pass used and produced ([B,H,L,prefix+1]).
func PrefixAttentionBackward[T tensor.Float](dq, dk, dv, dOut, q, k, v Heads[T], prob, probDrop, dropMask []T, B, H, L, prefix, hd int) {
	checkViews(B, H, L, hd, "dq, dk, dv, dOut, q, k, v", dq, dk, dv, dOut, q, k, v)
	if prefix < 0 || prefix > L {
		panic(fmt.Sprintf("nn: PrefixAttentionBackward: prefix %d outside [0, L = %d]", prefix, L))
	}
	P, W := prefix, prefix+1
	LW := L * W
	if len(prob) < B*H*LW || dropMask != nil && (len(dropMask) < B*H*LW || len(probDrop) < B*H*LW) {
		panic(fmt.Sprintf("nn: PrefixAttentionBackward: prob/dropMask/probDrop shorter than B·H·L·(prefix+1) = %d", B*H*LW))
	}
	scale := T(1 / math.Sqrt(float64(hd)))
	tensor.ParallelFor(B*H, 1, func(lo, hi int) {
		scr := getWork[T](LW)
		defer putWork(scr)
		ds := (*scr)[:LW]
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			p := prob[bh*LW : (bh+1)*LW]
			pv := p
			var m []T
			if dropMask != nil {
				pv, m = probDrop[bh*LW:(bh+1)*LW], dropMask[bh*LW:(bh+1)*LW]
			}
			do, qa, ka, va := dOut.at(b, h), q.at(b, h), k.at(b, h), v.at(b, h)
			dqa, dka, dva := dq.at(b, h), dk.at(b, h), dv.at(b, h)
			// dP' = dOut vᵀ on the columns that exist.
			tensor.GemmSerial(false, true, L, P, hd, 1, do, dOut.LD, va, v.LD, 0, ds, W)
			for i := 0; i < P; i++ {
				ds[i*W+P] = 0
			}
			for i := P; i < L; i++ {
				ds[i*W+P] = dotT(do[i*dOut.LD:][:hd], va[i*v.LD:][:hd])
			}
			// Softmax backward over each row's own columns.
			for r := 0; r < L; r++ {
				n := P
				if r >= P {
					n = W
				}
				var mr []T
				if m != nil {
					mr = m[r*W : r*W+n]
				}
				softmaxGradRowT(ds[r*W:r*W+n], p[r*W:r*W+n], mr, scale)
			}
			// dv = P'ᵀ dOut, where a query's own value row receives only its
			// own weight; after the softmax backward, as in AttentionBackward.
			tensor.GemmSerial(true, false, P, hd, L, 1, pv, W, do, dOut.LD, 0, dva, dv.LD)
			for i := P; i < L; i++ {
				scaleT(dva[i*dv.LD:][:hd], do[i*dOut.LD:][:hd], pv[i*W+P])
			}
			// dq = dS k ; dk = dSᵀ q, the self column handled row by row.
			tensor.GemmSerial(false, false, L, hd, P, 1, ds, W, ka, k.LD, 0, dqa, dq.LD)
			tensor.GemmSerial(true, false, P, hd, L, 1, ds, W, qa, q.LD, 0, dka, dk.LD)
			for i := P; i < L; i++ {
				g := ds[i*W+P]
				axpyT(dqa[i*dq.LD:][:hd], ka[i*k.LD:][:hd], g)
				scaleT(dka[i*dk.LD:][:hd], qa[i*q.LD:][:hd], g)
			}
		}
	})
}

// prefixRows is one core's per-row key-pad scratch for the prefix softmax:
// the prefix keys' bias/keep (float32) or pad flags (float64), with the
// row's own key in the last slot.
type prefixRows struct {
	buf      *[]float32
	bias, kp []float32
	pad      []bool
}

func newPrefixRows[T tensor.Float](W int, keyPad bool) prefixRows {
	r := prefixRows{}
	var z T
	switch {
	case !keyPad:
	case unsafe.Sizeof(z) == 4:
		r.buf = getScratch(2 * W)
		r.bias, r.kp = (*r.buf)[:W], (*r.buf)[W:2*W]
	default: // the float64 reference path (gradient checks)
		r.pad = make([]bool, W)
	}
	return r
}

func (r prefixRows) release() {
	if r.buf != nil {
		putScratch(r.buf)
	}
}

// prefixSoftmax normalises sample b's [L, P+1] scores p in place: rows < P
// over their P prefix columns (the self column set to 0), later rows over
// all P+1 columns.
func prefixSoftmax[T tensor.Float](r prefixRows, p []T, scale T, keyPad []bool, bias, keep []float32, b, L, P int) {
	W := P + 1
	var z T
	if unsafe.Sizeof(z) == 4 {
		p32, sc := as32(p), float32(scale)
		var bs, ks []float32
		if bias != nil {
			bs, ks = bias[b*L:b*L+P], keep[b*L:b*L+P]
			copy(r.bias, bs)
			copy(r.kp, ks)
		}
		for i := 0; i < P; i++ {
			tensor.SoftmaxRow32(p32[i*W:i*W+P], sc, bs, ks)
			p32[i*W+P] = 0
		}
		for i := P; i < L; i++ {
			var rb, rk []float32
			if bias != nil {
				r.bias[P], r.kp[P] = bias[b*L+i], keep[b*L+i]
				rb, rk = r.bias, r.kp
			}
			tensor.SoftmaxRow32(p32[i*W:(i+1)*W], sc, rb, rk)
		}
		return
	}
	var pad []bool
	if keyPad != nil {
		pad = keyPad[b*L : b*L+P]
		copy(r.pad, pad)
	}
	for i := 0; i < P; i++ {
		softmaxRow(p[i*W:i*W+P], scale, pad)
		p[i*W+P] = 0
	}
	for i := P; i < L; i++ {
		var rp []bool
		if keyPad != nil {
			r.pad[P] = keyPad[b*L+i]
			rp = r.pad
		}
		softmaxRow(p[i*W:(i+1)*W], scale, rp)
	}
}

// dotT is Σ a·b.
func dotT[T tensor.Float](a, b []T) T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return T(tensor.Dot32(as32(a), as32(b)))
	}
	var s T
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// axpyT is dst += s·x.
func axpyT[T tensor.Float](dst, x []T, s T) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		d32 := as32(dst)
		tensor.AddScaled32(d32, d32, as32(x), float32(s))
		return
	}
	for i, v := range x {
		dst[i] += s * v
	}
}

// scaleT is dst = s·x.
func scaleT[T tensor.Float](dst, x []T, s T) {
	for i, v := range x[:len(dst)] {
		dst[i] = s * v
	}
}

// softmaxGradRowT is the softmax backward of one row (mask nil: no dropout).
func softmaxGradRowT[T tensor.Float](ds, p, mask []T, scale T) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		var m32 []float32
		if mask != nil {
			m32 = as32(mask)
		}
		tensor.SoftmaxGrad32(as32(ds), as32(p), m32, float32(scale))
		return
	}
	softmaxBackward(ds, len(ds), p, mask, scale, 1, len(ds))
}
