package datasets

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"romae/data"
)

// FashionMNISTClasses are Fashion-MNIST's label names, indexed by label.
var FashionMNISTClasses = []string{
	"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
	"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
}

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs the
// four gzipped IDX files (`apt-get install dataset-fashion-mnist`).
func FashionMNISTDir() string { return "/usr/share/datasets/fashion-mnist" }

// MaxIDXBytes bounds the payload ReadIDX accepts (1 GiB; the largest
// MNIST-family file, EMNIST ByClass, is 547 MB), so a corrupt header cannot
// ask for an absurd allocation. The payload is read as it arrives and never
// beyond what the dimensions declare, so a short file costs only its own
// size, and a gzip stream is decompressed no further than the header needs.
const MaxIDXBytes = 1 << 30

// maxIDXBytes is MaxIDXBytes as the parser uses it.
const maxIDXBytes = MaxIDXBytes

// ReadIDX reads an IDX file of unsigned bytes (type code 0x08), the format of
// (Fashion-)MNIST, plain or gzip-compressed (detected from the content, not
// the name). It returns the dimensions and the payload in row-major order.
// Errors name the file and say what is wrong: a bad magic number, an
// unsupported element type, a truncated header or payload, trailing bytes,
// or a broken gzip stream.
func ReadIDX(path string) (dims []int, payload []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var raw []byte
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		if raw, err = readIDXStream(zr); err != nil {
			return nil, nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
	} else if raw, err = readIDXStream(br); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	dims, payload, err = parseIDX(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return dims, payload, nil
}

// readIDXStream reads an IDX stream's header and then no more than the
// payload its dimensions declare (within maxIDXBytes), plus a little to
// detect and count trailing bytes; parseIDX then checks what was read.
// Memory grows with the bytes actually read.
func readIDXStream(r io.Reader) ([]byte, error) {
	head := make([]byte, 4)
	n, err := io.ReadFull(r, head)
	if err != nil || head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] == 0 {
		return head[:n], ignoreEOF(err) // parseIDX says what is wrong
	}
	dimBytes := make([]byte, 4*int(head[3]))
	n, err = io.ReadFull(r, dimBytes)
	raw := append(head, dimBytes[:n]...)
	if err != nil {
		return raw, ignoreEOF(err)
	}
	size := int64(1)
	for i := 0; i < len(dimBytes); i += 4 {
		d := int64(binary.BigEndian.Uint32(dimBytes[i:]))
		if d > 0 && size > maxIDXBytes/d {
			return raw, nil // parseIDX reports the limit
		}
		size *= d
	}
	const trailing = 1 << 20 // enough to count a few trailing bytes
	rest, err := io.ReadAll(io.LimitReader(r, size+trailing))
	return append(raw, rest...), err
}

func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// parseIDX decodes an uncompressed IDX buffer.
func parseIDX(raw []byte) ([]int, []byte, error) {
	if len(raw) < 4 {
		return nil, nil, fmt.Errorf("IDX header truncated: %d bytes, need 4 for the magic number", len(raw))
	}
	if raw[0] != 0 || raw[1] != 0 {
		return nil, nil, fmt.Errorf("bad IDX magic number 0x%02x%02x%02x%02x: the first two bytes must be 0", raw[0], raw[1], raw[2], raw[3])
	}
	if raw[2] != 0x08 {
		return nil, nil, fmt.Errorf("IDX element type 0x%02x not supported, want 0x08 (unsigned byte)", raw[2])
	}
	nd := int(raw[3])
	if nd < 1 {
		return nil, nil, errors.New("IDX header has 0 dimensions")
	}
	head := 4 + 4*nd
	if len(raw) < head {
		return nil, nil, fmt.Errorf("IDX header truncated: %d bytes, need %d for %d dimensions", len(raw), head, nd)
	}
	dims := make([]int, nd)
	size := 1
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(raw[4+4*i:]))
		if dims[i] > 0 && size > maxIDXBytes/dims[i] {
			return nil, nil, fmt.Errorf("IDX dimensions %v exceed %d bytes", dims[:i+1], maxIDXBytes)
		}
		size *= dims[i]
	}
	payload := raw[head:]
	switch {
	case len(payload) < size:
		return nil, nil, fmt.Errorf("IDX payload truncated: %d bytes, dimensions %v need %d", len(payload), dims, size)
	case len(payload) > size:
		return nil, nil, fmt.Errorf("IDX payload has %d trailing bytes after the %d that dimensions %v need", len(payload)-size, size, dims)
	}
	return dims, payload, nil
}

// LoadFashionMNIST reads split "train" (60 000 images) or "test" (10 000) of
// Fashion-MNIST from dir (FashionMNISTDir() for Debian's package), where the
// files are named train-images-idx3-ubyte / train-labels-idx1-ubyte and
// t10k-…, each with or without a .gz suffix (.gz is tried first). Images come
// back as [N*28*28] float32 pixels scaled to [0, 1] (byte/255), row-major,
// labels as ints in 0..9 (FashionMNISTClasses). Errors name the file: a
// missing file, a malformed IDX file, images that are not N×28×28, labels
// that are not N, mismatched counts or a label outside 0..9.
func LoadFashionMNIST(dir, split string) (images []float32, labels []int, err error) {
	var prefix string
	switch split {
	case "train":
		prefix = "train"
	case "test":
		prefix = "t10k"
	default:
		return nil, nil, fmt.Errorf("LoadFashionMNIST: split %q, want \"train\" or \"test\"", split)
	}
	imgPath, err := findIDX(dir, prefix+"-images-idx3-ubyte")
	if err != nil {
		return nil, nil, err
	}
	lblPath, err := findIDX(dir, prefix+"-labels-idx1-ubyte")
	if err != nil {
		return nil, nil, err
	}
	idims, ipix, err := ReadIDX(imgPath)
	if err != nil {
		return nil, nil, err
	}
	if len(idims) != 3 || idims[1] != 28 || idims[2] != 28 {
		return nil, nil, fmt.Errorf("%s: image dimensions %v, want [N 28 28]", imgPath, idims)
	}
	ldims, lbytes, err := ReadIDX(lblPath)
	if err != nil {
		return nil, nil, err
	}
	if len(ldims) != 1 {
		return nil, nil, fmt.Errorf("%s: label dimensions %v, want [N]", lblPath, ldims)
	}
	if ldims[0] != idims[0] {
		return nil, nil, fmt.Errorf("%s has %d labels but %s has %d images", lblPath, ldims[0], imgPath, idims[0])
	}
	labels = make([]int, len(lbytes))
	for i, b := range lbytes {
		if int(b) >= len(FashionMNISTClasses) {
			return nil, nil, fmt.Errorf("%s: label %d of item %d is outside 0..%d", lblPath, b, i, len(FashionMNISTClasses)-1)
		}
		labels[i] = int(b)
	}
	images = make([]float32, len(ipix))
	for i, b := range ipix {
		images[i] = float32(b) / 255
	}
	return images, labels, nil
}

// findIDX returns dir/name.gz or dir/name, whichever exists (gz first).
func findIDX(dir, name string) (string, error) {
	base := filepath.Join(dir, name)
	for _, p := range []string{base + ".gz", base} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("LoadFashionMNIST: neither %s.gz nor %s exists (Debian: apt-get install dataset-fashion-mnist)", base, base)
}

// Images turns the first n images of a [*, h, w] single-channel row-major
// buffer into a dataset of patch tokens: each image is cut into
// non-overlapping patch×patch patches (data.Patchify with shape (1, h, w)
// and dims 2), one token of patch² values per patch, at the integer 2-D
// position (patch row, patch column). labels is nil (every Label −1) or has
// at least n entries, each −1 or an index into classes; classes become the
// dataset's Classes. IDs are "img-000042". n <= 0 means every image in the
// buffer. Values are not normalised; use data.ComputeStats.
func Images(images []float32, labels []int, n, h, w, patch int, classes []string) (*data.Dataset, error) {
	if h < 1 || w < 1 || patch < 1 {
		return nil, fmt.Errorf("Images: h = %d, w = %d, patch = %d, want all >= 1", h, w, patch)
	}
	if h%patch != 0 || w%patch != 0 {
		return nil, fmt.Errorf("Images: patch %d does not divide the %d×%d image", patch, h, w)
	}
	if len(images)%(h*w) != 0 {
		return nil, fmt.Errorf("Images: %d pixels is not a whole number of %d×%d images", len(images), h, w)
	}
	avail := len(images) / (h * w)
	if n <= 0 {
		n = avail
	}
	if n > avail || n == 0 {
		return nil, fmt.Errorf("Images: asked for %d images, buffer holds %d", n, avail)
	}
	if labels != nil && len(labels) < n {
		return nil, fmt.Errorf("Images: %d labels for %d images", len(labels), n)
	}
	ds := &data.Dataset{
		Name:    fmt.Sprintf("images-%dx%d-p%d", h, w, patch),
		C:       patch * patch,
		D:       2,
		Classes: classes,
		Samples: make([]data.Sample, n),
	}
	for i := range n {
		vals, pos, err := data.Patchify(images[i*h*w:(i+1)*h*w], [3]int{1, h, w}, 1, [3]int{1, patch, patch}, 2)
		if err != nil {
			return nil, fmt.Errorf("Images: image %d: %w", i, err)
		}
		label := -1
		if labels != nil {
			label = labels[i]
			if label < -1 || label >= len(classes) {
				return nil, fmt.Errorf("Images: label %d of image %d is outside [-1, %d)", label, i, len(classes))
			}
		}
		ds.Samples[i] = data.Sample{ID: sampleID("img", i), Values: vals, Positions: pos, Label: label}
	}
	return ds, nil
}
