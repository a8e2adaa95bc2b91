package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"romae/data"
)

// writeStampedCSV writes the series of a .ts file as a long CSV
// (id,time,channel,value,label) with step k at time origin + unit·k, rows
// of steps for which keep(k) is false left out.
func writeStampedCSV(t *testing.T, path string, ds *data.Dataset, origin, unit float64, keep func(k int) bool) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,time,channel,value,label\n")
	for _, s := range ds.Samples {
		for k := range s.Len(ds.C) {
			if !keep(k) {
				continue
			}
			tm := strconv.FormatFloat(origin+unit*float64(s.Positions[k]), 'f', -1, 64)
			for c := range ds.C {
				fmt.Fprintf(&b, "%s,%s,%d,%g,%s\n", s.ID, tm, c, s.Values[k*ds.C+c], ds.Classes[s.Label])
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The same series as step indices and as Unix seconds at a 10 s cadence
// (where float32 steps by 128 s) train the same model bit for bit under the
// default recipe, which starts each series at 0 and takes 10 s as the unit;
// predictions, interpolations (asked and answered in Unix seconds) and
// evaluate --hidden (held-out points against the observed series' origins)
// agree exactly.
func TestTimeStampsAsSteps(t *testing.T) {
	dir := t.TempDir()
	train, err := data.LoadTS(trainTS, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	test, err := data.LoadTS(testTS, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	train.Samples, test.Samples = train.Samples[:16], test.Samples[:8]
	every := func(int) bool { return true }
	const unix = 1.7e9
	files := map[string][2]float64{"steps": {0, 1}, "unix": {unix, 10}}
	for name, ou := range files {
		writeStampedCSV(t, filepath.Join(dir, name+"_train.csv"), train, ou[0], ou[1], every)
		writeStampedCSV(t, filepath.Join(dir, name+"_test.csv"), test, ou[0], ou[1], every)
		// The first ten steps and every fifth held out: the hidden file's
		// earliest time is eleven steps before the observed series' origin.
		hidden := func(k int) bool { return k < 10 || k%5 == 0 }
		writeStampedCSV(t, filepath.Join(dir, name+"_obs.csv"), test, ou[0], ou[1], func(k int) bool { return !hidden(k) })
		writeStampedCSV(t, filepath.Join(dir, name+"_hid.csv"), test, ou[0], ou[1], hidden)
	}
	tiny := []string{"--model.size", "24,2,1,48", "--train.epochs", "2", "--train.progress", "none", "--data.label_column", "label"}
	run := func(name, what string, cmd func(*testing.T, ...string) (string, error), args ...string) string {
		t.Helper()
		out, err := cmd(t, args...)
		if err != nil {
			t.Fatalf("%s, %s: %v", name, what, err)
		}
		return out
	}
	finetune := func(t *testing.T, args ...string) (string, error) { return capture(t, cmdFinetune, args...) }
	pretrain := func(t *testing.T, args ...string) (string, error) { return capture(t, cmdPretrain, args...) }
	predict := func(t *testing.T, args ...string) (string, error) { return capture(t, cmdPredict, args...) }
	interpolate := func(t *testing.T, args ...string) (string, error) { return capture(t, cmdInterpolate, args...) }
	evaluate := func(t *testing.T, args ...string) (string, error) { return capture(t, cmdEvaluate, args...) }

	got := map[string]map[string]string{}
	for name, ou := range files {
		f := func(s string) string { return filepath.Join(dir, name+"_"+s) }
		got[name] = map[string]string{}
		cls, pre := f("cls"), f("pre")
		run(name, "finetune", finetune, append([]string{"--data", f("train.csv"), "--out", cls, "--data.folds", "1"}, tiny...)...)
		spec := runSpec(t, cls)
		if spec.Source.TimeOrigin != data.TimeOriginSeries || spec.Source.TimeUnit != map[string]float64{"steps": 0, "unix": 10}[name] {
			t.Errorf("%s: the recipe chose time_origin %q, time_unit %v; want series and %v", name, spec.Source.TimeOrigin, spec.Source.TimeUnit, ou[1])
		}
		got[name]["predict"] = run(name, "predict", predict, "--model", cls, "--data", f("test.csv"))
		run(name, "pretrain", pretrain, append([]string{"--data", f("train.csv"), "--out", pre, "--model.decoder_size", "24,2,1,48"}, tiny...)...)
		grid := fmt.Sprintf("%v:%v:%v", ou[0]+2.5*ou[1], ou[0]+7.5*ou[1], ou[1])
		got[name]["interpolate"] = run(name, "interpolate", interpolate, "--model", pre, "--data", f("obs.csv"), "--at", grid, "--blend", "off")
		got[name]["evaluate"] = run(name, "evaluate --hidden", evaluate, "--model", pre, "--data", f("obs.csv"), "--hidden", f("hid.csv"), "--blend", "off")

		// Held-out points are placed on the observed series' axes: step k at
		// position k − 11 (the first observed step), in both files' units.
		u := &using{model: pre, data: f("obs.csv"), batchSize: 8}
		l, err := u.load(false)
		if err != nil {
			t.Fatal(err)
		}
		h, err := u.loadHidden(l, f("hid.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range h.ds.Samples {
			first, last := s.Positions[1], s.Positions[len(s.Positions)-1] // (channel, time), sorted by time
			if s.TimeOrigin != l.ds.Samples[i].TimeOrigin || first != -11 || last != 95-11 {
				t.Fatalf("%s: hidden series %s on time axis [%v, %v] from origin %v; want [-11, 84] from the observed origin %v",
					name, s.ID, first, last, s.TimeOrigin, l.ds.Samples[i].TimeOrigin)
			}
		}
	}
	for _, what := range []string{"predict", "evaluate"} {
		if got["steps"][what] != got["unix"][what] {
			t.Errorf("%s differs between step indices and Unix seconds:\n%s\n%s", what, got["steps"][what], got["unix"][what])
		}
	}
	// The same values, at times written as asked.
	steps, unixRows := strings.Split(got["steps"]["interpolate"], "\n"), strings.Split(got["unix"]["interpolate"], "\n")
	if len(steps) != len(unixRows) || len(steps) < 10 {
		t.Fatalf("interpolate: %d and %d lines", len(steps), len(unixRows))
	}
	for i := 1; i < len(steps)-1; i++ {
		a, b := strings.Split(steps[i], ","), strings.Split(unixRows[i], ",")
		ts, _ := strconv.ParseFloat(a[2], 64)
		if a[0] != b[0] || a[1] != b[1] || a[3] != b[3] || b[2] != strconv.FormatFloat(unix+10*ts, 'f', -1, 64) {
			t.Fatalf("interpolate line %d: %q (steps) and %q (Unix seconds)", i, steps[i], unixRows[i])
		}
	}
}
