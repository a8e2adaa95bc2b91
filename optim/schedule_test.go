package optim

import (
	"math"
	"testing"
)

func TestScheduleCosine(t *testing.T) {
	s := Schedule{PeakLR: 1e-3, FinalLR: 1e-5, WarmupSteps: 10, TotalSteps: 110}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.LR(0); got != 0 {
		t.Errorf("LR(0) = %v, want 0 (HF convention)", got)
	}
	if got, want := s.LR(5), 0.5e-3; math.Abs(got-want) > 1e-18 {
		t.Errorf("LR(5) = %v, want %v", got, want)
	}
	if got := s.LR(10); got != 1e-3 {
		t.Errorf("LR(warmup) = %v, want peak", got)
	}
	if got, want := s.LR(60), (1e-3+1e-5)/2; math.Abs(got-want) > 1e-15 {
		t.Errorf("LR(mid-decay) = %v, want %v", got, want)
	}
	for _, st := range []int{110, 111, 1000} {
		if got := s.LR(st); got != 1e-5 {
			t.Errorf("LR(%d) = %v, want FinalLR", st, got)
		}
	}
	for st := 1; st <= 10; st++ {
		if !(s.LR(st) > s.LR(st-1)) {
			t.Fatalf("warm-up not rising at %d", st)
		}
	}
	for st := 11; st <= 110; st++ {
		if !(s.LR(st) < s.LR(st-1)) {
			t.Fatalf("cosine not falling at %d: %v >= %v", st, s.LR(st), s.LR(st-1))
		}
	}
}

func TestScheduleEdgeCases(t *testing.T) {
	// No warm-up: the first step already uses the peak.
	s := Schedule{Kind: Cosine, PeakLR: 2, TotalSteps: 4}
	if s.LR(0) != 2 || s.LR(4) != 0 || s.LR(2) != 1 {
		t.Errorf("no warm-up: %v %v %v", s.LR(0), s.LR(2), s.LR(4))
	}
	c := Schedule{Kind: Constant, PeakLR: 3, WarmupSteps: 3}
	if c.LR(0) != 0 || c.LR(3) != 3 || c.LR(1_000_000) != 3 {
		t.Errorf("constant: %v %v %v", c.LR(0), c.LR(3), c.LR(1_000_000))
	}
	if (Schedule{Kind: Constant, PeakLR: 3}).LR(0) != 3 {
		t.Error("constant without warm-up")
	}
	// Warm-up spanning the whole run ends exactly at the peak-then-final.
	w := Schedule{PeakLR: 1, WarmupSteps: 5, TotalSteps: 5}
	if w.LR(4) != 0.8 || w.LR(5) != 0 {
		t.Errorf("warmup==total: %v %v", w.LR(4), w.LR(5))
	}
	for _, bad := range []Schedule{
		{Kind: "linear", PeakLR: 1, TotalSteps: 3},
		{PeakLR: 1, WarmupSteps: 5, TotalSteps: 3},
		{PeakLR: -1, TotalSteps: 3},
		{PeakLR: 1, TotalSteps: -1},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestWarmupFromFraction(t *testing.T) {
	for _, c := range []struct {
		frac  float64
		total int
		want  int
	}{{0.07, 100, 7}, {0.1, 6250, 625}, {0, 100, 0}, {-1, 100, 0}, {2, 100, 100}, {0.5, 0, 0}, {math.NaN(), 10, 0}, {0.333, 10, 3}} {
		if got := WarmupFromFraction(c.frac, c.total); got != c.want {
			t.Errorf("WarmupFromFraction(%v, %d) = %d, want %d", c.frac, c.total, got, c.want)
		}
	}
}
