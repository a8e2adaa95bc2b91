package datasets

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"romae/data"
)

// ObserveRandom splits every sample of ds into an observed part of k tokens,
// k drawn uniformly from [minObs, maxObs] per sample, and the hidden rest:
// the interpolation protocol of HeTVAE's synthetic benchmark (Table 7,
// minObs = 3, maxObs = 10). The observed tokens are a uniform random subset.
//
// Both results hold the same samples in the same order with the same IDs;
// inside each sample tokens keep their original order, and per-token targets
// follow their tokens (per-sample targets and labels are copied to both). k
// is capped at N-1 so that every hidden sample keeps at least one token.
// The split of sample i depends only on (seed, i). It panics if
// minObs < 1, maxObs < minObs or a sample has fewer than 2 tokens.
func ObserveRandom(ds *data.Dataset, minObs, maxObs int, seed uint64) (observed, hidden *data.Dataset) {
	if minObs < 1 || maxObs < minObs {
		panic(fmt.Sprintf("datasets.ObserveRandom: observed range [%d, %d] is invalid", minObs, maxObs))
	}
	return observe(ds, seed, "observe-random", func(rng *rand.Rand, _ int) int {
		return minObs + rng.IntN(maxObs-minObs+1)
	})
}

// ObserveFixed is ObserveRandom with exactly k observed tokens per sample
// (capped at N-1): HeTVAE's 3/10/20-observed synthetic test sets, 30 of the
// spiral's 75 steps (about 60% hidden, Table 7) and 50 of the 100 sine
// points (App. B.4).
func ObserveFixed(ds *data.Dataset, k int, seed uint64) (observed, hidden *data.Dataset) {
	mustPositive("ObserveFixed", "k", k)
	return observe(ds, seed, "observe-fixed", func(*rand.Rand, int) int { return k })
}

// ObserveFraction is ObserveRandom hiding round(hiddenFrac·N) of each
// sample's N tokens (at least one, at most N-1): dense interpolation, where
// a hidden point's observed neighbours are close.
func ObserveFraction(ds *data.Dataset, hiddenFrac float64, seed uint64) (observed, hidden *data.Dataset) {
	if !(hiddenFrac > 0 && hiddenFrac < 1) {
		panic(fmt.Sprintf("datasets.ObserveFraction: hidden fraction %v is not in (0, 1)", hiddenFrac))
	}
	return observe(ds, seed, "observe-fraction", func(_ *rand.Rand, n int) int {
		return max(n-max(int(hiddenFrac*float64(n)+0.5), 1), 1)
	})
}

// ObserveIsolated hides about hiddenFrac (in (0, 1/3]) of each sample's
// tokens, no two of them neighbours in time among the tokens that share
// their other position coordinates (one channel of LoadLongCSV's layout;
// all tokens when D == 1), and only in such groups of 3 or more tokens. A
// hidden token's observed neighbours in time are then the nearest tokens
// of the sample, as for a step hidden from a complete series when the
// sample itself is what is left after hiding: the fit of eval.Blend on an
// observed file thus measures each interpolator at the gaps the filled
// file's queries sit in, where ObserveFraction's runs of hidden tokens
// make the gaps wider. Fewer are hidden where no more tokens qualify.
// Every hidden sample keeps at least one token only where some group has
// 3; a sample that has none is all observed (its hidden part is empty).
// The split of sample i depends only on (seed, i). Like the others it
// panics on a sample of fewer than 2 tokens.
func ObserveIsolated(ds *data.Dataset, hiddenFrac float64, timeAxis int, seed uint64) (observed, hidden *data.Dataset) {
	if !(hiddenFrac > 0 && hiddenFrac <= 1.0/3) {
		panic(fmt.Sprintf("datasets.ObserveIsolated: hidden fraction %v is not in (0, 1/3]", hiddenFrac))
	}
	if timeAxis < 0 || timeAxis >= ds.D {
		panic(fmt.Sprintf("datasets.ObserveIsolated: time axis %d outside [0, %d)", timeAxis, ds.D))
	}
	return observeKeep(ds, seed, "observe-isolated", func(rng *rand.Rand, s *data.Sample, n int) []bool {
		prev, next := timeNeighbours(s.Positions, ds.D, timeAxis, n)
		want := max(int(hiddenFrac*float64(n)+0.5), 1)
		keep := make([]bool, n)
		for j := range keep {
			keep[j] = true
		}
		hid := 0
		for _, j := range rng.Perm(n) {
			if hid == want {
				break
			}
			// Eligible: a middle or end token of a group of 3 or more
			// whose neighbours are both still observed.
			p, q := prev[j], next[j]
			if (p < 0 && q < 0) || (p < 0 && next[q] < 0) || (q < 0 && prev[p] < 0) {
				continue
			}
			if (p >= 0 && !keep[p]) || (q >= 0 && !keep[q]) {
				continue
			}
			keep[j] = false
			hid++
		}
		return keep
	})
}

// timeNeighbours gives each of n tokens (positions d per token) the index
// of the token before and after it in time among those sharing its other
// coordinates (−1 where there is none); ties in time keep token order.
func timeNeighbours(pos []float32, d, timeAxis, n int) (prev, next []int) {
	order := make([]int, n)
	for j := range order {
		order[j] = j
	}
	// By the other coordinates, then time, then index: one run per group.
	byGroup := func(a, b int) int {
		for ax := range d {
			if ax == timeAxis {
				continue
			}
			if c := cmp.Compare(pos[a*d+ax], pos[b*d+ax]); c != 0 {
				return c
			}
		}
		return 0
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(byGroup(a, b), cmp.Compare(pos[a*d+timeAxis], pos[b*d+timeAxis]), a-b)
	})
	prev, next = make([]int, n), make([]int, n)
	for r, j := range order {
		prev[j], next[j] = -1, -1
		if r > 0 && byGroup(order[r-1], j) == 0 {
			prev[j] = order[r-1]
		}
		if r+1 < n && byGroup(order[r+1], j) == 0 {
			next[j] = order[r+1]
		}
	}
	return prev, next
}

func observe(ds *data.Dataset, seed uint64, stream string, count func(rng *rand.Rand, n int) int) (observed, hidden *data.Dataset) {
	return observeKeep(ds, seed, stream, func(rng *rand.Rand, _ *data.Sample, n int) []bool {
		k := min(count(rng, n), n-1)
		keep := make([]bool, n)
		for _, j := range chooseSorted(rng, n, k) {
			keep[j] = true
		}
		return keep
	})
}

// observeKeep splits each sample of ds by choose's keep[j] (token j
// observed).
func observeKeep(ds *data.Dataset, seed uint64, stream string, choose func(rng *rand.Rand, s *data.Sample, n int) []bool) (observed, hidden *data.Dataset) {
	observed, hidden = new(data.Dataset), new(data.Dataset)
	*observed, *hidden = *ds, *ds
	observed.Name, hidden.Name = ds.Name+"/observed", ds.Name+"/hidden"
	observed.Samples = make([]data.Sample, len(ds.Samples))
	hidden.Samples = make([]data.Sample, len(ds.Samples))
	c, d, td := ds.C, ds.D, ds.TargetDim
	for i := range ds.Samples {
		s := &ds.Samples[i]
		n := s.Len(c)
		if n < 2 {
			panic(fmt.Sprintf("datasets.Observe: sample %d (id %q) has %d tokens, need >= 2 to split", i, s.ID, n))
		}
		keep := choose(sampleRNG(seed, stream, i), s, n)
		o := data.Sample{ID: s.ID, Label: s.Label}
		h := data.Sample{ID: s.ID, Label: s.Label}
		if td > 0 && !ds.TargetPerToken {
			o.Target = append([]float32(nil), s.Target...)
			h.Target = append([]float32(nil), s.Target...)
		}
		for j := range n {
			dst := &h
			if keep[j] {
				dst = &o
			}
			dst.Values = append(dst.Values, s.Values[j*c:(j+1)*c]...)
			dst.Positions = append(dst.Positions, s.Positions[j*d:(j+1)*d]...)
			if td > 0 && ds.TargetPerToken {
				dst.Target = append(dst.Target, s.Target[j*td:(j+1)*td]...)
			}
		}
		observed.Samples[i], hidden.Samples[i] = o, h
	}
	return observed, hidden
}

// ScalePositions returns a copy of ds whose position axis a is multiplied by
// factors[a] (missing factors count as 1); values and targets are shared
// with ds. RoPE's fastest pair turns one radian per unit of position, so
// generators whose positions live in [0, 1] (Synthetic, Sines) may need
// rescaling, e.g. to step units. It panics if len(factors) > ds.D.
func ScalePositions(ds *data.Dataset, factors ...float64) *data.Dataset {
	if len(factors) > ds.D {
		panic(fmt.Sprintf("datasets.ScalePositions: %d factors for D = %d", len(factors), ds.D))
	}
	out := *ds
	out.Samples = make([]data.Sample, len(ds.Samples))
	for i, s := range ds.Samples {
		pos := make([]float32, len(s.Positions))
		for j, p := range s.Positions {
			if a := j % ds.D; a < len(factors) {
				p = float32(float64(p) * factors[a])
			}
			pos[j] = p
		}
		s.Positions = pos
		out.Samples[i] = s
	}
	return &out
}
