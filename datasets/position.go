package datasets

import (
	"fmt"
	"math"

	"romae/data"
)

// Position builds the absolute-position reconstruction task of Sec. 5.1
// (and App. B.1). Every sample holds `tokens` identical tokens — one value,
// 1 — each at a 1-D position drawn independently from U(lo, hi); the
// per-token regression target is the token's own position (TargetDim 1,
// TargetPerToken). Since the tokens carry no information, only the
// positions can solve the task, and with purely relative RoPE the best a
// model can do without [CLS] is the mean (MSE = Var U(lo, hi) =
// (hi-lo)²/12, about 208 for U(0, 50)).
//
// Paper settings: Position(20000, 10, 0, 50, seed) for training and
// Position(4000, 10, 0, 50, otherSeed) for testing; B.1 uses tokens = 1
// with U(0, 100) and U(0, 1000).
//
// Choices where the paper is silent: positions are not sorted (token order
// is irrelevant to an attention model without absolute embeddings); they are
// continuous float32 values; ties are possible but have probability ~0.
// It panics if n or tokens < 1 or !(hi > lo).
func Position(n, tokens int, lo, hi float64, seed uint64) *data.Dataset {
	mustPositive("Position", "n", n)
	mustPositive("Position", "tokens", tokens)
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		panic(fmt.Sprintf("datasets.Position: range (%v, %v) is empty or infinite", lo, hi))
	}
	ds := &data.Dataset{
		Name:           fmt.Sprintf("position-U(%g,%g)", lo, hi),
		C:              1,
		D:              1,
		TargetDim:      1,
		TargetPerToken: true,
		Samples:        make([]data.Sample, n),
	}
	for i := range n {
		rng := sampleRNG(seed, "position", i)
		s := data.Sample{
			ID:        sampleID("pos", i),
			Values:    make([]float32, tokens),
			Positions: make([]float32, tokens),
			Target:    make([]float32, tokens),
			Label:     -1,
		}
		for t := range tokens {
			p := float32(uniform(rng, lo, hi))
			s.Values[t] = 1
			s.Positions[t] = p
			s.Target[t] = p
		}
		ds.Samples[i] = s
	}
	return ds
}
