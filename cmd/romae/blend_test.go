package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
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
