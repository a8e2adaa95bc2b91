package datasets

import (
	"fmt"
	"math"

	"romae/data"
)

// Recipe constants of Spiral.
const (
	SpiralSteps = 75          // evenly spaced steps per spiral
	spiralMaxAn = 6 * math.Pi // final angle
	spiralNoise = 0.1         // observation noise std (training spirals only)
)

// Spiral builds the ContiFormer-style spiral interpolation task of Sec. 5.5 /
// Table 7: n Archimedean spirals, the first 2n/3 (rounded down) for
// training and the rest for testing — 200/100 for the paper's n = 300.
//
// Spiral i draws a ~ N(0, 0.02²), b ~ N(0.3, 0.02²) (we read the paper's
// N(μ, 0.02) as standard deviation 0.02) and a chirality s = ±1 with equal
// probability, then for steps j = 0..74
//
//	θ_j = 6π · j/74,   r_j = a + b·θ_j,   x_j = r_j cos θ_j,   y_j = s · r_j sin θ_j
//
// so s = +1 turns counter-clockwise and s = -1 clockwise (the ID ends in
// "ccw" or "cw"). Each step is one token of C = 2 values (x, y) whose 1-D
// position is the step index j (0..74, not time normalised to [0, 1], so
// that RoPE sees a step as one unit, as for the pendulum frames). Training
// spirals get independent N(0, 0.1²) noise on x and y; test spirals are
// clean. Sample.Target (TargetDim 2, per token) always holds the clean
// (x, y), so an RMSE against the clean curve is available for both parts.
// Hide about 60% of the steps as in the paper with ObserveFixed(ds, 30, seed)
// (30 observed, 45 hidden). It panics if n < 2.
func Spiral(n int, seed uint64) (train, test *data.Dataset) {
	if n < 2 {
		panic(fmt.Sprintf("datasets.Spiral: n = %d, want >= 2 (one training and one test spiral)", n))
	}
	nTrain := 2 * n / 3
	mk := func(name string, m int) *data.Dataset {
		return &data.Dataset{Name: name, C: 2, D: 1, TargetDim: 2, TargetPerToken: true, Samples: make([]data.Sample, 0, m)}
	}
	train, test = mk("spiral/train", nTrain), mk("spiral/test", n-nTrain)
	for i := range n {
		rng := sampleRNG(seed, "spiral", i)
		a := 0.02 * rng.NormFloat64()
		b := 0.3 + 0.02*rng.NormFloat64()
		chir, dir := 1.0, "ccw"
		if rng.IntN(2) == 1 {
			chir, dir = -1, "cw"
		}
		noisy := i < nTrain
		s := data.Sample{
			ID:        sampleID("spiral", i) + " " + dir,
			Values:    make([]float32, 2*SpiralSteps),
			Positions: make([]float32, SpiralSteps),
			Target:    make([]float32, 2*SpiralSteps),
			Label:     -1,
		}
		for j := range SpiralSteps {
			th := spiralMaxAn * float64(j) / (SpiralSteps - 1)
			r := a + b*th
			x, y := r*math.Cos(th), chir*r*math.Sin(th)
			s.Target[2*j], s.Target[2*j+1] = float32(x), float32(y)
			if noisy {
				x += spiralNoise * rng.NormFloat64()
				y += spiralNoise * rng.NormFloat64()
			}
			s.Values[2*j], s.Values[2*j+1] = float32(x), float32(y)
			s.Positions[j] = float32(j)
		}
		if noisy {
			train.Samples = append(train.Samples, s)
		} else {
			test.Samples = append(test.Samples, s)
		}
	}
	return train, test
}
