package data

import (
	"os"
	"path/filepath"
	"testing"

	"romae/internal/fuzzcheck"
)

// FuzzLoadDataset: a romae dataset file (the format experiments save their
// test sets in) either loads into a valid dataset — and then series
// patching of it works too — or is refused, within bounded time and memory.
func FuzzLoadDataset(f *testing.F) {
	dir := f.TempDir()
	for i, ds := range []*Dataset{ragged(), func() *Dataset { d := ragged(); d.Classes, d.TargetDim = nil, 0; return d }()} {
		path := filepath.Join(dir, "seed.safetensors")
		if err := SaveDataset(path, clearLabels(ds, i == 1)); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.safetensors", in)
		fuzzcheck.Check(t, len(in), func() {
			ds, err := LoadDataset(path)
			validOrErr(t, ds, err)
			if err == nil {
				p, err := PatchSeries(ds, 3)
				validOrErr(t, p, err)
			}
		})
	})
}

func clearLabels(ds *Dataset, clear bool) *Dataset {
	if clear {
		for i := range ds.Samples {
			ds.Samples[i].Label, ds.Samples[i].Target = -1, nil
		}
	}
	return ds
}
