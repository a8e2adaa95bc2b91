package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/internal/bufs"
)

// Batch is a padded mini-batch, the model's input. All buffers are row-major
// and flat so the model can view them as tensors without copying.
type Batch struct {
	B, L, C, D     int       // samples, padded tokens per sample, values per token, position axes
	Values         []float32 // [B*L*C]; 0 at padding
	Positions      []float32 // [B*L*D]; 0 at padding
	Pad            []bool    // [B*L]; true = padding slot
	Lengths        []int     // [B]; valid tokens per sample (Collate puts them first, padding after)
	Labels         []int     // [B]; -1 when none
	Targets        []float32 // [B*TargetDim] or [B*L*TargetDim] (0 at padding); nil when none
	TargetDim      int
	TargetPerToken bool
}

// Collate gathers ds.Samples[idx] into a batch padded to the longest of them.
// Each sample's tokens keep their order and come first; padding follows. It
// reuses dst's buffers when their capacity allows, so a training loop that
// passes the previous batch back in allocates nothing in steady state; dst
// may be nil. ds is assumed to have passed Validate.
func Collate(dst *Batch, ds *Dataset, idx []int) *Batch {
	if dst == nil {
		dst = new(Batch)
	}
	c, d, td := ds.C, ds.D, ds.TargetDim
	l := 0
	for _, i := range idx {
		l = max(l, ds.Samples[i].Len(c))
	}
	b := len(idx)
	*dst = Batch{
		B: b, L: l, C: c, D: d,
		Values:         bufs.Resize(dst.Values, b*l*c),
		Positions:      bufs.Resize(dst.Positions, b*l*d),
		Pad:            bufs.Resize(dst.Pad, b*l),
		Lengths:        bufs.Resize(dst.Lengths, b),
		Labels:         bufs.Resize(dst.Labels, b),
		Targets:        dst.Targets,
		TargetDim:      td,
		TargetPerToken: ds.TargetPerToken,
	}
	switch {
	case td == 0:
		dst.Targets = nil
	case ds.TargetPerToken:
		dst.Targets = bufs.Resize(dst.Targets, b*l*td)
	default:
		dst.Targets = bufs.Resize(dst.Targets, b*td)
	}
	for j, i := range idx {
		s := &ds.Samples[i]
		n := s.Len(c)
		dst.Lengths[j] = n
		dst.Labels[j] = s.Label
		fillPadded(dst.Values[j*l*c:(j+1)*l*c], s.Values)
		fillPadded(dst.Positions[j*l*d:(j+1)*l*d], s.Positions)
		pad := dst.Pad[j*l : (j+1)*l]
		for t := range pad {
			pad[t] = t >= n
		}
		switch {
		case td == 0:
		case ds.TargetPerToken:
			fillPadded(dst.Targets[j*l*td:(j+1)*l*td], s.Target)
		default:
			copy(dst.Targets[j*td:(j+1)*td], s.Target)
		}
	}
	return dst
}

// CollateShifted is Collate with each sample drawn at random (rng) from its
// own tokens and its Shifts, all equally likely: the train.augment_shift
// augmentation. Samples without Shifts are taken as they are.
func CollateShifted(dst *Batch, ds *Dataset, idx []int, rng *rand.Rand) *Batch {
	view := *ds
	view.Samples = make([]Sample, len(idx))
	order := make([]int, len(idx))
	for j, i := range idx {
		s := &ds.Samples[i]
		if k := rng.IntN(len(s.Shifts) + 1); k > 0 {
			view.Samples[j] = s.Shifts[k-1]
		} else {
			view.Samples[j] = *s
		}
		order[j] = j
	}
	return Collate(dst, &view, order)
}

// fillPadded copies src to the front of dst and zeroes the rest.
func fillPadded(dst, src []float32) {
	clear(dst[copy(dst, src):])
}

// RandomMask marks, for each sample, round(ratio·nValid) of its non-pad
// tokens as masked: masked[b*L+i] = true. The count is clamped to
// [1, nValid-1] when nValid >= 2 so the encoder always sees at least one data
// token and the decoder always has something to reconstruct; a one-token
// sample is masked iff ratio >= 0.5. The subset is uniform among all subsets
// of that size (selection sampling, one rng draw per valid token). Pad slots
// are never masked, wherever they are. dst is reused when its capacity
// allows. It panics if ratio is outside [0, 1], a caller bug.
func RandomMask(dst []bool, b *Batch, ratio float64, rng *rand.Rand) []bool {
	if !(ratio >= 0 && ratio <= 1) {
		panic(fmt.Sprintf("data.RandomMask: ratio %v outside [0, 1]", ratio))
	}
	dst = bufs.Resize(dst, b.B*b.L)
	clear(dst)
	for s := 0; s < b.B; s++ {
		pad := b.Pad[s*b.L : (s+1)*b.L]
		mask := dst[s*b.L : (s+1)*b.L]
		valid := 0
		for _, p := range pad {
			if !p {
				valid++
			}
		}
		need := int(math.Round(ratio * float64(valid)))
		if valid >= 2 {
			need = min(max(need, 1), valid-1)
		}
		// Knuth's algorithm S: take each remaining valid token with
		// probability need/remaining.
		remaining := valid
		for i, p := range pad {
			if need == 0 {
				break
			}
			if p {
				continue
			}
			if rng.IntN(remaining) < need {
				mask[i] = true
				need--
			}
			remaining--
		}
	}
	return dst
}
