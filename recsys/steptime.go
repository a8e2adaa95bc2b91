package recsys

import (
	"sort"
	"time"

	"romae/optim"
)

// StepComparison is two models' training-step times measured side by side.
type StepComparison struct {
	Pairs   int     `json:"pairs"`
	MedianA float64 `json:"median_a_s"` // wall seconds per step
	MedianB float64 `json:"median_b_s"`
	// Overhead is the median over pairs of B's wall time over A's, minus
	// 1, in percent; CPUOverhead the same for the process's CPU time
	// (0 where it is not measured), which on a shared machine leaves out
	// the waits for a core that wall time includes.
	Overhead    float64 `json:"overhead_pct"`
	CPUOverhead float64 `json:"cpu_overhead_pct"`
}

// CompareSteps times training steps (loss, backward, AdamW) of a and b on
// the same batch, alternating ABBA so neither always runs first, after one
// untimed step each. negatives are next-item models' sampled candidates.
func CompareSteps(a, b *Model[float32], bt *Batch, negatives *Negatives, pairs int) (StepComparison, error) {
	models := [2]*Model[float32]{a, b}
	var steps [2]func() (wall, cpu time.Duration, err error)
	for i, m := range models {
		ws, opt := m.NewWorkspace(), optim.NewAdamW()
		steps[i] = func() (time.Duration, time.Duration, error) {
			start, cpu0 := time.Now(), cpuTime()
			m.ZeroGrad()
			if _, _, err := m.Loss(ws, bt, negatives); err != nil {
				return 0, 0, err
			}
			m.Backward(ws)
			opt.Step(m.Params, 1e-3)
			return time.Since(start), cpuTime() - cpu0, nil
		}
		if _, _, err := steps[i](); err != nil {
			return StepComparison{}, err
		}
	}
	var wall [2][]float64
	var ratios, cpuRatios []float64
	for rep := 0; rep < pairs; rep++ {
		order := [2]int{0, 1}
		if rep%2 == 1 {
			order = [2]int{1, 0}
		}
		var w, c [2]float64
		for _, i := range order {
			wt, ct, err := steps[i]()
			if err != nil {
				return StepComparison{}, err
			}
			w[i], c[i] = wt.Seconds(), ct.Seconds()
			wall[i] = append(wall[i], w[i])
		}
		ratios = append(ratios, w[1]/w[0])
		if c[0] > 0 && c[1] > 0 {
			cpuRatios = append(cpuRatios, c[1]/c[0])
		}
	}
	sc := StepComparison{Pairs: pairs, MedianA: median(wall[0]), MedianB: median(wall[1]), Overhead: 100 * (median(ratios) - 1)}
	if len(cpuRatios) > 0 {
		sc.CPUOverhead = 100 * (median(cpuRatios) - 1)
	}
	return sc, nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return s[len(s)/2]
}
