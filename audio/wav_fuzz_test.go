package audio

import (
	"bytes"
	"encoding/binary"
	"testing"

	"romae/internal/fuzzcheck"
)

// wavHeader is a canonical PCM header for a data chunk of n bytes.
func wavHeader(rate, channels, bits int, n uint32) []byte {
	le := binary.LittleEndian
	b := []byte("RIFF\x00\x00\x00\x00WAVEfmt ")
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, tagPCM)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	b = append(b, "data"...)
	return le.AppendUint32(b, n)
}

// FuzzReadWAV feeds arbitrary bytes to the WAV reader, by path as the
// Speech Commands loader reads clips, then resamples a decoded clip to
// 16 kHz and computes its filterbank features, as the dataset does.
func FuzzReadWAV(f *testing.F) {
	var b bytes.Buffer
	WriteWAV(&b, &Clip{SampleRate: 16000, Samples: []float32{0, 0.5, -0.5, 1}})
	f.Add(b.Bytes())
	f.Add(append(wavHeader(8000, 2, 16, 8), make([]byte, 8)...))
	f.Add(append(wavHeader(1, 1, 8, 64), make([]byte, 64)...))             // 1 Hz: 16000× on resampling
	f.Add(append(wavHeader(16000, 1, 16, 0x7FFFF000), make([]byte, 6)...)) // streamed size
	f.Add(append(wavHeader(16000, 1, 16, 1<<30), make([]byte, 6)...))      // size beyond the file
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.wav", in)
		fuzzcheck.Check(t, len(in), func() {
			c, err := LoadWAV(path)
			if err != nil {
				return
			}
			r, err := Resample(c, 16000)
			if err != nil {
				return
			}
			Fbank(r.Samples, r.SampleRate, DefaultFbankOptions())
		})
	})
}

// TestLowSampleRateRefused pins the resampling defect: a WAV declaring a
// 1 Hz rate made resampling to 16 kHz allocate 16000 samples per input
// sample (a 1 MB file asked for 64 GB).
func TestLowSampleRateRefused(t *testing.T) {
	in := append(wavHeader(1, 1, 8, 64), make([]byte, 64)...)
	if _, err := ReadWAV(bytes.NewReader(in)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("MinSampleRate")) {
		t.Fatalf("1 Hz WAV: %v, want a sample-rate error", err)
	}
	if _, err := Resample(&Clip{SampleRate: 10, Samples: make([]float32, 10)}, 16000); err == nil {
		t.Fatal("Resample 10 Hz → 16 kHz accepted")
	}
}
