package data

import (
	"archive/zip"
	"bytes"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadNPY(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		file, dtype string
		shape       []int
		data        []float32
	}{
		{"f4_2x3.npy", "<f4", []int{2, 3}, []float32{0, 1, 2, 3, 4, 5}},
		{"f8.npy", "<f8", []int{3}, []float32{1.5, -2.25, nan}},
		{"i4.npy", "<i4", []int{3}, []float32{-1, 0, 7}},
		{"i8.npy", "<i8", []int{4}, []float32{0, 1, 2, 1}},
		{"u1.npy", "|u1", []int{2, 4, 4}, func() []float32 {
			d := make([]float32, 32)
			for i := range d {
				d[i] = float32(i)
			}
			return d
		}()},
		{"b1.npy", "|b1", []int{3}, []float32{1, 0, 1}},
		{"scalar.npy", "<f4", []int{}, []float32{3.5}},
		{"v2.npy", "<f4", []int{4}, []float32{0, 1, 2, 3}},
		{"v3.npy", "<f4", []int{4}, []float32{0, 1, 2, 3}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			a, err := LoadNPY(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			sameNaN := func(x, y float32) bool { return x == y || (x != x && y != y) }
			if a.DType != tc.dtype || !slices.Equal(a.Shape, tc.shape) || !slices.EqualFunc(a.Data, tc.data, sameNaN) {
				t.Errorf("got %s %v %v, want %s %v %v", a.DType, a.Shape, a.Data, tc.dtype, tc.shape, tc.data)
			}
		})
	}
}

// npyBytes reads a NumPy-written fixture for tests that corrupt it.
func npyBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadNPYMalformed(t *testing.T) {
	good := npyBytes(t, "f4_2x3.npy") // 128-byte header, 24 bytes of data
	header := func(dict string) []byte {
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)+1), 0)
		return append(append(b, dict...), '\n')
	}
	for _, tc := range []struct {
		name    string
		content []byte
		want    []string
	}{
		{"empty", nil, []string{"magic", "truncated"}},
		{"bad magic", []byte("PK\x03\x04 not numpy at all"), []string{"magic", "not a .npy"}},
		{"version 4", append([]byte("\x93NUMPY\x04\x00"), good[8:]...), []string{"version 4.0"}},
		{"truncated header", good[:60], []string{"npy header", "truncated"}},
		{"truncated data", good[:len(good)-5], []string{"npy data", "truncated data", "4 of 6 elements"}},
		{"big-endian", npyBytes(t, "bigendian.npy"), []string{"'descr'", `">f4" not supported`}},
		{"float16", npyBytes(t, "f2.npy"), []string{"'descr'", `"<f2" not supported`}},
		{"fortran order", npyBytes(t, "fortran.npy"), []string{"'fortran_order'"}},
		{"not a dict", header("[1, 2]"), []string{"npy header", "'{'"}},
		{"missing shape", header("{'descr': '<f4', 'fortran_order': False}"), []string{"missing key 'shape'"}},
		{"unknown key", header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"), []string{"'x'", "unknown key"}},
		{"bad shape", header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }"), []string{"'shape'", `"-1"`}},
		{"bad bool", header("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"), []string{"'fortran_order'", "True or False"}},
		{"bad bool byte", append(header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }"), 1, 7), []string{"element 1", "bool byte 7"}},
		{"f8 overflow", append(header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"), 0, 0, 0, 0, 0, 0, 0xf0, 0x7f-1), []string{"element 0", "overflows float32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.npy")
			if err := os.WriteFile(path, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := LoadNPY(path)
			wantErr(t, err, append([]string{"bad.npy"}, tc.want...)...)
			if a != nil {
				t.Error("got an array along with the error")
			}
		})
	}
}

func TestWriteNPY(t *testing.T) {
	// Byte-identical to what NumPy's np.save wrote for the same array.
	var buf bytes.Buffer
	if err := WriteNPY(&buf, []int{2, 3}, []float32{0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), npyBytes(t, "f4_2x3.npy")) {
		t.Errorf("WriteNPY output differs from NumPy's:\n%q\n%q", buf.Bytes(), npyBytes(t, "f4_2x3.npy"))
	}

	manyDims := make([]int, 30000) // header too long for version 1.0
	for i := range manyDims {
		manyDims[i] = 1
	}
	big := make([]float32, 20000) // several write chunks
	for i := range big {
		big[i] = float32(i) - 0.5
	}
	for _, tc := range []struct {
		name  string
		shape []int
		data  []float32
	}{
		{"scalar", []int{}, []float32{7}},
		{"empty", []int{0, 3}, []float32{}},
		{"3-D", []int{2, 1, 2}, []float32{1, -2, float32(math.Inf(1)), 4}},
		{"large", []int{100, 200}, big},
		{"version 2", manyDims, []float32{42}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.npy")
			if err := SaveNPY(path, tc.shape, tc.data); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			if hdr := len(raw) - 4*len(tc.data); hdr%64 != 0 {
				t.Errorf("data starts at %d, not 64-byte aligned", hdr)
			}
			a, err := LoadNPY(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Shape, tc.shape) || !slices.Equal(a.Data, tc.data) {
				t.Errorf("round trip: got %v (%d values), want %v (%d values)", len(a.Shape), len(a.Data), len(tc.shape), len(tc.data))
			}
		})
	}
	wantErr(t, WriteNPY(&buf, []int{2, 2}, []float32{1}), "holds 4 elements, data has 1")
	wantErr(t, WriteNPY(&buf, []int{-1}, nil), "negative")
}

func TestLoadNPZ(t *testing.T) {
	for _, file := range []string{"series.npz", "series_compressed.npz"} {
		t.Run(file, func(t *testing.T) {
			m, err := LoadNPZ(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, []string{"x", "y"}) {
				t.Fatalf("members %v, want [x y]", got)
			}
			if !slices.Equal(m["x"].Shape, []int{3, 4, 2}) || m["x"].Data[23] != 23 {
				t.Errorf("x: shape %v data %v", m["x"].Shape, m["x"].Data)
			}
			labels, err := m["y"].Ints()
			if err != nil || !slices.Equal(labels, []int{0, 2, 1}) {
				t.Fatalf("y.Ints() = %v, %v", labels, err)
			}
			ds, err := DenseSeries(m["x"], labels)
			if err != nil {
				t.Fatal(err)
			}
			if err := ds.Validate(); err != nil {
				t.Fatal(err)
			}
			// Sample 1 has NaN at step 2, channel 0: that step is dropped.
			s := ds.Samples[1]
			if ds.C != 2 || ds.D != 1 || !equalF32(s.Positions, []float32{0, 1, 3}) ||
				!equalF32(s.Values, []float32{8, 9, 10, 11, 14, 15}) || s.Label != 2 {
				t.Errorf("sample 1 = %+v", s)
			}
			if !slices.Equal(ds.Classes, []string{"0", "1", "2"}) {
				t.Errorf("classes %v", ds.Classes)
			}
		})
	}
}

// writeZip builds a zip archive from name → content.
func writeZip(t *testing.T, members map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(members)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "bad.npz", buf.String())
}

func TestLoadNPZMalformed(t *testing.T) {
	good := npyBytes(t, "f4_2x3.npy")
	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
		want []string
	}{
		{"not a zip", func(t *testing.T) string { return writeTemp(t, "bad.npz", string(good)) }, []string{"not a readable .npz"}},
		{"truncated zip", func(t *testing.T) string {
			b, _ := os.ReadFile(writeZip(t, map[string][]byte{"x.npy": good}))
			return writeTemp(t, "bad.npz", string(b[:len(b)-30]))
		}, []string{"not a readable .npz"}},
		{"foreign member", func(t *testing.T) string {
			return writeZip(t, map[string][]byte{"x.npy": good, "notes.txt": []byte("hi")})
		}, []string{`"notes.txt" is not a .npy`}},
		{"broken member", func(t *testing.T) string {
			return writeZip(t, map[string][]byte{"x.npy": good, "y.npy": good[:130]})
		}, []string{`member "y.npy"`, "truncated data"}},
		{"no members", func(t *testing.T) string { return writeZip(t, nil) }, []string{"no arrays"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := LoadNPZ(tc.path(t))
			wantErr(t, err, append([]string{"bad.npz"}, tc.want...)...)
			if m != nil {
				t.Error("got arrays along with the error")
			}
		})
	}
}

func TestDenseImages(t *testing.T) {
	a, err := LoadNPY(filepath.Join("testdata", "u1.npy")) // [2, 4, 4], pixel = index
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DenseImages(a, []int{1, -1}, [2]int{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	s := ds.Samples[0]
	if ds.C != 4 || ds.D != 2 || s.Len(4) != 4 || s.Label != 1 || ds.Samples[1].Label != -1 {
		t.Fatalf("C=%d D=%d N=%d labels %d %d", ds.C, ds.D, s.Len(4), s.Label, ds.Samples[1].Label)
	}
	// Token 1 is the top-right patch: rows 0-1, columns 2-3.
	if !equalF32(s.Values[4:8], []float32{2, 3, 6, 7}) || !equalF32(s.Positions, []float32{0, 0, 0, 1, 1, 0, 1, 1}) {
		t.Errorf("values %v positions %v", s.Values, s.Positions)
	}
	if !slices.Equal(ds.Classes, []string{"0", "1"}) {
		t.Errorf("classes %v", ds.Classes)
	}
}

func TestDenseMalformed(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"series rank", func() error {
			_, err := DenseSeries(&Array{Shape: []int{4}, Data: make([]float32, 4)}, nil)
			return err
		}, "want [N, T, C]"},
		{"series Inf", func() error {
			_, err := DenseSeries(&Array{Shape: []int{1, 2, 2}, Data: []float32{0, 1, 2, inf}}, nil)
			return err
		}, "sample 0 step 1 channel 1 is +Inf"},
		{"series all NaN", func() error {
			_, err := DenseSeries(&Array{Shape: []int{2, 1}, Data: []float32{1, nan}}, nil)
			return err
		}, "sample 1: every step has a NaN"},
		{"label count", func() error {
			_, err := DenseSeries(&Array{Shape: []int{2, 1}, Data: []float32{1, 2}}, []int{0})
			return err
		}, "1 labels for 2 samples"},
		{"bad label", func() error {
			_, err := DenseSeries(&Array{Shape: []int{1, 1}, Data: []float32{1}}, []int{-3})
			return err
		}, "label -3"},
		{"data length", func() error { _, err := DenseSeries(&Array{Shape: []int{2, 2}, Data: []float32{1}}, nil); return err }, "needs 4 values"},
		{"empty", func() error { _, err := DenseSeries(&Array{Shape: []int{0, 2}}, nil); return err }, "no values"},
		{"image NaN", func() error {
			_, err := DenseImages(&Array{Shape: []int{1, 2, 2}, Data: []float32{0, 0, nan, 0}}, nil, [2]int{1, 1})
			return err
		}, "image 0 pixel (1, 0) channel 0 is NaN"},
		{"image patch", func() error {
			_, err := DenseImages(&Array{Shape: []int{1, 3, 2}, Data: make([]float32, 6)}, nil, [2]int{2, 2})
			return err
		}, "does not divide axis 1"},
		{"image rank", func() error {
			_, err := DenseImages(&Array{Shape: []int{2, 3}, Data: make([]float32, 6)}, nil, [2]int{1, 1})
			return err
		}, "want [N, H, W]"},
		{"ints", func() error { _, err := (&Array{Shape: []int{2}, Data: []float32{1, 1.5}}).Ints(); return err }, "element 1 = 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			wantErr(t, err, tc.want)
			if err != nil && !strings.HasPrefix(err.Error(), "Dense") && tc.name != "ints" {
				t.Errorf("error %q does not name the function", err)
			}
		})
	}
}

// An npz label array's entries are class indices, −1 for a sample without
// a label; anything below is refused naming the file, array and element.
func TestNPZLabelsBelowMinusOne(t *testing.T) {
	x := &Array{Shape: []int{3, 2, 1}, Data: []float32{1, 2, 3, 4, 5, 6}}
	path := writeNPZ(t, map[string]*Array{"x": x, "y": {Shape: []int{3}, Data: []float32{0, -2, 1}}})
	_, err := Source{}.Load(path)
	wantErr(t, err, "physionet_compressed.npz", `array "y"`, "element 1 = -2", "not a class index")
	path = writeNPZ(t, map[string]*Array{"x": x, "y": {Shape: []int{3}, Data: []float32{0, -1, 1}}})
	ds, err := Source{}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "physionet_compressed" || ds.Samples[1].Label != -1 {
		t.Errorf("name %q, sample 1's label %d; want the file's name and -1", ds.Name, ds.Samples[1].Label)
	}
}
