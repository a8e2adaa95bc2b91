package baseline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"romae/data"
)

const ueaDir = "../../shared/data/uea"

func loadUEA(t testing.TB, name string) (train, test *data.Dataset) {
	t.Helper()
	trainPath := filepath.Join(ueaDir, name+"_TRAIN.ts")
	if _, err := os.Stat(trainPath); err != nil {
		t.Skipf("shared UEA data absent (%v)", err)
	}
	var err error
	if train, err = data.LoadTS(trainPath, data.TSOptions{}); err != nil {
		t.Fatal(err)
	}
	if test, err = data.LoadTS(filepath.Join(ueaDir, name+"_TEST.ts"), data.TSOptions{}); err != nil {
		t.Fatal(err)
	}
	return train, test
}

// TestUCRPublished checks 1-NN ED and 1-NN DTW (full window) against the
// accuracies the UCR archive publishes for these equal-length univariate
// datasets.
func TestUCRPublished(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ed, dtw float64
	}{
		{"GunPoint", 0.9133, 0.9067},
		{"ItalyPowerDemand", 0.9553, 0.9504},
		{"ArrowHead", 0.8000, 0.7029},
	} {
		t.Run(tc.name, func(t *testing.T) {
			train, test := loadUEA(t, tc.name)
			for _, c := range []struct {
				d    Distance
				want float64
			}{{ED(), tc.ed}, {DTW(1), tc.dtw}} {
				start := time.Now()
				r, err := NearestNeighbor(train, test, c.d)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s: %.4f (%d/%d) in %v", tc.name, c.d.Name(), r.Accuracy, r.Correct, r.N, time.Since(start))
				if diff := r.Accuracy - c.want; diff > 0.005 || diff < -0.005 {
					t.Errorf("%s %s = %.4f, UCR archive %.4f", tc.name, c.d.Name(), r.Accuracy, c.want)
				}
			}
		})
	}
}

// TestUEAOthers reports (it has no published numbers to check against here)
// the baselines on the multivariate and unequal-length datasets, in both
// token layouts, and checks that the two layouts agree where they must.
func TestUEAOthers(t *testing.T) {
	for _, name := range []string{"BasicMotions", "JapaneseVowels", "PickupGestureWiimoteZ"} {
		t.Run(name, func(t *testing.T) {
			train, test := loadUEA(t, name)
			start := time.Now()
			rows, err := ClassificationTable(train, test, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				t.Logf("%s %-24s %.4f (n=%d) in %v", name, r.Name, r.Accuracy, r.N, r.Elapsed)
				if r.Accuracy <= 0 || r.Accuracy > 1 {
					t.Errorf("%s: accuracy %v", r.Name, r.Accuracy)
				}
			}
			us, err := NearestNeighbor(train, test, Distance{UniformScaling: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %-24s %.4f", name, "1-NN ED (uniform scaling)", us.Accuracy)
			// The channel-axis layout (one token per observed value, the
			// dimension as position axis 1) of the same files is the same
			// data: the same neighbours.
			opt := data.TSOptions{Missing: data.MissingChannelAxis}
			trainCA, err := data.LoadTS(filepath.Join(ueaDir, name+"_TRAIN.ts"), opt)
			if err != nil {
				t.Fatal(err)
			}
			testCA, err := data.LoadTS(filepath.Join(ueaDir, name+"_TEST.ts"), opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []Distance{ED(), DTW(1)} {
				a, err := NearestNeighbor(train, test, d)
				if err != nil {
					t.Fatal(err)
				}
				b, err := NearestNeighbor(trainCA, testCA, d)
				if err != nil {
					t.Fatal(err)
				}
				if a.Accuracy != b.Accuracy || !slices.Equal(a.Neighbors, b.Neighbors) {
					t.Errorf("%s: drop-step layout %.4f, channel-axis %.4f (neighbours differ)", d.Name(), a.Accuracy, b.Accuracy)
				}
			}
			t.Logf("%s: all runs in %v", name, time.Since(start))
		})
	}
}
