package rope

import (
	"math"
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

// The float32 path (an AVX-512 kernel where available) must agree with
// the float64 one, for 1–3 axes, axis halves of one to four vector
// chunks (rotated pairs ending inside one) and the generic path beyond.
func TestFusedRotateSplitMerge32(t *testing.T) {
	B, L, H := 2, 5, 3
	for _, g := range []struct {
		hd, D int
		p     float64
	}{{60, 2, 0.75}, {64, 1, 0.5}, {48, 3, 1}, {12, 1, 0.25}, {64, 1, 1}, {96, 1, 0.75}, // halves of 1–3 vector chunks, rotated pairs ending inside one
		{160, 1, 1}} { // a half of 80: the generic path
		l, err := NewLayout(g.hd, g.D, g.p, 10000)
		if err != nil {
			t.Fatal(err)
		}
		d, ld := H*g.hd, 3*H*g.hd
		pos := gradcheck.Rand(B*L*g.D, 1)
		for i := range pos {
			pos[i] = float64(float32(pos[i] * 50))
		}
		x := gradcheck.Rand(B*L*ld, 2)
		for i := range x {
			x[i] = float64(float32(x[i]))
		}
		var t64 Table[float64]
		var t32 Table[float32]
		t64.Compute(l, pos, B*L)
		t32.Compute(l, to32(pos), B*L)
		want, got := make([]float64, B*L*d), make([]float32, B*L*d)
		t64.RotateSplit(want, x[d:], ld, B, L, H)
		t32.RotateSplit(got, to32(x)[d:], ld, B, L, H)
		for i := range want {
			if diff := float64(got[i]) - want[i]; diff > 1e-6 || diff < -1e-6 {
				t.Fatalf("hd %d D %d: RotateSplit float32[%d] = %v, float64 %v", g.hd, g.D, i, got[i], want[i])
			}
		}
		// RotateSplitRows of rows 3…7 (across the samples' boundary), src
		// holding those rows alone: the same bits as RotateSplit's.
		rows := make([]float32, B*L*d)
		for i := range rows {
			rows[i] = -1
		}
		t32.RotateSplitRows(rows, to32(x)[3*ld+d:], ld, L, H, 3, 8)
		for b := range B {
			for h := range H {
				for l := range L {
					for j := range g.hd {
						i := ((b*H+h)*L+l)*g.hd + j
						if r := b*L + l; r >= 3 && r < 8 && math.Float32bits(rows[i]) != math.Float32bits(got[i]) || (r < 3 || r >= 8) && rows[i] != -1 {
							t.Fatalf("hd %d D %d: RotateSplitRows(3, 8) token %d head %d [%d] = %v, RotateSplit %v", g.hd, g.D, r, h, j, rows[i], got[i])
						}
					}
				}
			}
		}
		back := make([]float32, B*L*ld)
		t32.MergeRotateInverse(back[d:], got, ld, B, L, H)
		for r := range B * L {
			for c := range ld {
				w := float32(0)
				if c >= d && c < 2*d {
					w = float32(x[r*ld+c])
				}
				if diff := back[r*ld+c] - w; diff > 1e-5 || diff < -1e-5 {
					t.Fatalf("hd %d D %d: MergeRotateInverse(RotateSplit(x)) row %d col %d = %v, want %v", g.hd, g.D, r, c, back[r*ld+c], w)
				}
			}
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
