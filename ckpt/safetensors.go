package ckpt

// This is a small implementation of the safetensors format rather than a
// wrapper around a library. The only Go package on the module proxy that
// both reads and writes it, github.com/nlpodyssey/safetensors, has never
// tagged a release (pseudo-versions only; last commit February 2025), and
// its validation errors do not say which tensor is wrong (a size mismatch
// reads "metadata validation error: info data offsets mismatch"), which is
// what a user loading a checkpoint of the wrong model needs to see. The
// format is frozen and small — a length, a JSON header, a byte buffer — and
// compatibility is pinned down by reading files written by the Python
// library (see the tests).

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sort"
)

// Tensor is one named array in a safetensors file, little-endian and
// row-major as the format prescribes. Data is the raw bytes, so tensors of
// any dtype pass through a read-modify-write unchanged. In a File from Open
// Data stays nil until the tensor is read (File.Bytes, File.Float32,
// File.ReadAll).
type Tensor struct {
	Name  string
	DType string // "F32", "F16", "BF16", "F64", "I64", "I32", "U8", "BOOL", …
	Shape []int
	Data  []byte

	off, size int64 // where the bytes lie in the data buffer (read files only)
}

// File is a parsed safetensors file. Order lists the tensor names in the
// order of their data in the file, so a reader can reproduce or inspect the
// writer's layout.
//
// A File from ReadFile holds every tensor's bytes. A File from Open holds
// only the header: tensors are read from disk when asked for, one at a
// time, so a caller can check a tensor's declared shape before its bytes
// are allocated, and a multi-gigabyte (or sparse) file costs no memory for
// the tensors nobody reads. Close it when done.
type File struct {
	Tensors  map[string]*Tensor
	Order    []string
	Metadata map[string]string

	src       *os.File // open source of an Open file, nil once closed or read
	dataStart int64    // file offset of the data buffer
	path      string
}

// dtypeSize is the element size of every dtype the safetensors format
// defines with whole-byte elements; the reader accepts all of them so that
// a file with, say, an I8 buffer still loads (only Float32 needs to
// understand the values).
var dtypeSize = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// MaxHeader bounds the JSON header, as the Python library does (100 MB), so
// a corrupt length cannot make the reader allocate gigabytes. The header is
// also never longer than the file.
const MaxHeader = 100_000_000

const metadataKey = "__metadata__"

// ReadFile reads and validates a whole safetensors file: Open, then
// ReadAll. Memory is the file's size (the header first, then each tensor's
// declared bytes, which must lie inside the file). Every error names the
// file and, where one is at fault, the tensor.
func ReadFile(path string) (*File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if err := f.ReadAll(); err != nil {
		return nil, err
	}
	return f, nil
}

// Open reads and validates a safetensors file's header — the tensor names,
// dtypes, shapes and byte ranges, checked against each other and against
// the file's size — without reading any tensor. Memory is bounded by the
// header (at most MaxHeader bytes and never more than the file holds).
func Open(path string) (*File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	fi, err := src.Stat()
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	if !fi.Mode().IsRegular() {
		src.Close()
		return nil, fmt.Errorf("ckpt: %s is not a regular file", path)
	}
	file, err := readHeader(src, fi.Size())
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("ckpt: %s: %w", path, err)
	}
	file.src, file.path = src, path
	return file, nil
}

// Close releases the file behind an Open File; tensors already read stay
// usable. Closing twice, or closing a File from ReadFile, is a no-op.
func (f *File) Close() error {
	if f.src == nil {
		return nil
	}
	err := f.src.Close()
	f.src = nil
	return err
}

// ReadAll reads every tensor not read yet into its Data and closes the
// file.
func (f *File) ReadAll() error {
	defer f.Close()
	for _, name := range f.Order {
		if _, err := f.Bytes(name); err != nil {
			return err
		}
	}
	return nil
}

// Bytes returns a tensor's raw bytes, reading them from disk (once; they
// are kept in Data) for an Open file.
func (f *File) Bytes(name string) ([]byte, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("ckpt: no tensor %q in checkpoint", name)
	}
	if t.Data == nil {
		d, err := f.raw(t)
		if err != nil {
			return nil, err
		}
		t.Data = d
	}
	return t.Data, nil
}

// raw returns t's bytes: Data when it is in memory, else read from disk
// without keeping them.
func (f *File) raw(t *Tensor) ([]byte, error) {
	if t.Data != nil {
		return t.Data, nil
	}
	if t.size == 0 {
		return []byte{}, nil
	}
	if f.src == nil {
		return nil, fmt.Errorf("ckpt: tensor %q: file already closed", t.Name)
	}
	// Read in chunks so that a file shorter than its header claims (changed
	// underfoot) fails before the whole claimed size is allocated.
	r := io.NewSectionReader(f.src, f.dataStart+t.off, t.size)
	buf := make([]byte, 0, min(t.size, 1<<24))
	for int64(len(buf)) < t.size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(t.size, 2*int64(cap(buf))))-len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil && int64(len(buf)) < t.size {
			return nil, fmt.Errorf("ckpt: %s: tensor %q: reading its %d bytes: %v", f.path, t.Name, t.size, noEOF(err))
		}
	}
	return buf[:t.size:t.size], nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readHeader parses a safetensors header from a source of the given total
// size. The length field is checked against the size, and every tensor's
// byte range against the data buffer, before anything large is allocated.
func readHeader(r io.ReaderAt, size int64) (*File, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("not a safetensors file: %d bytes, shorter than the 8-byte header length", size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("reading header length: %w", noEOF(err))
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		return nil, fmt.Errorf("header length %d exceeds the %d bytes after it (truncated or not a safetensors file)", n, size-8)
	}
	if n > MaxHeader {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit", n, MaxHeader)
	}
	header := make([]byte, n)
	if _, err := r.ReadAt(header, 8); err != nil {
		return nil, fmt.Errorf("reading header: %w", noEOF(err))
	}
	dataLen := uint64(size) - 8 - n
	file, infos, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	file.dataStart = int64(8 + n)
	// Validate in data order: the buffer must be covered exactly, without
	// gaps or overlaps, as the Python library requires.
	sort.SliceStable(infos, func(i, j int) bool {
		a, b := infos[i].DataOffsets, infos[j].DataOffsets
		return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])
	})
	var pos uint64
	for _, ti := range infos {
		b, e := ti.DataOffsets[0], ti.DataOffsets[1]
		switch {
		case e < b:
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] end before they begin", ti.name, b, e)
		case e > dataLen:
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] run past the %d-byte data buffer", ti.name, b, e, dataLen)
		case b < pos:
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] overlap the previous tensor, which ends at %d", ti.name, b, e, pos)
		case b > pos:
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] leave a gap after byte %d", ti.name, b, e, pos)
		}
		pos = e
		t := &Tensor{Name: ti.name, DType: ti.DType, Shape: ti.shape, off: int64(b), size: int64(e - b)}
		file.Tensors[ti.name] = t
		file.Order = append(file.Order, ti.name)
	}
	if pos != dataLen {
		return nil, fmt.Errorf("data buffer has %d bytes but the tensors cover %d (truncated or trailing garbage)", dataLen, pos)
	}
	return file, nil
}

// Numel is the number of elements a tensor's shape declares (validated
// against its byte range when the file was read, so it cannot overflow).
func (t *Tensor) Numel() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

type tensorInfo struct {
	DType       string   `json:"dtype"`
	Shape       []uint64 `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
	name        string
	shape       []int
}

// parseHeader walks the top-level JSON object token by token, rather than
// decoding into a map, so that duplicate tensor names are caught instead of
// silently keeping the last one.
func parseHeader(header []byte) (*File, []*tensorInfo, error) {
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, errors.New("header is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("header JSON: %w", err)
	}
	file := &File{Tensors: map[string]*Tensor{}}
	var infos []*tensorInfo
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("header JSON: %w", err)
		}
		name := tok.(string) // object keys are always strings
		if seen[name] {
			return nil, nil, fmt.Errorf("header lists %q twice", name)
		}
		seen[name] = true
		if name == metadataKey {
			if err := dec.Decode(&file.Metadata); err != nil {
				return nil, nil, fmt.Errorf("header %s must map strings to strings: %w", metadataKey, err)
			}
			continue
		}
		ti := &tensorInfo{name: name}
		if err := dec.Decode(ti); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: header entry: %w", name, err)
		}
		if err := ti.check(); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		infos = append(infos, ti)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, fmt.Errorf("header JSON: %w", err)
	}
	// Only the spaces the writer pads with (or other JSON whitespace) may
	// follow the object.
	rest := header[dec.InputOffset():]
	if len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, nil, fmt.Errorf("header has %q after its JSON object", truncate(rest))
	}
	return file, infos, nil
}

// check validates one header entry on its own and fills in the int shape.
func (ti *tensorInfo) check() error {
	size, ok := dtypeSize[ti.DType]
	if !ok {
		return fmt.Errorf("unknown dtype %q", ti.DType)
	}
	if ti.Shape == nil {
		return errors.New(`header entry has no "shape"`)
	}
	if len(ti.DataOffsets) != 2 {
		return fmt.Errorf(`"data_offsets" must be [begin, end], got %v`, ti.DataOffsets)
	}
	bytes, ok := numBytes(ti.Shape, size)
	if !ok {
		return fmt.Errorf("shape %v is too large", ti.Shape)
	}
	if got := ti.DataOffsets[1] - ti.DataOffsets[0]; ti.DataOffsets[1] >= ti.DataOffsets[0] && got != bytes {
		return fmt.Errorf("shape %v of %s needs %d bytes but data_offsets [%d, %d] hold %d", ti.Shape, ti.DType, bytes, ti.DataOffsets[0], ti.DataOffsets[1], got)
	}
	ti.shape = make([]int, len(ti.Shape))
	for i, d := range ti.Shape {
		ti.shape[i] = int(d) // fits: the product fits in an int
	}
	return nil
}

// numBytes is prod(shape)·size, or false if it overflows an int.
func numBytes(shape []uint64, size int) (uint64, bool) {
	n := uint64(size)
	for _, d := range shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		n = lo
	}
	return n, true
}

func truncate(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "…"
	}
	return string(b)
}

// Float32 returns a tensor's values as float32, converting from F16, BF16
// and F64 — weights trained in half precision or exported in double load
// into float32 models unchanged in meaning. The values are a fresh copy.
// For an Open file the bytes are read now (check Tensors[name].Shape first
// to refuse a tensor of the wrong size before it is read).
func (f *File) Float32(name string) ([]float32, []int, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, nil, fmt.Errorf("ckpt: no tensor %q in checkpoint", name)
	}
	switch t.DType {
	case "F32", "F64", "BF16", "F16":
	default:
		return nil, nil, fmt.Errorf("ckpt: tensor %q has dtype %s, not a floating-point type", name, t.DType)
	}
	d, err := f.raw(t)
	if err != nil {
		return nil, nil, err
	}
	shape := slices.Clone(t.Shape)
	switch t.DType {
	case "F32":
		out := make([]float32, len(d)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
		}
		return out, shape, nil
	case "F64":
		out := make([]float32, len(d)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])))
		}
		return out, shape, nil
	case "BF16":
		out := make([]float32, len(d)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(d[2*i:])) << 16)
		}
		return out, shape, nil
	default: // F16
		out := make([]float32, len(d)/2)
		for i := range out {
			out[i] = f16ToF32(binary.LittleEndian.Uint16(d[2*i:]))
		}
		return out, shape, nil
	}
}

// f16ToF32 converts IEEE binary16 exactly (every half value is a float32).
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0x1f: // Inf, NaN (payload kept)
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case 0: // zero or subnormal: mant·2⁻²⁴, exact in float32
		v := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// F32Tensor encodes float32 values as an F32 tensor (copying them).
func F32Tensor(name string, shape []int, data []float32) *Tensor {
	b := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return &Tensor{Name: name, DType: "F32", Shape: slices.Clone(shape), Data: b}
}

// Write encodes tensors and metadata as a safetensors stream. The layout is
// deterministic and is the one the Python library produces: tensors sorted
// by descending element size, then by name (for a checkpoint of F32 tensors
// that is simply sorted names). Larger elements first, after a header padded
// to 8 bytes, leaves every tensor naturally aligned for readers that map the
// file and cast in place. Tensors are validated first, so nothing is written
// for an invalid set.
func Write(w io.Writer, tensors []*Tensor, metadata map[string]string) error {
	order := slices.Clone(tensors)
	seen := make(map[string]bool, len(tensors))
	for _, t := range order {
		if err := validate(t); err != nil {
			return err
		}
		if seen[t.Name] {
			return fmt.Errorf("ckpt: tensor %q given twice", t.Name)
		}
		seen[t.Name] = true
	}
	sort.Slice(order, func(i, j int) bool {
		si, sj := dtypeSize[order[i].DType], dtypeSize[order[j].DType]
		return si > sj || (si == sj && order[i].Name < order[j].Name)
	})

	var h bytes.Buffer
	enc := json.NewEncoder(&h)
	enc.SetEscapeHTML(false) // keep names like "a<b" readable, as Python writes them
	h.WriteByte('{')
	if len(metadata) > 0 {
		h.WriteString(`"` + metadataKey + `":{`)
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeJSONString(&h, enc, k)
			h.WriteByte(':')
			writeJSONString(&h, enc, metadata[k])
		}
		h.WriteByte('}')
	}
	var off int
	for i, t := range order {
		if i > 0 || len(metadata) > 0 {
			h.WriteByte(',')
		}
		writeJSONString(&h, enc, t.Name)
		fmt.Fprintf(&h, `:{"dtype":"%s","shape":[`, t.DType)
		for j, d := range t.Shape {
			if j > 0 {
				h.WriteByte(',')
			}
			fmt.Fprintf(&h, "%d", d)
		}
		fmt.Fprintf(&h, `],"data_offsets":[%d,%d]}`, off, off+len(t.Data))
		off += len(t.Data)
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}

	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(h.Len()))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(h.Bytes()); err != nil {
		return err
	}
	for _, t := range order {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// writeJSONString appends s as a JSON string literal (the encoder adds a
// newline, dropped here).
func writeJSONString(h *bytes.Buffer, enc *json.Encoder, s string) {
	enc.Encode(s) // a string always encodes; invalid UTF-8 becomes U+FFFD
	h.Truncate(h.Len() - 1)
}

func validate(t *Tensor) error {
	if t.Name == "" || t.Name == metadataKey {
		return fmt.Errorf("ckpt: invalid tensor name %q", t.Name)
	}
	size, ok := dtypeSize[t.DType]
	if !ok {
		return fmt.Errorf("ckpt: tensor %q: unknown dtype %q", t.Name, t.DType)
	}
	n := size
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("ckpt: tensor %q: negative dimension in shape %v", t.Name, t.Shape)
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return fmt.Errorf("ckpt: tensor %q: shape %v is too large", t.Name, t.Shape)
		}
		n = int(lo)
	}
	if n != len(t.Data) {
		return fmt.Errorf("ckpt: tensor %q: shape %v of %s needs %d bytes, data has %d", t.Name, t.Shape, t.DType, n, len(t.Data))
	}
	return nil
}

// WriteFile writes a safetensors file atomically (see WriteFileAtomic), so
// an interrupted save leaves the previous checkpoint intact.
func WriteFile(path string, tensors []*Tensor, metadata map[string]string) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		return Write(w, tensors, metadata)
	})
}
