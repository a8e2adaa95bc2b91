package rope

import (
	"testing"

	"romae/internal/gradcheck"
)

// RotateSplit and MergeRotateInverse are Rotate fused with the head
// split/merge; they must equal the unfused sequence exactly.
func TestFusedRotateSplitMerge(t *testing.T) {
	B, L, H, D := 3, 7, 2, 2
	l, err := NewLayout(12, D, 0.75, 10000)
	if err != nil {
		t.Fatal(err)
	}
	hd, d := l.HeadDim, H*l.HeadDim
	pos := gradcheck.Rand(B*L*D, 1)
	for i := range pos {
		pos[i] *= 50
	}
	var tab Table[float64]
	tab.Compute(l, pos, B*L)
	x := gradcheck.Rand(B*L*d, 2)
	split := func(src []float64) []float64 { // [B·L, H·hd] → [B,H,L,hd]
		dst := make([]float64, len(src))
		for r := 0; r < B*L; r++ {
			b, i := r/L, r%L
			for h := 0; h < H; h++ {
				copy(dst[((b*H+h)*L+i)*hd:][:hd], src[r*d+h*hd:][:hd])
			}
		}
		return dst
	}
	rot := append([]float64(nil), x...)
	tab.Rotate(rot, H, false)
	want := split(rot)
	got := make([]float64, len(x))
	tab.RotateSplit(got, x, d, B, L, H)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("RotateSplit[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	back := make([]float64, len(x))
	tab.MergeRotateInverse(back, got, d, B, L, H)
	for i := range back {
		if d := back[i] - x[i]; d > 1e-12 || d < -1e-12 {
			t.Fatalf("MergeRotateInverse(RotateSplit(x))[%d] = %v, want %v", i, back[i], x[i])
		}
	}
}

// BenchmarkRotateSplit: RoPE on a q projection at RoMAE-tiny's
// fine-tuning shape (32×201 tokens, 3 heads of 60, 2-D positions), fused
// with the head split; and the per-batch sin/cos table.
func BenchmarkRotateSplit(b *testing.B) {
	B, L, H := 32, 201, 3
	l, _ := NewLayout(60, 2, 0.75, 10000)
	pos := make([]float32, B*L*2)
	for i := range pos {
		pos[i] = float32(i%997) * 0.1
	}
	var tab Table[float32]
	tab.Compute(l, pos, B*L)
	src, dst := make([]float32, B*L*H*60), make([]float32, B*L*H*60)
	b.Run("rotate-split", func(b *testing.B) {
		for range b.N {
			tab.RotateSplit(dst, src, H*60, B, L, H)
		}
	})
	b.Run("table", func(b *testing.B) {
		for range b.N {
			tab.Compute(l, pos, B*L)
		}
	})
}
