package datasets_test

import (
	"slices"
	"testing"

	"romae/baseline"
	"romae/datasets"
)

// TestUCRGenerators: each generator is deterministic, balanced and draws the
// problem it is named after. The archive's own splits are separable by 1-NN
// with full-window DTW (CBF 0.997, SyntheticControl 0.993, TwoPatterns 1.0 in
// the archive's table) and less so by Euclidean 1-NN (0.852, 0.880, 0.907);
// small draws here must reach at least 0.9 with DTW, far above chance, and
// ED must not beat DTW on the two problems built from shifted shapes.
func TestUCRGenerators(t *testing.T) {
	for _, tc := range []struct {
		name              string
		train, test, l, k int
	}{
		{"CBF", 30, 150, 128, 3},
		{"SyntheticControl", 60, 120, 60, 6},
		{"TwoPatterns", 100, 100, 128, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := datasets.UCRGenerators[tc.name]
			train, test := gen(tc.train, 1), gen(tc.test, 1001)
			if err := train.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(train.Classes) != tc.k || len(train.Samples) != tc.train {
				t.Fatalf("%d classes, %d samples; want %d, %d", len(train.Classes), len(train.Samples), tc.k, tc.train)
			}
			counts := make([]int, tc.k)
			for _, s := range train.Samples {
				if len(s.Values) != tc.l {
					t.Fatalf("%s: length %d, want %d", s.ID, len(s.Values), tc.l)
				}
				counts[s.Label]++
			}
			if slices.Min(counts) < tc.train/tc.k {
				t.Fatalf("class counts %v, want balanced", counts)
			}
			again := gen(tc.train, 1)
			for i := range train.Samples {
				if !slices.Equal(train.Samples[i].Values, again.Samples[i].Values) || train.Samples[i].Label != again.Samples[i].Label {
					t.Fatalf("sample %d differs between two draws with the same seed", i)
				}
			}
			acc := map[string]float64{}
			for _, d := range []baseline.Distance{baseline.ED(), baseline.DTW(1)} {
				r, err := baseline.NearestNeighbor(train, test, d)
				if err != nil {
					t.Fatal(err)
				}
				acc[d.Name()] = r.Accuracy
			}
			ed, dtw := acc[baseline.ED().Name()], acc[baseline.DTW(1).Name()]
			t.Logf("1-NN ED %.3f, DTW %.3f", ed, dtw)
			if dtw < 0.9 {
				t.Errorf("1-NN DTW %.3f, want >= 0.9", dtw)
			}
			if tc.name != "SyntheticControl" && ed > dtw {
				t.Errorf("1-NN ED %.3f beats DTW %.3f", ed, dtw)
			}
		})
	}
}
