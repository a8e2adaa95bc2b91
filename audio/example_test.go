package audio_test

import (
	"bytes"
	"fmt"
	"log"
	"math"

	"romae/audio"
)

func ExampleReadWAV() {
	// A 0.5 s, 440 Hz tone at 8 kHz, written as 16-bit PCM and read back.
	x := make([]float32, 4000)
	for i := range x {
		x[i] = float32(0.5 * math.Sin(2*math.Pi*440*float64(i)/8000))
	}
	var buf bytes.Buffer
	if err := audio.WriteWAV(&buf, &audio.Clip{SampleRate: 8000, Samples: x}); err != nil {
		log.Fatal(err)
	}
	clip, err := audio.ReadWAV(&buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d Hz, %d samples, %.2f s, sample[10] = %.4f\n",
		clip.SampleRate, len(clip.Samples), clip.Duration(), clip.Samples[10])

	_, err = audio.ReadWAV(bytes.NewReader([]byte("OggS not a wav file")))
	fmt.Println(err)
	// Output:
	// 8000 Hz, 4000 samples, 0.50 s, sample[10] = -0.1545
	// wav: not a RIFF file: starts with "OggS", want "RIFF"
}

func ExampleFbank() {
	// One second of a 1 kHz tone at 16 kHz: 98 frames of 128 Kaldi log-mel
	// energies (25 ms frames, 10 ms shift, povey window, snip_edges).
	const rate = 16000
	x := make([]float32, rate)
	for i := range x {
		x[i] = float32(0.5 * math.Sin(2*math.Pi*1000*float64(i)/rate))
	}
	opt := audio.DefaultFbankOptions()
	feats, frames, err := audio.Fbank(x, rate, opt)
	if err != nil {
		log.Fatal(err)
	}
	bins := opt.NumMelBins
	peak := 0
	row := feats[50*bins : 51*bins] // frame 50
	for b := range row {
		if row[b] > row[peak] {
			peak = b
		}
	}
	fmt.Printf("%d frames × %d bins\n", frames, bins)
	fmt.Printf("peak in bin %d, centred at %.0f Hz\n", peak, audio.MelCenters(rate, opt)[peak])

	// Tokens for RoMAE: 16×16 patches, time padded from 98 to 112 frames.
	values, positions, n := audio.Patches(feats, frames, bins, 16, 16)
	fmt.Printf("%d tokens of %d values; last token at (time %v, freq %v)\n",
		n, len(values)/n, positions[2*n-2], positions[2*n-1])
	// Output:
	// 98 frames × 128 bins
	// peak in bin 43, centred at 984 Hz
	// 56 tokens of 256 values; last token at (time 6, freq 7)
}
