package data

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

var lightCurveOpt = CSVOptions{
	IDColumn: "object_id", TimeColumn: "mjd", ChannelColumn: "band",
	ValueColumns: []string{"flux", "flux_err"}, TargetColumns: []string{"redshift"},
}

func TestLoadLongCSV(t *testing.T) {
	slotOpt := CSVOptions{ChannelMode: ChannelSlot, LabelColumn: "label"}
	for _, tc := range []struct {
		name, file string
		opt        CSVOptions
		c, d       int
		classes    []string
		samples    []Sample
	}{
		{
			name: "axis", file: "lightcurves.csv", opt: lightCurveOpt, c: 2, d: 2,
			samples: []Sample{
				// Bands sort g, r, u; tokens sort by time, file order on ties.
				{ID: "obj1", Values: []float32{4, .4, 2, .2, 1, .1, 3, .3},
					Positions: []float32{2, 1, 0, 2, 1, 10.5, 0, 10.5}, Label: -1, Target: []float32{0.3}},
				{ID: "obj2", Values: []float32{6, .6, 5, .5},
					Positions: []float32{1, 1, 0, 3}, Label: -1, Target: []float32{1.2}},
			},
		},
		{
			name: "axis with channel order", file: "lightcurves.csv", c: 2, d: 2,
			opt: func() CSVOptions { o := lightCurveOpt; o.Channels = []string{"u", "g", "r"}; return o }(),
			samples: []Sample{
				{ID: "obj1", Values: []float32{4, .4, 2, .2, 1, .1, 3, .3},
					Positions: []float32{0, 1, 1, 2, 2, 10.5, 1, 10.5}, Label: -1, Target: []float32{0.3}},
				{ID: "obj2", Values: []float32{6, .6, 5, .5},
					Positions: []float32{2, 1, 1, 3}, Label: -1, Target: []float32{1.2}},
			},
		},
		{
			// A model's channels (data.channels) where the file lacks one:
			// the others keep their indices.
			name: "axis with a channel absent", file: "lightcurves.csv", c: 2, d: 2,
			opt: func() CSVOptions { o := lightCurveOpt; o.Channels = []string{"g", "i", "r", "u"}; return o }(),
			samples: []Sample{
				{ID: "obj1", Values: []float32{4, .4, 2, .2, 1, .1, 3, .3},
					Positions: []float32{3, 1, 0, 2, 2, 10.5, 0, 10.5}, Label: -1, Target: []float32{0.3}},
				{ID: "obj2", Values: []float32{6, .6, 5, .5},
					Positions: []float32{2, 1, 0, 3}, Label: -1, Target: []float32{1.2}},
			},
		},
		{
			name: "slot", file: "slot.csv", opt: slotOpt, c: 2, d: 1, classes: []string{"cat", "dog"},
			samples: []Sample{
				{ID: "a", Values: []float32{1, 2, 3, 4}, Positions: []float32{0, 1}, Label: 0},
				{ID: "b", Values: []float32{7, 8}, Positions: []float32{5}, Label: 1},
			},
		},
		{
			name: "single channel", file: "slot.csv", opt: CSVOptions{ChannelColumn: "", LabelColumn: "label", Classes: []string{"dog", "cat"}},
			c: 1, d: 2, classes: []string{"dog", "cat"},
			samples: []Sample{
				{ID: "a", Values: []float32{1, 2, 4, 3}, Positions: []float32{0, 0, 1, 0, 1, 1, 0, 1}, Label: 1},
				{ID: "b", Values: []float32{7, 8}, Positions: []float32{0, 5, 1, 5}, Label: 0},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadLongCSV(filepath.Join("testdata", tc.file), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := ds.Validate(); err != nil {
				t.Fatal(err)
			}
			if ds.C != tc.c || ds.D != tc.d || !slices.Equal(ds.Classes, tc.classes) {
				t.Fatalf("C=%d D=%d classes %v; want %d %d %v", ds.C, ds.D, ds.Classes, tc.c, tc.d, tc.classes)
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

func TestLoadLongCSVNoChannelColumn(t *testing.T) {
	path := writeTemp(t, "mono.csv", "id,time,value\nx,2,20\nx,1,10\n")
	ds, err := LoadLongCSV(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.C != 1 || ds.D != 1 || !equalF32(ds.Samples[0].Values, []float32{10, 20}) || !equalF32(ds.Samples[0].Positions, []float32{1, 2}) {
		t.Errorf("got C=%d D=%d %+v", ds.C, ds.D, ds.Samples[0])
	}
}

func TestLoadLongCSVFillMissing(t *testing.T) {
	path := writeTemp(t, "holes.csv", "id,time,channel,value\na,0,x,1\na,1,y,2\n")
	ds, err := LoadLongCSV(path, CSVOptions{ChannelMode: ChannelSlot, FillMissing: true, FillValue: -9})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1, -9, -9, 2}; !equalF32(ds.Samples[0].Values, want) {
		t.Errorf("values %v, want %v", ds.Samples[0].Values, want)
	}
}

func TestLoadLongCSVMalformed(t *testing.T) {
	const head = "id,time,channel,value\n"
	for _, tc := range []struct {
		name, content string
		opt           CSVOptions
		want          []string
	}{
		{"empty file", "", CSVOptions{}, []string{":1:", "empty file"}},
		{"header only", head, CSVOptions{}, []string{":2:", "no data rows"}},
		{"missing column", "id,time,flux\na,1,2\n", CSVOptions{}, []string{":1:", `no column "value"`}},
		{"duplicate column", "id,time,value,value\n", CSVOptions{}, []string{":1:", `duplicate header column "value"`}},
		{"too few fields", head + "a,1,x,2\na,2,x\n", CSVOptions{}, []string{":3:", "3 fields, header has 4"}},
		{"too many fields", head + "a,1,x,2,9\n", CSVOptions{}, []string{":2:", "5 fields"}},
		{"bad quote", head + "a,1,\"x\"y,2\n", CSVOptions{}, []string{":2:", "column"}},
		{"non-number", head + "a,1,x,abc\n", CSVOptions{}, []string{":2:", `column "value"`, `"abc"`}},
		{"Go digit separator", head + "a,1,x,2\na,1_000,x,2\n", CSVOptions{}, []string{":3:", `column "time"`, `"1_000"`}},
		{"hex float", head + "a,1,x,0x1p4\n", CSVOptions{}, []string{":2:", `column "value"`, `"0x1p4"`}},
		{"empty value", head + "a,1,x,\n", CSVOptions{NaN: NaNError}, []string{":2:", `column "value"`, "--data.nan"}},
		{"NaN value", head + "a,1,x,2\na,2,x,NaN\n", CSVOptions{NaN: NaNError}, []string{":3:", `column "value"`, "NaN"}},
		{"only missing values", head + "a,1,x,\n", CSVOptions{}, []string{":2:", "every row has a missing value"}},
		{"Inf time", head + "a,inf,x,2\n", CSVOptions{}, []string{":2:", `column "time"`}},
		{"float32 overflow", head + "a,1,x,1e39\n", CSVOptions{}, []string{":2:", "float32"}},
		{"empty id", head + ",1,x,2\n", CSVOptions{}, []string{":2:", "empty id"}},
		{"unknown channel", head + "a,1,z,2\n", CSVOptions{Channels: []string{"x", "y"}}, []string{":2:", `channel "z"`}},
		{"repeated channel", head + "a,1,x,2\n", CSVOptions{Channels: []string{"x", "y", "x"}}, []string{"channel 2", `"x"`, "repeated"}},
		{"channels without column", "id,time,value\na,1,2\n", CSVOptions{Channels: []string{"x"}}, []string{":1:", "no channel column"}},
		{"empty label", "id,time,value,label\na,1,2,\n", CSVOptions{LabelColumn: "label"}, []string{":2:", "empty label"}},
		{"conflicting label", "id,time,value,label\na,1,2,p\nb,1,2,q\na,2,3,q\n", CSVOptions{LabelColumn: "label"}, []string{":4:", `"a"`, "line 2"}},
		{"unknown class", "id,time,value,label\na,1,2,p\n", CSVOptions{LabelColumn: "label", Classes: []string{"q"}}, []string{":2:", `label "p"`}},
		{"conflicting target", "id,time,value,z\na,1,2,0.5\na,2,3,0.6\n", CSVOptions{TargetColumns: []string{"z"}}, []string{":3:", `column "z"`, "target"}},
		{"slot hole", head + "a,0,x,1\na,0,y,2\na,1,x,3\n", CSVOptions{ChannelMode: ChannelSlot, NaN: NaNError}, []string{":2:", `object "a"`, "time 1", "channel 1", "--data.nan missing"}},
		{"slot hole everywhere", head + "a,0,x,1\na,1,y,3\n", CSVOptions{ChannelMode: ChannelSlot}, []string{":2:", `object "a"`, "no time has a row for every channel", "--data.channel_mode axis"}},
		{"slot duplicate", head + "a,0,x,1\na,0,x,2\n", CSVOptions{ChannelMode: ChannelSlot}, []string{":2:", "two rows for time 0"}},
		{"bad mode", head + "a,0,x,1\n", CSVOptions{ChannelMode: "grid"}, []string{`"grid"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "bad.csv", tc.content)
			ds, err := LoadLongCSV(path, tc.opt)
			wantErr(t, err, append([]string{"bad.csv"}, tc.want...)...)
			if ds != nil {
				t.Error("got a dataset along with the error")
			}
		})
	}
}

func TestLabelsCSV(t *testing.T) {
	ds, err := LoadLongCSV(filepath.Join("testdata", "lightcurves.csv"), lightCurveOpt)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := LoadLabelsCSV(filepath.Join("testdata", "labels.csv"), "object_id", "target")
	if err != nil {
		t.Fatal(err)
	}
	if err := AttachLabels(ds, labels, nil); err != nil {
		t.Fatal(err)
	}
	// Numeric labels sort numerically: "6" before "90".
	if !slices.Equal(ds.Classes, []string{"6", "90"}) || ds.Samples[0].Label != 0 || ds.Samples[1].Label != 1 {
		t.Errorf("classes %v labels %d %d", ds.Classes, ds.Samples[0].Label, ds.Samples[1].Label)
	}

	for _, tc := range []struct {
		name    string
		labels  map[string]string
		classes []string
		want    string
	}{
		{"missing label", map[string]string{"obj1": "6"}, nil, `(id "obj2") has no label`},
		{"unknown id", map[string]string{"obj1": "6", "obj2": "6", "obj9": "6"}, nil, `id "obj9"`},
		{"unknown class", map[string]string{"obj1": "6", "obj2": "7"}, []string{"6"}, `label "7" not in classes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(ds.Classes)
			wantErr(t, AttachLabels(ds, tc.labels, tc.classes), tc.want)
			if !slices.Equal(ds.Classes, before) || ds.Samples[1].Label != 1 {
				t.Error("dataset changed despite the error")
			}
		})
	}
}

func TestLoadLabelsCSVMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"empty file", "", []string{":1:", "empty file"}},
		{"missing column", "id,class\na,1\n", []string{":1:", `no column "label"`}},
		{"header only", "id,label\n", []string{":2:", "no data rows"}},
		{"field count", "id,label\na,1\nb\n", []string{":3:", "1 fields"}},
		{"duplicate id", "id,label\na,1\nb,2\na,1\n", []string{":4:", `"a" already listed on line 2`}},
		{"empty label", "id,label\na, \n", []string{":2:", "empty label"}},
		{"empty id", "id,label\n,1\n", []string{":2:", "empty id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadLabelsCSV(writeTemp(t, "labels.csv", tc.content), "id", "label")
			wantErr(t, err, append([]string{"labels.csv"}, tc.want...)...)
		})
	}
}

func TestSourceChannelsOnlyForCSV(t *testing.T) {
	src := Source{Channels: []string{"g", "r"}}
	for _, name := range []string{"x.ts", "x.npy"} {
		wantErr(t, src.Check(name), "data.channels g,r", name)
	}
	if err := src.Check("x.csv"); err != nil {
		t.Errorf("x.csv: %v", err)
	}
}

// A column the settings name (or default to) that the header lacks is
// reported with the setting to change, whichever setting named it.
func TestSourceMissingColumnNamesSetting(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		src          Source
		want         []string
	}{
		{"default value column", "id,time,band,flux", Source{}, []string{`no column "value"`, "[id time band flux]", "set data.value_columns to the file's value column(s)"}},
		{"named value column", "id,time,flux", Source{ValueColumns: []string{"flux", "flux_err"}}, []string{`no column "flux_err"`, "set data.value_columns"}},
		{"default id column", "object,time,value", Source{}, []string{`no column "id"`, "set data.id_column to the file's column naming each series"}},
		{"default time column", "id,mjd,value", Source{}, []string{`no column "time"`, "set data.time_column to the file's time column"}},
		{"channel column", "id,time,value", Source{ChannelColumn: "band"}, []string{`no column "band"`, "set data.channel_column to the file's channel (band) column"}},
		{"label column", "id,time,value", Source{LabelColumn: "class"}, []string{`no column "class"`, "set data.label_column to the file's label column"}},
		{"target column", "id,time,value", Source{TargetColumns: []string{"z"}}, []string{`no column "z"`, "set data.target_columns to the file's target column(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, "lc.csv", tc.header+"\n")
			_, err := tc.src.Load(path)
			wantErr(t, err, append([]string{"lc.csv:1:"}, tc.want...)...)
			var ce *ColumnError
			if !errors.As(err, &ce) {
				t.Errorf("%v: not a *ColumnError", err)
			}
		})
	}
}
