package data

import (
	"archive/zip"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// writeNPZ writes arrays (name → shape, data) as an np.savez-style archive.
func writeNPZ(t *testing.T, arrays map[string]*Array) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "physionet_compressed.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, a := range arrays {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteNPY(w, a.Shape, a.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// physioArray builds an [N, T, 83] array; obs lists (record, row, feature,
// value) observations and times[n][row] the row times.
type physioObs struct {
	n, row, f int
	v         float32
}

func physioArray(N, T int, times [][]float32, obs []physioObs) *Array {
	const W = 2*PhysioNetFeatures + 1
	a := &Array{Shape: []int{N, T, W}, Data: make([]float32, N*T*W)}
	for n := range times {
		for r, tm := range times[n] {
			a.Data[(n*T+r)*W+W-1] = tm
		}
	}
	for _, o := range obs {
		base := (o.n*T + o.row) * W
		a.Data[base+o.f] = o.v
		a.Data[base+PhysioNetFeatures+o.f] = 1
	}
	return a
}

func TestLoadPhysioNetNPZ(t *testing.T) {
	// Two records of up to 3 time rows; times in hours (max 48), so the
	// loader rescales them to t/T with T = 48. Record 1 has one padding row.
	times := [][]float32{{0, 12, 48}, {6, 24, 0}}
	obs := []physioObs{
		{0, 0, 0, 1.5}, {0, 0, 40, -2}, {0, 1, 3, 0.25}, {0, 2, 7, 9},
		{1, 0, 5, 3}, {1, 1, 5, 4}, {1, 1, 6, 5},
	}
	train := physioArray(2, 3, times, obs)
	test := physioArray(1, 3, [][]float32{{0, 1, 0}}, []physioObs{{0, 1, 2, 7}})
	path := writeNPZ(t, map[string]*Array{"train": train, "test": test})

	ds, err := LoadPhysioNetNPZ(path, "train")
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.C != 1 || ds.D != 2 || len(ds.Samples) != 2 || ds.Name != "physionet-train" {
		t.Fatalf("C %d D %d samples %d name %q", ds.C, ds.D, len(ds.Samples), ds.Name)
	}
	s0 := ds.Samples[0]
	if s0.ID != "train-000000" || s0.Label != -1 {
		t.Errorf("ID %q label %d", s0.ID, s0.Label)
	}
	if want := []float32{1.5, -2, 0.25, 9}; !equalF32(s0.Values, want) {
		t.Errorf("record 0 values %v, want %v", s0.Values, want)
	}
	if want := []float32{0, 0, 0, 40, 0.25, 3, 1, 7}; !equalF32(s0.Positions, want) {
		t.Errorf("record 0 positions %v, want %v", s0.Positions, want)
	}
	s1 := ds.Samples[1]
	if want := []float32{3, 4, 5}; !equalF32(s1.Values, want) {
		t.Errorf("record 1 values %v, want %v", s1.Values, want)
	}
	if want := []float32{0.125, 5, 0.5, 5, 0.5, 6}; !equalF32(s1.Positions, want) {
		t.Errorf("record 1 positions %v, want %v (padding row must be skipped)", s1.Positions, want)
	}

	// Times already in [0, 1] (HeTVAE's file) stay as they are.
	te, err := LoadPhysioNetNPZ(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, 2}; !equalF32(te.Samples[0].Positions, want) {
		t.Errorf("test positions %v, want %v", te.Samples[0].Positions, want)
	}
	// Unobserved NaN values are ignored.
	nanUnobs := physioArray(1, 2, [][]float32{{0, 1}}, []physioObs{{0, 0, 1, 2}})
	nanUnobs.Data[3] = float32(math.NaN())
	if _, err := PhysioNetRecords(nanUnobs, "x"); err != nil {
		t.Errorf("NaN under mask 0: %v", err)
	}
}

func TestLoadPhysioNetNPZErrors(t *testing.T) {
	const W = 2*PhysioNetFeatures + 1
	good := func() *Array { return physioArray(1, 2, [][]float32{{0, 1}}, []physioObs{{0, 0, 0, 1}, {0, 1, 2, 3}}) }
	nan := good()
	nan.Data[0] = float32(math.NaN())
	mask := good()
	mask.Data[PhysioNetFeatures+5] = 0.5
	empty := physioArray(2, 2, [][]float32{{0, 1}, {0, 0}}, []physioObs{{0, 0, 0, 1}})
	negT := good()
	negT.Data[W-1] = -1
	cases := []struct {
		name  string
		arr   *Array
		parts []string
	}{
		{"wrong last axis", &Array{Shape: []int{1, 2, 82}, Data: make([]float32, 164)}, []string{"last axis has 82", "83"}},
		{"wrong rank", &Array{Shape: []int{2, 83}, Data: make([]float32, 166)}, []string{"shape [2 83]"}},
		{"mask not 0/1", mask, []string{"record 0, time row 0, feature 5", "mask 0.5"}},
		{"NaN observed", nan, []string{"record 0, time row 0, feature 0", "not finite"}},
		{"empty record", empty, []string{"record 1 has no observed value"}},
		{"negative time", negT, []string{"record 0, time row 0", "time -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeNPZ(t, map[string]*Array{"train": c.arr})
			_, err := LoadPhysioNetNPZ(path, "train")
			wantErr(t, err, append([]string{path, "train"}, c.parts...)...)
		})
	}
	t.Run("missing key", func(t *testing.T) {
		path := writeNPZ(t, map[string]*Array{"train": good()})
		_, err := LoadPhysioNetNPZ(path, "test")
		wantErr(t, err, path, `no array "test"`, "train")
	})
}
