package main

import (
	"strings"
	"testing"

	"romae/data"
	"romae/internal/fuzzcheck"
	"romae/model"
)

// FuzzRunConfig feeds arbitrary bytes to --config (YAML or JSON) and
// resolves the model section as pretrain would, without building the model.
func FuzzRunConfig(f *testing.F) {
	fuzzcheck.AddFiles(f, "../../examples/*.yaml", "../../examples/*.yml", "../../examples/*.json", "../../examples/*/*.yaml")
	f.Add([]byte("model:\n  size: tiny\n  pos_encoding: rope\ntrain:\n  epochs: 1\ndata:\n  train: x.ts\n  patch: [2, 2]\n"))
	f.Add([]byte(`{"model": {"size": "65536,1,1,4"}, "data": {"value_columns": ["flux", "flux_err"]}}`))
	f.Add([]byte("model:\n  size: 4,1,1000000000,4\n"))
	f.Add([]byte("a: &a [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "run.yaml", in)
		fuzzcheck.Check(t, len(in), func() {
			cfg := defaultRunConfig()
			fs := newFlagSet("x", "x")
			if _, err := parseRunConfig(fs, &cfg, []string{"--config", path}); err != nil {
				return
			}
			for _, task := range []string{model.TaskPretrain, model.TaskClassify} {
				if mc, err := cfg.Model.modelConfig(task, 2, 2, 3); err == nil {
					if n := mc.ParamBound(); n > model.MaxParams {
						t.Fatalf("accepted a model of %d parameters", n)
					}
				}
			}
		})
	})
}

// FuzzFlagValues feeds arbitrary text to every kind of flag value: sizes,
// numbers, lists, and the two-integer --data.patch.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"2,2", "tiny", "180,3,2,720", "flux,flux_err", "", ",", "1e308", "-1", "9223372036854775808", "2,2,2", " 3 , 4 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fuzzcheck.Check(t, len(in), func() {
			for _, name := range []string{"data.patch", "data.value_columns", "data.channels", "train.epochs", "train.lr", "train.seed", "model.size", "model.use_cls", "model.siren.cat_sizes", "model.siren.periods"} {
				cfg := defaultRunConfig()
				fs := newFlagSet("x", "x")
				if _, err := parseRunConfig(fs, &cfg, []string{"--" + name, in}); err != nil {
					continue
				}
				cfg.Model.modelConfig(model.TaskPretrain, 2, 2, 0)
			}
		})
	})
}

// gridDataset is a two-axis dataset (band, time) for the query targets.
func gridDataset() *data.Dataset {
	return &data.Dataset{C: 1, D: 2, TimeAxis: 1, Channels: []string{"u", "g", "r"}, Samples: []data.Sample{
		{ID: "a", Values: []float32{1, 2, 3}, Positions: []float32{0, 0, 1, 1, 0, 2}, Label: -1},
		{ID: "b", Values: []float32{4}, Positions: []float32{2, 5}, Label: -1},
	}}
}

// FuzzAtSpec feeds arbitrary text to interpolate's --at START:STOP:STEP.
func FuzzAtSpec(f *testing.F) {
	for _, s := range []string{"0:10:1", "0:1:0.001", "1e17:1.00000000000001e17:1", "0:1e30:1e-30", "5:1:1", "0:0:1", "nan:1:1", "0:1:-1", "::", "0:1000000:1"} {
		f.Add(s)
	}
	ds := gridDataset()
	f.Fuzz(func(t *testing.T, in string) {
		fuzzcheck.Check(t, len(in), func() {
			q, _, err := gridQueries(ds, in)
			if err != nil {
				return
			}
			n := 0
			for _, qi := range q {
				n += len(qi)
			}
			if n > maxQueries*ds.D {
				t.Fatalf("--at %q built %d positions", in, n/ds.D)
			}
		})
	})
}

// FuzzQueriesFile feeds arbitrary bytes to interpolate's --queries CSV.
func FuzzQueriesFile(f *testing.F) {
	f.Add([]byte("id,channel,time\na,0,1.5\nb,r,7\n"))
	f.Add([]byte("id,pos1,pos2\nc,0,1\n"))
	f.Add([]byte("id,channel,time\na,0,\"1\n"))
	ds := gridDataset()
	cols := dataColumns(ds, &data.Spec{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "q.csv", in)
		fuzzcheck.Check(t, len(in), func() {
			q, times, err := fileQueries(ds, cols, path)
			if err == nil {
				for i, qi := range q {
					if len(qi)%ds.D != 0 || len(times[i]) != len(qi)/ds.D {
						t.Fatalf("series %d: %d coordinates, %d times", i, len(qi), len(times[i]))
					}
				}
			}
		})
	})
}

// TestAtSpecTerminates pins the --at defect: a START so large that adding
// STEP does not change it made the grid loop run forever, appending until
// memory ran out. Now the count is fixed before the loop.
func TestAtSpecTerminates(t *testing.T) {
	ds := gridDataset()
	for _, spec := range []string{"1e17:1.00000000000001e17:1", "1e300:1e300:1"} {
		var err error
		fuzzcheck.Check(t, len(spec), func() { _, _, err = gridQueries(ds, spec) })
		if spec == "1e300:1e300:1" && (err == nil || !strings.Contains(err.Error(), "float32")) {
			t.Errorf("--at %s: %v, want a float32 range error", spec, err)
		}
	}
	many := &data.Dataset{C: 1, D: 2, TimeAxis: 1, Samples: []data.Sample{{ID: "m", Label: -1}}}
	for band := range 11 {
		many.Samples[0].Values = append(many.Samples[0].Values, 1)
		many.Samples[0].Positions = append(many.Samples[0].Positions, float32(band), 0)
	}
	if _, _, err := gridQueries(many, "0:999999:1"); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("11 bands × 10⁶ points: %v, want the query limit", err)
	}
	g, err := parseAt("0:1:0.25")
	if err != nil || g.n != 5 || g.at(4) != 1 {
		t.Errorf("0:1:0.25 = %+v, %v; want 5 points ending at 1", g, err)
	}
}
