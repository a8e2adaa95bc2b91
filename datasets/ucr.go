package datasets

import (
	"math"
	"math/rand/v2"

	"romae/data"
)

// The three UCR archive problems that come from a published generator rather
// than a recording, so they can be drawn here instead of downloaded. They are
// a held-out check of the default classification recipe, which was developed
// on the six sets in ../shared/data/uea and has never seen these. The draws
// are new samples from the same processes, not the archive's files, so compare
// them with baselines run on the same draws (1-NN ED and DTW), not with
// published accuracies on the archive's splits.
//
// Every generator returns n univariate series with positions 0..L−1 (C = 1,
// D = 1), classes balanced (sample i has class i mod K before a shuffle of
// the order) and IDs "name-000042". Sizes of the archive's splits:
// CBF 30/900 (L 128), SyntheticControl 300/300 (L 60), TwoPatterns
// 1000/4000 (L 128).

// UCRGenerators maps each archive name to its generator.
var UCRGenerators = map[string]func(n int, seed uint64) *data.Dataset{
	"CBF":              CBF,
	"SyntheticControl": SyntheticControl,
	"TwoPatterns":      TwoPatterns,
}

// CBF is Cylinder-Bell-Funnel (Saito 1994), length 128: on an interval
// [a, b] with a ~ U{16..31} and b − a ~ U{32..95} the series carries a
// plateau (cylinder), a rising ramp (bell) or a falling ramp (funnel) of
// height 6 + η, η ~ N(0, 1), and unit Gaussian noise everywhere.
func CBF(n int, seed uint64) *data.Dataset {
	const l = 128
	return ucrSeries("CBF", []string{"cylinder", "bell", "funnel"}, n, l, seed,
		func(rng *rand.Rand, class int, x []float64) {
			a := l/8 + rng.IntN(l/8)
			b := min(a+l/4+rng.IntN(l/2), l-1)
			height := 6 + rng.NormFloat64()
			for t := range x {
				x[t] = rng.NormFloat64()
				if t < a || t > b {
					continue
				}
				switch class {
				case 0:
					x[t] += height
				case 1:
					x[t] += height * float64(t-a) / float64(b-a)
				case 2:
					x[t] += height * float64(b-t) / float64(b-a)
				}
			}
		})
}

// SyntheticControl is the control-chart problem of Alcock & Manolopoulos
// (1999), length 60: y(t) = 30 + 2r, r ~ U(−3, 3) drawn per point, plus
// nothing (normal), a·sin(2πt/T) with a ~ U(10, 15), T ~ U(10, 15)
// (cyclic), ±g·t with g ~ U(0.2, 0.5) (increasing / decreasing trend), or
// ±k from a step t₀ ~ U{20..39} on, k ~ U(7.5, 20) (upward / downward
// shift).
func SyntheticControl(n int, seed uint64) *data.Dataset {
	const l = 60
	classes := []string{"normal", "cyclic", "increasing", "decreasing", "upward", "downward"}
	return ucrSeries("SyntheticControl", classes, n, l, seed,
		func(rng *rand.Rand, class int, x []float64) {
			amp, period := uniform(rng, 10, 15), uniform(rng, 10, 15)
			slope := uniform(rng, 0.2, 0.5)
			shift, from := uniform(rng, 7.5, 20), l/3+rng.IntN(l/3)
			for t := range x {
				x[t] = 30 + 2*uniform(rng, -3, 3)
				switch class {
				case 1:
					x[t] += amp * math.Sin(2*math.Pi*float64(t)/period)
				case 2:
					x[t] += slope * float64(t)
				case 3:
					x[t] -= slope * float64(t)
				case 4:
					if t >= from {
						x[t] += shift
					}
				case 5:
					if t >= from {
						x[t] -= shift
					}
				}
			}
		})
}

// TwoPatterns follows Geurts (2001), length 128: two noise-free steps in
// N(0, 1) noise, each an upward (−5 then +5) or a downward (+5 then −5) step
// of length U{16..32}, the second starting after the first ends. The class is
// the ordered pair: down-down, up-down, down-up, up-up.
func TwoPatterns(n int, seed uint64) *data.Dataset {
	const l = 128
	classes := []string{"down-down", "up-down", "down-up", "up-up"}
	return ucrSeries("TwoPatterns", classes, n, l, seed,
		func(rng *rand.Rand, class int, x []float64) {
			len1, len2 := 16+rng.IntN(17), 16+rng.IntN(17)
			start1 := rng.IntN(l - len1 - len2 + 1)
			start2 := start1 + len1 + rng.IntN(l-len2-start1-len1+1)
			for t := range x {
				x[t] = rng.NormFloat64()
			}
			step := func(start, length int, up bool) {
				sign := 1.0
				if up {
					sign = -1
				}
				for t := start; t < start+length; t++ {
					x[t] = 5 * sign
					if t >= start+length/2 {
						x[t] = -5 * sign
					}
				}
			}
			step(start1, len1, class&1 == 1)
			step(start2, len2, class&2 == 2)
		})
}

// ucrSeries draws n series of length l, sample i with class i mod K in a
// shuffled order, filling each with gen from its own random stream.
func ucrSeries(name string, classes []string, n, l int, seed uint64, gen func(rng *rand.Rand, class int, x []float64)) *data.Dataset {
	mustPositive(name, "n", n)
	order := rand.New(rand.NewPCG(seed, fnv64(name))).Perm(n)
	ds := &data.Dataset{Name: name, C: 1, D: 1, Classes: classes, Samples: make([]data.Sample, n)}
	parallelFor(n, func(i int) {
		rng := sampleRNG(seed, name, i)
		class := order[i] % len(classes)
		x := make([]float64, l)
		gen(rng, class, x)
		s := data.Sample{ID: sampleID(name, i), Label: class, Values: make([]float32, l), Positions: make([]float32, l)}
		for t, v := range x {
			s.Values[t], s.Positions[t] = float32(v), float32(t)
		}
		ds.Samples[i] = s
	})
	return ds
}
