package recsys

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"romae/events"
)

// BenchmarkSirenOverhead times training steps (forward, backward, AdamW)
// of RoPE on the index and of SIREN-RoPE side by side in one process on
// the same batch (CompareSteps: ABBA order, medians over pairs), and
// reports both median step times, the median per-pair wall-time ratio as
// overhead_% (the target: ≤ 5%) and the CPU-time ratio as
// cpu_overhead_% — on a machine shared with other jobs wall time also
// counts the waits for a core. Sizes: the recsys experiment's model and
// the SIREN-RoPE reference's (d 128, 4 heads, 2 layers), history 50, 32
// windows a step, 256 sampled negatives for next-item. Run with
// -benchtime=Nx for N pairs (GOMAXPROCS=1: one core).
func BenchmarkSirenOverhead(b *testing.B) {
	for _, sz := range []struct {
		name                string
		d, heads, depth, ff int
	}{
		{"experiment-d32", 32, 2, 2, 64},
		{"reference-d128", 128, 4, 2, 256},
	} {
		for _, task := range []string{TaskRanking, TaskNext} {
			b.Run(fmt.Sprintf("%s/%s", sz.name, task), func(b *testing.B) {
				d := synthData(64, 2000, 21)
				for u := range d.Log.Users { // histories of 60 events, longer than a window
					for len(d.Log.Users[u].Events) < 60 {
						d.Log.Users[u].Events = append(d.Log.Users[u].Events, d.Log.Users[u].Events...)
					}
					d.Log.Users[u].Events = d.Log.Users[u].Events[:60]
				}
				mustSplit(b, d, events.SplitRule{Rule: events.LeaveOneOut})
				var models [2]*Model[float32]
				for i, v := range []string{PosIndex, PosSiren} {
					cfg := testConfig(task, v, d, windowLen(task, 50))
					cfg.DModel, cfg.Heads, cfg.Depth, cfg.FFN, cfg.SirenHidden = sz.d, sz.heads, sz.depth, sz.ff, 16
					m, err := New[float32](cfg, d.Items.Of, 1)
					if err != nil {
						b.Fatal(err)
					}
					models[i] = m
				}
				bt, err := d.Collate(nil, models[0].Windows(d, events.Train)[:32], task)
				if err != nil {
					b.Fatal(err)
				}
				var neg *Negatives
				if task == TaskNext {
					neg = newSampler(d, models[0].Cfg.Items, 256).draw(rand.New(rand.NewPCG(1, 2)))
				}
				b.ResetTimer()
				sc, err := CompareSteps(models[0], models[1], bt, neg, b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(1e3*sc.MedianA, "rope-index_ms/step")
				b.ReportMetric(1e3*sc.MedianB, "siren_ms/step")
				b.ReportMetric(sc.Overhead, "overhead_%")
				b.ReportMetric(sc.CPUOverhead, "cpu_overhead_%")
			})
		}
	}
}
