package datasets

import (
	"math"
	"slices"

	"romae/data"
)

// Recipe constants of Oscillator.
const (
	OscillatorT       = 10.0 // observation window [0, OscillatorT]
	OscillatorMinObs  = 20   // observations per object, uniform in [min, max]
	OscillatorMaxObs  = 80
	OscillatorNoise   = 0.05 // observation noise std
	OscillatorClasses = 3
)

// OscillatorClassNames are the classes of Oscillator, in label order.
var OscillatorClassNames = []string{"damped", "driven", "beats"}

// Oscillator builds n irregularly sampled 3-channel oscillators, the kind of
// data of issue 11 (a user's irregular oscillator light curves). Each object
// draws its class uniformly and 20-80 observation times uniformly in
// [0, 10] (sorted; the three channels are observed together, so a token is
// the 3 values at one time, C = 3, D = 1). Every channel c has its own
// amplitude a_c ~ U(0.5, 1.5) and phases; the classes differ in frequency
// content (ω in radians per time unit):
//
//	damped: a_c e^{−γt} cos(ωt + φ_c),            ω ~ U(1.0, 1.6), γ ~ U(0.05, 0.25)
//	driven: a_c sin(ω_d t + φ_c) + ½a_c e^{−γt} cos(ω₀t + ψ_c),
//	                                              ω_d ~ U(1.8, 2.4), ω₀ ~ U(0.8, 1.2), γ ~ U(0.2, 0.5)
//	beats:  a_c (sin(ωt + φ_c) + sin((ω+δ)t + ψ_c)) / √2,
//	                                              ω ~ U(2.6, 3.2), δ ~ U(0.3, 0.7)
//
// Sample.Values holds the curve plus N(0, 0.05²) noise, Sample.Target
// (TargetDim 3, per token) the noiseless curve, Sample.Label the class
// (Dataset.Classes = OscillatorClassNames). Positions are the times t;
// ScalePositions changes the unit. With 20 observations the mean spacing is
// 0.5, about a quarter of the beats class's period: linear interpolation
// is then visibly wrong between observations, which is what an
// interpolator has to beat. Sample i depends only on (seed, i).
func Oscillator(n int, seed uint64) *data.Dataset {
	mustPositive("Oscillator", "n", n)
	ds := &data.Dataset{
		Name:           "oscillator",
		C:              3,
		D:              1,
		Classes:        slices.Clone(OscillatorClassNames),
		TargetDim:      3,
		TargetPerToken: true,
		Samples:        make([]data.Sample, n),
	}
	const C = 3
	for i := range n {
		rng := sampleRNG(seed, "oscillator", i)
		u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
		class := rng.IntN(OscillatorClasses)
		N := OscillatorMinObs + rng.IntN(OscillatorMaxObs-OscillatorMinObs+1)
		var amp, ph1, ph2 [C]float64
		for c := range C {
			amp[c], ph1[c], ph2[c] = u(0.5, 1.5), u(0, 2*math.Pi), u(0, 2*math.Pi)
		}
		var f func(c int, t float64) float64
		switch class {
		case 0:
			w, g := u(1.0, 1.6), u(0.05, 0.25)
			f = func(c int, t float64) float64 { return amp[c] * math.Exp(-g*t) * math.Cos(w*t+ph1[c]) }
		case 1:
			wd, w0, g := u(1.8, 2.4), u(0.8, 1.2), u(0.2, 0.5)
			f = func(c int, t float64) float64 {
				return amp[c] * (math.Sin(wd*t+ph1[c]) + 0.5*math.Exp(-g*t)*math.Cos(w0*t+ph2[c]))
			}
		default:
			w, dw := u(2.6, 3.2), u(0.3, 0.7)
			f = func(c int, t float64) float64 {
				return amp[c] * (math.Sin(w*t+ph1[c]) + math.Sin((w+dw)*t+ph2[c])) / math.Sqrt2
			}
		}
		times := make([]float64, N)
		for j := range times {
			times[j] = u(0, OscillatorT)
		}
		slices.Sort(times)
		s := data.Sample{
			ID:        sampleID("oscillator", i) + " " + OscillatorClassNames[class],
			Values:    make([]float32, N*C),
			Positions: make([]float32, N),
			Target:    make([]float32, N*C),
			Label:     class,
		}
		for j, t := range times {
			s.Positions[j] = float32(t)
			for c := range C {
				y := f(c, t)
				s.Target[j*C+c] = float32(y)
				s.Values[j*C+c] = float32(y + OscillatorNoise*rng.NormFloat64())
			}
		}
		ds.Samples[i] = s
	}
	return ds
}
