package model

import (
	"math/rand/v2"
	"sync"
	"unsafe"

	"romae/internal/bufs"
	"romae/nn"
	"romae/rope"
	"romae/tensor"
)

// stack is a Transformer encoder (the decoder is one too): depth pre-norm
// blocks, x = x + DropPath(Attn(RMSNorm(x))); x = x + DropPath(MLP(RMSNorm(x))),
// with p-RoPE applied to q and k inside every attention. No final norm.
type stack[T tensor.Float] struct {
	Size
	hd     int
	eps    float64
	blocks []block[T]
	rope   rope.Layout // HeadDim 0 when positions enter as absolute embeddings

	attnDrop, hiddenDrop, dropPath float64

	// packed, when set (Model.PackWeights), holds every block's weights
	// packed once; forward passes that do not train read them.
	packed []packedBlock[T]
}

// packedBlock is one block's weights packed for inference: q|k|v fused
// [3d, d], the output projection and the two MLP layers.
type packedBlock[T tensor.Float] struct {
	qkv, wo, w1, w2 *tensor.PackedWeight[T]
}

// pack fills s.packed from the weights as they are now.
func (s *stack[T]) pack() {
	d, f := s.DModel, s.FFN
	s.packed = make([]packedBlock[T], len(s.blocks))
	for i := range s.blocks {
		blk := &s.blocks[i]
		s.packed[i] = packedBlock[T]{
			qkv: tensor.PackWeight(qkvWeights(blk, false), 3*d, d),
			wo:  tensor.PackWeight(blk.wo.w.W, d, d),
			w1:  tensor.PackWeight(blk.w1.w.W, f, d),
			w2:  tensor.PackWeight(blk.w2.w.W, d, f),
		}
	}
}

// linearForward is nn.LinearForward without bias, on the packed copy of
// the weight when there is one (pw non-nil).
func linearForward[T tensor.Float](pw *tensor.PackedWeight[T], out, in, w []T, n, i, o int) {
	if pw != nil {
		nn.LinearForwardPacked(out, in, pw, n)
		return
	}
	nn.LinearForward(out, in, w, nil, n, i, o)
}

// producerRounding lets the layers feeding a bf16 product store their
// output in bf16 for it (bf16Operand); tests turn it off to compare.
var producerRounding = true

// keepBF16Acts lets a bf16 training pass keep its product inputs
// (RMSNorm's outputs, SiLU's, attention's) in bf16 only (stackActs.keepBF,
// mergeBF); tests turn it off to compare.
var keepBF16Acts = true

// keepsBF16 is whether a float32 pass (train: training) with hidden-layer
// dropout rate hidden keeps the products' inputs RMSNorm(x), RMSNorm(h)
// and SiLU's output in bf16 only, with products on a bf16 kernel
// (stackActs.keepBF).
func keepsBF16(train bool, hidden float64) bool {
	return train && keepBF16Acts && hidden == 0 && producerRounding && tensor.BF16Operands()
}

// mergesBF16 is whether a float32 pass (train: training, with hidden-layer
// dropout rate hidden) over a stack with attention pattern prefix (−1:
// full) and heads hd wide has attention store its output in bf16 only
// (stackActs.mergeBF), with products on a bf16 kernel: evaluation passes,
// and training passes that keep their other product inputs so
// (keepsBF16); not under the prefix pattern (its own driver), nor with
// odd heads (a bf16 pair would span two heads, written by two cores).
func mergesBF16(train bool, hidden float64, prefix, hd int) bool {
	if prefix >= 0 || hd%2 != 0 || !producerRounding || !tensor.BF16Operands() {
		return false
	}
	return !train || keepsBF16(train, hidden)
}

// bf16Operand is the scratch in which a layer stores its output rounded
// to bf16 for the product that reads it next (tensor.BF16Rows), so the
// product does not round and pack it again; nil where products do not
// run on a bf16 kernel (or the model is float64).
func (a *stackActs[T]) bf16Operand() *tensor.BF16Rows {
	var z T
	if _, ok := any(z).(float32); !ok || !producerRounding || !tensor.BF16Operands() {
		return nil
	}
	return &a.opBF
}

// normLinear is out = RMSNorm(in)·wᵀ (no bias, w packed in pw when set),
// keeping norm and rstd for the backward pass. With bf16 products the
// norm is stored in bf16 as it is computed (bf16Operand), and in float32
// only when training, and the product reads the bf16 copy: the same
// result to the bit, without rounding and packing norm again. keep, when
// set (keepBF), is where a training pass keeps norm for the backward pass,
// in bf16 only: it is the product's operand, and norm is not written.
func (a *stackActs[T]) normLinear(pw *tensor.PackedWeight[T], out, norm, rstd, in, g, w []T, n, d, o int, eps float64, keep *tensor.BF16Rows) {
	bf := a.bf16Operand()
	if bf == nil {
		nn.RMSNormForward(norm, rstd, in, g, n, d, eps)
		linearForward(pw, out, norm, w, n, d, o)
		return
	}
	kept := a.kept(norm)
	if keep != nil {
		bf, kept = keep, nil
	}
	nn.RMSNormForwardBF16(bf, kept, f32(rstd), f32(in), f32(g), n, d, eps)
	nn.LinearForwardBF16(f32(out), bf, f32(w), packed32(pw), o)
}

// siluLinear is out = Dropout(SiLU(pre))·wᵀ (mask empty: no dropout),
// keeping act for the backward pass; without dropout, act goes to the
// product in bf16 as normLinear's norm does, and keep is as normLinear's.
func (a *stackActs[T]) siluLinear(pw *tensor.PackedWeight[T], out, act, pre, mask, w []T, n, f, o int, keep *tensor.BF16Rows) {
	if bf := a.bf16Operand(); bf != nil && len(mask) == 0 {
		kept := a.kept(act)
		if keep != nil {
			bf, kept = keep, nil
		}
		nn.SiLUForwardBF16(bf, kept, f32(pre), n, f)
		nn.LinearForwardBF16(f32(out), bf, f32(w), packed32(pw), o)
		return
	}
	nn.SiLUForward(act, pre, n*f)
	if len(mask) > 0 {
		nn.DropoutForward(act[:n*f], act, mask)
	}
	linearForward(pw, out, act, w, n, f, o)
}

// kept is x as float32 when training (the backward pass reads it), nil
// otherwise: a layer that also stores its output in bf16 for the next
// product then writes no float32 copy.
func (a *stackActs[T]) kept(x []T) []float32 {
	if !a.train {
		return nil
	}
	return f32(x)
}

// f32 and packed32 are a float32 model's buffers and packed weights as
// what they are (only called where T is float32); heads32 likewise.
func f32[T tensor.Float](x []T) []float32 { return any(x).([]float32) }

func heads32[T tensor.Float](h nn.Heads[T]) nn.Heads[float32] {
	return nn.Heads[float32]{Data: f32(h.Data), SB: h.SB, SH: h.SH, LD: h.LD}
}

func packed32[T tensor.Float](pw *tensor.PackedWeight[T]) *tensor.PackedWeight[float32] {
	p, _ := any(pw).(*tensor.PackedWeight[float32])
	return p
}

// layerActs are one block's saved activations. Shapes with N = B·L rows:
// d-wide [N,d]; q, k, v [B,H,L,hd] (v only in training: evaluation reads
// it in place); pre, act [N,ffn]; prob [B,H,L,L], or [B,H,L,prefix+1] under the prefix pattern (training only); rstd
// [N]; drop-path scales [B].
type layerActs[T tensor.Float] struct {
	norm1, rstd1, q, k, v, merged     []T
	h, norm2, rstd2, pre, act         []T
	prob, probDrop, attnMask, hidMask []T
	dp1, dp2                          []T
	// norm1BF, norm2BF and actBF replace norm1, norm2 and act when the
	// pass keeps them in bf16 (keepBF): [N, d], [rows, d] and [rows, ffn];
	// mergedBF replaces merged when attention stores it in bf16 (mergeBF):
	// [N, d].
	norm1BF, norm2BF, actBF, mergedBF tensor.BF16Rows
}

// keptBF is bf when the pass keeps the products' inputs in bf16
// (keepBF), else nil.
func (a *stackActs[T]) keptBF(bf *tensor.BF16Rows) *tensor.BF16Rows {
	if !a.keepBF {
		return nil
	}
	return bf
}

// mergedBF is l's attention output in bf16 when attention stores it so
// (mergeBF), else nil.
func (a *stackActs[T]) mergedBF(l *layerActs[T]) *tensor.BF16Rows {
	if !a.mergeBF {
		return nil
	}
	return &l.mergedBF
}

// linearBackward is a layer's backward pass without a bias
// (nn.LinearBackward: dIn overwritten, dW added to) on its input in, or
// on inBF when set: the input kept in bf16 only (keptBF, mergedBF).
func (a *stackActs[T]) linearBackward(dIn, dW, dOut, in []T, inBF *tensor.BF16Rows, w []T, n, i, o int) {
	if inBF != nil {
		nn.LinearBackwardBF16(f32(dIn), f32(dW), f32(dOut), inBF, f32(w), n, i, o)
		return
	}
	nn.LinearBackward(dIn, dW, nil, dOut, in, w, n, i, o, false)
}

// stackActs holds everything a stack's forward pass keeps for its backward
// pass, for one (B, L). res[l] is the residual stream entering block l;
// res[0] is the caller's input and res[depth] the output. The d-wide and
// ffn-wide scratch buffers are shared by all blocks.
//
// An evaluation-mode forward pass (train false) keeps nothing for a
// backward pass: every block reuses layers[0] and updates the residual
// stream in place in res[depth] (a block reads its input only before it
// writes its output). Inference then touches one block's
// activations instead of depth blocks' (12× less memory for RoMAE-tiny,
// and what it touches stays warmer in cache).
type stackActs[T tensor.Float] struct {
	B, L  int
	train bool
	// keepBF: a training pass whose products round their operands to
	// bf16 keeps three product inputs, RMSNorm(x) (q|k|v's), RMSNorm(h)
	// and SiLU's output (the MLP's), in bf16 only (layerActs.norm1BF,
	// norm2BF, actBF): the backward pass reads them only as the weight
	// gradients' operand, which the bf16 products would round to the same
	// bits (nn.LinearBackwardBF16); RMSNorm's own backward reads its
	// input and rstd. Half the bytes written by the forward pass and read
	// by the backward (4.6 + 4.6 + 18.5 MB a block in float32 for
	// RoMAE-tiny fine-tuning), and no rounding and packing of float32
	// rows read back from memory.
	// Set by resize; not with hidden-layer dropout (the float32 path
	// drops act in place).
	keepBF bool
	// mergeBF: attention stores its output in bf16 only
	// (layerActs.mergedBF), rounded as each head's rows leave the core's
	// scratch, where the output projection reads it and, in training, its
	// weight gradient (mergesBF16 says when). The projection rounded a
	// float32 copy again; the same bits.
	mergeBF bool
	// prefix, when ≥ 0, switches attention to nn.PrefixAttentionForward:
	// rows from prefix on (a decoder's queries) see the first prefix keys
	// and their own key only, and the first prefix rows see only each
	// other. −1: every row sees every non-pad key. Set by resize.
	prefix int
	res    [][]T
	// outRows, when set (hi > 0): the caller reads only rows lo ≤ r < hi
	// of each sample of the output — the [CLS] row (0, 1) of a pooled
	// classifier or regressor, the [MASK] rows (Le, Le+Lq) of the
	// pre-training decoder — so the last block runs its output projection
	// and MLP on those rows alone (its attention still reads every key);
	// the other output rows are left undefined. For [CLS] pooling this
	// skips ~85% of the last block's work.
	outRows rowRange
	// The last block's selected rows when outRows is set, [B·S, d] with S
	// = hi − lo, grown on first use.
	selX, selMerged, selOut, selDx, selDMerged []T
	layers                                     []layerActs[T]
	rot                                        *rope.Table[T]          // nil: no rotation (absolute positions)
	rotGroup                                   rope.Table[T]           // rot's rows of qkvRoPE's current group
	qkvPacked                                  *tensor.PackedWeight[T] // training: this pass's q|k|v weight (packQKV)
	tailPack                                   packedBlock[T]          // training: the current block's wo, w1, w2 (tailPacked)
	// dAngles [B·L, D·R], when set, accumulates dLoss/d(rotation angle)
	// over all blocks: learned-angle modes (SIREN-RoPE) back-propagate it
	// into the network that produced the angles.
	dAngles []T

	lin, dx, dBranch, dNorm, dMerged []T
	lin3, dLin3                      []T // [N, 3d]: fused q|k|v projection
	dq, dk                           []T
	dAct                             []T // dLoss/d(SiLU's output), then in place dLoss/d(its input)
	// opBF is the next product's op(A) rounded to bf16 by the layer that
	// computes it (bf16Operand): norm1, norm2 or act, each read by one
	// product right after it is made.
	opBF tensor.BF16Rows
}

// resize (re)slices every buffer for a batch of B sequences of L tokens,
// allocating only when the batch is larger than any seen before. prefix is
// stackActs.prefix (−1: full attention).
func (a *stackActs[T]) resize(s *stack[T], B, L, prefix int, train bool) {
	a.B, a.L, a.train, a.prefix = B, L, train, prefix
	a.keepBF = a.bf16Operand() != nil && keepsBF16(train, s.hiddenDrop)
	a.mergeBF = a.bf16Operand() != nil && mergesBF16(train, s.hiddenDrop, prefix, s.hd)
	N, d, f, H := B*L, s.DModel, s.FFN, s.Heads
	nd, nf, nll := N*d, N*f, B*H*L*a.probCols()
	if len(a.res) != s.Depth+1 {
		a.res = make([][]T, s.Depth+1)
		a.layers = make([]layerActs[T], s.Depth)
	}
	for i := range a.res {
		if train || i == 0 || i == s.Depth {
			a.res[i] = bufs.Resize(a.res[i], nd)
		}
	}
	for i := range a.layers {
		if !train && i > 0 {
			break
		}
		l := &a.layers[i]
		for _, p := range []*[]T{&l.q, &l.k, &l.h} {
			*p = bufs.Resize(*p, nd)
		}
		l.norm1, l.norm2 = growIf(l.norm1, nd, !a.keepBF), growIf(l.norm2, nd, !a.keepBF)
		l.merged = growIf(l.merged, nd, !a.mergeBF)
		if a.mergeBF {
			l.mergedBF.Resize(N, d)
		}
		l.v = growIf(l.v, nd, train)
		l.rstd1, l.rstd2 = bufs.Resize(l.rstd1, N), bufs.Resize(l.rstd2, N)
		l.pre, l.act = bufs.Resize(l.pre, nf), growIf(l.act, nf, !a.keepBF)
		if a.keepBF { // sized for every row, as norm2 and act are (the last block may use fewer)
			l.norm1BF.Resize(N, d)
			l.norm2BF.Resize(N, d)
			l.actBF.Resize(N, f)
		}
		l.prob = growIf(l.prob, nll, train)
		// Regularisation buffers are empty (len 0) when not training or
		// when their rate is 0; layer 0 never drops its path.
		attn, hid := train && s.attnDrop > 0, train && s.hiddenDrop > 0
		dp := train && s.dropPath > 0 && i > 0
		l.probDrop, l.attnMask = growIf(l.probDrop, nll, attn), growIf(l.attnMask, nll, attn)
		l.hidMask = growIf(l.hidMask, nf, hid)
		l.dp1, l.dp2 = growIf(l.dp1, B, dp), growIf(l.dp2, B, dp)
	}
	a.lin, a.lin3 = bufs.Resize(a.lin, nd), bufs.Resize(a.lin3, 3*nd)
	if !train {
		return
	}
	for _, p := range []*[]T{&a.dx, &a.dBranch, &a.dNorm, &a.dMerged, &a.dq, &a.dk} {
		*p = bufs.Resize(*p, nd)
	}
	a.dLin3 = bufs.Resize(a.dLin3, 3*nd)
	a.dAct = bufs.Resize(a.dAct, nf)
}

// probCols is the width of one row of the kept attention probabilities:
// L, or prefix+1 under the prefix pattern.
func (a *stackActs[T]) probCols() int {
	if a.prefix >= 0 {
		return a.prefix + 1
	}
	return a.L
}

// block returns block i's activations and the residual stream it writes:
// its own in training, shared ones in evaluation mode (see stackActs).
func (a *stackActs[T]) block(i int) (*layerActs[T], []T) {
	if a.train {
		return &a.layers[i], a.res[i+1]
	}
	return &a.layers[0], a.output()
}

// forward runs the stack on a.res[0] (filled by the caller) with keyPad
// [B·L] marking padded keys. rng draws dropout and stochastic depth; it is
// only used when the activations were sized for training.
func (s *stack[T]) forward(a *stackActs[T], keyPad []bool, rng rand.Source) {
	B, L, d, f, H, hd := a.B, a.L, s.DModel, s.FFN, s.Heads, s.hd
	N := B * L
	x := a.res[0]
	for i := range s.blocks {
		blk := &s.blocks[i]
		var pk packedBlock[T] // all nil: the weights as stored
		if !a.train && s.packed != nil {
			pk = s.packed[i]
		}
		l, out := a.block(i)
		if len(l.attnMask) > 0 {
			nn.DropoutMask(l.attnMask, s.attnDrop, rng)
		}
		if len(l.hidMask) > 0 {
			nn.DropoutMask(l.hidMask, s.hiddenDrop, rng)
		}
		if len(l.dp1) > 0 {
			rate := s.dropPath * float64(i) / float64(s.Depth-1)
			nn.DropPathScales(l.dp1, rate, rng)
			nn.DropPathScales(l.dp2, rate, rng)
		}

		// Attention branch.
		// One [N,d]×[d,3d] product for q|k|v: norm1 is read once and the
		// kernel runs 540 columns wide instead of 3×180.
		if a.rot != nil {
			// RoPE fused into the head split, a few samples at a time
			// after their q|k|v rows (qkvRoPE).
			pw := pk.qkv
			if a.train && qkvGroupRows > 0 {
				pw = a.packQKV(blk, d)
			}
			a.qkvRoPE(pw, l, x, blk, s, qkvSamples(pw, B, L))
		} else {
			a.normLinear(pk.qkv, a.lin3, l.norm1, l.rstd1, x, blk.attnNorm.W, qkvWeights(blk, false), N, d, 3*d, s.eps, a.keptBF(&l.norm1BF))
			nn.SplitHeadsLD(l.q, a.lin3, 3*d, B, L, H, hd)
			nn.SplitHeadsLD(l.k, a.lin3[d:], 3*d, B, L, H, hd)
		}
		if a.train && a.rot == nil {
			nn.SplitHeadsLD(l.v, a.lin3[2*d:], 3*d, B, L, H, hd) // lin3 is reused by the next block
		}
		// Attention writes its output straight into token order. Where the
		// block's row-wise part runs on selected rows (outRows), only those
		// queries are attended: the other rows of the output are never read.
		sel := a.selected(i, len(s.blocks))
		q0, q1 := a.queryRows(sel)
		v, prob := nn.HeadMajor(l.v, H, L, hd), l.prob
		if !a.train {
			prob = nil                                  // no backward pass: P stays in per-core scratch
			v = nn.TokenMajor(a.lin3[2*d:], 3*d, L, hd) // read in place, no copy
		}
		if a.prefix >= 0 {
			nn.PrefixAttentionForward(nn.TokenMajor(l.merged, d, L, hd), nn.HeadMajor(l.q, H, L, hd), nn.HeadMajor(l.k, H, L, hd), v,
				prob, l.probDrop, keyPad, nilIfEmpty(l.attnMask), B, H, L, a.prefix, hd)
		} else if a.mergeBF {
			nn.AttentionForwardRowsBF16(&l.mergedBF, heads32(nn.HeadMajor(l.q, H, L, hd)), heads32(nn.HeadMajor(l.k, H, L, hd)), heads32(v),
				f32(prob), f32(l.probDrop), keyPad, f32(nilIfEmpty(l.attnMask)), B, H, L, q0, q1, hd)
		} else {
			nn.AttentionForwardRows(nn.TokenMajor(l.merged, d, L, hd), nn.HeadMajor(l.q, H, L, hd), nn.HeadMajor(l.k, H, L, hd), v,
				prob, l.probDrop, keyPad, nilIfEmpty(l.attnMask), B, H, L, q0, q1, hd)
		}

		// From the output projection on, a block works row by row: on
		// every row, or on the selected rows alone (see outRows).
		rows, xr, merged, outr := N, x, l.merged, out
		var mergedBF *tensor.BF16Rows // the attention output in bf16 (mergeBF), when read whole
		if sel {
			rows = B * a.outRows.len()
			for _, p := range []*[]T{&a.selX, &a.selMerged, &a.selOut} {
				*p = bufs.Resize(*p, rows*d)
			}
			gatherRows(a.outRows, a.selX, x, B, L, d)
			if a.mergeBF { // widened: the product rounds the values to themselves
				S := a.outRows.len()
				for b := range B {
					l.mergedBF.Widen(f32(a.selMerged)[b*S*d:], b*L+a.outRows.lo, S)
				}
			} else {
				gatherRows(a.outRows, a.selMerged, l.merged, B, L, d)
			}
			xr, merged, outr = a.selX, a.selMerged, a.selOut
		} else {
			mergedBF = a.mergedBF(l)
		}
		if tk := a.tailPacked(pk, blk, d, f); tk != nil {
			tail := rowTail{pk: packed32Block(*tk), out: f32(outr), x: f32(xr), merged: f32(merged), mergedBF: mergedBF, g: f32(blk.ffnNorm.W),
				rows: rows, perSample: rows / B, d: d, f: f, eps: s.eps}
			if a.train {
				tail.h, tail.norm, tail.rstd, tail.pre, tail.act = f32(l.h), f32(l.norm2), f32(l.rstd2), f32(l.pre), f32(l.act)
				if a.keepBF {
					l.norm2BF.Resize(rows, d)
					l.actBF.Resize(rows, f)
					tail.normBF, tail.actBF = &l.norm2BF, &l.actBF
				}
				tail.dp1, tail.dp2, tail.hidMask = f32(l.dp1), f32(l.dp2), f32(l.hidMask)
			}
			tail.run()
		} else {
			if mergedBF != nil {
				nn.LinearForwardBF16(f32(a.lin), mergedBF, f32(blk.wo.w.W), packed32(pk.wo), d)
			} else {
				linearForward(pk.wo, a.lin, merged, blk.wo.w.W, rows, d, d)
			}
			nn.ResidualAdd(l.h, xr, a.lin, nilIfEmpty(l.dp1), B, rows/B, d)

			// MLP branch.
			a.normLinear(pk.w1, l.pre, l.norm2, l.rstd2, l.h, blk.ffnNorm.W, blk.w1.w.W, rows, d, f, s.eps, a.keptBF(&l.norm2BF))
			a.siluLinear(pk.w2, a.lin, l.act, l.pre, l.hidMask, blk.w2.w.W, rows, f, d, a.keptBF(&l.actBF))
			nn.ResidualAdd(outr, l.h, a.lin, nilIfEmpty(l.dp2), B, rows/B, d)
		}
		if sel {
			scatterRows(a.outRows, out, a.selOut, B, L, d)
		}
		x = out
	}
}

// tailPacked is the packed weights with which this pass runs block blk's
// row-wise part chunk by chunk (rowTail), or nil to run it layer by layer:
// float32 models on a kernel that reads packed weights, fp32 or bf16.
// With bf16 products each chunk's float32 operands are rounded by the
// product, in cache, as the producing layers round them layer by layer:
// the same bits. An evaluation pass reads the model's packed weights
// (pk); a training pass packs the block's three weights for itself, in
// memory kept from block to block and pass to pass.
//
// With bf16 products the layer-by-layer passes had become a large part of
// a pass once AMX made the products fast: AMX Xeon, 2 cores, rowTail and
// qkvRoPEChunks together against neither for bf16, inference 0.164 →
// 0.118 s (paired median 0.72, 5 rounds), a lone request 5.9 → 5.1 ms,
// pre-training paired 0.95 and fine-tuning 0.945 (4 rounds each, every
// round faster).
func (a *stackActs[T]) tailPacked(pk packedBlock[T], blk *block[T], d, f int) *packedBlock[T] {
	var z T
	if _, is32 := any(z).(float32); !is32 || !chunkTail || !tailFits(d, f) {
		return nil
	}
	if a.train {
		t := &a.tailPack
		t.wo = repack(t.wo, blk.wo.w.W, d, d)
		t.w1 = repack(t.w1, blk.w1.w.W, f, d)
		t.w2 = repack(t.w2, blk.w2.w.W, d, f)
		pk = *t
	}
	if pk.w1 == nil || !pk.w1.InKernelOrder() {
		return nil
	}
	return &pk
}

// tailFits reports whether a block of width d and MLP width f runs its
// row-wise part chunk by chunk on this CPU: when its three weights (wo,
// w1, w2, packed) fit in one core's L2 together, so each chunk finds them
// there; and on the AVX2 tiles when they fit in half of L3, from which
// each chunk streams them again. RoMAE-tiny's 1.17 MB fp32 fit the Xeon's
// 2 MiB L2, not a Zen 4's 1 MiB or a Zen 3's 512 KiB; packed as bf16
// (583 KB) they fit the Xeon's and the Zen 4's. The AVX2 tiles run at
// half the AVX-512 tiles' rate, so a chunk asks L3 for its weights at half
// the rate too: on a Zen 3 (512 KiB L2, 32 MiB L3), chunk by chunk
// against layer by layer, `romae bench` paired medians of 10
// alternations: fine-tuning 1.040 (faster in 7 of 10), inference 1.037
// (7 of 10), pre-training 1.005. With AVX-512 on a 1 MiB L2 (Zen 4,
// Zen 5) it is unmeasured, so they keep the layer-by-layer order; so does
// a CPU that reports no L2 size.
func tailFits(d, f int) bool {
	w := weightBytes() * (d*d + 2*d*f)
	return coreL2 > 0 && (w <= coreL2 || l3 > 0 && w <= l3/2 && tensor.Kernel().Backend == "avx2")
}

// weightBytes is the size of a packed weight's element: 2 where products
// run on a bf16 kernel (its weights are packed as bf16 pairs), else 4.
func weightBytes() int {
	if tensor.BF16Operands() {
		return 2
	}
	return 4
}

// coreL2 is this CPU's L2 size a core in bytes, l3 its L3's (0: not
// reported).
var coreL2, l3 = tensor.CPU().L2, tensor.CPU().L3

// repack is p holding w [out, in], packed again in p's memory when p has
// that shape.
func repack[T tensor.Float](p *tensor.PackedWeight[T], w []T, out, in int) *tensor.PackedWeight[T] {
	if p != nil {
		if o, i := p.Shape(); o == out && i == in {
			p.Repack(w)
			return p
		}
	}
	return tensor.PackWeight(w, out, in)
}

// chunkTail lets passes run the blocks' row-wise part chunk by chunk
// (false: each layer over every row in turn), a variable so tests and
// benchmarks can compare both.
var chunkTail = true

// tailRows is how many rows a rowTail takes through a block at a time:
// for RoMAE-tiny 32 rows of h, RMSNorm(h), a d-wide product output and
// the 720-wide MLP activations are 161 KB, well inside a core's L2.
const tailRows = 32

// rowTail is a block's row-wise part from the output projection on,
//
//	h = x + dp1·(merged·Woᵀ);  out = h + dp2·(Dropout(SiLU(RMSNorm(h)·W1ᵀ))·W2ᵀ)
//
// on rows rows of d (f: the MLP's width; dp1, dp2: drop-path scales per
// sample of perSample rows, empty when off; hidMask: the MLP's dropout,
// empty when off), run a chunk of rows at a time, each chunk from start to
// end on one core. Layer by layer over all rows, each of the six steps
// wrote an output of megabytes (the MLP's 18.5 MB for 6432 rows) that the
// next step read back from memory; here it is read back from the core's
// caches. A training pass keeps h, RMSNorm(h), rstd, pre and act for its
// backward pass in the buffers given; an evaluation pass leaves them nil
// and they live in per-chunk scratch. Every row's arithmetic is the same
// either way. out may be x (the residual stream updated in place): a
// chunk reads its rows of x before it writes them.
type rowTail struct {
	pk                      packedBlock[float32]
	out, x, merged, g       []float32
	mergedBF                *tensor.BF16Rows // set: merged is given in bf16 only (mergeBF), and read from here
	h, norm, rstd, pre, act []float32
	normBF, actBF           *tensor.BF16Rows // set: norm and act are kept in bf16 only (keepBF)
	dp1, dp2, hidMask       []float32
	rows, perSample, d, f   int
	eps                     float64
}

func (t *rowTail) run() {
	d, f, chunk := t.d, t.f, tailChunk(t.rows)
	keep := t.h != nil
	tensor.ParallelFor((t.rows+chunk-1)/chunk, 1, func(lo, hi int) {
		buf := tailScratch.Get().(*[]float32)
		defer tailScratch.Put(buf)
		switch {
		case t.normBF != nil:
			*buf = bufs.Resize(*buf, chunk*(2*d+f))
		case keep:
			*buf = bufs.Resize(*buf, chunk*d)
		default:
			*buf = bufs.Resize(*buf, chunk*(3*d+f))
		}
		lin := (*buf)[:chunk*d]
		for c := lo; c < hi; c++ {
			r0 := c * chunk
			n := min(chunk, t.rows-r0)
			nd, nf := n*d, n*f
			var h, norm, pre, act, rstd []float32
			if keep {
				h, pre, rstd = t.h[r0*d:], t.pre[r0*f:], t.rstd[r0:]
				if t.normBF != nil { // float32 in the chunk's scratch, kept in bf16
					sc := (*buf)[chunk*d:]
					norm, act = sc[:chunk*d], sc[chunk*d:]
				} else {
					norm, act = t.norm[r0*d:], t.act[r0*f:]
				}
			} else {
				sc := (*buf)[chunk*d:]
				h, norm, pre = sc[:chunk*d], sc[chunk*d:2*chunk*d], sc[2*chunk*d:]
				act = pre
			}
			if t.mergedBF != nil {
				tensor.GemmPackedSerialBF16Rows(t.mergedBF, r0, n, 1, t.pk.wo, 0, lin, d)
			} else {
				tensor.GemmPackedSerial(n, 1, t.merged[r0*d:], d, t.pk.wo, 0, lin, d)
			}
			t.residual(h[:nd], t.x[r0*d:r0*d+nd], lin[:nd], t.dp1, r0, n)
			for r := range n {
				s := nn.RMSNormRow32(norm[r*d:(r+1)*d], h[r*d:(r+1)*d], t.g, t.eps)
				if rstd != nil {
					rstd[r] = s
				}
			}
			if t.normBF != nil { // the product reads the rounded rows kept for the backward pass
				t.normBF.Store(r0, n, norm, d)
				tensor.GemmPackedSerialBF16Rows(t.normBF, r0, n, 1, t.pk.w1, 0, pre, f)
			} else {
				tensor.GemmPackedSerial(n, 1, norm, d, t.pk.w1, 0, pre, f)
			}
			tensor.SiLU32(act[:nf], pre[:nf])
			if len(t.hidMask) > 0 {
				for i, m := range t.hidMask[r0*f : r0*f+nf] {
					act[i] *= m
				}
			}
			if t.actBF != nil {
				t.actBF.Store(r0, n, act, f)
				tensor.GemmPackedSerialBF16Rows(t.actBF, r0, n, 1, t.pk.w2, 0, lin, d)
			} else {
				tensor.GemmPackedSerial(n, 1, act, f, t.pk.w2, 0, lin, d)
			}
			t.residual(t.out[r0*d:r0*d+nd], h[:nd], lin[:nd], t.dp2, r0, n)
		}
	})
}

// residual is out = x + scale·branch on rows r0 … r0+n−1 of the tail
// (scale empty: 1), as nn.ResidualAdd computes it.
func (t *rowTail) residual(out, x, branch, scale []float32, r0, n int) {
	if len(scale) == 0 {
		tensor.AddScaled32(out, x, branch, 1)
		return
	}
	d := t.d
	for r := range n {
		tensor.AddScaled32(out[r*d:(r+1)*d], x[r*d:(r+1)*d], branch[r*d:(r+1)*d], scale[(r0+r)/t.perSample])
	}
}

// tailChunk is rowTail's chunk for rows rows: tailRows, or for few
// rows (a pooled model's last block runs on one row a sample) whole
// 8-row panels small enough that every core gets two.
func tailChunk(rows int) int {
	per := (rows + 2*tensor.Workers() - 1) / (2 * tensor.Workers())
	return min(tailRows, max(8, (per+7)&^7))
}

var tailScratch = sync.Pool{New: func() any { return new([]float32) }}

// packed32Block is a float32 model's packed block as what it is (only
// called where T is float32).
func packed32Block[T tensor.Float](pk packedBlock[T]) packedBlock[float32] {
	return packedBlock[float32]{packed32(pk.qkv), packed32(pk.wo), packed32(pk.w1), packed32(pk.w2)}
}

// qkvRoPE is q|k|v = RMSNorm(x)·W_qkvᵀ followed by RoPE on q and k (into
// head-major l.q, l.k; when training, v is copied head-major into l.v for
// the backward pass too), per group of nb samples: a group's q|k|v rows
// are rotated right after the product wrote them, while they are still
// in the cores' caches. Over the whole batch at once, the rotation read
// 14 MB of q|k|v back from memory and took 4× its in-cache time (bf16
// inference on Zen 4: RoPE 8% of the CPU time, the step 5–7% faster in
// groups of 2 samples). Each row's arithmetic is the same either way.
func (a *stackActs[T]) qkvRoPE(pw *tensor.PackedWeight[T], l *layerActs[T], x []T, blk *block[T], s *stack[T], nb int) {
	B, L, d, H, hd := a.B, a.L, s.DModel, s.Heads, s.hd
	if a.headChunked(pw, d) {
		a.qkvRoPEChunks(packed32(pw), l, x, blk, s)
		return
	}
	for b0 := 0; b0 < B; b0 += nb {
		n := min(nb, B-b0)
		r0, rows := b0*L, n*L
		if a.keepBF { // the group's rows rounded in the product's operand, then kept
			a.normLinear(pw, a.lin3[r0*3*d:], nil, l.rstd1[r0:], x[r0*d:], blk.attnNorm.W, qkvWeights(blk, false), rows, d, 3*d, s.eps, &a.opBF)
			l.norm1BF.CopyRows(r0, &a.opBF)
		} else {
			a.normLinear(pw, a.lin3[r0*3*d:], l.norm1[r0*d:], l.rstd1[r0:], x[r0*d:], blk.attnNorm.W, qkvWeights(blk, false), rows, d, 3*d, s.eps, nil)
		}
		a.rotGroup = a.rot.Rows(r0, rows)
		a.rotGroup.RotateSplit(l.q[b0*H*L*hd:], a.lin3[r0*3*d:], 3*d, n, L, H)
		a.rotGroup.RotateSplit(l.k[b0*H*L*hd:], a.lin3[r0*3*d+d:], 3*d, n, L, H)
		if a.train {
			nn.SplitHeadsLD(l.v[b0*H*L*hd:], a.lin3[r0*3*d+2*d:], 3*d, n, L, H, hd)
		}
	}
}

// headChunked reports whether this pass runs qkvRoPE chunk by chunk
// (qkvRoPEChunks): as rowTail, on a float32 model with the q|k|v weight
// packed in its kernel's order (fp32 or bf16: a bf16 product rounds each
// chunk's norm itself), and where that weight fits in one core's L2
// (RoMAE-tiny's 389 KB fp32 or 194 KB bf16 fit a Zen 4's 1 MiB as well
// as the Xeon's 2 MiB), so each chunk finds it there.
func (a *stackActs[T]) headChunked(pw *tensor.PackedWeight[T], d int) bool {
	var z T
	if _, is32 := any(z).(float32); !is32 || !chunkHead || pw == nil || !pw.InKernelOrder() {
		return false
	}
	return coreL2 > 0 && weightBytes()*3*d*d <= coreL2
}

// chunkHead lets passes run qkvRoPE chunk by chunk (false: in groups of
// samples, each step over the group's rows on every core), a variable so
// tests and benchmarks can compare both.
var chunkHead = true

// qkvRoPEChunks is qkvRoPE a chunk of tailChunk rows at a time, each chunk
// from start to end on one core: RMSNorm of its rows, their q|k|v product
// on the packed weight, RoPE and the head split of q and k, and (training)
// the split of v. In groups of samples each of those steps ran over the
// group's rows on every core, so a core rotated rows that the other core's
// product had written, and RMSNorm wrote norm1 for the whole batch before
// the product read it back. A training pass keeps rstd1 and norm1 (in
// bf16 only with keepBF) for its backward pass; an evaluation pass keeps
// the norm in per-chunk scratch. A training pass's q|k|v rows stay in that
// scratch too (qkvOutScratch); an evaluation pass's go to lin3, where
// attention reads v.
// Every row's arithmetic is the same either way.
func (a *stackActs[T]) qkvRoPEChunks(pw *tensor.PackedWeight[float32], l *layerActs[T], x []T, blk *block[T], s *stack[T]) {
	L, d, H, hd := a.L, s.DModel, s.Heads, s.hd
	N := a.B * L
	x32, g, lin3 := f32(x), f32(blk.attnNorm.W), f32(a.lin3)
	chunk := tailChunk(N)
	tensor.ParallelFor((N+chunk-1)/chunk, 1, func(lo, hi int) {
		buf := tailScratch.Get().(*[]float32)
		defer tailScratch.Put(buf)
		*buf = bufs.Resize(*buf, chunk*4*d)
		inScratch := !a.train || a.keepBF // the norm kept in float32 only by a training pass without keepBF
		for c := lo; c < hi; c++ {
			r0 := c * chunk
			n := min(chunk, N-r0)
			var norm []float32
			if inScratch {
				norm = (*buf)[:chunk*d]
			} else {
				norm = f32(l.norm1)[r0*d:]
			}
			out, ldo := lin3[r0*3*d:], 3*d // the chunk's q|k|v rows
			if a.train && qkvOutScratch {
				out = (*buf)[chunk*d:]
			}
			for r := range n {
				rs := nn.RMSNormRow32(norm[r*d:(r+1)*d], x32[(r0+r)*d:(r0+r+1)*d], g, s.eps)
				if a.train {
					f32(l.rstd1)[r0+r] = rs
				}
			}
			if a.keepBF { // the product reads the rounded rows kept for the backward pass
				l.norm1BF.Store(r0, n, norm, d)
				tensor.GemmPackedSerialBF16Rows(&l.norm1BF, r0, n, 1, pw, 0, out, ldo)
			} else {
				tensor.GemmPackedSerial(n, 1, norm, d, pw, 0, out, ldo)
			}
			outT := any(out).([]T) // T is float32 here
			a.rot.RotateSplitRows(l.q, outT, ldo, L, H, r0, r0+n)
			a.rot.RotateSplitRows(l.k, outT[d:], ldo, L, H, r0, r0+n)
			if a.train {
				nn.SplitHeadsRows(l.v, outT[2*d:], ldo, L, H, hd, r0, r0+n)
			}
		}
	})
}

// qkvOutScratch lets a training pass's qkvRoPEChunks keep each chunk's
// q|k|v rows in the core's scratch, where RoPE and the head split read
// them (false: in lin3, the whole batch's [N, 3d]), a variable so tests
// and benchmarks can compare both. In lin3 the product's stores went to
// memory-resident rows, 13.9 MB a block for RoMAE-tiny fine-tuning,
// written back to memory though the same chunk's next steps were their
// only readers; on AMX such stores are the product's bottleneck
// (docs/performance.md, "a seventh session"). An evaluation pass keeps
// them in lin3: attention reads v there in place (copying v out of the
// scratch instead cost fp32 inference 1–4%).
var qkvOutScratch = true

// packQKV packs block blk's q|k|v weight for this training pass, in
// memory kept from pass to pass: the weights change every step, and
// packed once here rather than by the product, qkvRoPE can run in groups
// without packing the weight again for each group.
func (a *stackActs[T]) packQKV(blk *block[T], d int) *tensor.PackedWeight[T] {
	a.qkvPacked = repack(a.qkvPacked, qkvWeights(blk, false), 3*d, d)
	return a.qkvPacked
}

// qkvGroupRows is about how many q|k|v rows qkvRoPE computes and rotates
// at once: 384 rows of RoMAE-tiny's 540 columns are 0.8 MB, split
// between the cores' L2 caches. A variable so tests can compare.
var qkvGroupRows = 384

// qkvSamples is qkvRoPE's group size in samples: the whole batch unless
// the weight is packed in its kernel's order beforehand (serving and the
// inference commands pack it once; training once per pass). Packed by
// each product, the weight would be packed again for every group
// (measured on fine-tuning: no faster, −3% to +3% per round).
func qkvSamples[T tensor.Float](pw *tensor.PackedWeight[T], B, L int) int {
	if pw == nil || !pw.InKernelOrder() || qkvGroupRows <= 0 {
		return B
	}
	return max(1, (qkvGroupRows+L/2)/L)
}

// backward takes a.dx = dLoss/dOutput and leaves a.dx = dLoss/dInput,
// accumulating every parameter gradient on the way.
func (s *stack[T]) backward(a *stackActs[T]) {
	if !a.train {
		panic("model: backward pass after an evaluation-mode forward pass (it keeps no activations)")
	}
	B, L, d, f, H, hd := a.B, a.L, s.DModel, s.FFN, s.Heads, s.hd
	N := B * L
	for i := len(s.blocks) - 1; i >= 0; i-- {
		blk, l, x := &s.blocks[i], &a.layers[i], a.res[i]
		rows, dx := N, a.dx // the rows the forward pass's row-wise part ran on
		sel := a.selected(i, len(s.blocks))
		if sel {
			rows = B * a.outRows.len()
			a.selDx, a.selDMerged = bufs.Resize(a.selDx, rows*d), bufs.Resize(a.selDMerged, rows*d)
			gatherRows(a.outRows, a.selDx, a.dx, B, L, d)
			dx = a.selDx
		}

		// MLP branch: dx is dLoss/d(h + DropPath(MLP(RMSNorm(h)))).
		dBranch := a.branchGrad(dx, l.dp2, B, rows/B, d)
		a.linearBackward(a.dAct, blk.w2.w.G, dBranch, l.act, a.keptBF(&l.actBF), blk.w2.w.W, rows, f, d)
		if len(l.hidMask) > 0 {
			nn.DropoutForward(a.dAct[:rows*f], a.dAct, l.hidMask)
		}
		// In place: a separate output (18.5 MB for RoMAE-tiny's 6432 rows)
		// went to memory after a read for ownership of each of its lines.
		nn.SiLUBackward(a.dAct, a.dAct, l.pre, rows*f)
		a.linearBackward(a.dNorm, blk.w1.w.G, a.dAct, l.norm2, a.keptBF(&l.norm2BF), blk.w1.w.W, rows, d, f)
		nn.RMSNormBackward(dx, blk.ffnNorm.G, a.dNorm, l.h, blk.ffnNorm.W, l.rstd2, rows, d, true)

		// Attention branch: dx is now dLoss/dh.
		dBranch = a.branchGrad(dx, l.dp1, B, rows/B, d)
		if !sel {
			a.linearBackward(a.dMerged, blk.wo.w.G, dBranch, l.merged, a.mergedBF(l), blk.wo.w.W, N, d, d)
		} else {
			// Only the selected rows of h and of the attention output had
			// gradients: spread them back into zero-filled full tensors.
			nn.LinearBackward(a.selDMerged, blk.wo.w.G, nil, dBranch, a.selMerged, blk.wo.w.W, rows, d, d, false)
			clear(a.dMerged[:N*d])
			scatterRows(a.outRows, a.dMerged, a.selDMerged, B, L, d)
			clear(a.dx[:N*d])
			scatterRows(a.outRows, a.dx, a.selDx, B, L, d)
		}
		// The attention backward reads dOut from dMerged in token order and
		// writes dv straight into its third of dLin3; dq and dk come out
		// head-major (measured: strided q/k/v and dq/dk cost the attention
		// products more than the copies they save; docs/performance.md).
		dqH, dkH, dvT := nn.HeadMajor(a.dq, H, L, hd), nn.HeadMajor(a.dk, H, L, hd), nn.TokenMajor(a.dLin3[2*d:], 3*d, L, hd)
		dOut, qH, kH, vH := nn.TokenMajor(a.dMerged, d, L, hd), nn.HeadMajor(l.q, H, L, hd), nn.HeadMajor(l.k, H, L, hd), nn.HeadMajor(l.v, H, L, hd)
		mergePerSample := a.inverseRoPEPerSample(d, H) // nil: merged below, on the whole batch
		if mergePerSample != nil {
			dqH, dkH = nn.Heads[T]{}, nn.Heads[T]{} // the attention hands them to mergePerSample
		}
		if a.prefix >= 0 {
			nn.PrefixAttentionBackward(dqH, dkH, dvT, dOut, qH, kH, vH, l.prob, l.probDrop, nilIfEmpty(l.attnMask), B, H, L, a.prefix, hd)
		} else {
			q0, q1 := a.queryRows(sel)
			nn.AttentionBackwardRows(dqH, dkH, dvT, dOut, qH, kH, vH, l.prob, l.probDrop, nilIfEmpty(l.attnMask), B, H, L, q0, q1, hd, mergePerSample)
		}
		if a.rot != nil && a.dAngles != nil { // learned angles (SIREN-RoPE)
			a.rot.AngleGrad(a.dAngles, l.q, a.dq, B, L, H)
			a.rot.AngleGrad(a.dAngles, l.k, a.dk, B, L, H)
		}
		// The q|k|v projection's backward: the three head gradients side
		// by side (inverse RoPE fused into the merge, per sample inside the
		// attention backward where it can be), then one dW and one dIn
		// product.
		switch {
		case mergePerSample != nil: // done by the attention backward
		case a.rot != nil:
			a.rot.MergeRotateInverse(a.dLin3, a.dq, 3*d, B, L, H)
			a.rot.MergeRotateInverse(a.dLin3[d:], a.dk, 3*d, B, L, H)
		default:
			nn.MergeHeadsLD(a.dLin3, a.dq, 3*d, B, L, H, hd)
			nn.MergeHeadsLD(a.dLin3[d:], a.dk, 3*d, B, L, H, hd)
		}
		a.linearBackward(a.dNorm, qkvWeights(blk, true), a.dLin3, l.norm1, a.keptBF(&l.norm1BF), qkvWeights(blk, false), N, d, 3*d)
		nn.RMSNormBackward(a.dx, blk.attnNorm.G, a.dNorm, x, blk.attnNorm.W, l.rstd1, N, d, true)
	}
}

// branchGrad is dLoss/d(branch) for a residual branch with drop-path
// scales dp, given dx [B,L,d]: dx itself when the path is never dropped
// (no copy), else dp[b]·dx in a.dBranch.
func (a *stackActs[T]) branchGrad(dx, dp []T, B, L, d int) []T {
	if len(dp) == 0 {
		return dx
	}
	nn.ScaleRows(a.dBranch, dx, dp, B, L, d)
	return a.dBranch
}

// rowRange is rows lo ≤ r < hi of every sample; hi = 0 means all rows.
type rowRange struct{ lo, hi int }

func (r rowRange) len() int { return r.hi - r.lo }

// selected reports whether block i of depth runs its row-wise part on
// outRows only: the last block, when outRows is set.
func (a *stackActs[T]) selected(i, depth int) bool { return a.outRows.hi > 0 && i == depth-1 }

// perSampleRoPE reports whether the backward's inverse RoPE runs per
// sample inside the attention backward (inverseRoPEPerSample): with fixed
// angles (learned ones need dq and dk head-major for their gradient first)
// and enough samples that tasks of whole samples keep the cores busy.
func (a *stackActs[T]) perSampleRoPE() bool {
	return a.rot != nil && a.dAngles == nil && a.prefix < 0 && fuseInverseRoPE && a.B >= 4*tensor.Workers()
}

// inverseRoPEPerSample is the attention backward's per-sample hook that
// merges sample b's dq and dk ([H, L, hd] each, in the core's scratch)
// into dLin3 [N, 3d] with the inverse rotation while they are in cache
// (on the whole batch after the attention, that pass read 9 MB back from
// memory), or nil when perSampleRoPE says no.
func (a *stackActs[T]) inverseRoPEPerSample(d, H int) func(b int, dq, dk []T) {
	if !a.perSampleRoPE() {
		return nil
	}
	L := a.L
	return func(b int, dq, dk []T) {
		rb := a.rot.Rows(b*L, L)
		rb.MergeRotateInverseSample(a.dLin3[b*L*3*d:], dq, 3*d, H)
		rb.MergeRotateInverseSample(a.dLin3[b*L*3*d+d:], dk, 3*d, H)
	}
}

// fuseInverseRoPE lets the backward run the inverse RoPE per sample inside
// the attention backward (false: on the whole batch after it), a variable
// so tests can compare both.
var fuseInverseRoPE = true

// queryRows is the range of query rows a block attends: outRows in the
// block that selects them (sel), every row otherwise.
func (a *stackActs[T]) queryRows(sel bool) (lo, hi int) {
	if sel && attendSelectedRows {
		return a.outRows.lo, a.outRows.hi
	}
	return 0, a.L
}

// attendSelectedRows lets the block that selects rows attend only those
// queries (false: every query, the rest discarded), a variable so tests
// can compare both.
var attendSelectedRows = true

// gatherRows copies rows r.lo..r.hi−1 of each of B samples of L rows of
// src into dst [B·(hi−lo), d]; scatterRows is its inverse.
func gatherRows[T any](r rowRange, dst, src []T, B, L, d int) {
	n := r.len() * d
	for b := range B {
		copy(dst[b*n:(b+1)*n], src[(b*L+r.lo)*d:])
	}
}

func scatterRows[T any](r rowRange, dst, src []T, B, L, d int) {
	n := r.len() * d
	for b := range B {
		copy(dst[(b*L+r.lo)*d:(b*L+r.lo)*d+n], src[b*n:])
	}
}

// qkvWeights returns wq|wk|wv (grad: their gradients) as one [3d, d]
// matrix. The parameter set lays the three out adjacently (and their
// gradients likewise); anything else is a construction bug.
func qkvWeights[T tensor.Float](blk *block[T], grad bool) []T {
	q, k, v := blk.wq.w.W, blk.wk.w.W, blk.wv.w.W
	if grad {
		q, k, v = blk.wq.w.G, blk.wk.w.G, blk.wv.w.G
	}
	n := len(q)
	var z T
	sz := uintptr(n) * unsafe.Sizeof(z)
	p := unsafe.Pointer(unsafe.SliceData(q))
	if n == 0 || len(k) != n || len(v) != n ||
		unsafe.Pointer(unsafe.SliceData(k)) != unsafe.Add(p, sz) || unsafe.Pointer(unsafe.SliceData(v)) != unsafe.Add(p, 2*sz) {
		panic("model: wq, wk, wv are not adjacent in the parameter buffer")
	}
	return unsafe.Slice(unsafe.SliceData(q), 3*n)
}

// output is the stack's last residual stream [B·L, d].
func (a *stackActs[T]) output() []T { return a.res[len(a.res)-1] }

// growIf is bufs.Resize when need, else an empty slice that keeps its memory.
func growIf[T any](s []T, n int, need bool) []T {
	if !need {
		return s[:0]
	}
	return bufs.Resize(s, n)
}

// nilIfEmpty turns a switched-off regularisation buffer into the nil the
// nn ops take as "not applied".
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
