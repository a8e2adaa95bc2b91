package ckpt

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tensors := []*Tensor{
		F32Tensor("w", []int{2, 3}, []float32{1, -2, 3.5, float32(math.Inf(1)), 0, -0.25}),
		F32Tensor("a.scalar", nil, []float32{7}),
		F32Tensor("empty", []int{0, 4}, nil),
		{Name: "ids", DType: "I64", Shape: []int{2}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
		{Name: "flags", DType: "BOOL", Shape: []int{3}, Data: []byte{1, 0, 1}},
		{Name: "h", DType: "F16", Shape: []int{2}, Data: []byte{0x00, 0x3c, 0x00, 0xc0}}, // 1, -2
	}
	meta := map[string]string{"format": "pt", "note": `quotes " and <tags> & ünïcode`}
	path := filepath.Join(t.TempDir(), "rt.safetensors")
	if err := WriteFile(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !equalMaps(f.Metadata, meta) {
		t.Fatalf("metadata %v, want %v", f.Metadata, meta)
	}
	// 8-byte dtypes first, then by name within each size.
	if want := []string{"ids", "a.scalar", "empty", "w", "h", "flags"}; !slices.Equal(f.Order, want) {
		t.Fatalf("order %v, want %v", f.Order, want)
	}
	for _, want := range tensors {
		got := f.Tensors[want.Name]
		if got == nil || got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("tensor %q: got %+v, want %+v", want.Name, got, want)
		}
	}
	v, shape, err := f.Float32("w")
	if err != nil || !slices.Equal(shape, []int{2, 3}) || v[2] != 3.5 || !math.IsInf(float64(v[3]), 1) {
		t.Fatalf("Float32(w) = %v %v %v", v, shape, err)
	}
	if h, _, err := f.Float32("h"); err != nil || !slices.Equal(h, []float32{1, -2}) {
		t.Fatalf("Float32(h) = %v, %v", h, err)
	}
	if _, _, err := f.Float32("ids"); err == nil || !strings.Contains(err.Error(), `"ids"`) {
		t.Fatalf("Float32 of I64: %v", err)
	}
	if _, _, err := f.Float32("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("missing tensor error should name it: %v", err)
	}

	// Deterministic bytes whatever the input order; header padded to 8.
	var b1, b2 bytes.Buffer
	if err := Write(&b1, tensors, meta); err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(tensors)
	slices.Reverse(rev)
	Write(&b2, rev, meta)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("output depends on input order")
	}
	if n := binary.LittleEndian.Uint64(b1.Bytes()); n%8 != 0 {
		t.Fatalf("header length %d not a multiple of 8", n)
	}
	if !bytes.Contains(b1.Bytes(), []byte("<tags> &")) {
		t.Fatal("metadata HTML-escaped; Python writes it verbatim")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWriteRejects(t *testing.T) {
	for name, ts := range map[string][]*Tensor{
		"size mismatch": {F32Tensor("x", []int{3}, []float32{1, 2})},
		"unknown dtype": {{Name: "x", DType: "F12", Shape: []int{1}, Data: []byte{1}}},
		"duplicate":     {F32Tensor("x", []int{1}, []float32{1}), F32Tensor("x", []int{1}, []float32{2})},
		"reserved name": {F32Tensor("__metadata__", []int{1}, []float32{1})},
		"negative dim":  {F32Tensor("x", []int{-1}, nil)},
	} {
		var b bytes.Buffer
		err := Write(&b, ts, nil)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if b.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", name, b.Len())
		}
	}
}

func TestF16AndBF16(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 1.0 / (1 << 24), 0x03ff: 1023.0 / (1 << 24),
		0x0400: 1.0 / (1 << 14), 0x3555: 0.333251953125, 0x8000: float32(math.Copysign(0, -1)),
		0x7c00: float32(math.Inf(1)), 0xfc00: float32(math.Inf(-1)),
	} {
		if got := f16ToF32(h); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("f16 %#04x = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(f16ToF32(0x7e00))) {
		t.Error("f16 NaN")
	}
	f := &File{Tensors: map[string]*Tensor{
		"b": {Name: "b", DType: "BF16", Shape: []int{2}, Data: []byte{0x80, 0x3f, 0x49, 0x40}},
		"d": {Name: "d", DType: "F64", Shape: []int{1}, Data: binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1))},
	}}
	if v, _, _ := f.Float32("b"); !slices.Equal(v, []float32{1, 3.140625}) {
		t.Errorf("bf16 = %v", v)
	}
	if v, _, _ := f.Float32("d"); v[0] != float32(0.1) {
		t.Errorf("f64 = %v", v)
	}
}

// fixture is a file written by the Python safetensors library (see its
// README); the shared/ folder sits beside the module checkout.
const fixture = "../../shared/fixtures/official-parity/classifier.safetensors"

func TestReadPythonFixture(t *testing.T) {
	if _, err := os.Stat(fixture); err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	f, err := ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	v, shape, err := f.Float32("encoder.layers.0.attention.wq.weight")
	if err != nil || !slices.Equal(shape, []int{180, 180}) || len(v) != 180*180 {
		t.Fatalf("wq: shape %v len %d err %v", shape, len(v), err)
	}
	ts, shape, err := f.Float32("attn_pos_embedding.timescale")
	if err != nil || !slices.Equal(shape, []int{15}) {
		t.Fatalf("timescale: shape %v err %v", shape, err)
	}
	if !slices.ContainsFunc(ts, func(x float32) bool { return math.IsInf(float64(x), 1) }) {
		t.Fatalf("timescale %v should hold +Inf", ts)
	}
	if _, shape, err := f.Float32("cls"); err != nil || !slices.Equal(shape, []int{180}) {
		t.Fatalf("cls: shape %v err %v", shape, err)
	}
	if len(f.Order) != len(f.Tensors) || f.Order[0] != "cls" {
		t.Fatalf("order %v… should follow the file's data layout", f.Order[:3])
	}
	// Re-writing what was read and reading it back preserves every byte of
	// every tensor.
	var all []*Tensor
	for _, n := range f.Order {
		all = append(all, f.Tensors[n])
	}
	path := filepath.Join(t.TempDir(), "copy.safetensors")
	if err := WriteFile(path, all, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range f.Tensors {
		if got := g.Tensors[n]; !bytes.Equal(got.Data, want.Data) || !slices.Equal(got.Shape, want.Shape) {
			t.Fatalf("tensor %q changed in a rewrite", n)
		}
	}
}

// rawFile assembles a file from a header string and data bytes, with the
// header length given explicitly when lenOverride >= 0.
func rawFile(t *testing.T, header string, data []byte, lenOverride int) string {
	t.Helper()
	var b []byte
	n := uint64(len(header))
	if lenOverride >= 0 {
		n = uint64(lenOverride)
	}
	b = binary.LittleEndian.AppendUint64(b, n)
	b = append(b, header...)
	b = append(b, data...)
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadMalformed(t *testing.T) {
	eight := make([]byte, 8)
	for _, c := range []struct {
		name, header string
		data         []byte
		lenOverride  int
		want         string // in the error, besides the file name
	}{
		{"truncated length", "", nil, -2, "shorter than the 8-byte header length"},
		{"header longer than file", `{"x":{}}`, nil, 1000, "header length 1000 exceeds"},
		{"truncated header", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, nil, 20, "unexpected EOF"},
		{"bad JSON", `{"x":{"dtype":"F32",]}`, nil, -1, "tensor \"x\""},
		{"not an object", `[1,2]   `, nil, -1, "not a JSON object"},
		{"unknown dtype", `{"x":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}}`, eight, -1, `tensor "x": unknown dtype "F12"`},
		{"shape/size mismatch", `{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, eight, -1, `tensor "x": shape [3] of F32 needs 12 bytes`},
		{"offsets out of range", `{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, eight, -1, `tensor "x": data_offsets [0, 16] run past the 8-byte data buffer`},
		{"overlap", `{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight, -1, `tensor "y": data_offsets [4, 8] overlap`},
		{"gap", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight, -1, `tensor "x": data_offsets [4, 8] leave a gap`},
		{"trailing data", `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, eight, -1, "tensors cover 4"},
		{"reversed offsets", `{"x":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}}`, eight, -1, "end before they begin"},
		{"duplicate name", `{"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"x":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}`, eight, -1, `"x" twice`},
		{"negative dim", `{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, eight, -1, `tensor "x"`},
		{"metadata not strings", `{"__metadata__":{"a":1}}`, nil, -1, "__metadata__"},
		{"junk after header", `{}xx`, nil, -1, "after its JSON object"},
		{"huge shape", `{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, eight, -1, "too large"},
	} {
		var path string
		if c.lenOverride == -2 {
			path = filepath.Join(t.TempDir(), "bad.safetensors")
			os.WriteFile(path, []byte{1, 2, 3}, 0o644)
		} else {
			path = rawFile(t, c.header, c.data, c.lenOverride)
		}
		_, err := ReadFile(path)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q should contain %q and the file name", c.name, err, c.want)
		}
	}
}
