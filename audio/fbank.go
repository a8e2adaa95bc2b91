package audio

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Window is the analysis window applied to each frame (Kaldi --window-type).
type Window string

// Window types, with Kaldi's formulas for frame length L and
// a = 2π/(L−1), n = 0..L−1:
const (
	WindowPovey       Window = "povey"       // (0.5 − 0.5·cos(a·n))^0.85 (Kaldi default)
	WindowHanning     Window = "hanning"     // 0.5 − 0.5·cos(a·n) (AST/SSAST pass this)
	WindowHamming     Window = "hamming"     // 0.54 − 0.46·cos(a·n)
	WindowRectangular Window = "rectangular" // 1
	WindowBlackman    Window = "blackman"    // c − 0.5·cos(a·n) + (0.5 − c)·cos(2a·n), c = BlackmanCoeff
)

// LogFloor is log(FLT_EPSILON) = log(2^-23) ≈ −15.9424, the value Kaldi (and
// Fbank) output for a mel bin with no energy, e.g. for digital silence.
const LogFloor float32 = -15.942385152878742

// FbankOptions mirrors Kaldi's FrameExtractionOptions and MelBanksOptions
// (and torchaudio.compliance.kaldi.fbank's keyword arguments). Start from
// DefaultFbankOptions: the zero value is rejected because several Kaldi
// defaults (pre-emphasis, DC removal, power spectrum) are "on".
type FbankOptions struct {
	FrameLengthMs float64 // --frame-length, default 25
	FrameShiftMs  float64 // --frame-shift, default 10
	// Dither adds Dither·N(0,1) noise to every sample of every frame before
	// anything else (Kaldi default 1.0 for int16-scaled input; here 0 so that
	// features are deterministic, as AST/SSAST use). Seed fixes the noise.
	Dither            float64
	Seed              uint64
	RemoveDCOffset    bool    // --remove-dc-offset, default true
	PreemphCoeff      float64 // --preemphasis-coefficient, default 0.97 (0 disables)
	Window            Window  // --window-type, default povey
	BlackmanCoeff     float64 // --blackman-coeff, default 0.42
	RoundToPowerOfTwo bool    // --round-to-power-of-two, default true
	SnipEdges         bool    // --snip-edges, default true
	NumMelBins        int     // --num-mel-bins; Kaldi's default is 23, AST uses 128 (our default)
	LowFreq           float64 // --low-freq in Hz, default 20
	HighFreq          float64 // --high-freq in Hz: > 0 absolute, ≤ 0 offset from Nyquist; default 0
	UsePower          bool    // --use-power: power (true, default) or magnitude spectrum
	UseLog            bool    // --use-log-fbank, default true
}

// DefaultFbankOptions are Kaldi compute-fbank-feats' defaults with the
// settings AST/SSAST pass to torchaudio's kaldi.fbank: 128 mel bins and
// dither 0 (use_energy=false, htk_compat only matters with energy, so
// neither needs a field). AST additionally selects WindowHanning.
func DefaultFbankOptions() FbankOptions {
	return FbankOptions{
		FrameLengthMs:     25,
		FrameShiftMs:      10,
		RemoveDCOffset:    true,
		PreemphCoeff:      0.97,
		Window:            WindowPovey,
		BlackmanCoeff:     0.42,
		RoundToPowerOfTwo: true,
		SnipEdges:         true,
		NumMelBins:        128,
		LowFreq:           20,
		HighFreq:          0,
		UsePower:          true,
		UseLog:            true,
	}
}

// MelScale is Kaldi's (and HTK's) mel scale: mel(f) = 1127·ln(1 + f/700).
func MelScale(hz float64) float64 { return 1127 * math.Log(1+hz/700) }

// InverseMelScale is f(mel) = 700·(exp(mel/1127) − 1).
func InverseMelScale(mel float64) float64 { return 700 * (math.Exp(mel/1127) - 1) }

// FrameGeometry returns the frame length and shift in samples, the FFT size
// and the number of frames Fbank produces for n samples at rate Hz.
//
//	window_size  = int(rate · 0.001 · frame_length_ms)         (truncation, as Kaldi)
//	window_shift = int(rate · 0.001 · frame_shift_ms)
//	padded       = round_to_power_of_two ? 2^⌈log2 window_size⌉ : window_size
//	frames       = snip_edges ? (n < window_size ? 0 : 1 + (n − window_size) / window_shift)
//	                          : (n + window_shift/2) / window_shift        (integer division)
func FrameGeometry(n, rate int, opt FbankOptions) (length, shift, padded, frames int) {
	length = int(float64(rate) * 0.001 * opt.FrameLengthMs)
	shift = int(float64(rate) * 0.001 * opt.FrameShiftMs)
	padded = length
	if opt.RoundToPowerOfTwo && length > 1 {
		padded = 1 << bits.Len(uint(length-1))
	}
	if shift <= 0 {
		return length, shift, padded, 0
	}
	switch {
	case !opt.SnipEdges:
		frames = (n + shift/2) / shift
	case n >= length && length > 0:
		frames = 1 + (n-length)/shift
	}
	return length, shift, padded, frames
}

// melBank is one triangular filter: weights for FFT bins first..first+len-1.
type melBank struct {
	first   int
	weights []float64
}

// melBanks builds Kaldi's MelBanks (mel-computations.cc) for an FFT of size
// padded at the given rate:
//
//	nyquist    = rate/2;  high = high_freq > 0 ? high_freq : nyquist + high_freq
//	fft_bin_width = rate / padded;  num_fft_bins = padded/2   (the Nyquist bin gets no weight)
//	mel_low = mel(low);  mel_high = mel(high);  Δ = (mel_high − mel_low)/(num_bins + 1)
//	bin b:  left = mel_low + b·Δ,  center = mel_low + (b+1)·Δ,  right = mel_low + (b+2)·Δ
//	FFT bin i, m = mel(i · fft_bin_width):
//	  weight = 0                               unless left < m < right
//	         = (m − left)/(center − left)      if m ≤ center
//	         = (right − m)/(right − center)    otherwise
//
// With many bins and a short FFT the narrow low-frequency triangles can fall
// between FFT bins: bin 3 (63–93 Hz) of the 128-bin, 512-point, 16 kHz setup
// AST uses, and bins 4, 7, 12 and 17 of 128 bins at 8 kHz. Kaldi's C++ asserts on such an empty filter ("You may have
// set --num-mel-bins too large"); torchaudio, which AST runs, keeps it, so
// the bin always outputs the floor ln(FLT_EPSILON). We follow torchaudio.
func melBanks(numBins, padded int, rate, low, high float64) ([]melBank, error) {
	nyquist := 0.5 * rate
	if high <= 0 {
		high += nyquist
	}
	if low < 0 || low >= nyquist || high <= 0 || high > nyquist || high <= low {
		return nil, fmt.Errorf("fbank: bad mel band low %g Hz, high %g Hz for sample rate %g Hz (need 0 ≤ low < high ≤ Nyquist %g)", low, high, rate, nyquist)
	}
	if numBins < 3 {
		return nil, fmt.Errorf("fbank: NumMelBins = %d, Kaldi needs at least 3", numBins)
	}
	numFFT := padded / 2
	binWidth := rate / float64(padded)
	melLow, melHigh := MelScale(low), MelScale(high)
	delta := (melHigh - melLow) / float64(numBins+1)
	mels := make([]float64, numFFT)
	for i := range mels {
		mels[i] = MelScale(binWidth * float64(i))
	}
	banks := make([]melBank, numBins)
	for b := range banks {
		left := melLow + float64(b)*delta
		center := melLow + float64(b+1)*delta
		right := melLow + float64(b+2)*delta
		first, last := -1, -1
		w := make([]float64, numFFT)
		for i, m := range mels {
			if m > left && m < right {
				if m <= center {
					w[i] = (m - left) / (center - left)
				} else {
					w[i] = (right - m) / (right - center)
				}
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 { // empty filter: torchaudio keeps it (energy 0 → floor); Kaldi would abort
			banks[b] = melBank{}
			continue
		}
		banks[b] = melBank{first: first, weights: w[first : last+1]}
	}
	return banks, nil
}

// MelCenters returns the centre frequency in Hz of each mel bin Fbank would
// produce at rate: f(mel_low + (b+1)·Δ).
func MelCenters(rate int, opt FbankOptions) []float64 {
	nyquist := 0.5 * float64(rate)
	high := opt.HighFreq
	if high <= 0 {
		high += nyquist
	}
	melLow, melHigh := MelScale(opt.LowFreq), MelScale(high)
	delta := (melHigh - melLow) / float64(opt.NumMelBins+1)
	c := make([]float64, opt.NumMelBins)
	for b := range c {
		c[b] = InverseMelScale(melLow + float64(b+1)*delta)
	}
	return c
}

// frameWindow returns Kaldi's FeatureWindowFunction for length L.
func frameWindow(opt FbankOptions, L int) ([]float64, error) {
	w := make([]float64, L)
	a := 2 * math.Pi / float64(L-1)
	for n := range w {
		x := float64(n)
		switch opt.Window {
		case WindowPovey:
			w[n] = math.Pow(0.5-0.5*math.Cos(a*x), 0.85)
		case WindowHanning:
			w[n] = 0.5 - 0.5*math.Cos(a*x)
		case WindowHamming:
			w[n] = 0.54 - 0.46*math.Cos(a*x)
		case WindowRectangular:
			w[n] = 1
		case WindowBlackman:
			c := opt.BlackmanCoeff
			w[n] = c - 0.5*math.Cos(a*x) + (0.5-c)*math.Cos(2*a*x)
		case "":
			return nil, fmt.Errorf("fbank: FbankOptions.Window is empty; start from DefaultFbankOptions()")
		default:
			return nil, fmt.Errorf("fbank: unknown window type %q (povey, hanning, hamming, rectangular, blackman)", opt.Window)
		}
	}
	if L == 1 { // a = +Inf above; a one-sample window is just 1
		w[0] = 1
	}
	return w, nil
}

// Fbank computes Kaldi log mel filterbank features (compute-fbank-feats,
// torchaudio.compliance.kaldi.fbank) of mono samples at rate Hz. feats is
// frames×NumMelBins, row-major (one frame per row, mel bin fastest).
//
// Samples are used at the scale given. Kaldi's command-line tools read WAV
// files as int16-valued floats, torchaudio (and AST) as [-1, 1]; this
// package follows torchaudio. Multiplying the input by 32768 adds
// 2·ln 32768 ≈ 20.79 to every unfloored log-energy.
//
// Per frame (Kaldi ProcessWindow / torchaudio _get_window), for frame
// x[0..L−1] starting at sample m·shift (snip_edges; otherwise centred at
// m·shift + shift/2 with reflection at the edges):
//
//	x[n] += dither · N(0,1)                       if dither ≠ 0
//	x[n] -= mean(x)                               if remove_dc_offset
//	x[n] -= p · x[n−1] for n = L−1 … 1;  x[0] -= p · x[0]      (pre-emphasis p)
//	x[n] *= w[n]                                  (window, see Window)
//	X = rfft(x zero-padded to `padded`)            (gonum dsp/fourier)
//	S[k] = |X[k]|²  (or |X[k]| when !use_power),   k = 0 … padded/2
//	E[b] = Σ_k melbank[b][k] · S[k]                (see melBanks; Nyquist bin unused)
//	out[b] = ln(max(E[b], FLT_EPSILON))            if use_log_fbank
//
// A clip shorter than one frame yields zero frames and no error (Kaldi
// warns and skips it). Errors report invalid options.
func Fbank(samples []float32, rate int, opt FbankOptions) (feats []float32, frames int, err error) {
	if rate <= 0 {
		return nil, 0, fmt.Errorf("fbank: sample rate %d, want > 0", rate)
	}
	if opt.FrameLengthMs <= 0 || opt.FrameShiftMs <= 0 {
		return nil, 0, fmt.Errorf("fbank: frame length %g ms / shift %g ms must be positive; start from DefaultFbankOptions()", opt.FrameLengthMs, opt.FrameShiftMs)
	}
	L, shift, padded, frames := FrameGeometry(len(samples), rate, opt)
	if L < 2 || shift < 1 {
		return nil, 0, fmt.Errorf("fbank: %g ms frames / %g ms shift at %d Hz give %d-sample frames and a %d-sample shift", opt.FrameLengthMs, opt.FrameShiftMs, rate, L, shift)
	}
	if opt.PreemphCoeff < 0 || opt.PreemphCoeff > 1 {
		return nil, 0, fmt.Errorf("fbank: pre-emphasis coefficient %g outside [0, 1]", opt.PreemphCoeff)
	}
	win, err := frameWindow(opt, L)
	if err != nil {
		return nil, 0, err
	}
	banks, err := melBanks(opt.NumMelBins, padded, float64(rate), opt.LowFreq, opt.HighFreq)
	if err != nil {
		return nil, 0, err
	}
	if frames == 0 {
		return nil, 0, nil
	}

	var rng *rand.Rand
	if opt.Dither != 0 {
		rng = rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	}
	floor := float64(math.Nextafter32(1, 2) - 1) // FLT_EPSILON
	fft := fourier.NewFFT(padded)
	buf := make([]float64, padded)
	spec := make([]complex128, padded/2+1)
	power := make([]float64, padded/2+1)
	feats = make([]float32, frames*opt.NumMelBins)
	n := len(samples)
	for f := range frames {
		// Extract (Kaldi ExtractWindow).
		start := f * shift
		if !opt.SnipEdges {
			start = f*shift + shift/2 - L/2
		}
		x := buf[:L]
		for i := range x {
			s := start + i
			for s < 0 || s >= n { // reflect; loops only for clips shorter than a frame
				if s < 0 {
					s = -s - 1
				} else {
					s = 2*n - 1 - s
				}
			}
			x[i] = float64(samples[s])
		}
		if rng != nil {
			for i := range x {
				x[i] += opt.Dither * rng.NormFloat64()
			}
		}
		if opt.RemoveDCOffset {
			var m float64
			for _, v := range x {
				m += v
			}
			m /= float64(L)
			for i := range x {
				x[i] -= m
			}
		}
		if p := opt.PreemphCoeff; p != 0 {
			for i := L - 1; i > 0; i-- {
				x[i] -= p * x[i-1]
			}
			x[0] -= p * x[0]
		}
		for i := range x {
			x[i] *= win[i]
		}
		clear(buf[L:])
		fft.Coefficients(spec, buf)
		for k, c := range spec {
			p := real(c)*real(c) + imag(c)*imag(c)
			if !opt.UsePower {
				p = math.Sqrt(p)
			}
			power[k] = p
		}
		row := feats[f*opt.NumMelBins : (f+1)*opt.NumMelBins]
		for b, bank := range banks {
			var e float64
			for j, w := range bank.weights {
				e += w * power[bank.first+j]
			}
			if opt.UseLog {
				e = math.Log(math.Max(e, floor))
			}
			row[b] = float32(e)
		}
	}
	return feats, frames, nil
}
