package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stampedFiles writes two series, "a" of steps 0..n-1 and "b" of steps
// 3..n+2, at times origin + unit·step, as a long CSV and as a .ts file with
// @timeStamps, and returns their paths.
func stampedFiles(t *testing.T, origin, unit float64, n int) (csvPath, tsPath string) {
	t.Helper()
	dir := t.TempDir()
	var c, ts strings.Builder
	c.WriteString("id,time,value\n")
	ts.WriteString("@problemName stamped\n@timeStamps true\n@univariate true\n@classLabel false\n@data\n")
	for i, id := range []string{"a", "b"} {
		var pairs []string
		for k := range n {
			tm := fmt.Sprint(origin + unit*float64(k+3*i))
			fmt.Fprintf(&c, "%s,%s,%d\n", id, tm, k)
			pairs = append(pairs, fmt.Sprintf("(%s,%d)", tm, k))
		}
		ts.WriteString(strings.Join(pairs, ",") + "\n")
	}
	csvPath, tsPath = filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.ts")
	for p, b := range map[string]string{csvPath: c.String(), tsPath: ts.String()} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return csvPath, tsPath
}

// Times far from 0 keep their spacing when each series starts at 0 and the
// subtraction is done before rounding to float32; read as they are, Unix
// seconds at a 10 s cadence collapse onto float32's 128 s steps.
func TestTimeMapKeepsSpacing(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		name         string
		origin, unit float64
		src          Source
		tol          float64 // |position − step| allowed
		collapse     bool    // as read, some consecutive steps share a position
	}{
		{"unix seconds as read", 1.7e9, 10, Source{}, 0, true},
		{"unix seconds", 1.7e9, 10, Source{TimeOrigin: TimeOriginSeries, TimeUnit: 10}, 0, false},
		{"unix milliseconds", 1.7e12, 1000, Source{TimeOrigin: TimeOriginSeries, TimeUnit: 1000}, 0, false},
		{"MJD minutes as read", 60000, 1.0 / 1440, Source{}, 0, true},
		{"MJD minutes", 60000, 1.0 / 1440, Source{TimeOrigin: TimeOriginSeries, TimeUnit: 1.0 / 1440}, 1e-4, false},
		{"steps, origin only", 0, 1, Source{TimeOrigin: TimeOriginSeries}, 0, false},
	} {
		csvPath, tsPath := stampedFiles(t, tc.origin, tc.unit, n)
		for _, path := range []string{csvPath, tsPath} {
			name := tc.name + " " + filepath.Ext(path)
			ds, err := tc.src.Load(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !ds.TimeStamps || len(ds.Samples) != 2 {
				t.Fatalf("%s: %d samples, TimeStamps %v", name, len(ds.Samples), ds.TimeStamps)
			}
			collapsed := false
			for i, s := range ds.Samples {
				for k, p := range s.Positions {
					if k > 0 && p == s.Positions[k-1] {
						collapsed = true
					}
					if tc.collapse {
						continue
					}
					if math.Abs(float64(p)-float64(k)) > tc.tol {
						t.Fatalf("%s: series %s step %d at position %v", name, s.ID, k, p)
					}
				}
				if want := tc.origin + tc.unit*float64(3*i); !tc.collapse && math.Abs(s.TimeOrigin-want) > 1e-9*math.Abs(want) {
					t.Errorf("%s: series %s origin %v, want %v", name, s.ID, s.TimeOrigin, want)
				}
			}
			if collapsed != tc.collapse {
				t.Errorf("%s: consecutive steps share a position: %v, want %v", name, collapsed, tc.collapse)
			}
		}
	}
}

// The unit the training commands apply to data read with per-series
// origins (Rescale) gives the positions a later read with the whole map
// gives, bit for bit; and MedianSpacing finds the cadence.
func TestRescaleMatchesLoader(t *testing.T) {
	csvPath, _ := stampedFiles(t, 60000, 1.0/1440, 50)
	shifted, err := Source{TimeOrigin: TimeOriginSeries}.Load(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := MedianSpacing(shifted)
	if math.Abs(unit*1440-1) > 1e-4 {
		t.Fatalf("median spacing %v, want 1/1440", unit)
	}
	Rescale(shifted, unit)
	mapped, err := Source{TimeOrigin: TimeOriginSeries, TimeUnit: unit}.Load(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mapped.Samples {
		for k, p := range mapped.Samples[i].Positions {
			if q := shifted.Samples[i].Positions[k]; math.Float32bits(p) != math.Float32bits(q) {
				t.Fatalf("series %d token %d: loader %v, Rescale %v", i, k, p, q)
			}
		}
	}
}

func TestMedianSpacing(t *testing.T) {
	for _, tc := range []struct {
		name string
		ds   *Dataset
		want float64
	}{
		{"one value", &Dataset{C: 1, D: 1, Samples: []Sample{{Values: []float32{1}, Positions: []float32{5}}}}, 0},
		{"irregular", &Dataset{C: 1, D: 1, Samples: []Sample{{Values: make([]float32, 5), Positions: []float32{0, 2, 4, 5, 9}}}}, 2},
		// Bands observed at interleaved times: the spacing is within a band.
		{"per channel", &Dataset{C: 1, D: 2, TimeAxis: 1, Samples: []Sample{{Values: make([]float32, 6),
			Positions: []float32{0, 0, 1, 1, 0, 3, 1, 4, 0, 6, 1, 7}}}}, 3},
		{"repeated times", &Dataset{C: 1, D: 1, Samples: []Sample{{Values: make([]float32, 4), Positions: []float32{0, 0, 10, 10}}}}, 10},
	} {
		if got := MedianSpacing(tc.ds); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A file of held-out points read WithOrigins of the observed file sits on
// the observed series' axes, whatever its own earliest times.
func TestWithOrigins(t *testing.T) {
	dir := t.TempDir()
	obs, hid := filepath.Join(dir, "obs.csv"), filepath.Join(dir, "hid.csv")
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte("id,time,value\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(obs, "a,1700000020,1\na,1700000030,2\nb,1700000100,3\nb,1700000110,4\n")
	write(hid, "a,1700000000,0\nb,1700000120,5\nc,1700000500,9\n")
	src := Source{TimeOrigin: TimeOriginSeries, TimeUnit: 10}
	o, err := src.Load(obs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := src.WithOrigins(o).Load(hid)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{"a": -2, "b": 2, "c": 0} // c is not observed: its own origin
	for _, s := range h.Samples {
		if s.Positions[0] != want[s.ID] {
			t.Errorf("hidden %s at %v, want %v", s.ID, s.Positions[0], want[s.ID])
		}
	}
	if file := (Source{}).WithOrigins(o); file.origins != nil {
		t.Error("WithOrigins on times as read: want no origins")
	}
}

// Array and dataset files get the map after loading: a unit halves steps.
func TestTimeMapArrays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	var vals []byte
	for _, v := range []float32{1, 2, 3, 4} {
		vals = binary.LittleEndian.AppendUint32(vals, math.Float32bits(v))
	}
	if err := os.WriteFile(path, npyFile("<f4", "(1, 4, 1)", vals), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := Source{TimeUnit: 2}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ds.Samples[0].Positions); got != "[0 0.5 1 1.5]" || ds.TimeStamps {
		t.Errorf("positions %s (time stamps %v), want [0 0.5 1 1.5] from step indices", got, ds.TimeStamps)
	}
}

func TestTimeMapChecked(t *testing.T) {
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{Source{TimeOrigin: "first"}, "data.time_origin"},
		{Source{TimeUnit: -1}, "data.time_unit"},
		{Source{TimeUnit: math.NaN()}, "data.time_unit"},
		{Source{TimeUnit: 1e300}, "data.time_unit"},
		{Source{TimeUnit: 1e-300}, "data.time_unit"},
	} {
		if err := tc.src.Check(""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %s", tc.src, err, tc.want)
		}
	}
	if err := (Source{TimeOrigin: TimeOriginSeries, TimeUnit: 0.5}).Check(""); err != nil {
		t.Errorf("a valid map: %v", err)
	}
}
