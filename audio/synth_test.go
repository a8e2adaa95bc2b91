package audio

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClipSources covers both clip generators; only the espeak-ng subtest
// depends on the external program and skips without it.
func TestClipSources(t *testing.T) {
	t.Run("tones", testTones)
	t.Run("espeak-ng", testSpeakWords)
}

func testTones(t *testing.T) {
	opt := ToneOptions{Classes: 6, PerClass: 3, SampleRate: 16000, Duration: 0.5, Seed: 1}
	a := Tones(opt)
	b := Tones(opt)
	if len(a) != 18 {
		t.Fatalf("%d clips, want 18", len(a))
	}
	fopt := DefaultFbankOptions()
	peak := make(map[string]int)
	for i, c := range a {
		if c.Label != "tone"+string(rune('0'+i/3)) || c.Clip.SampleRate != 16000 || len(c.Clip.Samples) != 8000 {
			t.Fatalf("clip %d: %s %s rate %d len %d", i, c.ID, c.Label, c.Clip.SampleRate, len(c.Clip.Samples))
		}
		for j, v := range c.Clip.Samples {
			if v != b[i].Clip.Samples[j] {
				t.Fatal("Tones is not deterministic for a fixed seed")
			}
		}
		r := rms(c.Clip.Samples)
		if r < 0.03 || r > 0.5 {
			t.Errorf("clip %s RMS %.3f outside [0.03, 0.5]", c.ID, r)
		}
		// The loudest mel bin (averaged over time) identifies the class
		// spectrum; record it per class.
		feats, frames, err := Fbank(c.Clip.Samples, 16000, fopt)
		if err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, 128)
		for f := range frames {
			for k := range 128 {
				mean[k] += math.Exp(float64(feats[f*128+k]))
			}
		}
		best := 0
		for k := range mean {
			if mean[k] > mean[best] {
				best = k
			}
		}
		if p, ok := peak[c.Label]; ok && abs(p-best) > 6 {
			t.Errorf("%s: peak bin %d, other clips of the class peak at %d", c.ID, best, p)
		}
		peak[c.Label] = best
	}
	// Classes 0..3 have rising base frequencies: distinct peaks.
	if !(peak["tone0"] < peak["tone1"] && peak["tone1"] < peak["tone2"]) {
		t.Errorf("class peaks %v should increase with the class base frequency", peak)
	}
	c := Tones(ToneOptions{Seed: 2})
	if len(c) != 160 || c[0].Clip.SampleRate != 16000 || len(c[0].Clip.Samples) != 16000 {
		t.Errorf("defaults: %d clips, rate %d, %d samples", len(c), c[0].Clip.SampleRate, len(c[0].Clip.Samples))
	}
}

func TestSpeakWordsValidation(t *testing.T) {
	// These fail before espeak-ng would run (or on its absence).
	dir := t.TempDir()
	for _, tt := range []struct {
		words, voices []string
		speeds        []int
		msg           string
	}{
		{[]string{"-rm"}, []string{"en"}, []int{160}, "bad word"},
		{[]string{""}, []string{"en"}, []int{160}, "bad word"},
		{[]string{"yes"}, []string{"-x"}, []int{160}, "bad voice"},
		{[]string{"yes"}, []string{"en"}, []int{0}, "speed 0"},
		{nil, []string{"en"}, []int{160}, "at least one word"},
	} {
		_, err := SpeakWords(dir, tt.words, tt.voices, tt.speeds)
		if err == nil || (!strings.Contains(err.Error(), tt.msg) && !strings.Contains(err.Error(), "apt-get install")) {
			t.Errorf("SpeakWords(%q, %q, %v): %v, want %q", tt.words, tt.voices, tt.speeds, err, tt.msg)
		}
	}
}

func TestExecAvailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	missing := ExecAvailable()
	if missing == nil || !strings.Contains(missing.Error(), "espeak-ng") || !strings.Contains(missing.Error(), "apt-get install -y espeak-ng") {
		t.Errorf("ExecAvailable without espeak-ng on PATH = %v, want an error naming espeak-ng and its package", missing)
	}
	if _, e := SpeakWords(t.TempDir(), []string{"yes"}, []string{"en"}, []int{160}); e == nil || !strings.Contains(e.Error(), "espeak-ng not found") {
		t.Errorf("SpeakWords without espeak-ng = %v", e)
	}
}

func testSpeakWords(t *testing.T) {
	if err := ExecAvailable(); err != nil {
		t.Skipf("skipping the espeak-ng subtest: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "clips")
	words := []string{"yes", "seven"}
	voices := []string{"en+m3", "en-us+f2"}
	speeds := []int{120, 240}
	clips, err := SpeakWords(dir, words, voices, speeds)
	if err != nil {
		t.Fatal(err)
	}
	if len(clips) != 8 {
		t.Fatalf("%d clips, want 8", len(clips))
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 8 {
		t.Errorf("%d files in %s, want 8", len(files), dir)
	}
	seen := map[string]bool{}
	for i, c := range clips {
		w, v, s := words[i/4], voices[i/2%2], speeds[i%2]
		if c.Label != w || !strings.HasPrefix(c.ID, w+"/"+v+"/") || seen[c.ID] {
			t.Errorf("clip %d: ID %q label %q, want %s/%s/%d", i, c.ID, c.Label, w, v, s)
		}
		seen[c.ID] = true
		if c.Clip.SampleRate != 22050 || c.Clip.Duration() < 0.15 || c.Clip.Duration() > 3 {
			t.Errorf("clip %s: rate %d, %.2f s", c.ID, c.Clip.SampleRate, c.Clip.Duration())
		}
		if r := rms(c.Clip.Samples); r < 0.01 {
			t.Errorf("clip %s is nearly silent (RMS %.4f)", c.ID, r)
		}
	}
	// Faster speech is shorter: same word and voice at 240 vs 120 wpm.
	if clips[1].Clip.Duration() >= clips[0].Clip.Duration() {
		t.Errorf("240 wpm clip (%.2f s) not shorter than 120 wpm (%.2f s)", clips[1].Clip.Duration(), clips[0].Clip.Duration())
	}
	ds, err := SpeechCommandsDataset(clips, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.C != 256 || ds.D != 2 || len(ds.Classes) != 2 || ds.Classes[0] != "seven" || len(ds.Samples) != 8 {
		t.Errorf("dataset C %d D %d classes %q samples %d", ds.C, ds.D, ds.Classes, len(ds.Samples))
	}

	// espeak-ng --stdout writes a streaming placeholder size (0x7FFFF000).
	out, err := exec.Command(Espeak, "--stdout", "-v", "en", "yes").Output()
	if err != nil {
		t.Fatal(err)
	}
	if piped, err := ReadWAV(bytes.NewReader(out)); err != nil || piped.SampleRate != 22050 || len(piped.Samples) < 2000 {
		t.Errorf("espeak-ng --stdout: %v", err)
	}

	_, err = SpeakWords(dir, []string{"yes"}, []string{"qqvoice"}, []int{160})
	if err == nil || !strings.Contains(err.Error(), "qqvoice") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown voice error %v should name the voice and espeak-ng's complaint", err)
	}
}
