package model

import (
	"math"

	"romae/tensor"
)

// StepBytes is a lower bound on the memory the stacks of a model with
// this configuration keep for one step on B samples of up to n data tokens:
// every saved activation, attention probabilities and dropout masks
// included, and in training their gradients. Pre-training counts the
// encoder on the visible tokens and the decoder on all of them, at
// maskRatio (data.RandomMask's count); the task models the encoder on all
// n. Parameters, optimiser moments, the data and the heads are left out:
// they do not grow with n.
//
// Attention keeps B·heads·L² probabilities per block in training (three
// such tensors with attention dropout), so the bound grows with the square
// of the tokens per sample: 8 series of 6250 tokens need 22 GiB on the
// tiny-shallow encoder. Training refuses to start when this exceeds the
// memory the machine has (train.Trainer.Run), instead of being killed by
// the kernel part-way.
func (c *Config) StepBytes(B, n int, maskRatio float64, train bool) int64 {
	cls := 0
	if c.UseCLS {
		cls = 1
	}
	const size = 4 // bytes of a float32 value: training runs in float32
	if c.Task != TaskPretrain {
		return size * c.stackShape(c.Encoder).actFloats(B, cls+n, -1, train)
	}
	masked := int(math.Round(maskRatio * float64(n)))
	if n >= 2 {
		masked = min(max(masked, 1), n-1)
	}
	Le, Ld := cls+n-masked, cls+n
	prefix := -1
	if c.independentQueries() {
		prefix = Le
	}
	return size * (c.stackShape(c.Encoder).actFloats(B, Le, -1, train) + c.stackShape(c.Decoder).actFloats(B, Ld, prefix, train))
}

// stackShape is a stack of size s with this configuration's dropout rates
// and no weights: what actFloats reads.
func (c *Config) stackShape(s Size) *stack[float32] {
	return &stack[float32]{Size: s, attnDrop: c.AttnDropout, hiddenDrop: c.HiddenDropout, dropPath: c.DropPath}
}

// actFloats is how many values resize(s, B, L, prefix, train) gives the
// stack's activation buffers (their lengths; a BF16Rows counts its bytes
// over 4): every d- and ffn-wide
// buffer, the saved attention probabilities and masks, and in training the
// gradients. TestActFloats holds it to resize's allocations.
func (s *stack[T]) actFloats(B, L, prefix int, train bool) int64 {
	N, d, f, H := int64(B)*int64(L), int64(s.DModel), int64(s.FFN), int64(s.Heads)
	cols := int64(L)
	if prefix >= 0 {
		cols = int64(prefix) + 1
	}
	nd, nf, nll := N*d, N*f, int64(B)*H*int64(L)*cols
	layers, streams := int64(1), int64(2) // evaluation: one block's buffers, input and output
	if train {
		layers, streams = int64(s.Depth), int64(s.Depth)+1
	}
	perLayer := 6*nd + 2*N + 2*nf // norm1, q, k, merged, h, norm2; rstd1, rstd2; pre, act
	if keepsBF16(train, s.hiddenDrop) {
		// norm1, norm2 and act kept in bf16 only: their BF16Rows, in float32s.
		perLayer += (2*tensor.BF16RowsBytes(int(N), int(d))+tensor.BF16RowsBytes(int(N), int(f)))/4 - 2*nd - nf
	}
	if mergesBF16(train, s.hiddenDrop, prefix, s.DModel/max(1, s.Heads)) {
		perLayer += tensor.BF16RowsBytes(int(N), int(d))/4 - nd // merged in bf16 only
	}
	total := streams*nd + 4*nd // the residual stream; lin and the fused q|k|v lin3
	if train {
		perLayer += nd + nll // v, prob
		if s.attnDrop > 0 {
			perLayer += 2 * nll // probDrop, attnMask
		}
		if s.hiddenDrop > 0 {
			perLayer += nf
		}
		total += 9*nd + nf // dx, dBranch, dNorm, dMerged, dq, dk, dLin3; dAct
		if s.dropPath > 0 && s.Depth > 1 {
			total += 2 * int64(B) * (layers - 1) // drop-path scales of every block but the first
		}
	}
	return total + layers*perLayer
}
