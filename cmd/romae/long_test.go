package main

import (
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"romae/ckpt"
	"romae/data"
	"romae/internal/sysmem"
)

// Series far longer than any the recipe was developed on (8 of 100 000
// steps): one token per step is refused before anything is allocated, with
// an error that names the settings to change (it needs over 5 TiB, and was
// killed by the kernel part-way before the check), and the default recipe
// patches them to about 512 tokens, so the run trains.
func TestLongSeries(t *testing.T) {
	if _, _, ok := sysmem.Available(); !ok {
		t.Skip("free memory unreadable here: the check lets runs go ahead")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "long.ts")
	ds := &data.Dataset{C: 1, D: 1, Classes: []string{"slow", "fast"}}
	for i := range 8 {
		s := data.Sample{Label: i % 2}
		for j := range 100_000 {
			s.Positions = append(s.Positions, float32(j))
			s.Values = append(s.Values, float32(math.Sin(float64(j)*float64(1+i%2)/500)))
		}
		ds.Samples = append(ds.Samples, s)
	}
	if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return data.WriteTS(w, ds) }); err != nil {
		t.Fatal(err)
	}
	_, err := capture(t, cmdFinetune, "--data", path, "--data.series_patch", "1", "--train.progress", "none", "--out", filepath.Join(dir, "p1"))
	if err == nil || !strings.Contains(err.Error(), "needs at least") || !strings.Contains(err.Error(), "data.series_patch") || !strings.Contains(err.Error(), "train.batch_size") {
		t.Fatalf("one token per step: error %v, want the memory check naming data.series_patch and train.batch_size", err)
	}
	run := filepath.Join(dir, "run")
	if _, err := capture(t, cmdFinetune, "--data", path, "--model.size", "24,2,1,48", "--train.epochs", "1", "--train.progress", "none", "--out", run); err != nil {
		t.Fatal(err)
	}
	ck, err := ckpt.ReadFile(filepath.Join(run, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _, err := data.SpecFromMeta(ck.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if p := spec.Source.SeriesPatch; p != 196 { // ⌈100 000 / 512⌉
		t.Errorf("the recipe patched by %d observations, want 196", p)
	}
}
