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
	if P == 1 {
		return ds, nil
	}
	if P < 1 || P > MaxSeriesPatch {
		return nil, fmt.Errorf("series_patch %d: want 1 ≤ P ≤ %d", P, MaxSeriesPatch)
	}
	if ds.TargetPerToken {
		return nil, fmt.Errorf("series_patch %d: per-token targets cannot be grouped into patches", P)
	}
	c, d, ta := ds.C, ds.D, ds.TimeAxis
	out := *ds
	out.C = P*c + P
	out.ValueNames = nil // a token holds P observations and their offsets now
	out.Samples = make([]Sample, len(ds.Samples))
	for si := range ds.Samples {
		s := &ds.Samples[si]
		n := s.Len(c)
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		// Channel (leading axes) first, then time: runs of one channel.
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
		ns := Sample{ID: s.ID, Label: s.Label, Target: s.Target}
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && hi-lo < P && sameChannel(s.Positions, order[lo], order[hi], d, ta) {
				hi++
			}
			first := s.Positions[order[lo]*d : (order[lo]+1)*d]
			vals := make([]float32, P*c+P)
			for j := range P {
				vals[P*c+j] = -1
			}
			for j, i := range order[lo:hi] {
				copy(vals[j*c:(j+1)*c], s.Values[i*c:(i+1)*c])
				vals[P*c+j] = s.Positions[i*d+ta] - first[ta]
			}
			ns.Values = append(ns.Values, vals...)
			ns.Positions = append(ns.Positions, first...)
			lo = hi
		}
		out.Samples[si] = ns
	}
	return &out, nil
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
