package data

import (
	"fmt"
	"math"
	"slices"
)

// NaN policies: what a loader does with a missing value — NaN in any
// format, '?' in a .ts file, an empty value cell in a CSV, a CSV slot
// (ChannelSlot) without a row. One policy serves every format (Source.NaN,
// the --data.nan flag).
const (
	// NaNMissing (the default) treats the value as unobserved: the token
	// holding it is left out. A token holds every value of its time step in
	// the dense layouts (.ts drop-step, .npy/.npz series, CSV slot mode), so
	// there the whole step goes; with one value per token (.ts
	// channel-axis, CSV axis mode with one value column) only that value.
	NaNMissing = "missing"
	// NaNDrop leaves out every sample (series, object) holding a missing
	// value.
	NaNDrop = "drop"
	// NaNError refuses the file, naming the line (or sample, step and
	// channel) of the first missing value.
	NaNError = "error"
)

// checkNaNPolicy accepts the three policies and "" (NaNMissing).
func checkNaNPolicy(p string) error {
	switch p {
	case "", NaNMissing, NaNDrop, NaNError:
		return nil
	}
	return fmt.Errorf("data.nan %q: want missing, drop or error", p)
}

// nanHint is the end of every NaNError message: the other choices.
const nanHint = "(--data.nan missing leaves the value out, --data.nan drop the whole series)"

// denseNaN applies policy to an [N, ...] array of series before
// DenseSeries (whose own handling of NaN is NaNMissing's): error names the
// first NaN, drop returns the array and labels without the samples holding
// one. It returns the indices of the samples kept (nil: all), and how many
// NaN the array holds.
func denseNaN(x *Array, labels []int, policy string) (*Array, []int, []int, int, error) {
	// Without a NaN (or with a shape DenseSeries refuses) there is nothing
	// to do; with one, every sample holds at least one value, so the loop
	// over samples is bounded by the data's length.
	if len(x.Shape) < 2 || !slices.ContainsFunc(x.Data, func(v float32) bool { return math.IsNaN(float64(v)) }) {
		return x, labels, nil, 0, nil
	}
	n := x.Shape[0]
	per := len(x.Data) / n
	missing := 0
	var keep []int
	for i := range n {
		row := x.Data[i*per : (i+1)*per]
		had := missing
		for j, v := range row {
			if !math.IsNaN(float64(v)) {
				continue
			}
			if policy == NaNError {
				c := 1
				if len(x.Shape) == 3 {
					c = x.Shape[2]
				}
				return nil, nil, nil, 0, fmt.Errorf("sample %d step %d channel %d is NaN, refused under data.nan error %s", i, j/c, j%c, nanHint)
			}
			missing++
		}
		if missing == had || policy != NaNDrop {
			keep = append(keep, i)
		}
	}
	if len(keep) == n {
		return x, labels, nil, missing, nil
	}
	if len(keep) == 0 {
		return nil, nil, nil, 0, fmt.Errorf("every sample holds a NaN: data.nan drop leaves none")
	}
	out := &Array{Shape: append([]int{len(keep)}, x.Shape[1:]...), Data: make([]float32, 0, len(keep)*per)}
	var outLabels []int
	for _, i := range keep {
		out.Data = append(out.Data, x.Data[i*per:(i+1)*per]...)
		if labels != nil {
			outLabels = append(outLabels, labels[i])
		}
	}
	return out, outLabels, keep, missing, nil
}
