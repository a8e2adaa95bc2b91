package data

import (
	"fmt"
	"math"
	"slices"
)

// Stats holds per value-slot normalisation constants, computed on training
// data and stored in checkpoints (it marshals to {"mean":[...],"std":[...]},
// plus the per-channel constants when there are any) so inference normalises
// inputs and de-normalises reconstructions exactly as training did.
type Stats struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
	// Per channel, for data whose channels (bands) are a position axis: a
	// token's values do not say which channel they belong to, so bands on
	// different flux scales would otherwise reach the model as one mixed
	// distribution whose offsets it cannot undo (docs/defaults.md, "Values
	// standardised per channel"). ChannelMean[k*C+j] and ChannelStd[k*C+j]
	// standardise value slot j of the tokens whose coordinate on position
	// axis ChannelAxis is k; Mean and Std pool all channels and serve any
	// token whose coordinate is not one of 0..len(ChannelMean)/C−1.
	ChannelAxis int       `json:"channel_axis,omitempty"`
	ChannelMean []float64 `json:"channel_mean,omitempty"`
	ChannelStd  []float64 `json:"channel_std,omitempty"`
}

// ComputeStats returns the mean and population standard deviation of each of
// the C value slots over all tokens of ds (two passes in float64, so long
// datasets do not lose precision). A slot whose std is below 1e-12 (constant,
// e.g. a padded channel) gets std 1, so Apply only centres it instead of
// dividing by zero.
//
// When ds's channels are a position axis (Dataset.ChannelAxes) and it has at
// least two, each channel also gets its own constants, computed the same
// way; a channel with fewer than two tokens takes the pooled ones, and one
// whose spread is degenerate the pooled std.
func ComputeStats(ds *Dataset) Stats {
	pooled := slotStats(ds.C, 1, ds, sampleValues, nil)
	st := Stats{Mean: pooled.mean, Std: pooled.std}
	axis, k, channel := channelGroups(ds)
	if k < 2 || ds.C == 0 { // no channel axis, or one channel
		return st
	}
	c := ds.C
	per := slotStats(c, k, ds, sampleValues, channel)
	for i := range per.mean {
		switch {
		case per.n[i/c] < 2:
			per.mean[i], per.std[i] = st.Mean[i%c], st.Std[i%c]
		case per.degenerate[i]:
			per.std[i] = st.Std[i%c]
		}
	}
	st.ChannelAxis, st.ChannelMean, st.ChannelStd = axis, per.mean, per.std
	return st
}

func sampleValues(s *Sample) []float32 { return s.Values }

// channelGroups returns ds's channels as slotStats groups: the channel
// axis, the number of channels (one more than the largest coordinate on
// it) and each token's channel, its coordinate there. When ds has no
// channel axis, or a coordinate on it is not a small non-negative integer,
// groups is 1 and channel nil.
func channelGroups(ds *Dataset) (axis, groups int, channel func(s *Sample, t int) int) {
	if !ds.ChannelAxes || ds.D != 2 {
		return 0, 1, nil
	}
	axis = 1 - ds.TimeAxis
	k := 0
	for i := range ds.Samples {
		p := ds.Samples[i].Positions
		for t := axis; t < len(p); t += ds.D {
			ch := p[t]
			if !(ch >= 0 && ch < MaxChannels) || ch != float32(int(ch)) {
				return 0, 1, nil
			}
			k = max(k, int(ch)+1)
		}
	}
	if k == 0 {
		return 0, 1, nil
	}
	return axis, k, func(s *Sample, t int) int { return int(s.Positions[t*ds.D+axis]) }
}

// ComputeTargetStats is ComputeStats for the TargetDim regression targets.
func ComputeTargetStats(ds *Dataset) Stats {
	st := slotStats(ds.TargetDim, 1, ds, func(s *Sample) []float32 { return s.Target }, nil)
	return Stats{Mean: st.mean, Std: st.std}
}

// groupStats are the means and stds of c slots in each of several groups
// of rows ([group·c + slot]), the rows each group holds, and which slots
// were degenerate (std set to 1).
type groupStats struct {
	mean, std  []float64
	n          []int
	degenerate []bool
}

// slotStats computes per-slot statistics of field(sample), c slots per row,
// in groups: row t of sample s belongs to group(s, t) (all rows to group 0
// when group is nil). A group without rows gets mean 0 and std 1.
func slotStats(c, groups int, ds *Dataset, field func(*Sample) []float32, group func(s *Sample, t int) int) groupStats {
	st := groupStats{mean: make([]float64, groups*c), std: make([]float64, groups*c), n: make([]int, groups), degenerate: make([]bool, groups*c)}
	if c == 0 {
		return st
	}
	rows := func(f func(g int, row []float32)) {
		for i := range ds.Samples {
			s := &ds.Samples[i]
			v := field(s)
			for t := 0; t < len(v)/c; t++ {
				g := 0
				if group != nil {
					g = group(s, t)
				}
				f(g, v[t*c:(t+1)*c])
			}
		}
	}
	rows(func(g int, row []float32) {
		for j, x := range row {
			st.mean[g*c+j] += float64(x)
		}
		st.n[g]++
	})
	for i := range st.mean {
		st.mean[i] /= float64(max(st.n[i/c], 1))
	}
	rows(func(g int, row []float32) {
		for j, x := range row {
			d := float64(x) - st.mean[g*c+j]
			st.std[g*c+j] += d * d
		}
	})
	for i, ss := range st.std {
		// A slot whose spread is float32 rounding of one value (below ~100
		// float32 ulps of its mean: a patch's time offsets when the time unit
		// is not exact in binary, 1.0000006 ± 1e-7) is constant: dividing
		// by that spread would blow the rounding up to unit-sized noise.
		st.std[i] = math.Sqrt(ss / float64(max(st.n[i/c], 1)))
		if st.std[i] < 1e-12 || st.std[i] < 1e-5*math.Abs(st.mean[i]) {
			st.std[i], st.degenerate[i] = 1, true
		}
	}
	return st
}

// Apply normalises ds's values in place: (v - mean) / std per slot, with
// each token's channel's constants when s is per channel. Samples produced
// by Split/Subset share value slices, so apply it before splitting (with
// stats from the training part) or to each part exactly once.
func (s Stats) Apply(ds *Dataset) error {
	if err := s.check(ds.C); err != nil {
		return err
	}
	if s.PerChannel() && (ds.D < 2 || s.ChannelAxis >= ds.D) {
		return fmt.Errorf("Stats: per-channel statistics (channel on position axis %d) for data of %d position axes, without a channel axis", s.ChannelAxis, ds.D)
	}
	for i := range ds.Samples {
		smp := &ds.Samples[i]
		s.standardise(smp.Values, smp.Positions, ds.D)
		for k := range smp.Shifts {
			s.standardise(smp.Shifts[k].Values, smp.Shifts[k].Positions, ds.D)
		}
	}
	return nil
}

// ApplyTargets standardises ds's regression targets in place, as Apply
// does its values (per slot: targets belong to a sample or a token, not a
// channel).
func (s Stats) ApplyTargets(ds *Dataset) error {
	if err := s.check(ds.TargetDim); err != nil {
		return err
	}
	for i := range ds.Samples {
		s.standardise(ds.Samples[i].Target, nil, 0)
	}
	return nil
}

// standardise maps token-major values (d position coordinates per token in
// pos) to (v − mean) / std.
func (s Stats) standardise(values, pos []float32, d int) {
	c := len(s.Mean)
	for t := 0; t < len(values)/c; t++ {
		mean, std := s.token(pos, t, d)
		for j, v := range values[t*c : (t+1)*c] {
			values[t*c+j] = float32((float64(v) - mean[j]) / std[j])
		}
	}
}

// Invert maps normalised token-major values (e.g. a reconstruction with C =
// len(s.Mean) values per token) back to data units in place; pos holds the
// tokens' positions, d coordinates each (nil unless s is per channel).
func (s Stats) Invert(values, pos []float32, d int) error {
	c := len(s.Mean)
	if err := s.check(c); err != nil {
		return err
	}
	if len(values)%c != 0 {
		return fmt.Errorf("Stats.Invert: %d values is not a multiple of %d slots", len(values), c)
	}
	if s.PerChannel() && (d < 2 || s.ChannelAxis >= d || len(pos) != len(values)/c*d) {
		return fmt.Errorf("Stats.Invert: per-channel statistics on position axis %d need each of the %d tokens' positions (%d given, %d axes)", s.ChannelAxis, len(values)/c, len(pos), d)
	}
	for t := 0; t < len(values)/c; t++ {
		mean, std := s.token(pos, t, d)
		for j, v := range values[t*c : (t+1)*c] {
			values[t*c+j] = float32(float64(v)*std[j] + mean[j])
		}
	}
	return nil
}

// At returns the mean and std that standardise value slot j of a token
// at position pos (its d coordinates; nil unless s is per channel).
func (s Stats) At(j int, pos []float32) (mean, std float64) {
	m, sd := s.token(pos, 0, len(pos))
	return m[j], sd[j]
}

// PerChannel reports whether s has constants per channel.
func (s Stats) PerChannel() bool { return len(s.ChannelMean) > 0 }

// token returns the constants of token t (d coordinates per token in pos):
// its channel's, or the pooled ones.
func (s Stats) token(pos []float32, t, d int) (mean, std []float64) {
	c := len(s.Mean)
	if s.PerChannel() && s.ChannelAxis < d && (t+1)*d <= len(pos) {
		ch := pos[t*d+s.ChannelAxis]
		if k := int(ch); ch >= 0 && ch == float32(k) && (k+1)*c <= len(s.ChannelMean) {
			return s.ChannelMean[k*c : (k+1)*c], s.ChannelStd[k*c : (k+1)*c]
		}
	}
	return s.Mean, s.Std
}

func (s Stats) check(c int) error {
	if len(s.Mean) != c || len(s.Std) != c || c == 0 {
		return fmt.Errorf("Stats: %d means and %d stds for %d value slots", len(s.Mean), len(s.Std), c)
	}
	if len(s.ChannelMean) != len(s.ChannelStd) || len(s.ChannelMean)%c != 0 || s.ChannelAxis < 0 {
		return fmt.Errorf("Stats: %d channel means and %d channel stds for %d value slots (channel axis %d)", len(s.ChannelMean), len(s.ChannelStd), c, s.ChannelAxis)
	}
	bad := func(mean, sd float64) bool {
		return !(sd > 0) || math.IsInf(sd, 0) || math.IsNaN(mean) || math.IsInf(mean, 0)
	}
	for k, sd := range s.Std {
		if bad(s.Mean[k], sd) {
			return fmt.Errorf("Stats: slot %d has mean %v std %v", k, s.Mean[k], sd)
		}
	}
	for k, sd := range s.ChannelStd {
		if bad(s.ChannelMean[k], sd) {
			return fmt.Errorf("Stats: channel %d slot %d has mean %v std %v", k/c, k%c, s.ChannelMean[k], sd)
		}
	}
	return nil
}

// ScaleSpread is how far apart the series of a dataset are in scale, for
// the value slot and channel where they are farthest apart: Low and High
// are the 10th and 90th percentiles, over the series with at least 3
// values there that are not constant, of each series' own standard
// deviation. One mean and std per slot (or per channel) cannot serve
// series whose spreads are orders of magnitude apart: the small ones reach
// the model as near-constants (docs/defaults.md, "Series on scales orders
// of magnitude apart").
type ScaleSpread struct {
	Slot, Channel int // Channel −1: no channel axis
	Low, High     float64
	Series        int // series the percentiles are over
}

// Ratio is High / Low.
func (s ScaleSpread) Ratio() float64 { return s.High / s.Low }

// SeriesScaleSpread returns the slot and channel whose series spread over
// the widest range of scales (Ratio), among those with at least 10 series
// of 3 or more values; ok is false when there is none.
func SeriesScaleSpread(ds *Dataset) (worst ScaleSpread, ok bool) {
	c := ds.C
	_, groups, channel := channelGroups(ds)
	stds := make([][]float64, groups*c) // [channel·c + slot]: one std per series
	for i := range ds.Samples {
		st := slotStats(c, groups, &Dataset{Samples: ds.Samples[i : i+1]}, sampleValues, channel)
		for g := range groups {
			if st.n[g] < 3 {
				continue
			}
			for j := range c {
				if !st.degenerate[g*c+j] { // a constant series is served by any scale
					stds[g*c+j] = append(stds[g*c+j], st.std[g*c+j])
				}
			}
		}
	}
	for i, v := range stds {
		if len(v) < 10 {
			continue
		}
		slices.Sort(v)
		sp := ScaleSpread{Slot: i % c, Channel: i / c, Low: v[len(v)/10], High: v[len(v)*9/10], Series: len(v)}
		if channel == nil {
			sp.Channel = -1
		}
		if !ok || sp.Ratio() > worst.Ratio() {
			worst, ok = sp, true
		}
	}
	return worst, ok
}

// StandardiseSeries standardises each series of ds on its own, in place:
// per value slot, and per channel when ds's channels are a position axis,
// it subtracts the series' mean and divides by its std (a constant one is
// only centred; a lone value becomes 0). It is data.normalize_series: for
// series on scales orders of magnitude apart, whose shapes and not levels
// matter, which one mean and std per slot would leave the small ones
// near-constant. Run it before patching (a patch's time offsets are not
// values of the series).
func StandardiseSeries(ds *Dataset) {
	c := ds.C
	_, groups, channel := channelGroups(ds)
	for i := range ds.Samples {
		s := &ds.Samples[i]
		st := slotStats(c, groups, &Dataset{Samples: ds.Samples[i : i+1]}, sampleValues, channel)
		for t := 0; t < len(s.Values)/c; t++ {
			g := 0
			if channel != nil {
				g = channel(s, t)
			}
			for j := range c {
				v := &s.Values[t*c+j]
				*v = float32((float64(*v) - st.mean[g*c+j]) / st.std[g*c+j])
			}
		}
	}
}
