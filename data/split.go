package data

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Split partitions ds into len(fractions) datasets of about those fractions
// of the samples (e.g. {0.8, 0.1, 0.1}). When ds is labelled the split is
// stratified: every class (and the unlabelled group) is shuffled with rng and
// dealt out so each part gets its share of each class, while the part sizes
// stay within one sample of fraction·len overall. Samples keep their dataset
// order inside each part, and their slices are shared with ds (see Subset).
// It panics if a fraction is negative or NaN or they do not sum to 1, which
// is a caller bug.
func Split(ds *Dataset, fractions []float64, rng *rand.Rand) []*Dataset {
	sum := 0.0
	for _, f := range fractions {
		if !(f >= 0) {
			panic(fmt.Sprintf("data.Split: fraction %v is not >= 0", f))
		}
		sum += f
	}
	if math.Abs(sum-1) > 1e-6 {
		panic(fmt.Sprintf("data.Split: fractions %v sum to %v, want 1", fractions, sum))
	}
	// Group by label, unlabelled (-1) first, each group in random order.
	groups := make([][]int, len(ds.Classes)+1)
	for i := range ds.Samples {
		g := ds.Samples[i].Label + 1
		groups[g] = append(groups[g], i)
	}
	var order []int
	for _, g := range groups {
		rng.Shuffle(len(g), func(a, b int) { g[a], g[b] = g[b], g[a] })
		order = append(order, g...)
	}
	// Deal the class-contiguous sequence out one by one to the part that is
	// furthest behind its quota: parts then differ from their target by less
	// than one overall, and so by at most a couple within each class.
	parts := make([][]int, len(fractions))
	for j, i := range order {
		best, bestDeficit := 0, math.Inf(-1)
		for k, f := range fractions {
			if deficit := f*float64(j+1) - float64(len(parts[k])); deficit > bestDeficit {
				best, bestDeficit = k, deficit
			}
		}
		parts[best] = append(parts[best], i)
	}
	out := make([]*Dataset, len(parts))
	for k, p := range parts {
		slices.Sort(p)
		out[k] = Subset(ds, p)
	}
	return out
}

// DropRandomSteps returns a copy of ds in which each sample has lost
// round(frac·S) of its S time steps, chosen uniformly at random; at
// least one step always survives. Each sample's choice is drawn from
// (seed, a hash of the sample's own values and positions), so it does not
// depend on the file's name, the sample's place in it or the other
// samples: reading a file again with the same seed — as a checkpoint's data
// spec does when a trained model is evaluated — drops the same steps. A time step is the set of tokens sharing a
// value on position coordinate axis, so the same call drops whole steps both
// for one-token-per-step data and for channel-axis data where a step is
// spread over several tokens (axis 0 for everything LoadTS returns; axis
// D-1, time, for LoadLongCSV). The paper's UEA protocol is frac = 0.3.
// Surviving tokens keep their original positions, so the model sees the gaps.
// Per-token targets are dropped along with their tokens.
func DropRandomSteps(ds *Dataset, frac float64, axis int, seed uint64) (*Dataset, error) {
	if !(frac >= 0 && frac < 1) {
		return nil, fmt.Errorf("DropRandomSteps: fraction %v outside [0, 1)", frac)
	}
	if axis < 0 || axis >= ds.D {
		return nil, fmt.Errorf("DropRandomSteps: axis %d outside [0, %d)", axis, ds.D)
	}
	out := *ds
	out.Samples = make([]Sample, len(ds.Samples))
	c, d, td := ds.C, ds.D, ds.TargetDim
	for si := range ds.Samples {
		s := &ds.Samples[si]
		rng := rand.New(rand.NewPCG(seed, sampleHash(s)))
		n := s.Len(c)
		steps := make([]float32, n)
		for i := range n {
			steps[i] = s.Positions[i*d+axis]
		}
		slices.Sort(steps)
		steps = slices.Compact(steps)
		drop := min(int(math.Round(frac*float64(len(steps)))), len(steps)-1)
		dropped := make(map[float32]bool, drop)
		// Selection sampling over the distinct steps.
		for i, remaining := 0, len(steps); drop > 0; i, remaining = i+1, remaining-1 {
			if rng.IntN(remaining) < drop {
				dropped[steps[i]] = true
				drop--
			}
		}
		ns := Sample{ID: s.ID, Label: s.Label, TimeOrigin: s.TimeOrigin}
		if !ds.TargetPerToken {
			ns.Target = s.Target
		}
		for i := range n {
			if dropped[s.Positions[i*d+axis]] {
				continue
			}
			ns.Values = append(ns.Values, s.Values[i*c:(i+1)*c]...)
			ns.Positions = append(ns.Positions, s.Positions[i*d:(i+1)*d]...)
			if ds.TargetPerToken {
				ns.Target = append(ns.Target, s.Target[i*td:(i+1)*td]...)
			}
		}
		out.Samples[si] = ns
	}
	return &out, nil
}

// sampleHash is FNV-1a over a sample's value and position bits.
func sampleHash(s *Sample) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, xs := range [][]float32{s.Values, s.Positions} {
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}
