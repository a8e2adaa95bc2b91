package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"romae/data"
)

// TestWriteSplits: every file reads back with its split size, irregular
// times and a target in its range; Slope's target is the series' trend
// (its least-squares slope, up to the seasonal swing); a seed writes the
// same bytes again.
func TestWriteSplits(t *testing.T) {
	dir, again := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, again} {
		if err := run(d, 3, 20, 30); err != nil {
			t.Fatal(err)
		}
	}
	ranges := map[string][2]float64{"Frequency": {2, 8}, "Amplitude": {0.5, 2}, "Slope": {-2, 2}}
	for name, r := range ranges {
		for i, split := range []string{"TRAIN", "TEST"} {
			path := filepath.Join(dir, name+"_"+split+".ts")
			ds, err := data.LoadTS(path, data.TSOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{20, 30}[i]; len(ds.Samples) != want || ds.TargetDim != 1 {
				t.Fatalf("%s: %d series, target dim %d; want %d, 1", path, len(ds.Samples), ds.TargetDim, want)
			}
			for j, s := range ds.Samples {
				n, y := s.Len(1), float64(s.Target[0])
				if n < 60 || n > 120 || y < r[0] || y > r[1] {
					t.Fatalf("%s series %d: %d observations, target %v", path, j, n, y)
				}
				if s.Positions[1]-s.Positions[0] == s.Positions[2]-s.Positions[1] {
					t.Fatalf("%s series %d: evenly spaced times", path, j)
				}
				if name == "Slope" {
					if b := lsSlope(s.Positions, s.Values); math.Abs(b-y) > 0.6 {
						t.Errorf("%s series %d: least-squares slope %.3f, target %.3f", path, j, b, y)
					}
				}
			}
			a, _ := os.ReadFile(path)
			b, _ := os.ReadFile(filepath.Join(again, name+"_"+split+".ts"))
			if !bytes.Equal(a, b) {
				t.Errorf("%s: another run with the same seed wrote different bytes", path)
			}
		}
	}
	if err := run(t.TempDir(), 1, 0, 5); err == nil {
		t.Error("-train 0 accepted")
	}
}

func lsSlope(t, x []float32) float64 {
	var mt, mx float64
	for i := range t {
		mt += float64(t[i])
		mx += float64(x[i])
	}
	mt, mx = mt/float64(len(t)), mx/float64(len(t))
	var num, den float64
	for i := range t {
		num += (float64(t[i]) - mt) * (float64(x[i]) - mx)
		den += (float64(t[i]) - mt) * (float64(t[i]) - mt)
	}
	return num / den
}
