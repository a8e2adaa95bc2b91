package data

import "fmt"

// Patchify cuts a regular (T, H, W) grid with `channels` values per cell
// (layout T,H,W,C, channel fastest) into non-overlapping patches, one token
// each, in the authors' order: tokens run over the patch grid outer-to-inner
// (t, h, w), and inside a patch the values run (p1, p2, p3, channel) with the
// channel fastest, so a token has patch[0]·patch[1]·patch[2]·channels values.
//
// dims (1..3) says how many of the trailing axes are positional: a token's
// position is its integer patch-grid index on the last dims axes of (T, H, W).
// Images use shape (1, H, W) and dims 2 → positions (h, w); video uses dims
// 3 → (t, h, w). The leading non-positional axes must be covered by a single
// patch, since otherwise distinct tokens would share a position. A 1-D series
// of frames with per-frame positions (the paper's pendulum, patch (1, H, W))
// needs dims 3, giving positions (t, 0, 0). Every patch size must divide its
// axis.
func Patchify(grid []float32, shape [3]int, channels int, patch [3]int, dims int) (values, positions []float32, err error) {
	grids, err := patchGrid(len(grid), shape, channels, patch)
	if err != nil {
		return nil, nil, err
	}
	if dims < 1 || dims > 3 {
		return nil, nil, fmt.Errorf("Patchify: dims %d outside 1..3", dims)
	}
	for a := 0; a < 3-dims; a++ {
		if grids[a] != 1 {
			return nil, nil, fmt.Errorf("Patchify: axis %d has %d patches but is not positional with dims %d; use a larger dims or patch[%d] = %d", a, grids[a], dims, a, shape[a])
		}
	}
	values = make([]float32, len(grid))
	positions = make([]float32, 0, grids[0]*grids[1]*grids[2]*dims)
	eachPatchRow(shape, channels, patch, func(v, g int, gidx [3]int) {
		copy(values[v:], grid[g:g+patch[2]*channels])
		if v%(patch[0]*patch[1]*patch[2]*channels) == 0 {
			for _, x := range gidx[3-dims:] {
				positions = append(positions, float32(x))
			}
		}
	})
	return values, positions, nil
}

// Unpatchify is the exact inverse of Patchify's values: it scatters tokens
// back into a (T, H, W, C) grid. Positions are implied by token order and
// not needed.
func Unpatchify(values []float32, shape [3]int, channels int, patch [3]int) ([]float32, error) {
	if _, err := patchGrid(len(values), shape, channels, patch); err != nil {
		return nil, err
	}
	grid := make([]float32, len(values))
	eachPatchRow(shape, channels, patch, func(v, g int, _ [3]int) {
		copy(grid[g:g+patch[2]*channels], values[v:])
	})
	return grid, nil
}

// patchGrid validates the geometry and returns the patch count per axis.
func patchGrid(n int, shape [3]int, channels int, patch [3]int) ([3]int, error) {
	var grids [3]int
	if channels < 1 {
		return grids, fmt.Errorf("patchify: channels = %d, want >= 1", channels)
	}
	for a := range 3 {
		if shape[a] < 1 || patch[a] < 1 {
			return grids, fmt.Errorf("patchify: shape %v and patch %v must be positive", shape, patch)
		}
		if shape[a]%patch[a] != 0 {
			return grids, fmt.Errorf("patchify: patch size %d does not divide axis %d of size %d", patch[a], a, shape[a])
		}
		grids[a] = shape[a] / patch[a]
	}
	if want := shape[0] * shape[1] * shape[2] * channels; n != want {
		return grids, fmt.Errorf("patchify: %d values, shape %v × %d channels needs %d", n, shape, channels, want)
	}
	return grids, nil
}

// eachPatchRow visits every contiguous run of patch[2]·channels values — one
// row of one patch — in token order, passing its offset v in the token
// stream, its offset g in the grid and the patch's grid index. Both
// directions of the transform are this one walk with the copy reversed.
func eachPatchRow(shape [3]int, channels int, patch [3]int, fn func(v, g int, gidx [3]int)) {
	h, w := shape[1], shape[2]
	row := patch[2] * channels
	v := 0
	for gt := 0; gt < shape[0]/patch[0]; gt++ {
		for gh := 0; gh < h/patch[1]; gh++ {
			for gw := 0; gw < w/patch[2]; gw++ {
				for a := 0; a < patch[0]; a++ {
					for b := 0; b < patch[1]; b++ {
						g := (((gt*patch[0]+a)*h+gh*patch[1]+b)*w + gw*patch[2]) * channels
						fn(v, g, [3]int{gt, gh, gw})
						v += row
					}
				}
			}
		}
	}
}
