package main

import (
	"path/filepath"
	"slices"
	"testing"

	"romae/data"
)

// TestHoldoutSplit: the two files partition each series' steps, the hidden
// part is the requested fraction, and both keep the series order and labels.
func TestHoldoutSplit(t *testing.T) {
	in := "../../../shared/data/uea/BasicMotions_TEST.ts"
	dir := t.TempDir()
	obsPath, hidPath := filepath.Join(dir, "o.ts"), filepath.Join(dir, "h.ts")
	if err := run(in, obsPath, hidPath, 0.2, 3); err != nil {
		t.Fatal(err)
	}
	orig, err := data.LoadTS(in, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := data.LoadTS(obsPath, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hid, err := data.LoadTS(hidPath, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Samples) != len(orig.Samples) || len(hid.Samples) != len(orig.Samples) {
		t.Fatalf("%d and %d series, want %d", len(obs.Samples), len(hid.Samples), len(orig.Samples))
	}
	c := orig.C
	for i, s := range orig.Samples {
		o, h := obs.Samples[i], hid.Samples[i]
		if o.Label != s.Label || h.Label != s.Label {
			t.Fatalf("series %d: labels %d, %d, want %d", i, o.Label, h.Label, s.Label)
		}
		if n := s.Len(c); h.Len(c) != n/5 || o.Len(c)+h.Len(c) != n {
			t.Fatalf("series %d: %d observed + %d hidden of %d steps, want 20%% hidden", i, o.Len(c), h.Len(c), n)
		}
		// Merge by time and compare with the original.
		for _, part := range []data.Sample{o, h} {
			for k, p := range part.Positions {
				step := int(p)
				if !slices.Equal(part.Values[k*c:(k+1)*c], s.Values[step*c:(step+1)*c]) {
					t.Fatalf("series %d step %d: values differ from the original", i, step)
				}
			}
		}
	}
	if err := run(in, obsPath, hidPath, 1, 3); err == nil {
		t.Fatal("-frac 1 accepted")
	}
}
