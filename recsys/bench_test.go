package recsys

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"romae/events"
	"romae/optim"
)

// BenchmarkSirenOverhead times training steps (forward, backward, AdamW)
// of SIREN-RoPE and of RoPE on the index side by side in one process, on
// the same batch, alternating ABBA so neither always runs first, and
// reports each one's median step time and the median of the per-pair
// ratios as overhead_% (the target: ≤ 5%), and the same ratio of
// the process's CPU time per step as cpu_overhead_% — on a machine shared
// with other jobs, wall time also counts the waits for a core, CPU time
// only the work. Sizes: the experiment's model, and the SIREN-RoPE
// reference's (d 128, 4 heads, 2 layers, history 50), 32 windows a step.
// Run with -benchtime=Nx for N pairs, GOMAXPROCS=1 for one core.
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
				for u := range d.Log.Users { // histories of 60 events, as long as the windows
					for len(d.Log.Users[u].Events) < 60 {
						d.Log.Users[u].Events = append(d.Log.Users[u].Events, d.Log.Users[u].Events...)
					}
					d.Log.Users[u].Events = d.Log.Users[u].Events[:60]
				}
				mustSplit(b, d, events.SplitRule{Rule: events.LeaveOneOut})
				var steps [2]func() (wall, cpu time.Duration)
				for i, v := range []string{PosIndex, PosSiren} {
					cfg := testConfig(task, v, d, windowLen(task, 50))
					cfg.DModel, cfg.Heads, cfg.Depth, cfg.FFN, cfg.SirenHidden = sz.d, sz.heads, sz.depth, sz.ff, 16
					m, err := New[float32](cfg, d.Items.Of, 1)
					if err != nil {
						b.Fatal(err)
					}
					bt, err := d.Collate(nil, m.Windows(d, events.Train)[:32], task)
					if err != nil {
						b.Fatal(err)
					}
					neg := make([]int32, 256)
					for j := range neg {
						neg[j] = int32(1 + (j*7919)%(cfg.Items-1))
					}
					if task == TaskRanking {
						neg = nil
					}
					ws, opt := m.NewWorkspace(), optim.NewAdamW()
					steps[i] = func() (time.Duration, time.Duration) {
						start, cpu0 := time.Now(), cpuTime()
						m.ZeroGrad()
						if _, _, err := m.Loss(ws, bt, neg); err != nil {
							b.Fatal(err)
						}
						m.Backward(ws)
						opt.Step(m.Params, 1e-3)
						return time.Since(start), cpuTime() - cpu0
					}
					steps[i]() // warm the buffers up
				}
				var ratios, cpuRatios []float64
				var times [2][]float64
				b.ResetTimer()
				for rep := 0; rep < b.N; rep++ {
					order := [2]int{0, 1}
					if rep%2 == 1 {
						order = [2]int{1, 0}
					}
					var t, c [2]float64
					for _, i := range order {
						w, cpu := steps[i]()
						t[i], c[i] = w.Seconds(), cpu.Seconds()
						times[i] = append(times[i], t[i])
					}
					ratios = append(ratios, t[1]/t[0])
					if c[0] > 0 {
						cpuRatios = append(cpuRatios, c[1]/c[0])
					}
				}
				b.ReportMetric(1e3*median(times[0]), "rope-index_ms/step")
				b.ReportMetric(1e3*median(times[1]), "siren_ms/step")
				b.ReportMetric(100*(median(ratios)-1), "overhead_%")
				if len(cpuRatios) > 0 {
					b.ReportMetric(100*(median(cpuRatios)-1), "cpu_overhead_%")
				}
			})
		}
	}
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return s[len(s)/2]
}
