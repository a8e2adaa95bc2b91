package data

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"romae/ckpt"
)

// Array is a NumPy array converted to float32, the only element type the
// model uses. Shape is in C order; a 0-d array has Shape [] and one element.
type Array struct {
	Shape []int
	Data  []float32
	// DType is the file's dtype ("<f8", "|u1", ...), kept so callers can
	// tell that, say, a label array really held integers.
	DType string
}

var npyMagic = []byte("\x93NUMPY")

// npyDTypes maps the supported descr strings to element size. One-byte types
// have no byte order, so NumPy writes '|' but '<' and '>' mean the same.
var npyDTypes = map[string]int{
	"<f4": 4, "<f8": 8, "<i4": 4, "<i8": 8,
	"|u1": 1, "<u1": 1, ">u1": 1,
	"|b1": 1, "<b1": 1, ">b1": 1,
}

// ReadNPY decodes one .npy stream (format versions 1.0, 2.0 and 3.0) of
// dtype <f4, <f8, <i4, <i8, |u1 or |b1 in C order. Integers convert to
// float32 exactly up to 2^24; a float64 outside float32 range is an error
// rather than a silent Inf, while NaN is kept (DenseSeries treats it as a
// missing value). The data is read in chunks, so a header that claims more
// elements than the stream holds fails with "truncated data" instead of
// allocating the claimed size up front. Errors name the header field or
// element at fault; LoadNPY and LoadNPZ prefix the file name.
func ReadNPY(r io.Reader) (*Array, error) {
	br := bufio.NewReader(r)
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return nil, fmt.Errorf("npy magic: %w", noEOF(err))
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return nil, fmt.Errorf("npy magic: got %q, not a .npy file", pre[:6])
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy header length: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy header length: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		if hlen > 1<<20 {
			return nil, fmt.Errorf("npy header length %d is implausible", hlen)
		}
	default:
		return nil, fmt.Errorf("npy version %d.%d not supported (want 1.0, 2.0 or 3.0)", major, minor)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, fmt.Errorf("npy header (%d bytes): %w", hlen, noEOF(err))
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf("npy header: %w", err)
	}
	size, ok := npyDTypes[descr]
	if !ok {
		return nil, fmt.Errorf("npy header 'descr': dtype %q not supported (want <f4, <f8, <i4, <i8, |u1 or |b1)", descr)
	}
	if fortran {
		return nil, errors.New("npy header 'fortran_order': True not supported; save with np.ascontiguousarray")
	}
	// The product of the non-zero dimensions must fit too (as NumPy
	// requires): (10¹², 0) is an empty array, but (10¹⁸, 10¹⁸, 0) is not
	// one that any consumer could index.
	n, nz := 1, 1
	for _, s := range shape {
		if s < 0 || (s > 0 && nz > math.MaxInt/8/s) {
			return nil, fmt.Errorf("npy header 'shape': %v is invalid", shape)
		}
		if s > 0 {
			nz *= s
		}
		n *= s
	}
	if n > MaxArrayValues {
		return nil, fmt.Errorf("npy header 'shape': %v: %w", shape, limitErr("elements", n, "MaxArrayValues", MaxArrayValues))
	}
	a := &Array{Shape: shape, DType: descr, Data: make([]float32, 0, min(n, 1<<20))}
	buf := make([]byte, 1<<16-(1<<16)%size)
	for len(a.Data) < n {
		chunk := buf[:min(len(buf), (n-len(a.Data))*size)]
		if got, err := io.ReadFull(br, chunk); err != nil {
			return nil, fmt.Errorf("npy data: truncated data: %d of %d elements present (%v)", len(a.Data)+got/size, n, err)
		}
		for off := 0; off < len(chunk); off += size {
			v, err := npyElem(descr[1:], chunk[off:off+size])
			if err != nil {
				return nil, fmt.Errorf("npy data: element %d: %w", len(a.Data), err)
			}
			a.Data = append(a.Data, v)
		}
	}
	return a, nil
}

// noEOF reports a stream that ends inside a fixed-size field as truncation.
func noEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("truncated file")
	}
	return err
}

func npyElem(kind string, b []byte) (float32, error) {
	switch kind {
	case "f4":
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case "f8":
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) > math.MaxFloat32 {
			return 0, fmt.Errorf("%v overflows float32", v)
		}
		return float32(v), nil
	case "i4":
		return float32(int32(binary.LittleEndian.Uint32(b))), nil
	case "i8":
		return float32(int64(binary.LittleEndian.Uint64(b))), nil
	case "u1":
		return float32(b[0]), nil
	default: // "b1"
		if b[0] > 1 {
			return 0, fmt.Errorf("bool byte %d is not 0 or 1", b[0])
		}
		return float32(b[0]), nil
	}
}

// parseNPYHeader reads the Python dict literal NumPy writes, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// It accepts exactly that grammar: string keys; string, bool or int-tuple
// values.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	p := &pyLexer{s: strings.TrimSpace(h)}
	if !p.eat('{') {
		return "", false, nil, fmt.Errorf("want '{' at start of %q", h)
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return "", false, nil, fmt.Errorf("key: %w", err)
		}
		if !p.eat(':') {
			return "", false, nil, fmt.Errorf("'%s': want ':'", key)
		}
		switch key {
		case "descr":
			descr, err = p.str()
		case "fortran_order":
			fortran, err = p.boolean()
		case "shape":
			shape, err = p.tuple()
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return "", false, nil, fmt.Errorf("'%s': %w", key, err)
		}
		seen[key] = true
		if !p.eat(',') && !strings.HasPrefix(p.s, "}") {
			return "", false, nil, fmt.Errorf("'%s': want ',' or '}' after value", key)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("missing key '%s'", k)
		}
	}
	return descr, fortran, shape, nil
}

// pyLexer consumes a tiny subset of Python literal syntax from s.
type pyLexer struct{ s string }

func (p *pyLexer) eat(c byte) bool {
	p.s = strings.TrimLeft(p.s, " \t\r\n")
	if strings.HasPrefix(p.s, string(c)) {
		p.s = p.s[1:]
		return true
	}
	return false
}

func (p *pyLexer) str() (string, error) {
	p.s = strings.TrimLeft(p.s, " \t\r\n")
	if p.s == "" || (p.s[0] != '\'' && p.s[0] != '"') {
		return "", fmt.Errorf("want a quoted string at %.20q", p.s)
	}
	end := strings.IndexByte(p.s[1:], p.s[0])
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[1 : 1+end]
	p.s = p.s[2+end:]
	return v, nil
}

func (p *pyLexer) boolean() (bool, error) {
	p.s = strings.TrimLeft(p.s, " \t\r\n")
	if rest, ok := strings.CutPrefix(p.s, "True"); ok {
		p.s = rest
		return true, nil
	}
	if rest, ok := strings.CutPrefix(p.s, "False"); ok {
		p.s = rest
		return false, nil
	}
	return false, fmt.Errorf("want True or False at %.20q", p.s)
}

// tuple parses "()", "(3,)" or "(3, 4)" into non-negative ints.
func (p *pyLexer) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, fmt.Errorf("want '(' at %.20q", p.s)
	}
	shape := []int{}
	for !p.eat(')') {
		p.s = strings.TrimLeft(p.s, " \t\r\n")
		end := strings.IndexAny(p.s, ",)")
		if end < 0 {
			return nil, errors.New("unterminated tuple")
		}
		lit := strings.TrimSpace(strings.TrimSuffix(p.s[:end], "L")) // Python 2 longs
		v, err := strconv.Atoi(lit)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("dimension %q is not a non-negative integer", lit)
		}
		shape = append(shape, v)
		p.s = p.s[end:]
		if !p.eat(',') && !strings.HasPrefix(p.s, ")") {
			return nil, errors.New("want ',' or ')' in tuple")
		}
	}
	return shape, nil
}

// LoadNPY reads a .npy file; see ReadNPY.
func LoadNPY(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := ReadNPY(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// LoadNPZ reads every array of a .npz archive (as written by np.savez or
// np.savez_compressed: stored or deflated members) keyed by name without
// the ".npy" suffix. A member that is not a .npy file is an error, since
// np.savez never writes one and skipping it would hide a wrong file.
func LoadNPZ(path string) (map[string]*Array, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable .npz (zip) archive: %w", path, err)
	}
	defer zr.Close()
	out := make(map[string]*Array, len(zr.File))
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("%s: member %q is not a .npy file", path, f.Name)
		}
		a, err := readZipNPY(f)
		if err != nil {
			return nil, fmt.Errorf("%s: member %q: %w", path, f.Name, err)
		}
		out[name] = a
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: archive holds no arrays", path)
	}
	return out, nil
}

func readZipNPY(f *zip.File) (*Array, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	a, err := ReadNPY(rc)
	if err != nil {
		return nil, err
	}
	// Drain so the zip reader verifies the CRC of the whole member.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return nil, err
	}
	return a, nil
}

// WriteNPY writes data as a little-endian float32 (<f4) C-order .npy
// stream of the given shape: version 1.0, or 2.0 if the header is too long
// for it, padded so the data starts on a 64-byte boundary as NumPy does.
func WriteNPY(w io.Writer, shape []int, data []float32) error {
	n := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("WriteNPY: negative dimension in shape %v", shape)
		}
		n *= s
	}
	if n != len(data) {
		return fmt.Errorf("WriteNPY: shape %v holds %d elements, data has %d", shape, n, len(data))
	}
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = strconv.Itoa(s)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	// The header length counts the dict, its space padding and a final '\n'.
	padding := func(lenBytes int) int {
		return (64 - (len(npyMagic)+2+lenBytes+len(dict)+1)%64) % 64
	}
	version, pad := byte(1), padding(2)
	if len(dict)+pad+1 > math.MaxUint16 {
		version, pad = 2, padding(4)
	}
	hlen := len(dict) + pad + 1
	var hdr bytes.Buffer
	hdr.Write(npyMagic)
	hdr.Write([]byte{version, 0})
	if version == 1 {
		hdr.Write(binary.LittleEndian.AppendUint16(nil, uint16(hlen)))
	} else {
		hdr.Write(binary.LittleEndian.AppendUint32(nil, uint32(hlen)))
	}
	hdr.WriteString(dict)
	hdr.WriteString(strings.Repeat(" ", pad))
	hdr.WriteByte('\n')
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for i, v := range data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(data)-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// SaveNPY writes data to path with WriteNPY atomically
// (ckpt.WriteFileAtomic): an interrupted or failed write leaves the
// previous file, never a short one.
func SaveNPY(path string, shape []int, data []float32) error {
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error {
		return WriteNPY(w, shape, data)
	})
}
