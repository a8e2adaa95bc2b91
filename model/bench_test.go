package model

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"romae/data"
)

// cpuSeconds is the process's user+system CPU time: reported per op next
// to wall time because the shared 2-core box's wall time swings with
// other processes' load while CPU time tracks the work done.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// timed runs f b.N times and reports CPU seconds per op.
func timed(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
}

// benchBatch is issue 6's workload: 32 samples × 200 tokens of 2 values,
// 2-D continuous positions uniform in [0,100).
func benchBatch() *data.Batch {
	B, L, C, D := 32, 200, 2, 2
	rng := rand.New(rand.NewPCG(1, 1))
	bt := &data.Batch{B: B, L: L, C: C, D: D, Values: make([]float32, B*L*C), Positions: make([]float32, B*L*D),
		Pad: make([]bool, B*L), Lengths: make([]int, B), Labels: make([]int, B)}
	for i := range bt.Values {
		bt.Values[i] = float32(rng.NormFloat64())
	}
	for i := range bt.Positions {
		bt.Positions[i] = float32(rng.Float64() * 100)
	}
	for b := range bt.Lengths {
		bt.Lengths[b], bt.Labels[b] = L, b%20
	}
	return bt
}

func benchModel(b *testing.B, task string, pos string) *Model[float32] {
	c := DefaultConfig()
	c.Values, c.PosDims, c.Task, c.PosEncoding = 2, 2, task, pos
	if task == TaskClassify {
		c.Outputs = 20
	}
	m, err := New[float32](c, 1)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkTinyForwardBackward: one RoMAE-tiny forward+backward (no
// optimiser) on 32 × 200 tokens, for pre-training (mask ratio 0.75,
// tiny-shallow decoder) and fine-tuning (all 201 tokens, 20 classes).
// `romae bench` measures whole training steps; this tracks the engine.
func BenchmarkTinyForwardBackward(b *testing.B) {
	for _, pos := range []string{PosRoPE, PosAbsolute} {
		b.Run("pretrain/"+pos, func(b *testing.B) {
			m, bt := benchModel(b, TaskPretrain, pos), benchBatch()
			mask := data.RandomMask(nil, bt, 0.75, rand.New(rand.NewPCG(2, 2)))
			ws := m.NewWorkspace()
			timed(b, func() {
				m.ZeroGrad()
				if _, err := m.ForwardPretrain(ws, bt, mask, true, nil); err != nil {
					b.Fatal(err)
				}
				m.BackwardPretrain(ws)
			})
		})
	}
	b.Run("finetune/rope", func(b *testing.B) {
		m, bt := benchModel(b, TaskClassify, PosRoPE), benchBatch()
		ws := m.NewWorkspace()
		timed(b, func() {
			m.ZeroGrad()
			if _, err := m.ForwardTask(ws, bt, LossOptions{}, true, nil); err != nil {
				b.Fatal(err)
			}
			m.BackwardTask(ws)
		})
	})
	b.Run("infer/rope", func(b *testing.B) {
		m, bt := benchModel(b, TaskClassify, PosRoPE), benchBatch()
		ws := m.NewWorkspace()
		timed(b, func() {
			if _, err := m.ForwardTask(ws, bt, LossOptions{}, false, nil); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkQueryAttention: the decoder's two query modes side by side on
// the pre-training step of BenchmarkTinyForwardBackward (32 × 200 tokens,
// mask ratio 0.75: 51 visible + [CLS], 150 queries per sample) and on
// interpolation of 400 query positions from all 200 tokens.
func BenchmarkQueryAttention(b *testing.B) {
	for _, mode := range []string{QueryAll, QueryIndependent} {
		b.Run("pretrain/"+mode, func(b *testing.B) {
			m, bt := benchModel(b, TaskPretrain, PosRoPE), benchBatch()
			m.Cfg.QueryAttention = mode
			mask := data.RandomMask(nil, bt, 0.75, rand.New(rand.NewPCG(2, 2)))
			ws := m.NewWorkspace()
			timed(b, func() {
				m.ZeroGrad()
				if _, err := m.ForwardPretrain(ws, bt, mask, true, nil); err != nil {
					b.Fatal(err)
				}
				m.BackwardPretrain(ws)
			})
		})
		b.Run("interpolate400/"+mode, func(b *testing.B) {
			m, bt := benchModel(b, TaskPretrain, PosRoPE), benchBatch()
			m.Cfg.QueryAttention = mode
			Lq := 400
			qPos, qPad := make([]float32, bt.B*Lq*bt.D), make([]bool, bt.B*Lq)
			for i := range qPos {
				qPos[i] = float32(i%997) / 10
			}
			ws := m.NewWorkspace()
			timed(b, func() {
				if _, err := m.Interpolate(ws, bt, qPos, qPad, Lq); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
