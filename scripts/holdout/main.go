// Command holdout splits a .ts file's series for an interpolation check:
// each series loses a fraction of its time steps, chosen at random, to a
// second file with the same series in the same order, so that
//
//	romae evaluate --model PRETRAINED --data OBSERVED.ts --hidden HIDDEN.ts --baselines
//
// scores romae's values at the hidden steps beside linear and spline
// interpolation. Both files hold (time, value) pairs. Every series keeps at
// least one observed step and hides at least one.
//
//	go run ./scripts/holdout -in X.ts -frac 0.2 -observed O.ts -hidden H.ts [-seed S]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"romae/ckpt"
	"romae/data"
)

func main() {
	in := flag.String("in", "", "input .ts file")
	frac := flag.Float64("frac", 0.2, "fraction of each series' steps to hide, in (0, 1)")
	seed := flag.Uint64("seed", 1, "random seed")
	observed := flag.String("observed", "", "output: the steps left in")
	hidden := flag.String("hidden", "", "output: the steps taken out")
	flag.Parse()
	if err := run(*in, *observed, *hidden, *frac, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "holdout:", err)
		os.Exit(1)
	}
}

func run(in, observed, hidden string, frac float64, seed uint64) error {
	if in == "" || observed == "" || hidden == "" {
		return fmt.Errorf("-in, -observed and -hidden are required")
	}
	if !(frac > 0 && frac < 1) {
		return fmt.Errorf("-frac %v: want a fraction in (0, 1)", frac)
	}
	ds, err := data.LoadTS(in, data.TSOptions{})
	if err != nil {
		return err
	}
	obs, hid := *ds, *ds
	obs.Samples, hid.Samples = make([]data.Sample, len(ds.Samples)), make([]data.Sample, len(ds.Samples))
	rng := rand.New(rand.NewPCG(seed, 0x686f6c646f7574))
	for i, s := range ds.Samples {
		n := s.Len(ds.C)
		if n < 2 {
			return fmt.Errorf("%s: series %d has %d step(s); need 2 to hide one", in, i, n)
		}
		k := min(max(int(math.Round(frac*float64(n))), 1), n-1)
		hide := make([]bool, n)
		for _, t := range rng.Perm(n)[:k] {
			hide[t] = true
		}
		o, h := data.Sample{ID: s.ID, Label: s.Label, Target: s.Target}, data.Sample{ID: s.ID, Label: s.Label, Target: s.Target}
		for t := range n {
			dst := &o
			if hide[t] {
				dst = &h
			}
			dst.Values = append(dst.Values, s.Values[t*ds.C:(t+1)*ds.C]...)
			dst.Positions = append(dst.Positions, s.Positions[t*ds.D:(t+1)*ds.D]...)
		}
		obs.Samples[i], hid.Samples[i] = o, h
	}
	for path, part := range map[string]*data.Dataset{observed: &obs, hidden: &hid} {
		if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, part) }); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}
