// Command tsersynth writes generated extrinsic-regression problems (a
// number per series, as in the Monash TSER archive) as NAME_TRAIN.ts and
// NAME_TEST.ts, for a check of the default recipe on regression: each
// series has 60–120 observations at random times in [0, 1], and its target
// is the rate (Frequency), size (Amplitude) or trend (Slope) of the signal
// under nuisance level, phase and noise.
//
//	go run ./scripts/tsersynth -out DIR [-seed S] [-train N] [-test N]
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"romae/ckpt"
	"romae/data"
)

func main() {
	out := flag.String("out", "tser-data", "directory for NAME_TRAIN.ts and NAME_TEST.ts")
	seed := flag.Uint64("seed", 1, "generator seed (the test split uses seed+1000)")
	nTrain := flag.Int("train", 200, "training series per problem")
	nTest := flag.Int("test", 1000, "test series per problem")
	flag.Parse()
	if err := run(*out, *seed, *nTrain, *nTest); err != nil {
		fmt.Fprintln(os.Stderr, "tsersynth:", err)
		os.Exit(1)
	}
}

// problem draws one series' (times, values) and its target.
type problem func(r *rand.Rand, t []float64) (x []float64, y float64)

var problems = map[string]problem{
	// Frequency: the rate of a noisy oscillation at a random phase,
	// amplitude and level (heart rate from a pulse signal).
	"Frequency": func(r *rand.Rand, t []float64) ([]float64, float64) {
		f, a, c, ph := 2+6*r.Float64(), 0.5+1.5*r.Float64(), r.NormFloat64(), 2*math.Pi*r.Float64()
		x := make([]float64, len(t))
		for i, ti := range t {
			x[i] = c + a*math.Sin(2*math.Pi*f*ti+ph) + 0.1*a*r.NormFloat64()
		}
		return x, f
	},
	// Amplitude: the size of the oscillation (an energy), at a random rate,
	// phase and level.
	"Amplitude": func(r *rand.Rand, t []float64) ([]float64, float64) {
		f, a, c, ph := 2+6*r.Float64(), 0.5+1.5*r.Float64(), r.NormFloat64(), 2*math.Pi*r.Float64()
		x := make([]float64, len(t))
		for i, ti := range t {
			x[i] = c + a*math.Sin(2*math.Pi*f*ti+ph) + 0.2*r.NormFloat64()
		}
		return x, a
	},
	// Slope: the trend under a seasonal swing (a degradation rate).
	"Slope": func(r *rand.Rand, t []float64) ([]float64, float64) {
		s, f, c, ph := -2+4*r.Float64(), 2+6*r.Float64(), r.NormFloat64(), 2*math.Pi*r.Float64()
		x := make([]float64, len(t))
		for i, ti := range t {
			x[i] = c + s*ti + 0.5*math.Sin(2*math.Pi*f*ti+ph) + 0.1*r.NormFloat64()
		}
		return x, s
	},
}

func run(out string, seed uint64, nTrain, nTest int) error {
	if nTrain < 1 || nTest < 1 {
		return fmt.Errorf("-train %d, -test %d: want at least one series each", nTrain, nTest)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, gen := range problems {
		h := fnv.New64a()
		h.Write([]byte(name))
		stream := h.Sum64() // the problem's, in both splits
		for i, split := range []string{"TRAIN", "TEST"} {
			n := []int{nTrain, nTest}[i]
			r := rand.New(rand.NewPCG(seed+uint64(i)*1000, stream))
			ds := &data.Dataset{Name: name, C: 1, D: 1, TargetDim: 1}
			for j := range n {
				// 60–120 observations at random times in [0, 1]: irregular.
				t := make([]float64, 60+r.IntN(61))
				for k := range t {
					t[k] = r.Float64()
				}
				slices.Sort(t)
				x, y := gen(r, t)
				s := data.Sample{ID: fmt.Sprint(j), Label: -1, Target: []float32{float32(y)}}
				for k := range t {
					s.Values = append(s.Values, float32(x[k]))
					s.Positions = append(s.Positions, float32(t[k]))
				}
				ds.Samples = append(ds.Samples, s)
			}
			path := filepath.Join(out, name+"_"+split+".ts")
			if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, ds) }); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return nil
}
