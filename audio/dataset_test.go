package audio

import (
	"math"
	"strings"
	"testing"
)

func TestSpeechCommandsDataset(t *testing.T) {
	clips := Tones(ToneOptions{Classes: 5, PerClass: 6, Duration: 1, Seed: 3})
	// Mixed sources: re-rate some clips so the dataset has to resample them
	// (to rates ≥ 16 kHz, so no band is lost and the classes stay comparable).
	for i := range clips {
		switch i % 3 {
		case 1:
			c, _ := Resample(clips[i].Clip, 22050)
			clips[i].Clip = c
		case 2:
			c, _ := Resample(clips[i].Clip, 44100)
			clips[i].Clip = c
		}
	}
	ds, err := SpeechCommandsDataset(clips, DatasetOptions{Name: "tones"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Name != "tones" || ds.C != 256 || ds.D != 2 || len(ds.Samples) != 30 {
		t.Fatalf("name %q C %d D %d samples %d", ds.Name, ds.C, ds.D, len(ds.Samples))
	}
	if strings.Join(ds.Classes, ",") != "tone0,tone1,tone2,tone3,tone4" {
		t.Errorf("classes %q", ds.Classes)
	}
	// 1 s at 16 kHz → 98 frames → padded to 112 = 7 time patches × 8 mel patches.
	const nTok = 7 * 8
	var sum, sumSq float64
	var count int
	for i, s := range ds.Samples {
		if s.Label != i/6 || s.ID != clips[i].ID {
			t.Errorf("sample %d: label %d id %q", i, s.Label, s.ID)
		}
		if len(s.Values) != nTok*256 || len(s.Positions) != nTok*2 {
			t.Fatalf("sample %d: %d values, %d positions", i, len(s.Values), len(s.Positions))
		}
		for k := range nTok {
			if s.Positions[2*k] != float32(k/8) || s.Positions[2*k+1] != float32(k%8) {
				t.Fatalf("sample %d token %d at %v", i, k, s.Positions[2*k:2*k+2])
			}
		}
		// The last time patch holds frames 96..111, of which 98..111 are padding.
		last := s.Values[(6*8)*256:]
		pad := last[2*16] // frame 98, bin 0
		for a := 2; a < 16; a++ {
			for b := range 16 {
				if last[a*16+b] != pad {
					t.Fatalf("sample %d: padding cell (%d, %d) = %v, want %v", i, a, b, last[a*16+b], pad)
				}
			}
		}
		for k := range 6 * 8 * 256 {
			sum += float64(s.Values[k])
			sumSq += float64(s.Values[k]) * float64(s.Values[k])
			count++
		}
	}
	// Statistics were estimated on the unpadded features: roughly standardised.
	m := sum / float64(count)
	sd := math.Sqrt(sumSq/float64(count) - m*m)
	if math.Abs(m) > 0.1 || math.Abs(sd-1) > 0.1 {
		t.Errorf("unpadded features have mean %.3f std %.3f, want ≈ 0, 1", m, sd)
	}
	// Nearest class centroid (leave one out) on the time-averaged mel
	// spectrum (onsets are random, so average over time) separates the
	// synthetic classes: the tokens carry the class.
	spectra := make([][]float64, len(ds.Samples))
	for i, s := range ds.Samples {
		spec := make([]float64, 128)
		for k := range nTok {
			j := k % 8
			for a := range 16 {
				for b := range 16 {
					spec[j*16+b] += float64(s.Values[k*256+a*16+b])
				}
			}
		}
		spectra[i] = spec
	}
	correct := 0
	for i, s := range ds.Samples {
		best, bestD := -1, math.Inf(1)
		for c := range ds.Classes {
			cent := make([]float64, 128)
			n := 0
			for j, o := range ds.Samples {
				if j != i && o.Label == c {
					for k, v := range spectra[j] {
						cent[k] += v
					}
					n++
				}
			}
			var d float64
			for k, v := range spectra[i] {
				e := v - cent[k]/float64(n)
				d += e * e
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
		if best == s.Label {
			correct++
		}
	}
	t.Logf("nearest-centroid accuracy %d/30", correct)
	if correct < 24 {
		t.Errorf("nearest-centroid accuracy %d/30; the classes should be separable", correct)
	}
}

func TestSpeechCommandsDatasetOptions(t *testing.T) {
	clips := Tones(ToneOptions{Classes: 2, PerClass: 2, Duration: 0.5, Seed: 4})
	fopt := DefaultFbankOptions()
	fopt.NumMelBins = 64
	fopt.Window = WindowHanning
	ds, err := SpeechCommandsDataset(clips, DatasetOptions{
		Fbank:        fopt,
		TargetFrames: 32, // 0.5 s has 48 frames: cut to 32
		PatchT:       8,
		PatchF:       16,
		Mean:         -5,
		Std:          4,
		Classes:      []string{"tone1", "tone0", "unused"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.C != 128 || len(ds.Classes) != 3 || ds.Samples[0].Label != 1 || ds.Samples[2].Label != 0 {
		t.Fatalf("C %d classes %q labels %d %d", ds.C, ds.Classes, ds.Samples[0].Label, ds.Samples[2].Label)
	}
	if n := ds.Samples[0].Len(ds.C); n != 4*4 {
		t.Errorf("%d tokens, want 4 time × 4 mel patches", n)
	}
	// Fixed statistics are applied as given: token 0 cell 0 is frame 0 bin 0.
	feats, _, _ := Fbank(clips[0].Clip.Samples, 16000, fopt)
	if got, want := ds.Samples[0].Values[0], (feats[0]+5)/4; math.Abs(float64(got-want)) > 1e-5 {
		t.Errorf("normalised value %v, want %v", got, want)
	}

	for _, tt := range []struct {
		name  string
		clips []LabeledClip
		opt   DatasetOptions
		msg   string
	}{
		{"no clips", nil, DatasetOptions{}, "no clips"},
		{"unknown label", clips, DatasetOptions{Classes: []string{"tone0"}}, `label "tone1" not in classes`},
		{"duplicate class", clips, DatasetOptions{Classes: []string{"tone0", "tone0", "tone1"}}, "listed twice"},
		{"nil clip", []LabeledClip{{ID: "x", Label: "a"}}, DatasetOptions{}, "nil Clip"},
		{"bad fbank", clips, DatasetOptions{Fbank: FbankOptions{NumMelBins: 40}}, "DefaultFbankOptions"},
	} {
		if _, err := SpeechCommandsDataset(tt.clips, tt.opt); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.msg)
		}
	}
}
