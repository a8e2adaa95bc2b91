package data

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func loadUEA(t *testing.T, name string, opt TSOptions) *Dataset {
	t.Helper()
	if _, err := os.Stat(ueaDir); err != nil {
		t.Skipf("UEA data not present: %v", err)
	}
	ds, err := LoadTS(filepath.Join(ueaDir, name), opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestLoadTSBasicMotions(t *testing.T) {
	ds := loadUEA(t, "BasicMotions_TRAIN.ts", TSOptions{})
	if ds.Name != "BasicMotions" || len(ds.Samples) != 40 || ds.C != 6 || ds.D != 1 {
		t.Fatalf("got name %q, %d cases, C=%d D=%d; want BasicMotions, 40, 6, 1", ds.Name, len(ds.Samples), ds.C, ds.D)
	}
	if want := []string{"Standing", "Running", "Walking", "Badminton"}; !slices.Equal(ds.Classes, want) {
		t.Errorf("classes %v, want %v", ds.Classes, want)
	}
	perClass := make([]int, 4)
	for i := range ds.Samples {
		s := &ds.Samples[i]
		if n := s.Len(ds.C); n != 100 {
			t.Fatalf("case %d has %d steps, want 100", i, n)
		}
		for j, p := range s.Positions {
			if p != float32(j) {
				t.Fatalf("case %d position %d = %v, want step index", i, j, p)
			}
		}
		perClass[s.Label]++
	}
	if !slices.Equal(perClass, []int{10, 10, 10, 10}) {
		t.Errorf("class counts %v, want 10 each", perClass)
	}
	// Token 0 of case 0 holds the first value of each of the six
	// dimensions on the first data line, which is labelled Standing.
	s := ds.Samples[0]
	if want := []float32{0.079106, 0.394032, 0.551444, 0.351565, 0.02397, 0.633883}; !equalF32(s.Values[:6], want) || s.Label != 0 {
		t.Errorf("case 0 token 0 = %v label %d, want %v label 0", s.Values[:6], s.Label, want)
	}
}

func TestLoadTSJapaneseVowels(t *testing.T) {
	for _, tc := range []struct {
		file          string
		cases, mn, mx int
	}{
		{"JapaneseVowels_TRAIN.ts", 270, 7, 26},
		{"JapaneseVowels_TEST.ts", 370, 7, 29},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ds := loadUEA(t, tc.file, TSOptions{})
			if len(ds.Samples) != tc.cases || ds.C != 12 || len(ds.Classes) != 9 {
				t.Fatalf("%d cases C=%d %d classes; want %d, 12, 9", len(ds.Samples), ds.C, len(ds.Classes), tc.cases)
			}
			mn, mx := 1<<30, 0
			for i := range ds.Samples {
				n := ds.Samples[i].Len(ds.C)
				mn, mx = min(mn, n), max(mx, n)
			}
			if mn != tc.mn || mx != tc.mx {
				t.Errorf("lengths %d..%d, want %d..%d", mn, mx, tc.mn, tc.mx)
			}
			// Channel-axis mode: same observations, one per token.
			ca := loadUEA(t, tc.file, TSOptions{Missing: MissingChannelAxis})
			for i := range ds.Samples {
				if got, want := len(ca.Samples[i].Values), len(ds.Samples[i].Values); got != want {
					t.Fatalf("case %d: channel-axis has %d tokens, drop-step %d values", i, got, want)
				}
			}
		})
	}
}

func TestLoadTSFixtures(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		opt        TSOptions
		c, d       int
		classes    []string
		targetDim  int
		samples    []Sample
	}{
		{
			name: "drop-step", file: "missing.ts", c: 3, d: 1, classes: []string{"up", "down"},
			samples: []Sample{
				{ID: "0", Values: []float32{1, 10, 100, 3, 30, 300}, Positions: []float32{0, 2}, Label: 0},
				{ID: "1", Values: []float32{5, 50, 500, 6, 60, 600}, Positions: []float32{0, 1}, Label: 1},
				{ID: "2", Values: []float32{1, 1, 1, 2, 2, 2}, Positions: []float32{1, 2}, Label: 0},
			},
		},
		{
			name: "channel-axis", file: "missing.ts", opt: TSOptions{Missing: MissingChannelAxis}, c: 1, d: 2,
			classes: []string{"up", "down"},
			samples: []Sample{
				{ID: "0", Values: []float32{1, 10, 100, 2, 200, 3, 30, 300, 4, 40},
					Positions: []float32{0, 0, 0, 1, 0, 2, 1, 0, 1, 2, 2, 0, 2, 1, 2, 2, 3, 0, 3, 1}, Label: 0},
				{ID: "1", Values: []float32{5, 50, 500, 6, 60, 600},
					Positions: []float32{0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2}, Label: 1},
				{ID: "2", Values: []float32{1, 1, 1, 2, 2, 2},
					Positions: []float32{1, 0, 1, 1, 1, 2, 2, 0, 2, 1, 2, 2}, Label: 0},
			},
		},
		{
			name: "time stamps", file: "stamped.ts", c: 2, d: 1, classes: []string{"a", "b"},
			samples: []Sample{
				// Stamps 1.5 and 7.25 lack one dimension and are dropped.
				{ID: "0", Values: []float32{1, 10, 3, 30}, Positions: []float32{0.5, 4}, Label: 1},
			},
		},
		{
			name: "regression", file: "regression.ts", c: 1, d: 1, targetDim: 1,
			samples: []Sample{
				{ID: "0", Values: []float32{1, 2, 3}, Positions: []float32{0, 1, 2}, Label: -1, Target: []float32{0.5}},
				{ID: "1", Values: []float32{4, 5, 6}, Positions: []float32{0, 1, 2}, Label: -1, Target: []float32{-1.25}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadTS(filepath.Join("testdata", tc.file), tc.opt)
			if tc.file == "stamped.ts" {
				// Case 1 is observed only where dimension 1 is missing.
				wantErr(t, err, "stamped.ts:10:", "empty series")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ds.Validate(); err != nil {
				t.Fatal(err)
			}
			if ds.C != tc.c || ds.D != tc.d || ds.TargetDim != tc.targetDim || !slices.Equal(ds.Classes, tc.classes) {
				t.Fatalf("C=%d D=%d TargetDim=%d classes %v; want %d %d %d %v", ds.C, ds.D, ds.TargetDim, ds.Classes, tc.c, tc.d, tc.targetDim, tc.classes)
			}
			if len(ds.Samples) != len(tc.samples) {
				t.Fatalf("%d samples, want %d", len(ds.Samples), len(tc.samples))
			}
			for i, want := range tc.samples {
				got := ds.Samples[i]
				if got.ID != want.ID || got.Label != want.Label || !equalF32(got.Values, want.Values) ||
					!equalF32(got.Positions, want.Positions) || !equalF32(got.Target, want.Target) {
					t.Errorf("sample %d:\n got %+v\nwant %+v", i, got, want)
				}
			}
		})
	}
}

func TestLoadTSTimeStampsChannelAxis(t *testing.T) {
	ds, err := LoadTS(filepath.Join("testdata", "stamped.ts"), TSOptions{Missing: MissingChannelAxis})
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{
		{ID: "0", Values: []float32{1, 10, 2, 3, 30, 40}, Positions: []float32{0.5, 0, 0.5, 1, 1.5, 0, 4, 0, 4, 1, 7.25, 1}, Label: 1},
		{ID: "1", Values: []float32{5}, Positions: []float32{2, 0}, Label: 0},
	}
	for i, w := range want {
		g := ds.Samples[i]
		if !equalF32(g.Values, w.Values) || !equalF32(g.Positions, w.Positions) || g.Label != w.Label {
			t.Errorf("sample %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

const tsHead = "@problemName T\n@univariate false\n@dimensions 2\n@classLabel true a b\n@data\n"

func TestLoadTSMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		opt           TSOptions
		want          []string // substrings besides the file name
	}{
		{"truncated header", "@problemName T\n@dimensions 2\n", TSOptions{}, []string{":2:", "no @data"}},
		{"truncated case", tsHead + "1,2:3,4:a\n1,2:3", TSOptions{}, []string{":7:", "case 1", "1 dimensions, want 2"}},
		{"empty file", "", TSOptions{}, []string{":1:", "no @data"}},
		{"no cases", tsHead, TSOptions{}, []string{":5:", "no cases"}},
		{"too many dimensions", tsHead + "1:2:3:a\n", TSOptions{}, []string{":6:", "3 dimensions, want 2"}},
		{"non-number", tsHead + "1,x:3,4:a\n", TSOptions{}, []string{":6:", "dimension 0", "value 1", `"x" is not a number`}},
		{"Go digit separator", tsHead + "1,1_000:3,4:a\n", TSOptions{}, []string{":6:", "dimension 0", "value 1", `"1_000" is not a number`}},
		{"hex float", tsHead + "1,2:-0x1p4,4:a\n", TSOptions{}, []string{":6:", "dimension 1", `"-0x1p4" is not a number`}},
		{"infinity", tsHead + "1,2:Inf,4:a\n", TSOptions{}, []string{":6:", "dimension 1", "infinite"}},
		{"float32 overflow", tsHead + "1,2:1e300,4:a\n", TSOptions{}, []string{":6:", "float32"}},
		{"empty series", tsHead + "1,2::a\n", TSOptions{}, []string{":6:", "dimension 1: empty series"}},
		{"all missing", tsHead + "?,1:2,?:a\n", TSOptions{}, []string{":6:", "empty series"}},
		{"all missing channel axis", tsHead + "?,?:?:a\n", TSOptions{Missing: MissingChannelAxis}, []string{":6:", "every value is missing"}},
		{"unknown label", tsHead + "1:2:c\n", TSOptions{}, []string{":6:", `unknown class label "c"`}},
		{"ragged dimensions", tsHead + "1,2:3:a\n", TSOptions{}, []string{":6:", "dimension 1 has 1 values", "--data.missing channel-axis"}},
		{"unequal length", "@equalLength true\n" + tsHead + "1,2:3,4:a\n1:2:b\n", TSOptions{}, []string{":8:", "@equalLength"}},
		{"series length", "@seriesLength 3\n" + tsHead + "1,2:3,4:a\n", TSOptions{}, []string{":7:", "@seriesLength is 3"}},
		{"unknown tag", "@dimension 2\n@data\n1:a\n", TSOptions{}, []string{":1:", "@dimension", "unknown header tag"}},
		{"bad bool", "@univariate maybe\n@data\n", TSOptions{}, []string{":1:", "want true or false"}},
		{"bad dimensions", "@dimensions -2\n@data\n", TSOptions{}, []string{":1:", "positive integer"}},
		{"labels missing", "@classLabel true\n@data\n", TSOptions{}, []string{":1:", "no labels listed"}},
		{"duplicate tag", "@dimensions 2\n@dimensions 3\n", TSOptions{}, []string{":2:", "duplicate"}},
		{"data before @data", "1,2:a\n", TSOptions{}, []string{":1:", "data before @data"}},
		{"label only", "@classLabel true a\n@data\na\n", TSOptions{}, []string{":3:", "no class label", "values:label", `"a"`}},
		{"no label", "@classLabel true a b\n@data\n1,2:a\n1,2,3\n", TSOptions{}, []string{":4:", "no class label", `"1,2,3"`}},
		{"no target", "@targetLabel true\n@data\n1,2\n", TSOptions{}, []string{":3:", "no regression target", "values:target"}},
		{"class and target", "@classLabel true a\n@targetLabel true\n@data\n", TSOptions{}, []string{":3:", "both"}},
		{"bad target", "@targetLabel true\n@data\n1,2:NaN\n", TSOptions{}, []string{":3:", "target"}},
		{"bad time stamp", "@timeStamps true\n@dimensions 1\n@data\n(1,2),(x,3)\n", TSOptions{}, []string{":4:", "pair 1", "time stamp"}},
		{"decreasing time stamp", "@timeStamps true\n@dimensions 1\n@data\n(2,2),(1,3)\n", TSOptions{}, []string{":4:", "not after"}},
		{"unclosed pair", "@timeStamps true\n@dimensions 1\n@data\n(1,2),(2,3\n", TSOptions{}, []string{":4:", "missing ')'"}},
		{"bad option", tsHead + "1:2:a\n", TSOptions{Missing: "zero-fill"}, []string{"zero-fill"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "bad.ts", tc.content)
			ds, err := LoadTS(path, tc.opt)
			wantErr(t, err, append([]string{"bad.ts"}, tc.want...)...)
			if ds != nil {
				t.Error("got a dataset along with the error")
			}
		})
	}
}

func TestLoadTSCRLF(t *testing.T) {
	path := writeTemp(t, "crlf.ts", "\ufeff@dimensions 1\r\n@classLabel true a\r\n@data\r\n1,2,3:a\r\n")
	ds, err := LoadTS(path, TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalF32(ds.Samples[0].Values, []float32{1, 2, 3}) || ds.Name != "crlf" {
		t.Errorf("got %+v", ds)
	}
}

func TestDropRandomSteps(t *testing.T) {
	ds, err := LoadTS(filepath.Join("testdata", "missing.ts"), TSOptions{Missing: MissingChannelAxis})
	if err != nil {
		t.Fatal(err)
	}
	orig := slices.Clone(ds.Samples[0].Values)
	a, err := DropRandomSteps(ds, 0.5, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DropRandomSteps(ds, 0.5, 0, 1)
	if !slices.Equal(ds.Samples[0].Values, orig) {
		t.Fatal("input modified")
	}
	for i := range a.Samples {
		s := a.Samples[i]
		steps := map[float32]int{}
		for j := 0; j < len(s.Positions); j += 2 {
			steps[s.Positions[j]]++
		}
		// Sample 0 has 4 steps, 1 and 2 have 2 (sample 2 drop-step-free
		// in channel-axis mode: steps 1, 2): half of each survives.
		want := map[int]int{0: 2, 1: 1, 2: 1}[i]
		if len(steps) != want {
			t.Errorf("sample %d keeps steps %v, want %d steps", i, steps, want)
		}
		if !slices.Equal(s.Values, b.Samples[i].Values) {
			t.Errorf("sample %d differs between runs with the same seed", i)
		}
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := DropRandomSteps(ds, 1, 0, 1); err == nil {
		t.Error("fraction 1 accepted")
	}
	if _, err := DropRandomSteps(ds, 0.3, 2, 1); err == nil {
		t.Error("axis 2 of D=2 accepted")
	}
}

func TestLoadTSInferredDimensions(t *testing.T) {
	path := writeTemp(t, "nodims.ts", "@classLabel true a\n@data\n1,2:3,4:a\n5:6:a\n")
	ds, err := LoadTS(path, TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.C != 2 || !equalF32(ds.Samples[1].Values, []float32{5, 6}) {
		t.Errorf("C=%d samples %+v", ds.C, ds.Samples)
	}
	_, err = LoadTS(writeTemp(t, "nodims.ts", "@classLabel true a\n@data\n1,2:3,4:a\n5:a\n"), TSOptions{})
	wantErr(t, err, "nodims.ts:4:", "1 dimensions, want 2")
}
