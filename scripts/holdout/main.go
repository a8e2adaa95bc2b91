// Command holdout splits a .ts file's series for an interpolation check:
// each series loses a fraction of its time steps, chosen at random, to a
// second file with the same series in the same order, so that
//
//	romae evaluate --model PRETRAINED --data OBSERVED.ts --hidden HIDDEN.ts --baselines
//
// scores romae's values at the hidden steps beside linear and spline
// interpolation. Both files hold (time, value) pairs. The split is
// datasets.ObserveFraction's: every series keeps at least one observed step
// and hides at least one.
//
//	go run ./scripts/holdout -in X.ts -frac 0.2 -observed O.ts -hidden H.ts [-seed S]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"romae/ckpt"
	"romae/data"
	"romae/datasets"
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
	for i, s := range ds.Samples {
		if n := s.Len(ds.C); n < 2 {
			return fmt.Errorf("%s: series %d has %d step(s); need 2 to hide one", in, i, n)
		}
	}
	obs, hid := datasets.ObserveFraction(ds, frac, seed)
	for path, part := range map[string]*data.Dataset{observed: obs, hidden: hid} {
		if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, part) }); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}
