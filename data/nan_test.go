package data

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nanSeries is three series of 4 steps × 2 channels; series 1 has one
// missing value, at step 2 of channel 1.
func nanSeries() [3][4][2]float64 {
	var x [3][4][2]float64
	for i := range x {
		for t := range x[i] {
			x[i][t] = [2]float64{float64(10*i + t), float64(-10*i - t)}
		}
	}
	x[1][2][1] = math.NaN()
	return x
}

// nanFiles writes nanSeries as a .ts file, a long CSV and a .npy array.
func nanFiles(t *testing.T) map[string]string {
	x := nanSeries()
	cell := func(v float64, missing string) string {
		if math.IsNaN(v) {
			return missing
		}
		return fmt.Sprint(v)
	}
	var ts, csv strings.Builder
	ts.WriteString("@problemName nan\n@univariate false\n@dimensions 2\n@equalLength true\n@seriesLength 4\n@classLabel true a b\n@data\n")
	csv.WriteString("id,time,channel,value\n")
	var flat []float32
	for i := range x {
		for c := range 2 {
			for t := range 4 {
				if t > 0 {
					ts.WriteString(",")
				}
				ts.WriteString(cell(x[i][t][c], "?"))
				fmt.Fprintf(&csv, "s%d,%d,%c,%s\n", i, t, "xy"[c], cell(x[i][t][c], ""))
			}
			ts.WriteString(":")
		}
		ts.WriteString([]string{"a", "b"}[i%2] + "\n")
		for t := range 4 {
			flat = append(flat, float32(x[i][t][0]), float32(x[i][t][1]))
		}
	}
	dir := t.TempDir()
	files := map[string]string{"ts": filepath.Join(dir, "s.ts"), "csv": filepath.Join(dir, "s.csv"), "npy": filepath.Join(dir, "s.npy")}
	for k, content := range map[string]string{"ts": ts.String(), "csv": csv.String()} {
		if err := os.WriteFile(files[k], []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := SaveNPY(files["npy"], []int{3, 4, 2}, flat); err != nil {
		t.Fatal(err)
	}
	return files
}

// One NaN policy, the same meaning in every format: error names where the
// missing value is; drop leaves out the series holding it; missing leaves
// out the token holding it — the whole step where a token holds every
// channel, that value alone where a token holds one.
func TestNaNPolicyAcrossFormats(t *testing.T) {
	files := nanFiles(t)
	for _, tc := range []struct {
		name, file   string
		src          Source
		errWhere     string // where the error points
		full, tokens int    // a complete series' tokens; series 1's under "missing"
	}{
		{"ts drop-step", "ts", Source{}, "dimension 1 value 2", 4, 3},
		{"ts channel-axis", "ts", Source{Missing: MissingChannelAxis}, "dimension 1 value 2", 8, 7},
		{"csv axis", "csv", Source{}, ":16:", 8, 7},
		{"csv slot", "csv", Source{ChannelMode: ChannelSlot}, ":16:", 4, 3},
		{"npy", "npy", Source{}, "sample 1 step 2 channel 1", 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			src.NaN = NaNError
			_, err := src.Load(files[tc.file])
			wantErr(t, err, files[tc.file], tc.errWhere, "data.nan")

			src.NaN = NaNDrop
			ds, err := src.Load(files[tc.file])
			if err != nil {
				t.Fatal(err)
			}
			if len(ds.Samples) != 2 || ds.DroppedSamples != 1 || ds.MissingValues != 1 || strings.Contains(ds.Samples[0].ID+ds.Samples[1].ID, "1") {
				t.Errorf("drop: %d samples %s %s, dropped %d, missing %d; want series 0 and 2, 1 dropped, 1 missing",
					len(ds.Samples), ds.Samples[0].ID, ds.Samples[1].ID, ds.DroppedSamples, ds.MissingValues)
			}

			for _, policy := range []string{NaNMissing, ""} {
				src.NaN = policy
				ds, err = src.Load(files[tc.file])
				if err != nil {
					t.Fatal(err)
				}
				if len(ds.Samples) != 3 || ds.MissingValues != 1 || ds.DroppedSamples != 0 {
					t.Fatalf("missing %q: %d samples, %d missing, %d dropped; want 3, 1, 0", policy, len(ds.Samples), ds.MissingValues, ds.DroppedSamples)
				}
				if n := ds.Samples[1].Len(ds.C); n != tc.tokens {
					t.Errorf("missing %q: series 1 has %d tokens, want %d", policy, n, tc.tokens)
				}
				if n := ds.Samples[0].Len(ds.C); n != tc.full {
					t.Errorf("missing %q: series 0 has %d tokens, want %d", policy, n, tc.full)
				}
			}
		})
	}
	if _, err := (Source{NaN: "skip"}).Load(files["ts"]); err == nil || !strings.Contains(err.Error(), `data.nan "skip"`) {
		t.Errorf("unknown policy: %v", err)
	}
}

// data.patch cuts images: given for a series file it is an error, not
// silently ignored.
func TestPatchOnSeriesFileIsAnError(t *testing.T) {
	files := nanFiles(t)
	for _, k := range []string{"ts", "csv"} {
		_, err := (Source{Patch: [2]int{2, 2}}).Load(files[k])
		wantErr(t, err, "data.patch", files[k], "series_patch")
	}
	if _, err := (Source{Patch: [2]int{0, 5}}).Load(files["npy"]); err == nil || !strings.Contains(err.Error(), "data.patch 0,5") {
		t.Errorf("half a patch size: %v", err)
	}
}
