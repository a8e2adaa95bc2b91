package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"romae/ckpt"
)

// Clip is a mono sound clip: Samples are nominally in [-1, 1] (integer PCM
// is scaled by 2^(bits-1); float WAV data is passed through unchanged, so it
// may exceed that range if the file does).
type Clip struct {
	SampleRate int
	Samples    []float32
}

// Duration is the clip length in seconds (0 for a clip without a rate).
func (c *Clip) Duration() float64 {
	if c.SampleRate <= 0 {
		return 0
	}
	return float64(len(c.Samples)) / float64(c.SampleRate)
}

// ErrMalformed is wrapped by every error that ReadWAV returns for a file that
// breaks the RIFF/WAVE structure (bad magic, missing or short chunks,
// truncated data, inconsistent fmt fields).
var ErrMalformed = errors.New("malformed WAV")

// ErrUnsupported is wrapped by ReadWAV's errors for well-formed files in an
// encoding this package does not decode (compressed formats, 12-bit PCM...).
var ErrUnsupported = errors.New("unsupported WAV encoding")

type wavError struct {
	kind error
	msg  string
}

func (e *wavError) Error() string { return "wav: " + e.msg }
func (e *wavError) Unwrap() error { return e.kind }

func malformed(format string, args ...any) error {
	return &wavError{ErrMalformed, fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) error {
	return &wavError{ErrUnsupported, fmt.Sprintf(format, args...)}
}

// Sample-rate limits of ReadWAV. A rate comes from the file's fmt chunk,
// and the samples later resampled to a model's rate (16 kHz) grow by the
// ratio of the two: a file declaring 1 Hz would turn a megabyte of samples
// into 16 GB. Real WAV audio runs from 8 kHz (telephony) to 768 kHz.
const (
	MinSampleRate = 1000
	MaxSampleRate = 1 << 22 // 4.19 MHz
	// MaxResampleRatio bounds Resample's up-sampling (output rate / input
	// rate), so its output is at most this many times its input.
	MaxResampleRatio = 256
)

// streamedSize is the smallest data-chunk size treated as "until EOF".
const streamedSize = 0x7FFFF000

// WAVE format tags (mmreg.h).
const (
	tagPCM        = 0x0001
	tagFloat      = 0x0003
	tagExtensible = 0xFFFE
)

var tagNames = map[uint16]string{
	0x0002: "Microsoft ADPCM",
	0x0006: "A-law",
	0x0007: "µ-law",
	0x0011: "IMA ADPCM",
	0x0031: "GSM 6.10",
	0x0055: "MPEG layer 3",
}

// wavFormat is the decoded fmt chunk.
type wavFormat struct {
	tag        uint16 // after resolving WAVE_FORMAT_EXTENSIBLE
	channels   int
	rate       int
	blockAlign int
	bits       int // container bits per sample
}

// LoadWAV reads a WAV file; errors name the file.
func LoadWAV(path string) (*Clip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audio: %w", err)
	}
	defer f.Close()
	c, err := ReadWAV(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("audio: %s: %w", path, err)
	}
	return c, nil
}

// ReadWAV decodes a RIFF/WAVE stream into a mono Clip.
//
// Supported encodings: integer PCM with 8 (unsigned), 16, 24 or 32 bits
// per sample, IEEE float with 32 or 64 bits, either as a plain fmt chunk or
// as WAVE_FORMAT_EXTENSIBLE (whose sub-format GUID selects PCM or float; a
// smaller "valid bits" count inside a larger container is fine because the
// samples are left-aligned). Integer samples are scaled by 2^-(bits-1) into
// [-1, 1); multi-channel audio is downmixed to mono by averaging the
// channels. Chunks other than fmt and data (LIST, fact, cue, ...) are
// skipped, honouring the pad byte after odd-sized chunks, and may appear
// before or after the data chunk. A data chunk whose size field is a
// streaming placeholder (≥ 0x7FFFF000: sox and espeak-ng write 0x7FFFF000,
// others 0xFFFFFFFF, when writing to a pipe they cannot seek back in)
// extends to the end of the stream, dropping a trailing partial frame; any
// other data chunk must be complete.
//
// Every error wraps ErrMalformed or ErrUnsupported and says what is wrong.
func ReadWAV(r io.Reader) (*Clip, error) {
	var hdr [12]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if n == 0 {
			return nil, malformed("empty input, want a RIFF header")
		}
		return nil, malformed("not a RIFF file: only %d header bytes, want 12", n)
	}
	switch id := string(hdr[0:4]); id {
	case "RIFF":
	case "RIFX", "RF64", "BW64":
		return nil, unsupported("%s container (only little-endian RIFF is supported)", id)
	default:
		return nil, malformed("not a RIFF file: starts with %q, want \"RIFF\"", id)
	}
	if form := string(hdr[8:12]); form != "WAVE" {
		return nil, malformed("RIFF form type is %q, want \"WAVE\"", form)
	}

	var (
		fmtc *wavFormat
		pcm  []byte
		seen bool // data chunk seen
	)
	for {
		var ch [8]byte
		n, err := io.ReadFull(r, ch[:])
		if err == io.EOF || (seen && err != nil) {
			// Clean end, or a dangling partial header after the data:
			// stray trailing bytes (e.g. a missing final pad byte) are
			// harmless once the audio has been read.
			break
		}
		if err != nil {
			return nil, malformed("truncated chunk header: %d of 8 bytes", n)
		}
		id := string(ch[0:4])
		size := binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if fmtc != nil {
				return nil, malformed("second fmt chunk")
			}
			body, err := readChunk(r, id, size)
			if err != nil {
				return nil, err
			}
			if fmtc, err = parseFmt(body); err != nil {
				return nil, err
			}
		case "data":
			if seen {
				return nil, malformed("second data chunk")
			}
			seen = true
			if size >= streamedSize {
				if pcm, err = io.ReadAll(r); err != nil {
					return nil, malformed("reading streamed data chunk: %v", err)
				}
				size = uint32(len(pcm))
				if fmtc != nil && fmtc.blockAlign > 0 {
					pcm = pcm[:len(pcm)-len(pcm)%fmtc.blockAlign]
				}
				break
			}
			if pcm, err = readChunk(r, id, size); err != nil {
				return nil, err
			}
		default:
			if _, err := io.CopyN(io.Discard, r, int64(size)); err != nil {
				if seen {
					break // trailing metadata cut short: the audio is intact
				}
				return nil, malformed("truncated %q chunk: declares %d bytes", id, size)
			}
		}
		if size%2 == 1 { // RIFF chunks are word aligned
			if _, err := io.ReadFull(r, ch[:1]); err != nil {
				break // missing final pad byte; tolerated at end of file
			}
		}
	}
	if fmtc == nil {
		return nil, malformed("no fmt chunk")
	}
	if !seen {
		return nil, malformed("no data chunk")
	}
	return decodePCM(pcm, fmtc)
}

// readChunk reads a chunk body, reporting how much was missing.
func readChunk(r io.Reader, id string, size uint32) ([]byte, error) {
	// Read incrementally so a corrupt size field cannot allocate 4 GiB.
	var buf []byte
	if size <= 1<<20 {
		buf = make([]byte, size)
		n, err := io.ReadFull(r, buf)
		if err != nil {
			return nil, malformed("truncated %q chunk: declares %d bytes, only %d present", id, size, n)
		}
		return buf, nil
	}
	buf, err := io.ReadAll(io.LimitReader(r, int64(size)))
	if err != nil {
		return nil, malformed("reading %q chunk: %v", id, err)
	}
	if len(buf) < int(size) {
		return nil, malformed("truncated %q chunk: declares %d bytes, only %d present", id, size, len(buf))
	}
	return buf, nil
}

// parseFmt decodes and validates a fmt chunk body:
//
//	0  wFormatTag      u16     8  nAvgBytesPerSec u32
//	2  nChannels       u16    12  nBlockAlign     u16
//	4  nSamplesPerSec  u32    14  wBitsPerSample  u16
//	16 cbSize u16, 18 wValidBitsPerSample u16, 20 dwChannelMask u32,
//	24 SubFormat GUID (first two bytes = format tag)   [EXTENSIBLE only]
func parseFmt(b []byte) (*wavFormat, error) {
	if len(b) < 16 {
		return nil, malformed("fmt chunk is %d bytes, want at least 16", len(b))
	}
	le := binary.LittleEndian
	f := &wavFormat{
		tag:        le.Uint16(b[0:]),
		channels:   int(le.Uint16(b[2:])),
		rate:       int(le.Uint32(b[4:])),
		blockAlign: int(le.Uint16(b[12:])),
		bits:       int(le.Uint16(b[14:])),
	}
	if f.tag == tagExtensible {
		if len(b) < 40 {
			return nil, malformed("WAVE_FORMAT_EXTENSIBLE fmt chunk is %d bytes, want 40", len(b))
		}
		f.tag = le.Uint16(b[24:])
	}
	if f.channels == 0 {
		return nil, malformed("fmt chunk declares zero channels")
	}
	if f.rate == 0 {
		return nil, malformed("fmt chunk declares sample rate 0")
	}
	if f.rate < MinSampleRate || f.rate > MaxSampleRate {
		return nil, unsupported("sample rate %d Hz, outside the %d..%d Hz this package reads (audio.MinSampleRate, audio.MaxSampleRate)", f.rate, MinSampleRate, MaxSampleRate)
	}
	switch f.tag {
	case tagPCM:
		switch f.bits {
		case 8, 16, 24, 32:
		default:
			return nil, unsupported("%d-bit integer PCM (supported: 8, 16, 24, 32)", f.bits)
		}
	case tagFloat:
		if f.bits != 32 && f.bits != 64 {
			return nil, unsupported("%d-bit IEEE float (supported: 32, 64)", f.bits)
		}
	default:
		name := tagNames[f.tag]
		if name == "" {
			name = "unknown"
		}
		return nil, unsupported("format tag 0x%04X (%s); only PCM (1), IEEE float (3) and EXTENSIBLE thereof are supported", f.tag, name)
	}
	if want := f.channels * f.bits / 8; f.blockAlign != want {
		return nil, malformed("block align %d, want channels×bytes per sample = %d×%d = %d", f.blockAlign, f.channels, f.bits/8, want)
	}
	return f, nil
}

// decodePCM converts interleaved frames to mono float32.
func decodePCM(b []byte, f *wavFormat) (*Clip, error) {
	if len(b)%f.blockAlign != 0 {
		return nil, malformed("truncated data: %d bytes is not a whole number of %d-byte frames", len(b), f.blockAlign)
	}
	frames := len(b) / f.blockAlign
	bps := f.bits / 8
	out := make([]float32, frames)
	le := binary.LittleEndian
	var sample func(p []byte) float64
	switch {
	case f.tag == tagFloat && bps == 4:
		sample = func(p []byte) float64 { return float64(math.Float32frombits(le.Uint32(p))) }
	case f.tag == tagFloat:
		sample = func(p []byte) float64 { return math.Float64frombits(le.Uint64(p)) }
	case bps == 1: // 8-bit WAV is unsigned with a 128 offset
		sample = func(p []byte) float64 { return (float64(p[0]) - 128) / 128 }
	case bps == 2:
		sample = func(p []byte) float64 { return float64(int16(le.Uint16(p))) / (1 << 15) }
	case bps == 3:
		sample = func(p []byte) float64 {
			v := int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8
			return float64(v) / (1 << 23)
		}
	default:
		sample = func(p []byte) float64 { return float64(int32(le.Uint32(p))) / (1 << 31) }
	}
	inv := 1 / float64(f.channels)
	for i := range frames {
		fr := b[i*f.blockAlign:]
		var s float64
		for c := range f.channels {
			s += sample(fr[c*bps:])
		}
		out[i] = float32(s * inv)
	}
	return &Clip{SampleRate: f.rate, Samples: out}, nil
}

// WriteWAV writes clip as a canonical 44-byte-header mono 16-bit PCM WAV.
// Samples are scaled by 32768, rounded, and clipped to [-32768, 32767], so
// ReadWAV(WriteWAV(c)) reproduces samples in [-1, 1] to within 2^-15.
func WriteWAV(w io.Writer, clip *Clip) error {
	if clip == nil || clip.SampleRate <= 0 {
		return errors.New("wav: WriteWAV needs a clip with a positive sample rate")
	}
	n := len(clip.Samples)
	if 36+2*int64(n) > math.MaxUint32 {
		return fmt.Errorf("wav: %d samples do not fit a RIFF file", n)
	}
	buf := make([]byte, 44+2*n)
	le := binary.LittleEndian
	copy(buf[0:], "RIFF")
	le.PutUint32(buf[4:], uint32(36+2*n))
	copy(buf[8:], "WAVEfmt ")
	le.PutUint32(buf[16:], 16)
	le.PutUint16(buf[20:], tagPCM)
	le.PutUint16(buf[22:], 1)
	le.PutUint32(buf[24:], uint32(clip.SampleRate))
	le.PutUint32(buf[28:], uint32(2*clip.SampleRate))
	le.PutUint16(buf[32:], 2)
	le.PutUint16(buf[34:], 16)
	copy(buf[36:], "data")
	le.PutUint32(buf[40:], uint32(2*n))
	for i, s := range clip.Samples {
		v := math.Max(-32768, math.Min(32767, math.Round(float64(s)*32768)))
		if math.IsNaN(v) {
			v = 0
		}
		le.PutUint16(buf[44+2*i:], uint16(int16(v)))
	}
	_, err := w.Write(buf)
	return err
}

// SaveWAV writes clip to path with WriteWAV, atomically
// (ckpt.WriteFileAtomic): a failed write leaves any previous file intact.
func SaveWAV(path string, clip *Clip) error {
	if err := ckpt.WriteFileAtomic(path, func(w io.Writer) error { return WriteWAV(w, clip) }); err != nil {
		return fmt.Errorf("audio: %w", err)
	}
	return nil
}
