package audio

import (
	"math"
	"testing"
)

func sine(rate int, hz, seconds, amp float64) *Clip {
	x := make([]float32, int(seconds*float64(rate)))
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return &Clip{SampleRate: rate, Samples: x}
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func TestResample(t *testing.T) {
	tests := []struct {
		in, out int
		hz      float64
		maxErr  float64 // vs the analytic sine away from the edges
	}{
		{22050, 16000, 1000, 2e-3},
		{22050, 16000, 6000, 2e-3},
		{16000, 8000, 440, 2e-3},
		{8000, 16000, 1000, 2e-3},
		{44100, 16000, 3000, 2e-3},
		{16000, 22050, 2500, 2e-3},
	}
	for _, tt := range tests {
		c := sine(tt.in, tt.hz, 0.25, 0.8)
		r, err := Resample(c, tt.out)
		if err != nil {
			t.Fatal(err)
		}
		wantLen := (len(c.Samples)*tt.out + tt.in - 1) / tt.in
		if r.SampleRate != tt.out || len(r.Samples) != wantLen {
			t.Fatalf("%d→%d: rate %d len %d, want len %d", tt.in, tt.out, r.SampleRate, len(r.Samples), wantLen)
		}
		edge := tt.out / 100 // 10 ms
		worst := 0.0
		for j := edge; j < len(r.Samples)-edge; j++ {
			want := 0.8 * math.Sin(2*math.Pi*tt.hz*float64(j)/float64(tt.out))
			worst = math.Max(worst, math.Abs(float64(r.Samples[j])-want))
		}
		if worst > tt.maxErr {
			t.Errorf("%d→%d Hz, %g Hz tone: max error %.2g", tt.in, tt.out, tt.hz, worst)
		}
	}
}

func TestResampleAntiAlias(t *testing.T) {
	// 6 kHz and 7.5 kHz are above the 4 kHz Nyquist of 8 kHz output: they
	// must be removed, not aliased to 2 kHz / 500 Hz.
	for _, hz := range []float64{4400, 6000, 7500} {
		c := sine(16000, hz, 0.25, 0.8)
		r, err := Resample(c, 8000)
		if err != nil {
			t.Fatal(err)
		}
		mid := r.Samples[200 : len(r.Samples)-200]
		if db := 20 * math.Log10(rms(mid)/(0.8/math.Sqrt2)); db > -40 {
			t.Errorf("%g Hz after 16k→8k: %.1f dB, want < −40 dB", hz, db)
		}
	}
}

func TestResampleIdentityAndErrors(t *testing.T) {
	c := sine(16000, 440, 0.01, 0.5)
	r, err := Resample(c, 16000)
	if err != nil || len(r.Samples) != len(c.Samples) || &r.Samples[0] == &c.Samples[0] {
		t.Fatalf("same-rate Resample should copy: %v", err)
	}
	for i := range c.Samples {
		if r.Samples[i] != c.Samples[i] {
			t.Fatal("same-rate Resample changed samples")
		}
	}
	if _, err := Resample(c, 0); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := Resample(&Clip{Samples: c.Samples}, 8000); err == nil {
		t.Error("clip without rate accepted")
	}
	e, err := Resample(&Clip{SampleRate: 22050}, 16000)
	if err != nil || len(e.Samples) != 0 {
		t.Errorf("empty clip: %v, %d samples", err, len(e.Samples))
	}
}
