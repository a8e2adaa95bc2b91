package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/ckpt"
	"romae/data"
	"romae/model"
)

func TestCheckpointSpec(t *testing.T) {
	dir := t.TempDir()
	own := &data.Spec{Classes: []string{"a", "b"}, Stats: &data.Stats{Mean: []float64{1}, Std: []float64{2}}}
	file := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(file, []byte(`{"source":{"format":"csv"},"classes":["x","y"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"sauce":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	withSpec := &model.Checkpoint{Path: "m.safetensors", File: &ckpt.File{}, Meta: own.Meta()}
	without := &model.Checkpoint{Path: "old.safetensors", File: &ckpt.File{}, Meta: map[string]string{}}
	authors := &model.Checkpoint{Path: "dir", Meta: map[string]string{}} // File nil
	raw := data.Source{Format: "auto", Missing: data.MissingDropStep}
	for _, c := range []struct {
		name    string
		ck      *model.Checkpoint
		choice  SpecChoice
		classes string // want, or the error's text
		fails   bool
	}{
		{"its own", withSpec, SpecChoice{}, "a b", false},
		{"file wins", withSpec, SpecChoice{File: file}, "x y", false},
		{"raw on a spec", withSpec, SpecChoice{Raw: true, RawSource: raw}, "--raw applies only", true},
		{"none", without, SpecChoice{}, "has no data spec", true},
		{"none, raw", without, SpecChoice{Raw: true, RawSource: raw}, "", false},
		{"authors'", authors, SpecChoice{RawSource: raw}, "", false},
		{"bad file", without, SpecChoice{File: bad}, "bad.json: JSON data spec", true},
	} {
		spec, err := CheckpointSpec(c.ck.Path, c.ck, c.choice)
		switch {
		case c.fails:
			if err == nil || !strings.Contains(err.Error(), c.classes) {
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.classes)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case strings.Join(spec.Classes, " ") != c.classes:
			t.Errorf("%s: classes %v, want %q", c.name, spec.Classes, c.classes)
		case c.classes == "" && (spec.Source.Format != raw.Format || spec.Source.Missing != raw.Missing || spec.Stats != nil):
			t.Errorf("%s: source %+v, want the raw defaults", c.name, spec.Source)
		}
	}
}
