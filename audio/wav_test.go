package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chunk is a raw RIFF chunk for building test files.
type chunk struct {
	id   string
	body []byte
	size int // declared size; -1 → len(body)
}

func (c chunk) bytes() []byte {
	size := c.size
	if size < 0 {
		size = len(c.body)
	}
	b := []byte(c.id)
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = append(b, c.body...)
	if len(c.body)%2 == 1 && c.size < 0 {
		b = append(b, 0)
	}
	return b
}

func riff(chunks ...chunk) []byte {
	var body []byte
	for _, c := range chunks {
		body = append(body, c.bytes()...)
	}
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+len(body)))
	b = append(b, "WAVE"...)
	return append(b, body...)
}

// fmtChunk builds a fmt chunk; extensible wraps tag in WAVE_FORMAT_EXTENSIBLE.
func fmtChunk(tag uint16, channels, rate, bits int, extensible bool) chunk {
	le := binary.LittleEndian
	var b []byte
	outer := tag
	if extensible {
		outer = tagExtensible
	}
	b = le.AppendUint16(b, outer)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	if extensible {
		b = le.AppendUint16(b, 22)
		b = le.AppendUint16(b, uint16(bits))
		b = le.AppendUint32(b, 0)
		guid := []byte{0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}
		le.PutUint16(guid, tag)
		b = append(b, guid...)
	}
	return chunk{"fmt ", b, -1}
}

// encodeFrames quantises interleaved samples like a WAV writer would and
// returns the data bytes plus the mono signal ReadWAV must produce.
func encodeFrames(tag uint16, bits, channels int, frames [][]float64) ([]byte, []float64) {
	le := binary.LittleEndian
	var b []byte
	want := make([]float64, len(frames))
	for i, fr := range frames {
		var sum float64
		for c := range channels {
			x := fr[c]
			var got float64
			switch {
			case tag == tagFloat && bits == 32:
				b = le.AppendUint32(b, math.Float32bits(float32(x)))
				got = float64(float32(x))
			case tag == tagFloat:
				b = le.AppendUint64(b, math.Float64bits(x))
				got = x
			default:
				scale := math.Ldexp(1, bits-1)
				q := math.Max(-scale, math.Min(scale-1, math.Round(x*scale)))
				got = q / scale
				v := int64(q)
				switch bits {
				case 8:
					b = append(b, byte(v+128))
				case 16:
					b = le.AppendUint16(b, uint16(int16(v)))
				case 24:
					b = append(b, byte(v), byte(v>>8), byte(v>>16))
				case 32:
					b = le.AppendUint32(b, uint32(int32(v)))
				}
			}
			sum += got
		}
		want[i] = sum / float64(channels)
	}
	return b, want
}

// testFrames is a deterministic multi-channel signal covering ±full scale.
func testFrames(n, channels int) [][]float64 {
	fr := make([][]float64, n)
	for i := range fr {
		fr[i] = make([]float64, channels)
		for c := range channels {
			fr[i][c] = 0.9 * math.Sin(0.37*float64(i)*float64(c+1)+float64(c))
		}
	}
	// Extremes in the first frames.
	fr[0][0], fr[1][0] = 1, -1
	return fr
}

func TestReadWAVFormats(t *testing.T) {
	list := chunk{"LIST", []byte("INFOISFT\x05\x00\x00\x00test\x00"), -1} // odd size, padded
	tests := []struct {
		name       string
		tag        uint16
		bits, ch   int
		extensible bool
		rate       int
		layout     string // where extra chunks go: "", "list-first", "data-first", "trailing", "stream"
	}{
		{"pcm8-mono", tagPCM, 8, 1, false, 8000, ""},
		{"pcm8-stereo", tagPCM, 8, 2, false, 11025, ""},
		{"pcm16-mono", tagPCM, 16, 1, false, 16000, ""},
		{"pcm16-stereo", tagPCM, 16, 2, false, 44100, "list-first"},
		{"pcm16-5.1", tagPCM, 16, 6, false, 48000, ""},
		{"pcm24-mono", tagPCM, 24, 1, false, 22050, "trailing"},
		{"pcm24-stereo", tagPCM, 24, 2, false, 96000, ""},
		{"pcm24-3ch-extensible", tagPCM, 24, 3, true, 16000, ""},
		{"pcm32-mono", tagPCM, 32, 1, false, 16000, ""},
		{"pcm32-stereo", tagPCM, 32, 2, false, 16000, "data-first"},
		{"float32-mono", tagFloat, 32, 1, false, 16000, ""},
		{"float32-stereo", tagFloat, 32, 2, false, 32000, "list-first"},
		{"float32-4ch-extensible", tagFloat, 32, 4, true, 16000, ""},
		{"float64-mono", tagFloat, 64, 1, false, 16000, ""},
		{"pcm16-streamed-size", tagPCM, 16, 2, false, 16000, "stream"},
		{"pcm16-sox-streamed-size", tagPCM, 16, 1, false, 16000, "stream-sox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcm, want := encodeFrames(tt.tag, tt.bits, tt.ch, testFrames(101, tt.ch)) // odd frame count → odd data size at 8-bit mono
			f := fmtChunk(tt.tag, tt.ch, tt.rate, tt.bits, tt.extensible)
			d := chunk{"data", pcm, -1}
			var file []byte
			switch tt.layout {
			case "":
				file = riff(f, d)
			case "list-first":
				file = riff(list, f, list, d)
			case "data-first":
				file = riff(d, f)
			case "trailing":
				file = riff(f, d, list, chunk{"id3 ", []byte{1, 2, 3}, -1})
			case "stream":
				file = riff(f, chunk{"data", pcm, 0xFFFFFFFF})
			case "stream-sox":
				file = riff(f, chunk{"data", append(pcm, 7), 0x7FFFF000}) // + a partial frame
			}
			clip, err := ReadWAV(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if clip.SampleRate != tt.rate {
				t.Errorf("rate %d, want %d", clip.SampleRate, tt.rate)
			}
			if len(clip.Samples) != len(want) {
				t.Fatalf("%d samples, want %d", len(clip.Samples), len(want))
			}
			for i, w := range want {
				if d := math.Abs(float64(clip.Samples[i]) - w); d > 1e-7 {
					t.Fatalf("sample %d = %v, want %v", i, clip.Samples[i], w)
				}
			}
			if tt.tag == tagPCM && clip.Samples[1] > -1+1e-9 && tt.ch == 1 {
				t.Errorf("-1 should decode exactly, got %v", clip.Samples[1])
			}
		})
	}
}

func TestWriteWAVRoundTrip(t *testing.T) {
	for _, rate := range []int{8000, 16000, 22050, 44100} {
		x := make([]float32, 1001)
		for i := range x {
			x[i] = float32(math.Sin(float64(i) * 0.05 * float64(rate) / 8000))
		}
		x[0], x[1], x[2] = 1, -1, 1.5 // 1.5 clips to 32767/32768
		var buf bytes.Buffer
		if err := WriteWAV(&buf, &Clip{SampleRate: rate, Samples: x}); err != nil {
			t.Fatal(err)
		}
		if buf.Len() != 44+2*len(x) {
			t.Fatalf("size %d, want %d", buf.Len(), 44+2*len(x))
		}
		c, err := ReadWAV(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if c.SampleRate != rate || len(c.Samples) != len(x) {
			t.Fatalf("got rate %d len %d", c.SampleRate, len(c.Samples))
		}
		for i := range x {
			want := math.Max(-1, math.Min(1, float64(x[i])))
			if d := math.Abs(float64(c.Samples[i]) - want); d > 1.0/32768 {
				t.Fatalf("rate %d sample %d: %v vs %v", rate, i, c.Samples[i], want)
			}
		}
	}
	if err := WriteWAV(&bytes.Buffer{}, &Clip{}); err == nil {
		t.Error("WriteWAV accepted a clip without a rate")
	}
}

func TestReadWAVMalformed(t *testing.T) {
	pcm16 := fmtChunk(tagPCM, 1, 16000, 16, false)
	data := chunk{"data", make([]byte, 100), -1}
	shortFmt := chunk{"fmt ", pcm16.body[:14], -1}
	badAlign := fmtChunk(tagPCM, 2, 16000, 16, false)
	binary.LittleEndian.PutUint16(badAlign.body[12:], 3)
	zeroRate := fmtChunk(tagPCM, 1, 0, 16, false)
	truncHeader := riff(pcm16)
	truncHeader = append(truncHeader, "dat"...)
	tests := []struct {
		name string
		file []byte
		kind error
		msg  string
	}{
		{"empty", nil, ErrMalformed, "empty input"},
		{"short header", []byte("RIFF\x00\x00"), ErrMalformed, "not a RIFF file"},
		{"not riff", append([]byte("OggS\x00\x00\x00\x00WAVE"), data.bytes()...), ErrMalformed, `not a RIFF file: starts with "OggS"`},
		{"big endian rifx", []byte("RIFX\x00\x00\x00\x04WAVE"), ErrUnsupported, "RIFX"},
		{"not wave", []byte("RIFF\x04\x00\x00\x00AVI "), ErrMalformed, `form type is "AVI "`},
		{"no fmt", riff(data), ErrMalformed, "no fmt chunk"},
		{"no data", riff(pcm16, chunk{"LIST", []byte("INFO"), -1}), ErrMalformed, "no data chunk"},
		{"fmt too short", riff(shortFmt, data), ErrMalformed, "fmt chunk is 14 bytes"},
		{"adpcm", riff(fmtChunk(0x0002, 1, 16000, 4, false), data), ErrUnsupported, "format tag 0x0002 (Microsoft ADPCM)"},
		{"mp3", riff(fmtChunk(0x0055, 1, 16000, 16, false), data), ErrUnsupported, "MPEG layer 3"},
		{"12-bit", riff(fmtChunk(tagPCM, 1, 16000, 12, false), data), ErrUnsupported, "12-bit integer PCM"},
		{"float16", riff(fmtChunk(tagFloat, 1, 16000, 16, false), data), ErrUnsupported, "16-bit IEEE float"},
		{"zero channels", riff(fmtChunk(tagPCM, 0, 16000, 16, false), data), ErrMalformed, "zero channels"},
		{"zero rate", riff(zeroRate, data), ErrMalformed, "sample rate 0"},
		{"block align", riff(badAlign, data), ErrMalformed, "block align 3"},
		{"truncated data", riff(pcm16, chunk{"data", make([]byte, 50), 100}), ErrMalformed, `truncated "data" chunk: declares 100 bytes, only 50 present`},
		{"partial frame", riff(fmtChunk(tagPCM, 2, 16000, 16, false), chunk{"data", make([]byte, 102), -1}), ErrMalformed, "not a whole number of 4-byte frames"},
		{"truncated fmt", riff(chunk{"fmt ", pcm16.body[:8], 16}), ErrMalformed, `truncated "fmt " chunk`},
		{"truncated chunk header", truncHeader, ErrMalformed, "truncated chunk header: 3 of 8 bytes"},
		{"truncated list before data", riff(pcm16, chunk{"LIST", []byte("IN"), 40}), ErrMalformed, `truncated "LIST" chunk`},
		{"two fmt", riff(pcm16, pcm16, data), ErrMalformed, "second fmt chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clip, err := ReadWAV(bytes.NewReader(tt.file))
			if err == nil {
				t.Fatalf("no error, got clip with %d samples", len(clip.Samples))
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q does not wrap %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "wav: ") {
				t.Errorf("error %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

func TestLoadWAVNamesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.wav")
	if err := os.WriteFile(bad, []byte("not audio at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadWAV(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "not a RIFF file") {
		t.Errorf("LoadWAV error %v should name %s and the problem", err, bad)
	}
	missing := filepath.Join(dir, "missing.wav")
	if _, err := LoadWAV(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("LoadWAV error %v should name %s", err, missing)
	}
	good := filepath.Join(dir, "good.wav")
	if err := SaveWAV(good, &Clip{SampleRate: 8000, Samples: []float32{0, 0.5, -0.5}}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadWAV(good)
	if err != nil || c.SampleRate != 8000 || len(c.Samples) != 3 || c.Samples[1] != 0.5 {
		t.Errorf("LoadWAV(good) = %+v, %v", c, err)
	}
}

// TestReadWAVSox cross-checks the decoder against files written by sox, an
// independent WAV writer (it uses WAVE_FORMAT_EXTENSIBLE for > 16 bits and
// > 2 channels). The float32 file is the reference.
func TestReadWAVSox(t *testing.T) {
	if _, err := exec.LookPath("sox"); err != nil {
		t.Skip("sox not on PATH (install the Debian package sox)")
	}
	dir := t.TempDir()
	gen := func(name string, args ...string) *Clip {
		t.Helper()
		path := filepath.Join(dir, name)
		all := append([]string{"-D", "-n"}, args...)
		all = append(all, path, "synth", "0.05", "sine", "440", "gain", "-6")
		if out, err := exec.Command("sox", all...).CombinedOutput(); err != nil {
			t.Fatalf("sox %v: %v\n%s", all, err, out)
		}
		c, err := LoadWAV(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ref := gen("ref.wav", "-r", "16000", "-e", "floating-point", "-b", "32", "-c", "1")
	peak := 0.0
	for _, v := range ref.Samples {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	if math.Abs(peak-0.501) > 0.01 {
		t.Errorf("reference peak %v, want ≈ 0.501 (−6 dB)", peak)
	}
	for _, tt := range []struct {
		name string
		args []string
		tol  float64
	}{
		{"u8", []string{"-e", "unsigned", "-b", "8", "-c", "1"}, 1.0 / 128},
		{"s16", []string{"-e", "signed", "-b", "16", "-c", "1"}, 1.0 / 32768},
		{"s16-stereo", []string{"-e", "signed", "-b", "16", "-c", "2"}, 1.0 / 32768},
		{"s24", []string{"-e", "signed", "-b", "24", "-c", "1"}, 1e-6},
		{"s32-3ch", []string{"-e", "signed", "-b", "32", "-c", "3"}, 1e-6},
		{"f64", []string{"-e", "floating-point", "-b", "64", "-c", "1"}, 1e-6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := gen(tt.name+".wav", append([]string{"-r", "16000"}, tt.args...)...)
			if c.SampleRate != 16000 || len(c.Samples) != len(ref.Samples) {
				t.Fatalf("rate %d len %d, want 16000, %d", c.SampleRate, len(c.Samples), len(ref.Samples))
			}
			for i := range c.Samples {
				if d := math.Abs(float64(c.Samples[i] - ref.Samples[i])); d > tt.tol {
					t.Fatalf("sample %d: %v vs reference %v", i, c.Samples[i], ref.Samples[i])
				}
			}
		})
	}
}
