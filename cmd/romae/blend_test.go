package main

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"romae/data"
	"romae/datasets"
	"romae/eval"
	"romae/model"
)

// pretrain fits the blend of the model with linear and spline
// interpolation on its validation series and stores it in best.safetensors
// with the fingerprints of the series it saw; evaluate --hidden and
// interpolate by default pool it with a fit on the file's unseen series
// (the stored one alone when every series was seen), and --blend chooses
// otherwise.
func TestInterpolationBlend(t *testing.T) {
	dir := t.TempDir()
	pre := filepath.Join(dir, "pre")
	out, err := capture(t, cmdPretrain, "--batch-size", "8", "--train.progress", "none", "--data", trainTS,
		"--model.size", "36,2,2,72", "--model.decoder_size", "24,2,1,48", "--train.epochs", "2", "--out", pre)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		InterpBlend *eval.Blend `json:"interp_blend"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.InterpBlend == nil {
		t.Fatalf("pretrain printed %q (%v), want its interp_blend", out, err)
	}
	_, ck, err := model.Load[float32](pre)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := eval.BlendFromMeta(ck.Meta, 6)
	if err != nil || stored == nil || stored.Series != 8 || stored.BlendMSE != res.InterpBlend.BlendMSE {
		t.Fatalf("best.safetensors carries blend %+v (%v), want the one result.json reports, fitted on the 8 validation series", stored, err)
	}

	// 20% of each test series' steps hidden.
	test, err := data.LoadTS(testTS, data.TSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs, hid := datasets.ObserveFraction(test, 0.2, 1)
	obsTS, hidTS := filepath.Join(dir, "obs.ts"), filepath.Join(dir, "hid.ts")
	for path, part := range map[string]*data.Dataset{obsTS: obs, hidTS: hid} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := data.WriteTS(f, part); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	type scores struct {
		InterpMSE     float64            `json:"interp_mse"`
		ModelAloneMSE float64            `json:"model_alone_mse"`
		Blend         *eval.Blend        `json:"blend"`
		Baselines     map[string]float64 `json:"baselines"`
	}
	evaluate := func(args ...string) scores {
		t.Helper()
		out, err := capture(t, cmdEvaluate, append([]string{"--model", pre, "--data", obsTS, "--hidden", hidTS, "--baselines"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var s scores
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("evaluate printed %q: %v", out, err)
		}
		return s
	}
	blended, alone, fit := evaluate(), evaluate("--blend", "off"), evaluate("--blend", "fit")
	if fit.Blend == nil || fit.Blend.Series != 40 {
		t.Fatalf("--blend fit: %+v, want a blend fitted on the 40 observed test series", fit.Blend)
	}
	if b := blended.Blend; b == nil || b.Series != 48 || len(b.Sums) != 6 || alone.Blend != nil {
		t.Fatalf("evaluate's blend: %+v by default (want the 40 unseen test series pooled with the 8 validation series), %+v with --blend off (want none)", b, alone.Blend)
	}
	for k, g := range blended.Blend.Sums {
		f, st := fit.Blend.Sums[k], stored.Sums[k]
		want := eval.SlotSums{MM: f.MM + st.MM, MS: f.MS + st.MS, SS: f.SS + st.SS, ME: f.ME + st.ME, SE: f.SE + st.SE, EE: f.EE + st.EE, N: f.N + st.N}
		if g != want {
			t.Errorf("slot %d: default blend's sums %+v, want --blend fit's plus the stored ones: %+v", k, g, want)
		}
	}
	if s := evaluate("--blend", "stored"); s.Blend == nil || s.Blend.BlendMSE != stored.BlendMSE {
		t.Errorf("--blend stored: %+v, want the stored blend", s.Blend)
	}
	// Two epochs leave the model far behind a line through the neighbours;
	// the blend, weighting it down, is not.
	best := min(blended.Baselines["linear_mse"], blended.Baselines["spline_mse"])
	if blended.ModelAloneMSE != alone.InterpMSE || !(blended.InterpMSE < alone.InterpMSE) || !(blended.InterpMSE < 1.05*best) {
		t.Errorf("interpolation MSE: blended %v, model alone %v (--blend off: %v), best of linear and spline %v",
			blended.InterpMSE, blended.ModelAloneMSE, alone.InterpMSE, best)
	}

	interpolateFile := func(model, file string, args ...string) (string, error) {
		t.Helper()
		csv := filepath.Join(dir, "i.csv")
		if _, err := capture(t, cmdInterpolate, append([]string{"--model", model, "--data", file, "--at", "0.5:20.5:5", "--out", csv}, args...)...); err != nil {
			return "", err
		}
		b, err := os.ReadFile(csv)
		return string(b), err
	}
	interpolate := func(model string, args ...string) (string, error) {
		t.Helper()
		return interpolateFile(model, obsTS, args...)
	}
	def, err := interpolate(pre)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode string
		same bool
	}{{"auto", true}, {"stored", false}, {"off", false}} {
		got, err := interpolate(pre, "--blend", tc.mode)
		if err != nil || (got == def) != tc.same {
			t.Errorf("interpolate --blend %s: %v; same values as the default: %v, want %v", tc.mode, err, got == def, tc.same)
		}
	}
	if _, err := interpolate(pre, "--blend", "sometimes"); err == nil || !strings.Contains(err.Error(), "--blend") {
		t.Errorf("--blend sometimes: %v, want an error naming --blend", err)
	}

	off, err := interpolate(pre, "--blend", "off")
	if err != nil {
		t.Fatal(err)
	}

	// On the pre-training file itself every series was seen (trained or
	// validated on): the stored blend alone, said so.
	seenAuto, err := interpolateFile(pre, trainTS)
	if err != nil {
		t.Fatal(err)
	}
	if seenStored, err := interpolateFile(pre, trainTS, "--blend", "stored"); err != nil || seenStored != seenAuto {
		t.Errorf("interpolating the pre-training file: %v; same values as --blend stored: %v, want true", err, seenStored == seenAuto)
	}
	_, errOut, code := runMain(t, "interpolate", "--model", pre, "--data", trainTS, "--at", "1:2:1", "--out", filepath.Join(dir, "j.csv"))
	if code != 0 || !strings.Contains(errOut, "saw every series") {
		t.Errorf("interpolate on the pre-training file: exit %d, stderr %q; want it to say pre-training saw every series", code, errOut)
	}

	// A checkpoint without a stored blend or a record of its series (as
	// written before either existed) gives the model alone, saying so; fit
	// fits one. With the record but no blend (too few validation series),
	// the default fits on the unseen series alone.
	m, ck, err := model.Load[float32](pre)
	if err != nil {
		t.Fatal(err)
	}
	meta := maps.Clone(ck.Meta)
	delete(meta, eval.MetaBlend)
	recorded := filepath.Join(dir, "recorded.safetensors")
	if err := m.Save(recorded, meta, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := interpolate(recorded); err != nil || got == off {
		t.Errorf("no stored blend, series recorded: %v; the model alone's values: %v, want a blend fitted on the test series", err, got == off)
	}
	// A blend stored by a romae that hid its tokens in runs
	// (eval.HideIsolated absent) is not pooled: the fit on the test series
	// alone, said so.
	earlier := *stored
	earlier.Hide = ""
	raw, err := json.Marshal(&earlier)
	if err != nil {
		t.Fatal(err)
	}
	meta[eval.MetaBlend] = string(raw)
	earlierPath := filepath.Join(dir, "earlier.safetensors")
	if err := m.Save(earlierPath, meta, nil); err != nil {
		t.Fatal(err)
	}
	outE, errOut, code := runMain(t, "evaluate", "--model", earlierPath, "--data", obsTS, "--hidden", hidTS)
	var e scores
	if code != 0 || json.Unmarshal([]byte(outE), &e) != nil || e.Blend == nil || e.Blend.Series != 40 || !slices.Equal(e.Blend.Sums, fit.Blend.Sums) || !strings.Contains(errOut, "not pooled") {
		t.Errorf("an earlier romae's stored blend: exit %d, blend %+v, stderr %q; want the 40 test series' fit alone (%+v), saying the stored one is not pooled", code, e.Blend, errOut, fit.Blend.Sums)
	}
	delete(meta, eval.MetaBlend)
	delete(meta, eval.MetaPretrainSeries)
	bare := filepath.Join(dir, "bare.safetensors")
	if err := m.Save(bare, meta, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := interpolate(bare); err != nil || got != off {
		t.Errorf("a checkpoint without a blend: %v; the model alone's values: %v", err, got == off)
	}
	_, errOut, code = runMain(t, "interpolate", "--model", bare, "--data", obsTS, "--at", "1:2:1", "--out", filepath.Join(dir, "j.csv"))
	if code != 0 || !strings.Contains(errOut, "the model alone") || !strings.Contains(errOut, eval.MetaBlend) {
		t.Errorf("interpolate with a bare checkpoint: exit %d, stderr %q; want it to say the model alone is used", code, errOut)
	}
	_, errOut, code = runMain(t, "interpolate", "--model", bare, "--data", obsTS, "--at", "1:2:1", "--out", filepath.Join(dir, "j.csv"), "--blend", "fit")
	if code != 0 || !strings.Contains(errOut, "fitted on "+obsTS) {
		t.Errorf("interpolate --blend fit: exit %d, stderr %q; want the blend fitted on --data", code, errOut)
	}
}

// evaluate --hidden matches held-out series to observed ones by id: the
// held-out file's order does not matter, observed series without held-out
// points are left out, and held-out points of a series --data lacks are an
// error naming both files and the id.
func TestHiddenMatchedByID(t *testing.T) {
	dir := t.TempDir()
	csvPath, _ := writeOscillatorCSV(t, dir, "s", 6, 1)
	lines := strings.Split(strings.TrimSpace(readFile(t, csvPath)), "\n")
	header, rows := lines[0], lines[1:]
	write := func(name string, keep func(i int, id string) bool, reverse bool) string {
		var kept []string
		for i, r := range rows {
			if keep(i, r[:strings.IndexByte(r, ',')]) {
				kept = append(kept, r)
			}
		}
		if reverse {
			slices.Reverse(kept)
		}
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(header+"\n"+strings.Join(kept, "\n")+"\n"), 0o644)
		return path
	}
	held := func(i int) bool { return (i/3)%4 == 1 } // every fourth time step, its three channels
	obs := write("obs.csv", func(i int, _ string) bool { return !held(i) }, false)
	obsNoS2 := write("obs-no-s2.csv", func(i int, id string) bool { return !held(i) && id != "s2" }, false)
	hid := write("hid.csv", func(i int, _ string) bool { return held(i) }, false)
	hidReversed := write("hid-reversed.csv", func(i int, _ string) bool { return held(i) }, true)
	hidNoS2 := write("hid-no-s2.csv", func(i int, id string) bool { return held(i) && id != "s2" }, true)
	pre := filepath.Join(dir, "pre")
	if _, err := capture(t, cmdPretrain, "--data", csvPath, "--model.size", "24,2,1,48", "--model.decoder_size", "24,2,1,48",
		"--train.epochs", "1", "--train.progress", "none", "--out", pre); err != nil {
		t.Fatal(err)
	}
	// The MSEs, the model's and the baselines': the same up to the order
	// of their sums (tokens at one time come in file order).
	mse := func(observed, hidden string) []float64 {
		out, err := capture(t, cmdEvaluate, "--model", pre, "--data", observed, "--hidden", hidden, "--blend", "off", "--baselines")
		if err != nil {
			t.Fatalf("%s against %s: %v", hidden, observed, err)
		}
		var r struct {
			N         int
			MSE       float64 `json:"interp_mse"`
			Baselines map[string]float64
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return []float64{float64(r.N), r.MSE, r.Baselines["linear_mse"], r.Baselines["spline_mse"], r.Baselines["channel_mean_mse"]}
	}
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Abs(y) })
	}
	if a, b := mse(obs, hid), mse(obs, hidReversed); !same(a, b) {
		t.Errorf("n and MSEs with held-out series in reverse order %v, in order %v", b, a)
	}
	if a, b := mse(obsNoS2, hidNoS2), mse(obs, hidNoS2); !same(a, b) || a[0] != 5 {
		t.Errorf("n and MSEs with observed series without held-out points %v, without them %v (n 5)", b, a)
	}
	_, err := capture(t, cmdEvaluate, "--model", pre, "--data", obsNoS2, "--hidden", hid, "--blend", "off")
	if want := `hid.csv: series "s2" has held-out points but no observed ones in ` + obsNoS2; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a held-out series without observed points: %v, want %q", err, want)
	}
}
