package optim

import (
	"fmt"
	"math"
)

// Schedule kinds.
const (
	Cosine   = "cosine"
	Constant = "constant"
)

// Schedule is the learning rate as a function of the optimiser step: linear
// warm-up, then either cosine decay to FinalLR at TotalSteps (Kind "cosine",
// the default when Kind is empty — the paper's recipe) or PeakLR held
// (Kind "constant").
//
// Steps are 0-based: LR(step) is the rate for the step-th optimiser update.
// The formulas are those of Hugging Face's get_cosine_schedule_with_warmup
// (timm's CosineLRScheduler with warmup_lr_init 0 agrees), generalised to a
// non-zero floor, so recipes given as "N warm-up steps" mean the same here:
//
//	step < WarmupSteps:  PeakLR · step / WarmupSteps      (0 at step 0)
//	otherwise:           FinalLR + (PeakLR − FinalLR) · ½(1 + cos(π·p)),
//	                     p = (step − WarmupSteps) / (TotalSteps − WarmupSteps)
//
// so PeakLR is reached at step WarmupSteps and FinalLR at TotalSteps. Unlike
// Hugging Face, steps from TotalSteps on stay at FinalLR instead of climbing
// back up the cosine.
type Schedule struct {
	Kind                    string
	PeakLR, FinalLR         float64
	WarmupSteps, TotalSteps int
}

// Validate reports a schedule LR cannot follow.
func (s Schedule) Validate() error {
	switch s.Kind {
	case "", Cosine, Constant:
	default:
		return fmt.Errorf("schedule: unknown kind %q (want %q or %q)", s.Kind, Cosine, Constant)
	}
	if s.WarmupSteps < 0 || s.TotalSteps < 0 {
		return fmt.Errorf("schedule: warm-up %d and total %d steps must be non-negative", s.WarmupSteps, s.TotalSteps)
	}
	if s.Kind != Constant && s.WarmupSteps > s.TotalSteps {
		return fmt.Errorf("schedule: warm-up %d steps exceeds the %d total steps", s.WarmupSteps, s.TotalSteps)
	}
	if s.PeakLR < 0 || s.FinalLR < 0 || math.IsNaN(s.PeakLR) || math.IsNaN(s.FinalLR) {
		return fmt.Errorf("schedule: learning rates %v, %v must be non-negative numbers", s.PeakLR, s.FinalLR)
	}
	return nil
}

// LR returns the learning rate for the 0-based optimiser step. It panics on
// an unknown Kind, which Validate reports as an error.
func (s Schedule) LR(step int) float64 {
	step = max(step, 0)
	if step < s.WarmupSteps {
		return s.PeakLR * float64(step) / float64(s.WarmupSteps)
	}
	switch s.Kind {
	case Constant:
		return s.PeakLR
	case "", Cosine:
		if step >= s.TotalSteps { // also covers WarmupSteps == TotalSteps
			return s.FinalLR
		}
		p := float64(step-s.WarmupSteps) / float64(max(1, s.TotalSteps-s.WarmupSteps))
		return s.FinalLR + (s.PeakLR-s.FinalLR)*0.5*(1+math.Cos(math.Pi*p))
	}
	panic(fmt.Sprintf("optim: unknown schedule kind %q", s.Kind))
}

// WarmupFromFraction turns a warm-up given as a fraction of training (the
// paper gives some as "% of total") into a step count, rounding to nearest
// so that e.g. 0.07 of 100 steps is 7, not 8 from float error under ceil.
func WarmupFromFraction(frac float64, total int) int {
	if !(frac > 0) || total <= 0 {
		return 0
	}
	return min(int(math.Round(frac*float64(total))), total)
}
