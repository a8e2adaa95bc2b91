package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"romae/internal/fuzzcheck"
)

// The fuzz targets of package data: every file loader, by path, as the CLI
// calls it. Each fails on a panic, a hang or an allocation beyond
// fuzzcheck.Budget (see internal/fuzzcheck). The seeds are the repository's
// data files and the hostile inputs found so far; go test runs them.

// validOrErr checks that what a loader accepted is a dataset the model can
// use (Dataset.Validate), so a fuzz run also catches silent corruption.
func validOrErr(t *testing.T, ds *Dataset, err error) {
	if err == nil {
		if verr := ds.Validate(); verr != nil {
			t.Fatalf("loader accepted an invalid dataset: %v", verr)
		}
	}
}

func FuzzLoadTS(f *testing.F) {
	fuzzcheck.AddFiles(f, "testdata/*.ts", "../testdata/BasicMotions_TEST.ts")
	f.Add([]byte("@problemName x\n@timeStamps true\n@univariate false\n@classLabel true a b\n@data\n(0,1),(2,3):(1,4):a\n"))
	f.Add([]byte("@classLabel true a a\n@data\n1,2:a\n"))
	f.Add([]byte("@dimensions 100000000\n@data\n1:2\n"))
	// Stamped dimensions that share no stamp: quadratic in the old
	// alignment (stamps × dimensions).
	var b bytes.Buffer
	b.WriteString("@timeStamps true\n@data\n")
	for d := range 2000 {
		if d > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "(%d,1)", d)
	}
	b.WriteByte('\n')
	f.Add(b.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.ts", in)
		fuzzcheck.Check(t, len(in), func() {
			for _, m := range []string{MissingDropStep, MissingChannelAxis} {
				ds, err := LoadTS(path, TSOptions{Missing: m})
				validOrErr(t, ds, err)
			}
		})
	})
}

func FuzzLoadLongCSV(f *testing.F) {
	fuzzcheck.AddFiles(f, "testdata/*.csv")
	f.Add([]byte(elasticcCSV))
	// One object with many times and many channels seen only on other
	// objects: slot mode's times × channels.
	var b bytes.Buffer
	b.WriteString("id,time,channel,value,label\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "a,%d,c0,1,x\nb%d,0,c%d,1,y\n", i, i, i)
	}
	f.Add(b.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.csv", in)
		fuzzcheck.Check(t, len(in), func() {
			for _, opt := range []CSVOptions{
				{},
				{ChannelMode: ChannelSlot},
				{ChannelMode: ChannelSlot, FillMissing: true, LabelColumn: "label"},
				{LabelColumn: "label"},
				{Channels: []string{"c0", "c1", "g", "r"}}, // a model's channels: others refused
				{Channels: []string{"c1", "c0"}, ChannelMode: ChannelSlot, FillMissing: true}, // absent ones filled
				{IDColumn: "object_id", TimeColumn: "mjd", ChannelColumn: "band", ValueColumns: []string{"flux", "flux_err"}, TargetColumns: []string{"redshift"}},
				{IDColumn: "object_id", TimeColumn: "mjd", ChannelColumn: "band", ValueColumns: []string{"flux"}, ChannelMode: ChannelSlot, FillMissing: true},
			} {
				ds, err := LoadLongCSV(path, opt)
				validOrErr(t, ds, err)
			}
			ds, err := LoadElasticcCSV(path, "")
			validOrErr(t, ds, err)
			if labels, err := LoadLabelsCSV(path, "id", "label"); err == nil {
				if ds, err := LoadLongCSV(path, CSVOptions{}); err == nil {
					AttachLabels(ds, labels, nil)
				}
			}
		})
	})
}

func FuzzLoadNPY(f *testing.F) {
	fuzzcheck.AddFiles(f, "testdata/*.npy")
	for _, shape := range []string{"(1000000000000, 0)", "(0, 1000000000000)", "(1000000000000, 0, 4)", "(4611686018427387904, 0, 4611686018427387904)"} {
		f.Add(npyHeader("<f4", shape))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.npy", in)
		fuzzcheck.Check(t, len(in), func() {
			if _, err := ReadNPY(bytes.NewReader(in)); err != nil {
				return
			}
			for _, src := range []Source{{}, {Patch: [2]int{1, 1}}, {Patch: [2]int{2, 2}}} {
				ds, err := src.Load(path)
				validOrErr(t, ds, err)
			}
		})
	})
}

func FuzzLoadNPZ(f *testing.F) {
	fuzzcheck.AddFiles(f, "testdata/*.npz")
	f.Add(npzOf(map[string][]byte{"x.npy": npyHeader("<f4", "(1000000000000, 0)")}))
	f.Add(npzOf(map[string][]byte{"x.npy": npyFile("<f4", "(2, 2)", make([]byte, 16)), "y.npy": npyFile("<i8", "(2,)", binary.LittleEndian.AppendUint64(make([]byte, 8), 1<<40))}))
	f.Add(npzOf(map[string][]byte{"train.npy": npyFile("<f4", "(1, 1, 83)", make([]byte, 4*83))}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.npz", in)
		fuzzcheck.Check(t, len(in), func() {
			for _, src := range []Source{{}, {Patch: [2]int{2, 2}}} {
				ds, err := src.Load(path)
				validOrErr(t, ds, err)
			}
			ds, err := LoadPhysioNetNPZ(path, "train")
			validOrErr(t, ds, err)
		})
	})
}

// npyHeader is a version 1.0 .npy header with no data.
func npyHeader(descr, shape string) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }\n", descr, shape)
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	return append(b, dict...)
}

func npyFile(descr, shape string, data []byte) []byte {
	return append(npyHeader(descr, shape), data...)
}

func npzOf(members map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range members {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	zw.Close()
	return b.Bytes()
}

// TestHostileDataFiles pins the defects the fuzz targets were written for:
// each input is refused with an error naming the problem, quickly and
// within the allocation bound.
func TestHostileDataFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		load func() error
		want string
	}{
		{"npy (10^12, 0)", func() error {
			_, err := Source{}.Load(write("z.npy", npyHeader("<f4", "(1000000000000, 0)")))
			return err
		}, "has no values"},
		{"npy images (10^12, 0, 4)", func() error {
			_, err := Source{Patch: [2]int{1, 1}}.Load(write("z.npy", npyHeader("<f4", "(1000000000000, 0, 4)")))
			return err
		}, "has no values"},
		{"npy nonzero dims overflow", func() error {
			_, err := ReadNPY(bytes.NewReader(npyHeader("<f4", "(4611686018427387904, 0, 4611686018427387904)")))
			return err
		}, "'shape'"},
		{"npz label 2^40", func() error {
			_, err := Source{}.Load(write("l.npz", npzOf(map[string][]byte{"x.npy": npyFile("<f4", "(2, 2)", make([]byte, 16)), "y.npy": npyFile("<i8", "(2,)", binary.LittleEndian.AppendUint64(make([]byte, 8), 1<<40))})))
			return err
		}, "MaxClasses"},
		{"ts dimensions", func() error {
			_, err := LoadTS(write("d.ts", []byte("@dimensions 100000000\n@data\n1:2\n")), TSOptions{})
			return err
		}, "MaxChannels"},
	}
	for _, c := range cases {
		var err error
		fuzzcheck.Check(t, 1000, func() { err = c.load() })
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}
