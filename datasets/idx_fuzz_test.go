package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"testing"

	"romae/internal/fuzzcheck"
)

func idxFuzzBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

// FuzzReadIDX feeds arbitrary bytes to ReadIDX (plain and gzipped IDX),
// then to Images as LoadFashionMNIST's callers do.
func FuzzReadIDX(f *testing.F) {
	f.Add(idxFuzzBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(idxFuzzBytes([]int{3}, []byte{0, 1, 2}))
	f.Add(idxFuzzBytes([]int{1 << 30, 1 << 30}, nil))
	f.Add(idxFuzzBytes([]int{60000, 28, 28}, nil))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(idxFuzzBytes([]int{1, 4, 4}, make([]byte, 16)))
	zw.Close()
	f.Add(gz.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in-idx3-ubyte", in)
		fuzzcheck.Check(t, len(in), func() {
			dims, payload, err := ReadIDX(path)
			if err != nil {
				return
			}
			size := 1
			for _, d := range dims {
				size *= d
			}
			if size != len(payload) {
				t.Fatalf("dims %v but %d payload bytes", dims, len(payload))
			}
			if len(dims) == 3 && dims[1] > 0 && dims[2] > 0 {
				px := make([]float32, len(payload))
				for i, b := range payload {
					px[i] = float32(b)
				}
				Images(px, nil, 0, dims[1], dims[2], 2, nil)
			}
		})
	})
}
