package audio

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refFbank is an independent, deliberately naive transcription of
// torchaudio.compliance.kaldi.fbank: whole-matrix framing, an O(N²) DFT and
// the mel matrix built as max(0, min(up_slope, down_slope)) with a zero
// Nyquist column, as torchaudio's get_mel_banks does.
func refFbank(x []float64, rate int, opt FbankOptions) [][]float64 {
	L := int(float64(rate) * 0.001 * opt.FrameLengthMs)
	S := int(float64(rate) * 0.001 * opt.FrameShiftMs)
	P := L
	if opt.RoundToPowerOfTwo {
		for P = 1; P < L; P *= 2 {
		}
	}
	var starts []int
	if opt.SnipEdges {
		for s := 0; s+L <= len(x); s += S {
			starts = append(starts, s)
		}
	} else {
		for m := 0; m < (len(x)+S/2)/S; m++ {
			starts = append(starts, m*S+S/2-L/2)
		}
	}
	// Mel matrix [bins][P/2+1].
	nyq := float64(rate) / 2
	high := opt.HighFreq
	if high <= 0 {
		high = nyq + high
	}
	mel := func(f float64) float64 { return 1127 * math.Log(1+f/700) }
	ml, mh := mel(opt.LowFreq), mel(high)
	d := (mh - ml) / float64(opt.NumMelBins+1)
	M := make([][]float64, opt.NumMelBins)
	for b := range M {
		M[b] = make([]float64, P/2+1)
		l, c, r := ml+float64(b)*d, ml+float64(b+1)*d, ml+float64(b+2)*d
		for k := 0; k < P/2; k++ {
			m := mel(float64(rate) / float64(P) * float64(k))
			M[b][k] = math.Max(0, math.Min((m-l)/(c-l), (r-m)/(r-c)))
		}
	}
	var out [][]float64
	for _, s := range starts {
		fr := make([]float64, L)
		for i := range fr {
			j := s + i
			if j < 0 {
				j = -j - 1
			}
			if j >= len(x) {
				j = 2*len(x) - 1 - j
			}
			fr[i] = x[j]
		}
		if opt.RemoveDCOffset {
			var mean float64
			for _, v := range fr {
				mean += v / float64(L)
			}
			for i := range fr {
				fr[i] -= mean
			}
		}
		// torchaudio: offset = pad(x, (1, 0), replicate); x - coeff*offset.
		pre := make([]float64, P) // zero-padded
		for i := range fr {
			prev := fr[max(i-1, 0)]
			pre[i] = fr[i] - opt.PreemphCoeff*prev
		}
		for i := range L {
			a := 2 * math.Pi / float64(L-1)
			var w float64
			switch opt.Window {
			case WindowPovey:
				w = math.Pow(0.5-0.5*math.Cos(a*float64(i)), 0.85)
			case WindowHanning:
				w = 0.5 - 0.5*math.Cos(a*float64(i))
			case WindowHamming:
				w = 0.54 - 0.46*math.Cos(a*float64(i))
			case WindowRectangular:
				w = 1
			case WindowBlackman:
				w = opt.BlackmanCoeff - 0.5*math.Cos(a*float64(i)) + (0.5-opt.BlackmanCoeff)*math.Cos(2*a*float64(i))
			}
			pre[i] *= w
		}
		spec := make([]float64, P/2+1)
		for k := range spec {
			var re, im float64
			for n, v := range pre {
				ang := -2 * math.Pi * float64(k*n%P) / float64(P)
				re += v * math.Cos(ang)
				im += v * math.Sin(ang)
			}
			spec[k] = re*re + im*im
			if !opt.UsePower {
				spec[k] = math.Sqrt(spec[k])
			}
		}
		row := make([]float64, opt.NumMelBins)
		for b := range row {
			var e float64
			for k, v := range spec {
				e += M[b][k] * v
			}
			if opt.UseLog {
				e = math.Log(math.Max(e, 1.1920928955078125e-07))
			}
			row[b] = e
		}
		out = append(out, row)
	}
	return out
}

func noise(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(0.1*r.NormFloat64() + 0.05*math.Sin(float64(i)*0.3) + 0.02) // with a DC offset
	}
	return x
}

func TestFbankMatchesDFTReference(t *testing.T) {
	def := DefaultFbankOptions()
	with := func(f func(*FbankOptions)) FbankOptions { o := def; f(&o); return o }
	tests := []struct {
		name string
		rate int
		n    int
		opt  FbankOptions
	}{
		{"defaults-16k", 16000, 1600, def},
		{"hanning-AST", 16000, 1400, with(func(o *FbankOptions) { o.Window = WindowHanning })},
		{"hamming-23bins", 16000, 1000, with(func(o *FbankOptions) { o.Window = WindowHamming; o.NumMelBins = 23 })},
		{"blackman", 16000, 900, with(func(o *FbankOptions) { o.Window = WindowBlackman; o.NumMelBins = 40 })},
		{"rectangular-no-preemph-no-dc", 16000, 900, with(func(o *FbankOptions) {
			o.Window = WindowRectangular
			o.PreemphCoeff = 0
			o.RemoveDCOffset = false
		})},
		{"8k-64bins", 8000, 700, with(func(o *FbankOptions) { o.NumMelBins = 64 })},
		{"22050-odd-frame-1024fft", 22050, 1500, with(func(o *FbankOptions) { o.NumMelBins = 80 })},
		{"no-pow2", 16000, 900, with(func(o *FbankOptions) { o.RoundToPowerOfTwo = false; o.NumMelBins = 40 })},
		{"high-freq-offset", 16000, 900, with(func(o *FbankOptions) { o.HighFreq = -400; o.LowFreq = 60; o.NumMelBins = 40 })},
		{"high-freq-absolute", 16000, 900, with(func(o *FbankOptions) { o.HighFreq = 7600; o.NumMelBins = 40 })},
		{"magnitude", 16000, 900, with(func(o *FbankOptions) { o.UsePower = false; o.NumMelBins = 40 })},
		{"no-log", 16000, 900, with(func(o *FbankOptions) { o.UseLog = false; o.NumMelBins = 40 })},
		{"no-snip-edges", 16000, 1234, with(func(o *FbankOptions) { o.SnipEdges = false; o.NumMelBins = 40 })},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := noise(tt.n, uint64(i))
			got, frames, err := Fbank(x, tt.rate, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			x64 := make([]float64, len(x))
			for j, v := range x {
				x64[j] = float64(v)
			}
			want := refFbank(x64, tt.rate, tt.opt)
			if frames != len(want) || len(got) != frames*tt.opt.NumMelBins {
				t.Fatalf("frames %d (len %d), reference %d", frames, len(got), len(want))
			}
			worst := 0.0
			for f, row := range want {
				for b, w := range row {
					g := float64(got[f*tt.opt.NumMelBins+b])
					d := math.Abs(g - w)
					if !tt.opt.UseLog {
						d /= math.Max(math.Abs(w), 1e-6) // relative for raw energies
					}
					worst = math.Max(worst, d)
				}
			}
			if worst > 2e-5 {
				t.Errorf("max deviation from DFT reference %.3g", worst)
			}
		})
	}
}

func TestFrameGeometry(t *testing.T) {
	def := DefaultFbankOptions()
	noSnip := def
	noSnip.SnipEdges = false
	tests := []struct {
		n, rate                       int
		opt                           FbankOptions
		length, shift, padded, frames int
	}{
		{0, 16000, def, 400, 160, 512, 0},
		{399, 16000, def, 400, 160, 512, 0},
		{400, 16000, def, 400, 160, 512, 1},
		{559, 16000, def, 400, 160, 512, 1},
		{560, 16000, def, 400, 160, 512, 2},
		{16000, 16000, def, 400, 160, 512, 98}, // 1 + (16000−400)/160
		{160000, 16000, def, 400, 160, 512, 998},
		{8000, 8000, def, 200, 80, 256, 98},
		{22050, 22050, def, 551, 220, 1024, 98}, // 1 + 21499/220 = 98
		{44100, 44100, def, 1102, 441, 2048, 98},
		{16000, 16000, noSnip, 400, 160, 512, 100}, // (16000 + 80)/160
		{79, 16000, noSnip, 400, 160, 512, 0},
		{80, 16000, noSnip, 400, 160, 512, 1},
	}
	for _, tt := range tests {
		l, s, p, f := FrameGeometry(tt.n, tt.rate, tt.opt)
		if l != tt.length || s != tt.shift || p != tt.padded || f != tt.frames {
			t.Errorf("FrameGeometry(%d, %d, snip=%v) = %d, %d, %d, %d; want %d, %d, %d, %d",
				tt.n, tt.rate, tt.opt.SnipEdges, l, s, p, f, tt.length, tt.shift, tt.padded, tt.frames)
		}
		if tt.n > 0 && tt.n < 20000 {
			feats, frames, err := Fbank(make([]float32, tt.n), tt.rate, tt.opt)
			if err != nil || frames != tt.frames || len(feats) != frames*tt.opt.NumMelBins {
				t.Errorf("Fbank(%d samples) = %d frames, %d values, %v; want %d frames", tt.n, frames, len(feats), err, tt.frames)
			}
		}
	}
}

func TestFbankSilenceAndDC(t *testing.T) {
	if math.Abs(float64(LogFloor)+15.942385) > 1e-5 {
		t.Fatalf("LogFloor = %v, want ln(2^-23) = -15.942385", LogFloor)
	}
	for _, tt := range []struct {
		name string
		x    float32
	}{{"silence", 0}, {"dc", 0.25}, {"negative dc", -0.5}} {
		x := make([]float32, 4000)
		for i := range x {
			x[i] = tt.x
		}
		feats, frames, err := Fbank(x, 16000, DefaultFbankOptions())
		if err != nil || frames != 23 {
			t.Fatalf("%s: frames %d err %v", tt.name, frames, err)
		}
		for i, v := range feats {
			if v != LogFloor {
				t.Fatalf("%s: feats[%d] = %v, want LogFloor %v", tt.name, i, v, LogFloor)
			}
		}
	}
}

// TestFbankSinePeak checks that a pure tone's energy peaks in the mel bin
// whose triangle is highest at the tone's frequency, i.e. whose centre is
// nearest on the mel scale.
func TestFbankSinePeak(t *testing.T) {
	for _, tt := range []struct {
		rate int
		hz   float64
		win  Window
	}{
		{16000, 1000, WindowPovey},
		{16000, 1000, WindowHanning},
		{16000, 1000, WindowRectangular},
		{16000, 300, WindowPovey},
		{16000, 3000, WindowHamming},
		{16000, 6500, WindowPovey},
		{22050, 1000, WindowPovey},
		{8000, 1000, WindowPovey},
	} {
		opt := DefaultFbankOptions()
		opt.Window = tt.win
		if tt.rate == 8000 {
			opt.NumMelBins = 64
		}
		x := make([]float32, tt.rate/2)
		for i := range x {
			x[i] = float32(0.5 * math.Sin(2*math.Pi*tt.hz*float64(i)/float64(tt.rate)))
		}
		feats, frames, err := Fbank(x, tt.rate, opt)
		if err != nil {
			t.Fatal(err)
		}
		B := opt.NumMelBins
		mean := make([]float64, B)
		for f := range frames {
			for b := range B {
				mean[b] += float64(feats[f*B+b]) / float64(frames)
			}
		}
		best := 0
		for b := range mean {
			if mean[b] > mean[best] {
				best = b
			}
		}
		centers := MelCenters(tt.rate, opt)
		nearest := 0
		for b, c := range centers {
			if math.Abs(MelScale(c)-MelScale(tt.hz)) < math.Abs(MelScale(centers[nearest])-MelScale(tt.hz)) {
				nearest = b
			}
		}
		// Where the triangles are narrower than the FFT resolution
		// (below ~1 kHz at 16 kHz: 19 Hz mel spacing vs 31.25 Hz FFT
		// bins), the sampled filters may favour the neighbouring bin.
		slack := 0
		if centers[nearest]-centers[max(nearest-1, 0)] < float64(tt.rate)/512 {
			slack = 1
		}
		if abs(best-nearest) > slack {
			t.Errorf("%d Hz tone at %d Hz (%s): peak bin %d (centre %.0f Hz), want %d (centre %.0f Hz)",
				int(tt.hz), tt.rate, tt.win, best, centers[best], nearest, centers[nearest])
		}
		// A clear peak: ≥ 20 dB (ln 100 = 4.6 in natural-log power) above bins far away.
		for _, far := range []int{best - 10, best + 10} {
			if far >= 0 && far < B && mean[best]-mean[far] < math.Log(100) {
				t.Errorf("%g Hz: peak %.2f not well above bin %d (%.2f)", tt.hz, mean[best], far, mean[far])
			}
		}
	}
}

func abs(x int) int { return max(x, -x) }

func TestMelScale(t *testing.T) {
	for _, tt := range []struct{ hz, mel float64 }{
		{0, 0},
		{700, 1127 * math.Ln2},     // 781.17
		{1000, 999.9907007660177},  // 1127·ln(17/7)
		{8000, 2840.0377117383778}, // Nyquist at 16 kHz
		{20, 31.748578341466644},   // Kaldi's default low-freq
	} {
		if got := MelScale(tt.hz); math.Abs(got-tt.mel) > 1e-9 {
			t.Errorf("MelScale(%g) = %.10g, want %.10g", tt.hz, got, tt.mel)
		}
		if back := InverseMelScale(tt.mel); math.Abs(back-tt.hz) > 1e-9 {
			t.Errorf("InverseMelScale(%g) = %g, want %g", tt.mel, back, tt.hz)
		}
	}
	c := MelCenters(16000, DefaultFbankOptions())
	if len(c) != 128 || c[0] < 20 || c[127] > 8000 || c[0] >= c[1] {
		t.Errorf("MelCenters: %d centres from %g to %g", len(c), c[0], c[len(c)-1])
	}
}

func TestFbankScaling(t *testing.T) {
	// Doubling the input multiplies power by 4: +ln 4 on every log energy.
	x := noise(4000, 9)
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = 2 * v
	}
	fx, _, _ := Fbank(x, 16000, DefaultFbankOptions())
	fy, _, _ := Fbank(y, 16000, DefaultFbankOptions())
	for i := range fx {
		if fx[i] == LogFloor && fy[i] == LogFloor {
			continue // empty filter (mel bin 3 at 16 kHz)
		}
		if d := float64(fy[i]-fx[i]) - math.Log(4); math.Abs(d) > 1e-4 {
			t.Fatalf("bin %d: %v vs %v, difference should be ln 4", i, fy[i], fx[i])
		}
	}
}

func TestFbankDither(t *testing.T) {
	opt := DefaultFbankOptions()
	opt.Dither = 0.1
	opt.Seed = 7
	silent := make([]float32, 3200)
	a, _, _ := Fbank(silent, 16000, opt)
	b, _, _ := Fbank(silent, 16000, opt)
	opt.Seed = 8
	c, _, _ := Fbank(silent, 16000, opt)
	same, differ := true, false
	for i := range a {
		same = same && a[i] == b[i]
		differ = differ || a[i] != c[i]
		if a[i] <= LogFloor && i%128 != 3 { // bin 3 has an empty filter at 16 kHz
			t.Fatalf("dithered silence bin %d still at the floor", i)
		}
	}
	if !same || !differ {
		t.Errorf("dither should be reproducible per seed (same=%v) and vary across seeds (differ=%v)", same, differ)
	}
}

func TestFbankErrors(t *testing.T) {
	def := DefaultFbankOptions()
	with := func(f func(*FbankOptions)) FbankOptions { o := def; f(&o); return o }
	x := make([]float32, 1000)
	for _, tt := range []struct {
		name string
		rate int
		opt  FbankOptions
		msg  string
	}{
		{"zero options", 16000, FbankOptions{}, "DefaultFbankOptions"},
		{"zero rate", 0, def, "sample rate 0"},
		{"empty window", 16000, with(func(o *FbankOptions) { o.Window = "" }), "Window is empty"},
		{"unknown window", 16000, with(func(o *FbankOptions) { o.Window = "kaiser" }), `unknown window type "kaiser"`},
		{"high above nyquist", 16000, with(func(o *FbankOptions) { o.HighFreq = 9000 }), "high 9000 Hz"},
		{"low above high", 16000, with(func(o *FbankOptions) { o.LowFreq = 5000; o.HighFreq = 4000 }), "low 5000 Hz"},
		{"too few bins", 16000, with(func(o *FbankOptions) { o.NumMelBins = 2 }), "at least 3"},
		{"preemph", 16000, with(func(o *FbankOptions) { o.PreemphCoeff = 1.5 }), "pre-emphasis"},
		{"tiny frames", 40, def, "1-sample frames"},
	} {
		_, _, err := Fbank(x, tt.rate, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want it to mention %q", tt.name, err, tt.msg)
		}
	}
}

func BenchmarkFbank1s(b *testing.B) {
	x := noise(16000, 1)
	opt := DefaultFbankOptions()
	for b.Loop() {
		if _, _, err := Fbank(x, 16000, opt); err != nil {
			b.Fatal(err)
		}
	}
}
