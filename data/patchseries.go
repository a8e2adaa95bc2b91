package data

import (
	"cmp"
	"fmt"
	"slices"
)

// PatchSeries groups every P consecutive observations of a series into
// one token, as patch-based Transformers do for time series: a token then
// carries a local shape (P·C values) rather than one point, which is what
// lets a small attention model learn from a few dozen series. Observations
// are grouped per channel (the position axes other than TimeAxis), in time
// order. A token's values are the P observations' C values followed by
// their P time offsets from the token's first observation; a short last
// token is padded with zero values and offset −1. Its position is the first
// observation's (channel..., time), so RoPE still sees real times and gaps.
// Per-token targets cannot be patched (an error). P = 1 returns ds.
func PatchSeries(ds *Dataset, P int) (*Dataset, error) {
	out, _, err := patchSeries(ds, P, false)
	return out, err
}

// patchSeries is PatchSeries, also returning each sample's
// channelTimeOrder when keepOrders, for the shifted grids to reuse (nil
// when P = 1).
func patchSeries(ds *Dataset, P int, keepOrders bool) (*Dataset, [][]int, error) {
	if P == 1 {
		return ds, nil, nil
	}
	if P < 1 || P > MaxSeriesPatch {
		return nil, nil, fmt.Errorf("series_patch %d: want 1 ≤ P ≤ %d", P, MaxSeriesPatch)
	}
	if ds.TargetPerToken {
		return nil, nil, fmt.Errorf("series_patch %d: per-token targets cannot be grouped into patches", P)
	}
	out := *ds
	out.C = P*ds.C + P
	out.ValueNames = nil // a token holds P observations and their offsets now
	out.Samples = make([]Sample, len(ds.Samples))
	var orders [][]int
	if keepOrders {
		orders = make([][]int, len(ds.Samples))
	}
	for si := range ds.Samples {
		s := &ds.Samples[si]
		order := channelTimeOrder(s, ds.C, ds.D, ds.TimeAxis)
		out.Samples[si] = patchSample(s, order, ds.C, ds.D, ds.TimeAxis, P, 0)
		if keepOrders {
			orders[si] = order
		}
	}
	return &out, orders, nil
}

// PatchSeriesShifted is PatchSeries, and each sample also keeps in Shifts
// its series patched with the token grid moved by 1, ..., P−1
// observations (the first token of each channel then holds the first
// shift observations, padded like a short last token): the other
// tokenisations of the same object that train.augment_shift draws from,
// so a model does not learn where one fixed grid happens to cut a shape.
// Each shift costs the memory of the patched data again, so when P−1 of
// them would hold more than maxShiftFloats values and positions, fewer
// shifts are kept, evenly spaced in 1..P−1 (none when even one would not
// fit).
func PatchSeriesShifted(ds *Dataset, P int) (*Dataset, error) {
	out, orders, err := patchSeries(ds, P, true)
	if err != nil || P == 1 {
		return out, err
	}
	size := 0
	for i := range out.Samples {
		size += len(out.Samples[i].Values) + len(out.Samples[i].Positions)
	}
	n := min(P-1, maxShiftFloats/max(size, 1))
	for si := range ds.Samples {
		shifts := make([]Sample, n)
		for k := range shifts {
			shifts[k] = patchSample(&ds.Samples[si], orders[si], ds.C, ds.D, ds.TimeAxis, P, 1+k*(P-1)/n)
		}
		out.Samples[si].Shifts = shifts
	}
	return out, nil
}

// maxShiftFloats bounds the values and positions PatchSeriesShifted adds
// (2^26 float32s: 256 MiB); a variable for tests.
var maxShiftFloats = 1 << 26

// channelTimeOrder is the order of s's observations (c values, d position
// axes, time axis ta) by channel (the leading axes), then time: runs of
// one channel.
func channelTimeOrder(s *Sample, c, d, ta int) []int {
	n := s.Len(c)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := s.Positions[a*d:(a+1)*d], s.Positions[b*d:(b+1)*d]
		for k := range d {
			if k != ta {
				if r := cmp.Compare(pa[k], pb[k]); r != 0 {
					return r
				}
			}
		}
		return cmp.Compare(pa[ta], pb[ta])
	})
	return order
}

// patchSample groups s's observations, in channelTimeOrder, into tokens of
// P per channel, the first token of each channel holding shift of them
// when 0 < shift < P.
func patchSample(s *Sample, order []int, c, d, ta, P, shift int) Sample {
	// The token boundaries first, so the values are allocated once at
	// their size (P tokenisations of a large set are held at once).
	var starts []int
	for lo := 0; lo < len(order); {
		size := P
		if shift > 0 && (lo == 0 || !sameChannel(s.Positions, order[lo-1], order[lo], d, ta)) {
			size = shift // a channel's first token under a shifted grid
		}
		starts = append(starts, lo)
		hi := lo + 1
		for hi < len(order) && hi-lo < size && sameChannel(s.Positions, order[lo], order[hi], d, ta) {
			hi++
		}
		lo = hi
	}
	starts = append(starts, len(order))
	w := P*c + P // values per token
	ns := Sample{ID: s.ID, Label: s.Label, Target: s.Target, TimeOrigin: s.TimeOrigin,
		Values: make([]float32, (len(starts)-1)*w), Positions: make([]float32, 0, (len(starts)-1)*d)}
	for t := range len(starts) - 1 {
		first := s.Positions[order[starts[t]]*d : (order[starts[t]]+1)*d]
		vals := ns.Values[t*w : (t+1)*w]
		for j := range P {
			vals[P*c+j] = -1
		}
		for j, i := range order[starts[t]:starts[t+1]] {
			copy(vals[j*c:(j+1)*c], s.Values[i*c:(i+1)*c])
			vals[P*c+j] = s.Positions[i*d+ta] - first[ta]
		}
		ns.Positions = append(ns.Positions, first...)
	}
	return ns
}

// MaxSeriesPatch bounds PatchSeries's P.
const MaxSeriesPatch = 1024

// sameChannel reports whether tokens a and b agree on every position axis
// but time.
func sameChannel(pos []float32, a, b, d, ta int) bool {
	for k := range d {
		if k != ta && pos[a*d+k] != pos[b*d+k] {
			return false
		}
	}
	return true
}
