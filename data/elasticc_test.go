package data

import (
	"math"
	"testing"
)

const elasticcCSV = `SNID,MJD,BAND,FLUXCAL,FLUXCALERR,PHOTFLAG
1001,60010.5,r,12.5,2,0
1001,60000.25,g,-3,0.5,0
2002,60100,Y,100,10,4096
1001,60000.25,u,1,1,0
2002,60102.5,u,7,3,0
`

func TestLoadElasticcCSV(t *testing.T) {
	lc := writeTemp(t, "lc.csv", elasticcCSV)
	lab := writeTemp(t, "labels.csv", "SNID,CLASS\n2002,SNIa\n1001,AGN\n")
	ds, err := LoadElasticcCSV(lc, lab)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.C != 2 || ds.D != 2 || len(ds.Samples) != 2 {
		t.Fatalf("C %d D %d samples %d", ds.C, ds.D, len(ds.Samples))
	}
	if want := []string{"AGN", "SNIa"}; len(ds.Classes) != 2 || ds.Classes[0] != want[0] || ds.Classes[1] != want[1] {
		t.Errorf("classes %v, want %v", ds.Classes, want)
	}
	a := ds.Samples[0]
	if a.ID != "1001" || a.Label != 0 {
		t.Errorf("sample 0 id %q label %d", a.ID, a.Label)
	}
	// Sorted by time (file order breaks the tie at 60000.25): g, u, r.
	if want := []float32{-3, 0.25, 1, 1, 12.5, 4}; !equalF32(a.Values, want) {
		t.Errorf("values %v, want %v (flux, variance)", a.Values, want)
	}
	if want := []float32{1, 0, 0, 0, 2, 10.25}; !equalF32(a.Positions, want) {
		t.Errorf("positions %v, want %v (band, days since first)", a.Positions, want)
	}
	b := ds.Samples[1]
	if want := []float32{5, 0, 0, 2.5}; b.Label != 1 || !equalF32(b.Positions, want) {
		t.Errorf("sample 1 label %d positions %v, want 1 and %v", b.Label, b.Positions, want)
	}

	w, err := ElasticcClassWeights(ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 2 || math.Abs(w[0]-1) > 1e-12 || math.Abs(w[1]-1) > 1e-12 {
		t.Errorf("balanced weights %v, want [1 1]", w)
	}
	ds.Samples = append(ds.Samples, ds.Samples[1], ds.Samples[1])
	w, _ = ElasticcClassWeights(ds)
	if math.Abs(w[0]-2) > 1e-12 || math.Abs(w[1]-2.0/3) > 1e-12 {
		t.Errorf("balanced weights %v, want [2 0.667]", w)
	}

	unl, err := LoadElasticcCSV(lc, "")
	if err != nil {
		t.Fatal(err)
	}
	if unl.Classes != nil || unl.Samples[0].Label != -1 {
		t.Errorf("unlabelled: classes %v label %d", unl.Classes, unl.Samples[0].Label)
	}
}

func TestLoadElasticcCSVErrors(t *testing.T) {
	const head = "SNID,MJD,BAND,FLUXCAL,FLUXCALERR\n"
	cases := []struct {
		name, csv string
		parts     []string
	}{
		{"unknown band", head + "1,60000,r,1,1\n1,60001,LSST-q,1,1\n", []string{":3:", `"BAND"`, "LSST-q"}},
		{"negative error", head + "1,60000,r,1,1\n1,60001,g,1,-0.5\n", []string{":3:", `"FLUXCALERR"`, "negative"}},
		{"NaN flux", head + "1,60000,r,NaN,1\n", []string{":2:", `"FLUXCAL"`, "finite"}},
		{"missing column", "SNID,MJD,BAND,FLUXCAL\n1,60000,r,1\n", []string{":1:", `"FLUXCALERR"`}},
		{"short row", head + "1,60000,r,1,1\n2,60000,r\n", []string{":3:", "3 fields"}},
		{"bad time", head + "1,sixty,r,1,1\n", []string{":2:", `"MJD"`}},
		{"empty id", head + ",60000,r,1,1\n", []string{":2:", "empty id"}},
		{"no rows", head, []string{":2:", "no data rows"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "lc.csv", c.csv)
			_, err := LoadElasticcCSV(path, "")
			wantErr(t, err, append([]string{path}, c.parts...)...)
		})
	}
	lc := writeTemp(t, "lc.csv", elasticcCSV)
	t.Run("label missing", func(t *testing.T) {
		lab := writeTemp(t, "labels.csv", "SNID,CLASS\n1001,AGN\n")
		_, err := LoadElasticcCSV(lc, lab)
		wantErr(t, err, lab, "2002", "no label")
	})
	t.Run("labels without CLASS", func(t *testing.T) {
		lab := writeTemp(t, "labels.csv", "SNID,target\n1001,AGN\n2002,SNIa\n")
		_, err := LoadElasticcCSV(lc, lab)
		wantErr(t, err, lab+":1:", `"CLASS"`)
	})
	t.Run("weights without labels", func(t *testing.T) {
		ds, err := LoadElasticcCSV(lc, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = ElasticcClassWeights(ds)
		wantErr(t, err, "no classes")
	})
}
