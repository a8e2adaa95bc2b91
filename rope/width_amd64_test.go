//go:build goexperiment.simd && amd64

package rope

import "testing"

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
	rows := headStrides{L * H * 60, H * 60, 60}
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
