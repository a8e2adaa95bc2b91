package data

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
)

// roundTripTS writes ds with WriteTS and reads it back with LoadTS.
func roundTripTS(t *testing.T, ds *Dataset) *Dataset {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTS(&buf, ds); err != nil {
		t.Fatal(err)
	}
	back, err := LoadTS(writeTemp(t, "x.ts", buf.String()), TSOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	return back
}

// sameSamples fails unless got holds want's samples (IDs aside: LoadTS
// numbers the cases).
func sameSamples(t *testing.T, got, want *Dataset) {
	t.Helper()
	if got.C != want.C || got.D != want.D || len(got.Samples) != len(want.Samples) || !slices.Equal(got.Classes, want.Classes) {
		t.Fatalf("got C %d D %d, %d samples, classes %v; want C %d D %d, %d samples, classes %v",
			got.C, got.D, len(got.Samples), got.Classes, want.C, want.D, len(want.Samples), want.Classes)
	}
	for i := range want.Samples {
		g, w := &got.Samples[i], &want.Samples[i]
		if !slices.Equal(g.Values, w.Values) || !slices.Equal(g.Positions, w.Positions) || g.Label != w.Label || !slices.Equal(g.Target, w.Target) {
			t.Fatalf("sample %d: got %+v, want %+v", i, *g, *w)
		}
	}
}

func TestWriteTSRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   *Dataset
	}{
		{"univariate steps, labels", &Dataset{C: 1, D: 1, Classes: []string{"a", "b"}, Samples: []Sample{
			{Values: []float32{1.5, -2, 3e-7}, Positions: []float32{0, 1, 2}, Label: 1},
			{Values: []float32{0, 0.1, 1e30}, Positions: []float32{0, 1, 2}, Label: 0},
		}}},
		{"two dimensions, time stamps, unequal lengths", &Dataset{C: 2, D: 1, Classes: []string{"x", "y", "z"}, Samples: []Sample{
			{Values: []float32{1, 2, 3, 4}, Positions: []float32{0.5, 2.25}, Label: 2},
			{Values: []float32{5, 6, 7, 8, 9, 10}, Positions: []float32{-1, 0, 7}, Label: 0},
		}}},
		{"targets", &Dataset{C: 1, D: 1, TargetDim: 1, Samples: []Sample{
			{Values: []float32{1, 2}, Positions: []float32{0, 1}, Label: -1, Target: []float32{0.25}},
			{Values: []float32{3}, Positions: []float32{0}, Label: -1, Target: []float32{-4}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameSamples(t, roundTripTS(t, tc.ds), tc.ds) })
	}
}

// TestWriteTSBasicMotions: a real multivariate file survives a write and a
// read unchanged.
func TestWriteTSBasicMotions(t *testing.T) {
	ds, err := LoadTS(filepath.Join(ueaDir, "BasicMotions_TRAIN.ts"), TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameSamples(t, roundTripTS(t, ds), ds)
}

func TestWriteTSErrors(t *testing.T) {
	one := func(mod func(*Dataset)) *Dataset {
		ds := &Dataset{C: 1, D: 1, Classes: []string{"a"}, Samples: []Sample{{Values: []float32{1, 2}, Positions: []float32{0, 1}}}}
		mod(ds)
		return ds
	}
	for _, tc := range []struct {
		name string
		ds   *Dataset
		want []string
	}{
		{"two position axes", one(func(ds *Dataset) { ds.D = 2; ds.Samples[0].Positions = []float32{0, 0, 1, 0} }), []string{"2 position axes"}},
		{"class name with a space", one(func(ds *Dataset) { ds.Classes[0] = "a b" }), []string{`class name "a b"`}},
		{"unlabelled sample", one(func(ds *Dataset) { ds.Samples[0].Label = -1 }), []string{"sample 0", "no label"}},
		{"times not increasing", one(func(ds *Dataset) { ds.Samples[0].Positions = []float32{1, 1} }), []string{"sample 0", "not after"}},
		{"per-token targets", one(func(ds *Dataset) {
			ds.Classes, ds.Samples[0].Label = nil, -1
			ds.TargetDim, ds.TargetPerToken, ds.Samples[0].Target = 1, true, []float32{1, 2}
		}), []string{"targets of width 1"}},
		{"no samples", one(func(ds *Dataset) { ds.Samples = nil }), []string{"no samples"}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, WriteTS(&bytes.Buffer{}, tc.ds), tc.want...) })
	}
}
