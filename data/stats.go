package data

import (
	"fmt"
	"math"
)

// Stats holds per value-slot normalisation constants, computed on training
// data and stored in checkpoints (it marshals to {"mean":[...],"std":[...]})
// so inference normalises inputs and de-normalises reconstructions exactly as
// training did.
type Stats struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// ComputeStats returns the mean and population standard deviation of each of
// the C value slots over all tokens of ds (two passes in float64, so long
// datasets do not lose precision). A slot whose std is below 1e-12 (constant,
// e.g. a padded channel) gets std 1, so Apply only centres it instead of
// dividing by zero.
func ComputeStats(ds *Dataset) Stats {
	return slotStats(ds.C, ds, func(s *Sample) []float32 { return s.Values })
}

// ComputeTargetStats is ComputeStats for the TargetDim regression targets.
func ComputeTargetStats(ds *Dataset) Stats {
	return slotStats(ds.TargetDim, ds, func(s *Sample) []float32 { return s.Target })
}

// slotStats computes per-slot statistics of field(sample), c slots per row.
func slotStats(c int, ds *Dataset, field func(*Sample) []float32) Stats {
	st := Stats{Mean: make([]float64, c), Std: make([]float64, c)}
	if c == 0 {
		return st
	}
	n := 0
	for i := range ds.Samples {
		v := field(&ds.Samples[i])
		for j, x := range v {
			st.Mean[j%c] += float64(x)
		}
		n += len(v) / c
	}
	if n == 0 {
		for k := range st.Std {
			st.Std[k] = 1
		}
		return st
	}
	for k := range st.Mean {
		st.Mean[k] /= float64(n)
	}
	for i := range ds.Samples {
		for j, x := range field(&ds.Samples[i]) {
			d := float64(x) - st.Mean[j%c]
			st.Std[j%c] += d * d
		}
	}
	for k, ss := range st.Std {
		// A slot whose spread is float32 rounding of one value (below ~100
		// float32 ulps of its mean: a patch's time offsets when the time unit
		// is not exact in binary, 1.0000006 ± 1e-7) is constant: dividing
		// by that spread would blow the rounding up to unit-sized noise.
		st.Std[k] = math.Sqrt(ss / float64(n))
		if st.Std[k] < 1e-12 || st.Std[k] < 1e-5*math.Abs(st.Mean[k]) {
			st.Std[k] = 1
		}
	}
	return st
}

// Apply normalises ds's values in place: (v - mean) / std per slot. Samples
// produced by Split/Subset share value slices, so apply it before splitting
// (with stats from the training part) or to each part exactly once.
func (s Stats) Apply(ds *Dataset) error {
	return s.applyTo(ds.C, ds, func(s *Sample) []float32 { return s.Values }, true)
}

// ApplyTargets standardises ds's regression targets in place, as Apply
// does its values.
func (s Stats) ApplyTargets(ds *Dataset) error {
	return s.applyTo(ds.TargetDim, ds, func(s *Sample) []float32 { return s.Target }, false)
}

// applyTo normalises field of every sample, and of its Shifts when
// shifts (their targets are the sample's own slice, not a copy).
func (s Stats) applyTo(c int, ds *Dataset, field func(*Sample) []float32, shifts bool) error {
	if err := s.check(c); err != nil {
		return err
	}
	apply := func(v []float32) {
		for j := range v {
			k := j % c
			v[j] = float32((float64(v[j]) - s.Mean[k]) / s.Std[k])
		}
	}
	for i := range ds.Samples {
		apply(field(&ds.Samples[i]))
		if shifts {
			for k := range ds.Samples[i].Shifts {
				apply(field(&ds.Samples[i].Shifts[k]))
			}
		}
	}
	return nil
}

// Invert maps normalised token-major values (e.g. a reconstruction with C =
// len(s.Mean) values per token) back to data units in place.
func (s Stats) Invert(values []float32) error {
	c := len(s.Mean)
	if err := s.check(c); err != nil {
		return err
	}
	if len(values)%c != 0 {
		return fmt.Errorf("Stats.Invert: %d values is not a multiple of %d slots", len(values), c)
	}
	for j := range values {
		k := j % c
		values[j] = float32(float64(values[j])*s.Std[k] + s.Mean[k])
	}
	return nil
}

func (s Stats) check(c int) error {
	if len(s.Mean) != c || len(s.Std) != c || c == 0 {
		return fmt.Errorf("Stats: %d means and %d stds for %d value slots", len(s.Mean), len(s.Std), c)
	}
	for k, sd := range s.Std {
		if !(sd > 0) || math.IsInf(sd, 0) || math.IsNaN(s.Mean[k]) || math.IsInf(s.Mean[k], 0) {
			return fmt.Errorf("Stats: slot %d has mean %v std %v", k, s.Mean[k], sd)
		}
	}
	return nil
}
