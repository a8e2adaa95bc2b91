package datasets

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"romae/data"
)

// Recipe constants of Sines.
const (
	SinesPoints  = 100 // points per series, evenly spaced in [0, 1]
	SinesMaxFreq = 24  // frequencies are integers in [0, SinesMaxFreq] Hz
	sinesNoise   = 0.1 // observation noise std
)

// Sines builds the frequency study of App. B.4: n noisy sums of `freqs` (1 or
// 2) sines with integer frequencies in [0, 24] Hz, sampled at 100 evenly
// spaced times t_j = j/99 in [0, 1]:
//
//	y(t) = Σ_i sin(2π f_i t + φ_i) + ε,   φ_i ~ U(0, 2π),   ε ~ N(0, 0.1²)
//
// Choices where the paper is silent: frequencies are drawn uniformly from
// {0, …, 24} (0 Hz gives a constant), distinct when freqs = 2; each component
// has amplitude 1 and a random phase; the noise std is 0.1 as in the other
// interpolation tasks; positions are t_j (C = 1, D = 1), see ScalePositions.
// Sample.Values is noisy, Sample.Target (TargetDim 1, per token) the clean
// curve. The frequencies, ascending, are recorded in the ID, e.g.
// "sines-000042 f=7,13"; SineFrequencies parses them back so MSE can be
// plotted against frequency. The paper trains on 10 000 series and observes
// 50 of the 100 points: ObserveFixed(ds, 50, seed). It panics unless
// freqs is 1 or 2 and n >= 1.
func Sines(n, freqs int, seed uint64) *data.Dataset {
	mustPositive("Sines", "n", n)
	if freqs != 1 && freqs != 2 {
		panic(fmt.Sprintf("datasets.Sines: freqs = %d, want 1 or 2", freqs))
	}
	ds := &data.Dataset{
		Name:           fmt.Sprintf("sines-%df", freqs),
		C:              1,
		D:              1,
		TargetDim:      1,
		TargetPerToken: true,
		Samples:        make([]data.Sample, n),
	}
	for i := range n {
		rng := sampleRNG(seed, "sines", i)
		fs := make([]int, 0, freqs)
		for len(fs) < freqs {
			if f := rng.IntN(SinesMaxFreq + 1); !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
		slices.Sort(fs)
		phases := make([]float64, freqs)
		for k := range phases {
			phases[k] = rng.Float64() * 2 * math.Pi
		}
		names := make([]string, freqs)
		for k, f := range fs {
			names[k] = strconv.Itoa(f)
		}
		s := data.Sample{
			ID:        sampleID("sines", i) + " f=" + strings.Join(names, ","),
			Values:    make([]float32, SinesPoints),
			Positions: make([]float32, SinesPoints),
			Target:    make([]float32, SinesPoints),
			Label:     -1,
		}
		for j := range SinesPoints {
			t := float64(j) / (SinesPoints - 1)
			y := 0.0
			for k, f := range fs {
				y += math.Sin(2*math.Pi*float64(f)*t + phases[k])
			}
			s.Positions[j] = float32(t)
			s.Target[j] = float32(y)
			s.Values[j] = float32(y + sinesNoise*rng.NormFloat64())
		}
		ds.Samples[i] = s
	}
	return ds
}

// SineFrequencies returns the frequencies recorded in a Sines sample ID.
func SineFrequencies(id string) ([]int, error) {
	_, list, ok := strings.Cut(id, " f=")
	if !ok || list == "" {
		return nil, fmt.Errorf("SineFrequencies: id %q has no \" f=\" field", id)
	}
	var fs []int
	for _, part := range strings.Split(list, ",") {
		f, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("SineFrequencies: id %q: %w", id, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}
