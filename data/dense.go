package data

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Ints converts an integer-valued array (e.g. labels saved as int64) to
// []int, refusing fractional or non-finite entries so a float feature array
// passed by mistake is caught.
func (a *Array) Ints() ([]int, error) {
	out := make([]int, len(a.Data))
	for i, v := range a.Data {
		if v != float32(math.Trunc(float64(v))) || !isFinite(v) {
			return nil, fmt.Errorf("array element %d = %v is not an integer", i, v)
		}
		out[i] = int(v)
	}
	return out, nil
}

// DenseSeries turns a regularly sampled [N, T, C] array (or [N, T], C = 1)
// into a dataset with one token per step: C values, D = 1, position = step
// index. NaN marks a missing value and, as LoadTS's drop-step policy does,
// removes that whole step while later steps keep their index; a series left
// empty, or any ±Inf, is an error naming the sample, step and channel.
// labels is nil or has N entries, each -1 (unlabelled) or a class index;
// Classes become "0".."max label".
func DenseSeries(arr *Array, labels []int) (*Dataset, error) {
	var n, t, c int
	switch len(arr.Shape) {
	case 2:
		n, t, c = arr.Shape[0], arr.Shape[1], 1
	case 3:
		n, t, c = arr.Shape[0], arr.Shape[1], arr.Shape[2]
	default:
		return nil, fmt.Errorf("DenseSeries: shape %v, want [N, T, C] or [N, T]", arr.Shape)
	}
	switch {
	case c > MaxChannels:
		return nil, fmt.Errorf("DenseSeries: shape %v: %w", arr.Shape, limitErr("channels", c, "MaxChannels", MaxChannels))
	case t > MaxTokens:
		return nil, fmt.Errorf("DenseSeries: shape %v: %w", arr.Shape, limitErr("steps", t, "MaxTokens", MaxTokens))
	}
	ds, err := denseDataset("series", arr, n, labels)
	if err != nil {
		return nil, fmt.Errorf("DenseSeries: %w", err)
	}
	ds.C, ds.D = c, 1
	for i := range n {
		s := &ds.Samples[i]
		for step := range t {
			row := arr.Data[(i*t+step)*c : (i*t+step+1)*c]
			for ch, v := range row {
				if math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("DenseSeries: sample %d step %d channel %d is %v", i, step, ch, v)
				}
			}
			if slices.ContainsFunc(row, func(v float32) bool { return math.IsNaN(float64(v)) }) {
				continue
			}
			s.Values = append(s.Values, row...)
			s.Positions = append(s.Positions, float32(step))
		}
		if len(s.Positions) == 0 {
			return nil, fmt.Errorf("DenseSeries: sample %d: every step has a NaN", i)
		}
	}
	return ds, nil
}

// DenseImages turns an [N, H, W] or [N, H, W, C] array into a dataset of
// patch tokens (Patchify with dims 2): C = patch[0]·patch[1]·channels values
// per token, D = 2, positions (row, column) of the patch. Images have no
// notion of a missing pixel here, so NaN and ±Inf are errors. labels works as
// in DenseSeries.
func DenseImages(arr *Array, labels []int, patch [2]int) (*Dataset, error) {
	var n, h, w, c int
	switch len(arr.Shape) {
	case 3:
		n, h, w, c = arr.Shape[0], arr.Shape[1], arr.Shape[2], 1
	case 4:
		n, h, w, c = arr.Shape[0], arr.Shape[1], arr.Shape[2], arr.Shape[3]
	default:
		return nil, fmt.Errorf("DenseImages: shape %v, want [N, H, W] or [N, H, W, C]", arr.Shape)
	}
	if c > MaxChannels {
		return nil, fmt.Errorf("DenseImages: shape %v: %w", arr.Shape, limitErr("channels", c, "MaxChannels", MaxChannels))
	}
	ds, err := denseDataset("images", arr, n, labels)
	if err != nil {
		return nil, fmt.Errorf("DenseImages: %w", err)
	}
	ds.C, ds.D = patch[0]*patch[1]*c, 2
	size := h * w * c
	for i := range n {
		img := arr.Data[i*size : (i+1)*size]
		for j, v := range img {
			if !isFinite(v) {
				return nil, fmt.Errorf("DenseImages: image %d pixel (%d, %d) channel %d is %v", i, j/c/w, j/c%w, j%c, v)
			}
		}
		s := &ds.Samples[i]
		s.Values, s.Positions, err = Patchify(img, [3]int{1, h, w}, c, [3]int{1, patch[0], patch[1]}, 2)
		if err != nil {
			return nil, fmt.Errorf("DenseImages: %w", err)
		}
	}
	return ds, nil
}

// prod is the product of shape, or -1 if a dimension is negative or the
// product overflows.
func prod(shape []int) int {
	n := 1
	for _, s := range shape {
		if s < 0 || (s > 0 && n > math.MaxInt/s) {
			return -1
		}
		n *= s
	}
	return n
}

// denseDataset makes n empty samples with IDs "0".."n-1" and their labels.
// It refuses an array without values before allocating anything: a shape
// such as (10¹², 0) has no values but would otherwise ask for 10¹² samples.
// After the checks every dimension is ≥ 1, so n ≤ len(arr.Data).
func denseDataset(name string, arr *Array, n int, labels []int) (*Dataset, error) {
	if want := prod(arr.Shape); want < 0 || len(arr.Data) != want {
		return nil, fmt.Errorf("shape %v needs %d values, array has %d", arr.Shape, want, len(arr.Data))
	}
	if len(arr.Data) == 0 {
		return nil, fmt.Errorf("shape %v has no values", arr.Shape)
	}
	if labels != nil && len(labels) != n {
		return nil, fmt.Errorf("%d labels for %d samples", len(labels), n)
	}
	for i, l := range labels {
		if l >= MaxClasses {
			return nil, fmt.Errorf("sample %d: label %d would make %d classes, more than the limit of %d (data.MaxClasses)", i, l, l+1, MaxClasses)
		}
	}
	ds := &Dataset{Name: name, Samples: make([]Sample, n)}
	top := -1
	for i := range ds.Samples {
		ds.Samples[i] = Sample{ID: strconv.Itoa(i), Label: -1}
		if labels != nil {
			if labels[i] < -1 {
				return nil, fmt.Errorf("sample %d: label %d, want -1 or a class index", i, labels[i])
			}
			ds.Samples[i].Label = labels[i]
			top = max(top, labels[i])
		}
	}
	for k := 0; k <= top; k++ {
		ds.Classes = append(ds.Classes, strconv.Itoa(k))
	}
	return ds, nil
}
