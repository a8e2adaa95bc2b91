package main

import (
	"path/filepath"
	"testing"

	"romae/data"
)

// TestWriteSplits: every file LoadTS reads back with the archive's split
// size, regular without -drop and irregular (30% fewer steps) with it.
func TestWriteSplits(t *testing.T) {
	for _, drop := range []float64{0, 0.3} {
		dir := t.TempDir()
		if err := run(dir, 1, drop); err != nil {
			t.Fatal(err)
		}
		for name, sizes := range splits {
			for i, split := range []string{"TRAIN", "TEST"} {
				ds, err := data.LoadTS(filepath.Join(dir, name+"_"+split+".ts"), data.TSOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(ds.Samples) != sizes[i] {
					t.Fatalf("%s %s: %d series, want %d", name, split, len(ds.Samples), sizes[i])
				}
				full := map[string]int{"CBF": 128, "SyntheticControl": 60, "TwoPatterns": 128}[name]
				want := full - int(float64(full)*drop+0.5)
				if got := ds.Samples[0].Len(1); got != want {
					t.Fatalf("%s %s (drop %v): %d steps, want %d", name, split, drop, got, want)
				}
			}
		}
	}
	if err := run(t.TempDir(), 1, 1); err == nil {
		t.Fatal("-drop 1 accepted")
	}
}
