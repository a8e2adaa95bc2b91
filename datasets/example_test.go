package datasets_test

import (
	"fmt"

	"romae/datasets"
)

// The absolute-position task of Sec. 5.1: 10 identical tokens per sample,
// each to be mapped back to its own position.
func ExamplePosition() {
	train := datasets.Position(20000, 10, 0, 50, 1)
	test := datasets.Position(4000, 10, 0, 50, 2)
	s := train.Samples[0]
	fmt.Println(len(train.Samples), len(test.Samples), "samples;", s.Len(train.C), "tokens of value", s.Values[0])
	fmt.Println("target == position:", s.Target[3] == s.Positions[3])
	// Output:
	// 20000 4000 samples; 10 tokens of value 1
	// target == position: true
}

// The spiral interpolation task of Table 7: hide 45 of the 75 steps (about
// 60%) and reconstruct them.
func ExampleSpiral() {
	train, test := datasets.Spiral(300, 1)
	observed, hidden := datasets.ObserveFixed(test, 30, 2)
	fmt.Println(len(train.Samples), "train,", len(test.Samples), "test spirals of", test.Samples[0].Len(test.C), "steps")
	fmt.Println("observed", observed.Samples[0].Len(2), "hidden", hidden.Samples[0].Len(2), "same ID:", observed.Samples[7].ID == hidden.Samples[7].ID)
	// Output:
	// 200 train, 100 test spirals of 75 steps
	// observed 30 hidden 45 same ID: true
}

// The pendulum regression task of Table 5: 50 of 100 noisy 24×24 frames per
// sample, each one token, with (sin φ, cos φ) targets.
func ExamplePendulum() {
	ds := datasets.Pendulum(8, 1)
	s := ds.Samples[0]
	fmt.Println("C =", ds.C, "tokens =", s.Len(ds.C), "target dim =", ds.TargetDim, "per token:", ds.TargetPerToken)
	// Output:
	// C = 576 tokens = 50 target dim = 2 per token: true
}

// Interpolation splits for HeTVAE's synthetic benchmark: 3..10 observed
// points for training, a fixed count for each test set.
func ExampleObserveRandom() {
	ds := datasets.Synthetic(2000, 1)
	observed, hidden := datasets.ObserveRandom(ds, 3, 10, 7)
	o, h := observed.Samples[0].Len(1), hidden.Samples[0].Len(1)
	fmt.Println(o+h, "points;", o >= 3 && o <= 10)
	// Output:
	// 50 points; true
}
