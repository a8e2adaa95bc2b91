package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, payload []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(payload)
	return b.Bytes()
}

func gz(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func write(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadIDX(t *testing.T) {
	dir := t.TempDir()
	payload := []byte{0, 1, 2, 3, 4, 5, 250, 255, 9, 10, 11, 12}
	tests := []struct {
		name    string
		content []byte
		dims    []int
		wantErr string // "" means success
	}{
		{"plain", idxBytes([]int{2, 3, 2}, payload), []int{2, 3, 2}, ""},
		{"gzipped", gz(t, idxBytes([]int{12}, payload)), []int{12}, ""},
		{"empty-payload", idxBytes([]int{0, 28, 28}, nil), []int{0, 28, 28}, ""},
		{"bad-magic", append([]byte{8, 3}, idxBytes([]int{12}, payload)[2:]...), nil, "bad IDX magic number"},
		{"float-type", append([]byte{0, 0, 0x0d}, idxBytes([]int{12}, payload)[3:]...), nil, "element type 0x0d not supported"},
		{"zero-dims", []byte{0, 0, 8, 0}, nil, "0 dimensions"},
		{"short-magic", []byte{0, 0}, nil, "header truncated"},
		{"short-dims", idxBytes([]int{2, 3, 2}, nil)[:10], nil, "header truncated"},
		{"short-payload", idxBytes([]int{2, 3, 2}, payload[:7]), nil, "payload truncated: 7 bytes"},
		{"trailing", idxBytes([]int{2, 3}, payload), nil, "6 trailing bytes"},
		{"gzip-truncated", gz(t, idxBytes([]int{12}, payload))[:20], nil, "gzip"},
		{"gzipped-truncated-payload", gz(t, idxBytes([]int{100}, payload)), nil, "payload truncated"},
		{"huge-dims", idxBytes([]int{1 << 20, 1 << 20, 1 << 20}, nil), nil, "exceed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, dir, tc.name+".idx", tc.content)
			dims, data, err := ReadIDX(p)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, got dims %v", dims)
				}
				if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q should name %s and say %q", err, p, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dims, tc.dims) {
				t.Fatalf("dims %v, want %v", dims, tc.dims)
			}
			if n := len(data); n != 0 && !bytes.Equal(data, payload) {
				t.Fatalf("payload %v", data)
			}
		})
	}
	if _, _, err := ReadIDX(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: %v", err)
	}
}

// fakeFashion writes a 3-image Fashion-MNIST-shaped split into dir.
func fakeFashion(t *testing.T, dir, prefix string, gzipped bool, labels []byte) []byte {
	t.Helper()
	pix := make([]byte, 3*28*28)
	for i := range pix {
		pix[i] = byte(i * 7)
	}
	img, lbl := idxBytes([]int{3, 28, 28}, pix), idxBytes([]int{len(labels)}, labels)
	suffix := ""
	if gzipped {
		img, lbl, suffix = gz(t, img), gz(t, lbl), ".gz"
	}
	write(t, dir, prefix+"-images-idx3-ubyte"+suffix, img)
	write(t, dir, prefix+"-labels-idx1-ubyte"+suffix, lbl)
	return pix
}

func TestLoadFashionMNISTSmall(t *testing.T) {
	for _, gzipped := range []bool{false, true} {
		dir := t.TempDir()
		pix := fakeFashion(t, dir, "t10k", gzipped, []byte{9, 0, 4})
		images, labels, err := LoadFashionMNIST(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(labels, []int{9, 0, 4}) || len(images) != len(pix) {
			t.Fatalf("labels %v, %d pixels", labels, len(images))
		}
		for i, b := range pix {
			if images[i] != float32(b)/255 {
				t.Fatalf("pixel %d = %v, want %v", i, images[i], float32(b)/255)
			}
		}
		ds, err := Images(images, labels, 0, 28, 28, 7, FashionMNISTClasses)
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.Validate(); err != nil {
			t.Fatal(err)
		}
		if len(ds.Samples) != 3 || ds.C != 49 || ds.D != 2 || ds.Samples[0].Len(49) != 16 || ds.Classes[ds.Samples[0].Label] != "Ankle boot" {
			t.Fatalf("dataset %d samples C=%d", len(ds.Samples), ds.C)
		}
	}

	errs := []struct {
		name, want string
		setup      func(t *testing.T, dir string)
		split      string
	}{
		{"missing", "neither", func(*testing.T, string) {}, "train"},
		{"bad-split", "split", func(*testing.T, string) {}, "valid"},
		{"label-range", "label 10 of item 1", func(t *testing.T, d string) { fakeFashion(t, d, "train", true, []byte{1, 10, 2}) }, "train"},
		{"count-mismatch", "2 labels", func(t *testing.T, d string) { fakeFashion(t, d, "train", false, []byte{1, 2}) }, "train"},
		{"image-shape", "want [N 28 28]", func(t *testing.T, d string) {
			write(t, d, "train-images-idx3-ubyte", idxBytes([]int{1, 27, 29}, make([]byte, 27*29)))
			write(t, d, "train-labels-idx1-ubyte", idxBytes([]int{1}, []byte{0}))
		}, "train"},
		{"corrupt-labels", "bad IDX magic", func(t *testing.T, d string) {
			fakeFashion(t, d, "train", false, []byte{1, 2, 3})
			write(t, d, "train-labels-idx1-ubyte", []byte{1, 2, 3, 4, 5, 6, 7, 8})
		}, "train"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			_, _, err := LoadFashionMNIST(dir, tc.split)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestImages(t *testing.T) {
	// Two 4×4 images with pixel value = 100·image + index.
	px := make([]float32, 32)
	for i := range px {
		px[i] = float32(100*(i/16) + i%16)
	}
	ds, err := Images(px, []int{1, -1}, 2, 4, 4, 2, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	s := ds.Samples[1]
	if ds.C != 4 || ds.D != 2 || s.Label != -1 || ds.Samples[0].Label != 1 {
		t.Fatalf("layout C=%d D=%d labels %d %d", ds.C, ds.D, ds.Samples[0].Label, s.Label)
	}
	if want := []float32{0, 0, 0, 1, 1, 0, 1, 1}; !slices.Equal(s.Positions, want) {
		t.Fatalf("positions %v, want %v", s.Positions, want)
	}
	// Token 1 is patch (0, 1): rows 0-1, columns 2-3.
	if want := []float32{102, 103, 106, 107}; !slices.Equal(s.Values[4:8], want) {
		t.Fatalf("token 1 values %v, want %v", s.Values[4:8], want)
	}
	bad := []struct {
		name       string
		labels     []int
		n, h, w, p int
		want       string
	}{
		{"patch-divides", nil, 2, 4, 4, 3, "does not divide"},
		{"too-many", nil, 3, 4, 4, 2, "buffer holds 2"},
		{"ragged", nil, 1, 5, 5, 1, "whole number"},
		{"labels-short", []int{0}, 2, 4, 4, 2, "1 labels for 2"},
		{"label-range", []int{0, 2}, 2, 4, 4, 2, "label 2 of image 1"},
		{"zero-patch", nil, 1, 4, 4, 0, ">= 1"},
	}
	for _, tc := range bad {
		if _, err := Images(px, tc.labels, tc.n, tc.h, tc.w, tc.p, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestFashionMNISTDebian reads the real files when Debian's
// dataset-fashion-mnist package is installed.
func TestFashionMNISTDebian(t *testing.T) {
	dir := FashionMNISTDir()
	if _, err := os.Stat(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err != nil {
		if _, err2 := os.Stat(filepath.Join(dir, "t10k-labels-idx1-ubyte")); err2 != nil {
			t.Skipf("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist): %v", err)
		}
	}
	for _, tc := range []struct {
		split string
		n     int
	}{{"test", 10000}, {"train", 60000}} {
		if testing.Short() && tc.split == "train" {
			continue
		}
		images, labels, err := LoadFashionMNIST(dir, tc.split)
		if err != nil {
			t.Fatal(err)
		}
		if len(labels) != tc.n || len(images) != tc.n*28*28 {
			t.Fatalf("%s: %d labels, %d pixels", tc.split, len(labels), len(images))
		}
		counts := make([]int, 10)
		for _, l := range labels {
			counts[l]++
		}
		for c, k := range counts {
			if k != tc.n/10 {
				t.Errorf("%s: class %d has %d images, want %d", tc.split, c, k, tc.n/10)
			}
		}
		mean := 0.0
		for _, v := range images {
			mean += float64(v)
		}
		mean /= float64(len(images))
		if mean < 0.2 || mean > 0.4 { // Fashion-MNIST's pixel mean is about 0.286
			t.Errorf("%s: pixel mean %v", tc.split, mean)
		}
		ds, err := Images(images, labels, 100, 28, 28, 4, FashionMNISTClasses)
		if err != nil {
			t.Fatal(err)
		}
		if err := ds.Validate(); err != nil {
			t.Fatal(err)
		}
		if ds.Samples[99].Len(16) != 49 {
			t.Fatalf("%d tokens per image, want 49", ds.Samples[99].Len(16))
		}
	}
}
