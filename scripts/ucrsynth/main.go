// Command ucrsynth writes the UCR archive's generated problems (CBF,
// SyntheticControl, TwoPatterns; datasets.UCRGenerators) as NAME_TRAIN.ts
// and NAME_TEST.ts with the archive's split sizes, for a held-out check of the
// default recipe: scripts/heldout.sh. With -drop F each series loses a
// fraction F of its steps at random (data.DropRandomSteps, the paper's UEA
// protocol at 0.3) and the files hold (time, value) pairs: irregular series.
//
//	go run ./scripts/ucrsynth -out DIR [-seed S] [-drop F]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"romae/ckpt"
	"romae/data"
	"romae/datasets"
)

// splits are the archive's train/test sizes.
var splits = map[string][2]int{"CBF": {30, 900}, "SyntheticControl": {300, 300}, "TwoPatterns": {1000, 4000}}

func main() {
	out := flag.String("out", "heldout-data", "directory for NAME_TRAIN.ts and NAME_TEST.ts")
	seed := flag.Uint64("seed", 1, "generator seed (the test split uses seed+1000)")
	drop := flag.Float64("drop", 0, "fraction of each series' steps to drop at random, in [0, 1)")
	flag.Parse()
	if err := run(*out, *seed, *drop); err != nil {
		fmt.Fprintln(os.Stderr, "ucrsynth:", err)
		os.Exit(1)
	}
}

func run(out string, seed uint64, drop float64) error {
	if !(drop >= 0 && drop < 1) {
		return fmt.Errorf("-drop %v: want a fraction in [0, 1)", drop)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, gen := range datasets.UCRGenerators {
		for i, split := range []string{"TRAIN", "TEST"} {
			ds := gen(splits[name][i], seed+uint64(i)*1000)
			if drop > 0 {
				var err error
				if ds, err = data.DropRandomSteps(ds, drop, 0, seed+uint64(i)*1000); err != nil {
					return err
				}
			}
			path := filepath.Join(out, name+"_"+split+".ts")
			if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, ds) }); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return nil
}
