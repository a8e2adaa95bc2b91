package ckpt

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"romae/internal/fuzzcheck"
)

// FuzzReadSafetensors feeds arbitrary bytes to the safetensors reader, both
// ways in: Open (header only) then every tensor read lazily, and ReadFile.
// Run the seeds with go test; fuzz with
// go test -run '^$' -fuzz '^FuzzReadSafetensors$' ./ckpt/
func FuzzReadSafetensors(f *testing.F) {
	var b bytes.Buffer
	Write(&b, []*Tensor{
		F32Tensor("w", []int{2, 3}, []float32{1, -2, 3.5, 4, 0, -0.25}),
		F32Tensor("empty", []int{0, 4}, nil),
		{Name: "ids", DType: "I64", Shape: []int{1}, Data: make([]byte, 8)},
		{Name: "h", DType: "F16", Shape: []int{2}, Data: []byte{0x00, 0x3c, 0x00, 0xc0}},
		{Name: "bf", DType: "BF16", Shape: []int{1}, Data: []byte{0x80, 0x3f}},
		{Name: "d", DType: "F64", Shape: []int{1}, Data: make([]byte, 8)},
	}, map[string]string{"romae.format": "romae-checkpoint-1"})
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Add(append(binary.LittleEndian.AppendUint64(nil, 2), "{}"...))
	// A header that declares far more data than the file holds.
	hdr := `{"x":{"dtype":"F32","shape":[1000000000],"data_offsets":[0,4000000000]}}`
	f.Add(append(binary.LittleEndian.AppendUint64(nil, uint64(len(hdr))), hdr...))
	// The authors' fixture, cut after its header (the tensors make the
	// seed megabytes long; the header is what the parser reads).
	if raw, err := os.ReadFile(fixture); err == nil && len(raw) > 8 {
		n := binary.LittleEndian.Uint64(raw)
		if n < uint64(len(raw))-8 {
			f.Add(raw[:8+n])
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.safetensors", in)
		fuzzcheck.Check(t, len(in), func() {
			if file, err := Open(path); err == nil {
				for _, name := range file.Order {
					tn := file.Tensors[name]
					v, shape, err := file.Float32(name)
					if err == nil && (len(v) != tn.Numel() || len(shape) != len(tn.Shape)) {
						t.Fatalf("tensor %q: %d values for shape %v", name, len(v), tn.Shape)
					}
				}
				file.Close()
			}
			if file, err := ReadFile(path); err == nil {
				for _, name := range file.Order {
					tn := file.Tensors[name]
					if int64(len(tn.Data)) != tn.size {
						t.Fatalf("tensor %q: %d bytes, declared %d", name, len(tn.Data), tn.size)
					}
				}
			}
		})
	})
}
