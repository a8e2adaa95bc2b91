package datasets

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"romae/data"
)

// LightCurveClasses are the classes of LightCurves, indexed by Sample.Label.
// The "-short"/"-long" pairs share their shape distributions and differ only
// in period, so telling them apart needs the observation times.
var LightCurveClasses = []string{
	"sine-short",     // sinusoidal variable, P in [0.1, 1] d
	"sine-long",      // sinusoidal variable, P in [5, 50] d
	"sawtooth-short", // RR-Lyrae-like fast rise / slow decline, P in [0.1, 1] d
	"sawtooth-long",  // Cepheid-like, same shape, P in [5, 50] d
	"eclipsing",      // detached eclipsing binary, P in [0.5, 10] d
	"transient",      // supernova-like rise and decay, non-periodic
}

// Survey layout of LightCurves.
const (
	LightCurveBands = 6 // band index 0..5 (ugrizy-like, blue to red)

	lcYear     = 365.25     // days
	lcSurvey   = 3 * lcYear // survey length in days
	lcSeason   = lcYear / 2 // observable part of each year
	lcMinObs   = 40         // observations per object, inclusive range
	lcMaxObs   = 120
	lcShortLo  = 0.1 // short periods in days, log-uniform
	lcShortHi  = 1.0
	lcLongLo   = 5.0 // long periods in days, log-uniform
	lcLongHi   = 50.0
	lcEBLo     = 0.5 // eclipsing-binary periods in days, log-uniform
	lcEBHi     = 10.0
	lcNoiseLo  = 0.03 // flux error as a fraction of the amplitude
	lcNoiseHi  = 0.12
	lcAmpLo    = 1.0 // amplitude scale, log-uniform
	lcAmpHi    = 20.0
	lcPeakBand = 2.5 // transients peak between bands 2 and 3
	lcTwoPi    = 2 * math.Pi
)

// LightCurves builds an irregularly sampled multi-band light-curve
// classification benchmark in the ELAsTiCC layout of Table 4, for the
// SIREN-RoPE experiments: one token per (band, time) observation with C = 2
// values (flux, flux error) and D = 2 positions (band index 0..5, time in
// days since the survey start); labels index LightCurveClasses, drawn
// uniformly per object. No such benchmark is in the paper; every choice
// below is ours.
//
// Cadence: a 3-year survey; each object is observable half of each year
// (a 6-month season followed by a 6-month gap, with a random per-object
// season offset), and has 40..120 observations at times uniform over its
// seasons, each in a uniformly chosen band. Tokens are sorted by time.
//
// Signals are difference fluxes around zero. Periodic classes have a
// log-uniform amplitude A in [1, 20], a random phase and a shape s(phase):
// a sinusoid; a sawtooth rising linearly during a fraction w ~ U(0.1, 0.3)
// of the cycle and declining over the rest, shifted to zero mean; or an
// eclipsing binary, 0 outside eclipses and −sqrt(1 − (Δ/w)²) dips of
// half-width w ~ U(0.03, 0.08) in phase, depth 1 at phase 0 and
// d2 ~ U(0.2, 0.9) at phase 0.5. Pulsators' amplitudes fall with band,
// A·(1.25 − 0.1·band); eclipses are nearly grey, A·(1 − 0.03·band).
// Transients follow a Bazin profile A·b(band)·exp(−Δt/τ_fall)/(1 +
// exp(−Δt/τ_rise)), Δt = t − t0, with t0 an observation time shifted by
// U(−20, 10) days so that the event is seen, τ_rise ~ U(1, 6) d and
// τ_fall ~ U(15, 60)·(1 + 0.1·band) d (redder bands decay slower), and
// b(band) = exp(−((band − 2.5)/2.5)²).
//
// Noise: each observation's flux error is σ = A·U(0.03, 0.12) and the
// recorded flux is the true flux plus N(0, σ²). The ID records the class and
// the period ("lc-000042 sine-long P=17.3"; "P=0" for transients).
func LightCurves(n int, seed uint64) *data.Dataset {
	mustPositive("LightCurves", "n", n)
	ds := &data.Dataset{
		Name:     "lightcurves",
		C:        2,
		D:        2,
		TimeAxis: 1, // (band, day)
		Classes:  slices.Clone(LightCurveClasses),
		Samples:  make([]data.Sample, n),
	}
	for i := range n {
		ds.Samples[i] = lightCurve(sampleRNG(seed, "lightcurves", i), i)
	}
	return ds
}

type lcObs struct {
	t    float64
	band int
}

func lightCurve(rng *rand.Rand, i int) data.Sample {
	class := rng.IntN(len(LightCurveClasses))
	offset := rng.Float64() * lcYear
	nObs := lcMinObs + rng.IntN(lcMaxObs-lcMinObs+1)
	obs := make([]lcObs, nObs)
	for k := range obs {
		// Uniform over the observable seasons by rejection (acceptance 1/2).
		t := rng.Float64() * lcSurvey
		for math.Mod(t+offset, lcYear) >= lcSeason {
			t = rng.Float64() * lcSurvey
		}
		obs[k] = lcObs{t: t, band: rng.IntN(LightCurveBands)}
	}
	slices.SortFunc(obs, func(a, b lcObs) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.band, b.band))
	})

	amp := logUniform(rng, lcAmpLo, lcAmpHi)
	var flux func(t float64, band int) float64
	period := 0.0
	phase0 := rng.Float64()
	phaseAt := func(t float64) float64 {
		p := math.Mod(t/period+phase0, 1)
		if p < 0 {
			p++
		}
		return p
	}
	pulsatorAmp := func(band int) float64 { return amp * (1.25 - 0.1*float64(band)) }
	switch name := LightCurveClasses[class]; name {
	case "sine-short", "sine-long":
		period = lcPeriod(rng, name == "sine-short")
		flux = func(t float64, band int) float64 {
			return pulsatorAmp(band) * math.Sin(lcTwoPi*phaseAt(t))
		}
	case "sawtooth-short", "sawtooth-long":
		period = lcPeriod(rng, name == "sawtooth-short")
		w := uniform(rng, 0.1, 0.3)
		flux = func(t float64, band int) float64 {
			p := phaseAt(t)
			s := 1 - (p-w)/(1-w) // decline
			if p < w {
				s = p / w // rise
			}
			return pulsatorAmp(band) * (2*s - 1)
		}
	case "eclipsing":
		period = logUniform(rng, lcEBLo, lcEBHi)
		w := uniform(rng, 0.03, 0.08)
		d2 := uniform(rng, 0.2, 0.9)
		dip := func(delta float64) float64 {
			if delta >= w {
				return 0
			}
			return math.Sqrt(1 - (delta/w)*(delta/w))
		}
		flux = func(t float64, band int) float64 {
			p := phaseAt(t)
			primary := min(p, 1-p)
			secondary := math.Abs(p - 0.5)
			return -amp * (1 - 0.03*float64(band)) * (dip(primary) + d2*dip(secondary))
		}
	case "transient":
		t0 := obs[rng.IntN(nObs)].t + uniform(rng, -20, 10)
		rise := uniform(rng, 1, 6)
		fall := uniform(rng, 15, 60)
		flux = func(t float64, band int) float64 {
			dt := t - t0
			b := (float64(band) - lcPeakBand) / 2.5
			return amp * math.Exp(-b*b) * math.Exp(-dt/(fall*(1+0.1*float64(band)))) / (1 + math.Exp(-dt/rise))
		}
	}

	s := data.Sample{
		ID:        fmt.Sprintf("%s %s P=%.4g", sampleID("lc", i), LightCurveClasses[class], period),
		Values:    make([]float32, 2*nObs),
		Positions: make([]float32, 2*nObs),
		Label:     class,
	}
	for k, o := range obs {
		sigma := amp * uniform(rng, lcNoiseLo, lcNoiseHi)
		s.Values[2*k] = float32(flux(o.t, o.band) + sigma*rng.NormFloat64())
		s.Values[2*k+1] = float32(sigma)
		s.Positions[2*k] = float32(o.band)
		s.Positions[2*k+1] = float32(o.t)
	}
	return s
}

// lcPeriod draws a log-uniform period from the short or the long range.
func lcPeriod(rng *rand.Rand, short bool) float64 {
	if short {
		return logUniform(rng, lcShortLo, lcShortHi)
	}
	return logUniform(rng, lcLongLo, lcLongHi)
}
