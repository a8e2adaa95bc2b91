package data

import (
	"slices"
	"testing"
)

func TestPatchifyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shape    [3]int
		channels int
		patch    [3]int
		dims     int
		tokens   int
	}{
		{"image", [3]int{1, 6, 4}, 3, [3]int{1, 2, 2}, 2, 6},
		{"video", [3]int{4, 6, 4}, 2, [3]int{2, 3, 2}, 3, 8},
		{"series", [3]int{1, 1, 12}, 2, [3]int{1, 1, 3}, 1, 4},
		{"whole frames", [3]int{5, 3, 3}, 1, [3]int{1, 3, 3}, 3, 5},
		{"one patch", [3]int{2, 2, 2}, 1, [3]int{2, 2, 2}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.shape[0] * tc.shape[1] * tc.shape[2] * tc.channels
			grid := make([]float32, n)
			for i := range grid {
				grid[i] = float32(i)
			}
			vals, pos, err := Patchify(grid, tc.shape, tc.channels, tc.patch, tc.dims)
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) != n || len(pos) != tc.tokens*tc.dims {
				t.Fatalf("%d values %d positions, want %d and %d", len(vals), len(pos), n, tc.tokens*tc.dims)
			}
			back, err := Unpatchify(vals, tc.shape, tc.channels, tc.patch)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, grid) {
				t.Errorf("round trip differs:\n got %v\nwant %v", back, grid)
			}
		})
	}
}

// TestPatchifyLayout pins the authors' order on a (T=2, H=2, W=4, C=2)
// grid cut into (1, 2, 2) patches.
func TestPatchifyLayout(t *testing.T) {
	shape := [3]int{2, 2, 4}
	grid := make([]float32, 2*2*4*2)
	for i := range grid {
		grid[i] = float32(i) // i = ((t*2+h)*4+w)*2+c
	}
	vals, pos, err := Patchify(grid, shape, 2, [3]int{1, 2, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Token 1 = (t 0, h 0, w 1): rows h 0..1, columns w 2..3, channel fastest.
	cell := func(t, h, w, c int) float32 { return float32(((t*2+h)*4+w)*2 + c) }
	want := []float32{cell(0, 0, 2, 0), cell(0, 0, 2, 1), cell(0, 0, 3, 0), cell(0, 0, 3, 1),
		cell(0, 1, 2, 0), cell(0, 1, 2, 1), cell(0, 1, 3, 0), cell(0, 1, 3, 1)}
	if !slices.Equal(vals[8:16], want) {
		t.Errorf("token 1 = %v, want %v", vals[8:16], want)
	}
	if wantPos := []float32{0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1}; !slices.Equal(pos, wantPos) {
		t.Errorf("positions %v, want %v", pos, wantPos)
	}
}

func TestPatchifyErrors(t *testing.T) {
	grid := make([]float32, 24)
	for _, tc := range []struct {
		name     string
		grid     []float32
		shape    [3]int
		channels int
		patch    [3]int
		dims     int
		want     string
	}{
		{"indivisible", grid, [3]int{1, 4, 6}, 1, [3]int{1, 3, 3}, 2, "patch size 3 does not divide axis 1 of size 4"},
		{"length", grid[:23], [3]int{1, 4, 6}, 1, [3]int{1, 2, 2}, 2, "23 values"},
		{"zero patch", grid, [3]int{1, 4, 6}, 1, [3]int{1, 0, 2}, 2, "must be positive"},
		{"channels", grid, [3]int{1, 4, 6}, 0, [3]int{1, 2, 2}, 2, "channels = 0"},
		{"dims", grid, [3]int{1, 4, 6}, 1, [3]int{1, 2, 2}, 4, "dims 4"},
		{"hidden axis", grid, [3]int{2, 2, 6}, 1, [3]int{1, 2, 2}, 2, "axis 0 has 2 patches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Patchify(tc.grid, tc.shape, tc.channels, tc.patch, tc.dims)
			wantErr(t, err, tc.want)
		})
	}
	_, err := Unpatchify(grid, [3]int{1, 4, 6}, 1, [3]int{1, 4, 4})
	wantErr(t, err, "does not divide axis 2")
}
