package audio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// LabeledClip is a clip with its class name.
type LabeledClip struct {
	ID    string // unique, e.g. "yes/en+m3/160"
	Label string // class name, e.g. the spoken word
	Clip  *Clip
}

// Espeak is the speech synthesiser SpeakWords runs and EspeakPackage the
// Debian package that provides it.
const (
	Espeak        = "espeak-ng"
	EspeakPackage = "espeak-ng"
)

// ExecAvailable reports whether espeak-ng is on PATH; the error names the
// missing program and the Debian package to install.
func ExecAvailable() error {
	if _, err := exec.LookPath(Espeak); err != nil {
		return fmt.Errorf("audio: %s not found on PATH (install the Debian package %s: apt-get install -y %s): %w", Espeak, EspeakPackage, EspeakPackage, err)
	}
	return nil
}

// SpeakWords synthesises every word in every voice at every speed with
//
//	espeak-ng -w DIR/NAME.wav -v VOICE -s SPEED WORD
//
// and returns the clips in (word, voice, speed) order, labelled by word,
// with ID "word/voice/speed". Voices are espeak-ng voice names (see
// `espeak-ng --voices`: en, en-us, en-gb, de, fr, ...), optionally with a
// variant for a different speaker ("en+m3", "en-us+f2"; see
// `espeak-ng --voices=variant`); speeds are words per minute (espeak-ng's
// default is 175; 80–450 is its usable range). espeak-ng writes 16-bit mono
// WAV at 22050 Hz; resample with Resample if needed. The WAV files stay in
// dir (created if missing). Invocations run in parallel, one per CPU.
//
// Words must be non-empty and must not start with '-' (espeak-ng would read
// them as options). Errors name the failing command and espeak-ng's
// message, e.g. for an unknown voice. Beware that espeak-ng silently falls
// back rather than failing for an unknown variant ("en+nosuch") or a name
// with a known language prefix ("no-such-voice" speaks Norwegian); check
// `espeak-ng --voices` for exact names.
func SpeakWords(dir string, words []string, voices []string, speeds []int) ([]LabeledClip, error) {
	if err := ExecAvailable(); err != nil {
		return nil, err
	}
	if len(words) == 0 || len(voices) == 0 || len(speeds) == 0 {
		return nil, fmt.Errorf("audio: SpeakWords: need at least one word, voice and speed (got %d, %d, %d)", len(words), len(voices), len(speeds))
	}
	for _, w := range words {
		if strings.TrimSpace(w) == "" || strings.HasPrefix(w, "-") {
			return nil, fmt.Errorf("audio: SpeakWords: bad word %q (empty or starting with '-')", w)
		}
	}
	for _, v := range voices {
		if v == "" || strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\n") {
			return nil, fmt.Errorf("audio: SpeakWords: bad voice name %q", v)
		}
	}
	for _, s := range speeds {
		if s < 10 || s > 1000 {
			return nil, fmt.Errorf("audio: SpeakWords: speed %d words/minute outside espeak-ng's range", s)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("audio: SpeakWords: %w", err)
	}

	type job struct {
		i           int
		word, voice string
		speed       int
	}
	var jobs []job
	for _, w := range words {
		for _, v := range voices {
			for _, s := range speeds {
				jobs = append(jobs, job{len(jobs), w, v, s})
			}
		}
	}
	out := make([]LabeledClip, len(jobs))
	errs := make([]error, len(jobs))
	ch := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				name := fmt.Sprintf("%04d_%s_%s_%d.wav", j.i, safeName(j.word), safeName(j.voice), j.speed)
				path := filepath.Join(dir, name)
				clip, err := speak(path, j.word, j.voice, j.speed)
				if err != nil {
					errs[j.i] = err
					continue
				}
				out[j.i] = LabeledClip{ID: j.word + "/" + j.voice + "/" + fmt.Sprint(j.speed), Label: j.word, Clip: clip}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// speak runs one espeak-ng invocation and loads its output.
func speak(path, word, voice string, speed int) (*Clip, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"-w", path, "-v", voice, "-s", fmt.Sprint(speed), word}
	cmd := exec.CommandContext(ctx, Espeak, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("audio: %s %s: %w: %s", Espeak, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	clip, err := LoadWAV(path)
	if err != nil {
		return nil, err
	}
	if len(clip.Samples) == 0 {
		return nil, fmt.Errorf("audio: %s %s produced no audio", Espeak, strings.Join(args, " "))
	}
	return clip, nil
}

// safeName keeps letters, digits, '-' and '+' for file names.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '+':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToneOptions configures Tones. Zero fields take the defaults shown.
type ToneOptions struct {
	Classes    int     // number of classes, default 8
	PerClass   int     // clips per class, default 20
	SampleRate int     // Hz, default 16000
	Duration   float64 // seconds, default 1
	Noise      float64 // background white-noise RMS, default 0.01
	Seed       uint64  // randomness of the per-clip jitter
}

// Tones generates synthetic labelled clips with class-dependent spectra,
// a pure-Go stand-in for spoken words. Class k (label "tone<k>") has a base
// frequency f_k = 150·1.45^k Hz (folded below 0.4·rate) and a kind k mod 4:
//
//	0 harmonic tone: f, 2f, 3f with amplitudes 1, 1/2, 1/3
//	1 rising chirp from f to 2f
//	2 falling chirp from 2f to f
//	3 noise burst: white noise through a two-pole resonator at f (Q ≈ 8)
//
// Each clip jitters f by ±4%, the level by ±3 dB, and places an event of
// 40–70% of the clip at a random onset with 10 ms raised-cosine fades, over
// background white noise. Output is deterministic for a given Seed and
// ordered class-major.
func Tones(opt ToneOptions) []LabeledClip {
	if opt.Classes <= 0 {
		opt.Classes = 8
	}
	if opt.PerClass <= 0 {
		opt.PerClass = 20
	}
	if opt.SampleRate <= 0 {
		opt.SampleRate = 16000
	}
	if opt.Duration <= 0 {
		opt.Duration = 1
	}
	if opt.Noise == 0 {
		opt.Noise = 0.01
	}
	rate := float64(opt.SampleRate)
	n := int(opt.Duration * rate)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x70e5))
	var out []LabeledClip
	for k := range opt.Classes {
		base := 150 * math.Pow(1.45, float64(k))
		for base*2 > 0.4*rate { // keep 2f (chirp top, 2nd harmonic) below 0.4·rate
			base /= 2.9
		}
		for i := range opt.PerClass {
			f := base * (1 + 0.04*(2*rng.Float64()-1))
			amp := 0.3 * math.Pow(10, 3*(2*rng.Float64()-1)/20)
			length := int((0.4 + 0.3*rng.Float64()) * float64(n))
			onset := rng.IntN(n - length + 1)
			fade := max(1, int(0.01*rate))
			x := make([]float32, n)
			var y1, y2 float64 // resonator state
			r := math.Exp(-math.Pi * f / 8 / rate)
			a1, a2 := 2*r*math.Cos(2*math.Pi*f/rate), -r*r
			var phase float64
			for t := range length {
				tt := float64(t) / rate
				var v float64
				switch k % 4 {
				case 0:
					v = math.Sin(2*math.Pi*f*tt) + math.Sin(4*math.Pi*f*tt)/2 + math.Sin(6*math.Pi*f*tt)/3
				case 1, 2:
					frac := float64(t) / float64(length)
					if k%4 == 2 {
						frac = 1 - frac
					}
					phase += 2 * math.Pi * f * (1 + frac) / rate
					v = math.Sin(phase)
				case 3:
					y := rng.NormFloat64()*(1-r) + a1*y1 + a2*y2
					y2, y1 = y1, y
					v = 3 * y
				}
				env := 1.0
				if t < fade {
					env = 0.5 - 0.5*math.Cos(math.Pi*float64(t)/float64(fade))
				} else if t >= length-fade {
					env = 0.5 - 0.5*math.Cos(math.Pi*float64(length-t)/float64(fade))
				}
				x[onset+t] = float32(amp * env * v)
			}
			for t := range x {
				x[t] += float32(opt.Noise * rng.NormFloat64())
			}
			label := fmt.Sprintf("tone%d", k)
			out = append(out, LabeledClip{
				ID:    fmt.Sprintf("%s/%d", label, i),
				Label: label,
				Clip:  &Clip{SampleRate: opt.SampleRate, Samples: x},
			})
		}
	}
	return out
}
