package audio

import (
	"math"
	"testing"
)

func TestPatches(t *testing.T) {
	tests := []struct {
		name                         string
		frames, bins, patchT, patchF int
		wantNT, wantNF               int
	}{
		{"exact", 32, 128, 16, 16, 2, 8},
		{"ragged time", 98, 128, 16, 16, 7, 8}, // 1 s at 16 kHz → padded to 112 frames
		{"ragged both", 20, 23, 16, 16, 2, 2},
		{"short clip", 3, 128, 16, 16, 1, 8},
		{"non-square", 10, 12, 4, 6, 3, 2},
		{"1x1", 2, 3, 1, 1, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feats := make([]float32, tt.frames*tt.bins)
			for i := range feats {
				feats[i] = float32(i) + 1 // min is 1 at (0, 0)
			}
			values, positions, n := Patches(feats, tt.frames, tt.bins, tt.patchT, tt.patchF)
			C := tt.patchT * tt.patchF
			if n != tt.wantNT*tt.wantNF || len(values) != n*C || len(positions) != 2*n {
				t.Fatalf("n %d, %d values, %d positions; want n %d", n, len(values), len(positions), tt.wantNT*tt.wantNF)
			}
			for k := range n {
				i, j := k/tt.wantNF, k%tt.wantNF
				if positions[2*k] != float32(i) || positions[2*k+1] != float32(j) {
					t.Fatalf("token %d at %v, want (%d, %d)", k, positions[2*k:2*k+2], i, j)
				}
				for a := range tt.patchT {
					for b := range tt.patchF {
						f, m := i*tt.patchT+a, j*tt.patchF+b
						want := float32(1) // pad = min(feats)
						if f < tt.frames && m < tt.bins {
							want = feats[f*tt.bins+m]
						}
						if got := values[k*C+a*tt.patchF+b]; got != want {
							t.Fatalf("token %d cell (%d, %d) = %v, want %v", k, a, b, got, want)
						}
					}
				}
			}
		})
	}
}

func TestPatchesPadValue(t *testing.T) {
	feats := []float32{5, 6, 7, 8, 9, 10} // 3 frames × 2 bins
	values, positions, n := PatchesPad(feats, 3, 2, 2, 2, -99)
	want := []float32{5, 6, 7, 8, 9, 10, -99, -99}
	if n != 2 || len(positions) != 4 || positions[2] != 1 || positions[3] != 0 {
		t.Fatalf("n %d positions %v", n, positions)
	}
	for i := range want {
		if values[i] != want[i] {
			t.Fatalf("values %v, want %v", values, want)
		}
	}
	if _, _, n := Patches(nil, 0, 128, 16, 16); n != 0 {
		t.Errorf("zero frames gave %d tokens", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("Patches accepted mismatched geometry")
		}
	}()
	Patches(make([]float32, 10), 3, 3, 16, 16)
}

func TestNormalizeMeanStd(t *testing.T) {
	a := []float32{1, 2, 3}
	b := []float32{4, 5}
	mean, std := MeanStd(a, b)
	if mean != 3 || math.Abs(float64(std)-math.Sqrt2) > 1e-6 {
		t.Fatalf("MeanStd = %v, %v; want 3, √2", mean, std)
	}
	Normalize(a, mean, std)
	Normalize(b, mean, std)
	m2, s2 := MeanStd(a, b)
	if math.Abs(float64(m2)) > 1e-6 || math.Abs(float64(s2)-1) > 1e-6 {
		t.Errorf("after Normalize: mean %v std %v", m2, s2)
	}
	if m, s := MeanStd(); m != 0 || s != 1 {
		t.Errorf("MeanStd() = %v, %v", m, s)
	}
	if m, s := MeanStd([]float32{2, 2}); m != 2 || s != 1 {
		t.Errorf("constant MeanStd = %v, %v; want 2, 1", m, s)
	}
	defer func() {
		if recover() == nil {
			t.Error("Normalize accepted std 0")
		}
	}()
	Normalize(a, 0, 0)
}
