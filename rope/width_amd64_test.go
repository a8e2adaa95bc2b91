//go:build goexperiment.simd && amd64

package rope

import (
	"math"
	"testing"
)

// TestFusedRotateSplitMerge32AVX2 runs the float32 rotation test again on
// the 8-lane kernel a CPU without AVX-512 takes (rotateCopy32x8), so an
// AVX-512 test machine checks that code too.
func TestFusedRotateSplitMerge32AVX2(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("this CPU lacks AVX2 and FMA")
	}
	defer func(v bool) { hasAVX512 = v }(hasAVX512)
	hasAVX512 = false
	TestFusedRotateSplitMerge32(t)
}

// TestRotateCopy32x8InPlace: the overlapping last chunk rotates each pair
// once even when dst is src.
func TestRotateCopy32x8InPlace(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("this CPU lacks AVX2 and FMA")
	}
	const L, H = 3, 2
	l, err := NewLayout(60, 2, 0.75, 10000) // halves of 15: an overlapping chunk
	if err != nil {
		t.Fatal(err)
	}
	pos := []float32{0, 1, 2.5, 7, 30, 99}
	var tab Table[float32]
	tab.Compute(l, pos, L)
	src := make([]float32, L*H*60)
	for i := range src {
		src[i] = float32(i%13) - 6
	}
	rows := headStrides{SB: L * H * 60, SL: H * 60, SH: 60}
	want, got := make([]float32, len(src)), append([]float32(nil), src...)
	if !rotateCopy32x8(want, src, tab.Cos, tab.Sin, l, L, H, rows, rows, 0, L, false) ||
		!rotateCopy32x8(got, got, tab.Cos, tab.Sin, l, L, H, rows, rows, 0, L, false) {
		t.Fatal("rotateCopy32x8 declined a layout with halves of 15")
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("in place [%d] = %v, into another buffer %v", i, got[i], want[i])
		}
	}
}

// TestRotateCopy32One: the kernel for axis halves of one vector
// (rotateCopy32One) gives what the general AVX-512 kernel gives, bit for
// bit, for 1–3 axes, rotated pairs ending inside the half or filling it,
// both directions, into another buffer and in place, over row ranges that
// start mid-sample, with every slice ending where its allocation ends.
func TestRotateCopy32One(t *testing.T) {
	if !hasAVX512 {
		t.Skip("this CPU lacks AVX-512")
	}
	defer func(v bool) { oneChunkKernel = v }(oneChunkKernel)
	const B, L, H = 2, 7, 3
	for _, g := range []struct {
		hd, D int
		p     float64
	}{{60, 2, 0.75}, {12, 1, 0.25}, {48, 3, 1}, {32, 1, 1}, {30, 3, 0.5}, {4, 2, 1}} {
		l, err := NewLayout(g.hd, g.D, g.p, 10000)
		if err != nil {
			t.Fatal(err)
		}
		if half := l.AxisDim / 2; half > 16 || l.R == 0 {
			t.Fatalf("hd %d D %d: half %d, %d rotated pairs: not a one-chunk layout", g.hd, g.D, half, l.R)
		}
		pos := make([]float32, B*L*g.D)
		for i := range pos {
			pos[i] = float32(i*7%23) * 1.7
		}
		var tab Table[float32]
		tab.Compute(l, pos, B*L)
		n := B * L * H * g.hd
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i%29)/7 - 2
		}
		heads := headStrides{SB: L * H * g.hd, SL: H * g.hd, SH: g.hd}
		for _, inverse := range []bool{false, true} {
			for _, rows := range [][2]int{{0, B * L}, {3, 11}, {B*L - 1, B * L}} {
				run := func(one, inPlace bool) []float32 {
					oneChunkKernel = one
					dst := make([]float32, n)
					from := src
					if inPlace {
						copy(dst, src)
						from = dst
					}
					if !rotateCopy32(dst, from, tab.Cos, tab.Sin, l, L, H, heads, heads, rows[0], rows[1], inverse) {
						t.Fatalf("hd %d D %d: rotateCopy32 declined", g.hd, g.D)
					}
					return dst
				}
				want := run(false, false)
				for _, inPlace := range []bool{false, true} {
					got := run(true, inPlace)
					for i, w := range want {
						if r := i / (H * g.hd); inPlace && (r < rows[0] || r >= rows[1]) {
							w = src[i] // a row outside the range keeps its value
						}
						if math.Float32bits(got[i]) != math.Float32bits(w) {
							t.Fatalf("hd %d D %d inverse %v rows %v in place %v: [%d] = %v, want %v (general kernel)", g.hd, g.D, inverse, rows, inPlace, i, got[i], w)
						}
					}
				}
			}
		}
	}
}
