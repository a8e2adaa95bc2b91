package data

import (
	"encoding/json"
	"math"
	"testing"
)

func TestStats(t *testing.T) {
	ds := &Dataset{C: 2, D: 1, Samples: []Sample{
		{Values: []float32{1, 5, 3, 5}, Positions: []float32{0, 1}},
		{Values: []float32{5, 5}, Positions: []float32{0}},
	}}
	st := ComputeStats(ds)
	// Slot 0: 1, 3, 5 → mean 3, std sqrt(8/3). Slot 1 is constant → std 1.
	if st.Mean[0] != 3 || math.Abs(st.Std[0]-math.Sqrt(8.0/3)) > 1e-12 || st.Mean[1] != 5 || st.Std[1] != 1 {
		t.Fatalf("stats %+v", st)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Apply(ds); err != nil {
		t.Fatal(err)
	}
	if after := ComputeStats(ds); math.Abs(after.Mean[0]) > 1e-6 || math.Abs(after.Std[0]-1) > 1e-6 || after.Mean[1] != 0 {
		t.Errorf("after Apply: %+v", after)
	}
	v := append([]float32(nil), ds.Samples[0].Values...)
	if err := back.Invert(v); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 5, 3, 5} {
		if math.Abs(float64(v[i]-want)) > 1e-6 {
			t.Errorf("Invert: value %d = %v, want %v", i, v[i], want)
		}
	}
	wantErr(t, Stats{Mean: []float64{0}, Std: []float64{1}}.Apply(ds), "1 means and 1 stds for 2 value slots")
	wantErr(t, Stats{Mean: []float64{0, 0}, Std: []float64{1, 0}}.Apply(ds), "slot 1")
	wantErr(t, back.Invert(make([]float32, 3)), "not a multiple")
}

// A slot that is one value up to float32 rounding (a patch's time offset
// 2·1.0000006, as MJD minutes in units of 1/1440 give) is constant: its
// std is 1, not the rounding's 1e-7, which would turn the rounding into
// unit-sized noise. A small but real spread is kept.
func TestStatsRoundingIsConstant(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vals    []float32
		wantStd float64 // 0: the computed spread
	}{
		{"rounding of 2", []float32{2.0000012, 2.0000014, 2.0000012, 2.0000010}, 1},
		{"real spread", []float32{2.001, 2.002, 2.000, 2.003}, 0},
	} {
		ds := &Dataset{C: 1, D: 1, Samples: []Sample{{Values: tc.vals, Positions: []float32{0, 1, 2, 3}}}}
		st := ComputeStats(ds)
		if tc.wantStd != 0 && st.Std[0] != tc.wantStd || tc.wantStd == 0 && (st.Std[0] == 1 || st.Std[0] < 1e-4) {
			t.Errorf("%s: std %v", tc.name, st.Std[0])
		}
	}
}
