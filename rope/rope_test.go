package rope

import (
	"math"
	"strings"
	"testing"

	"romae/internal/gradcheck"
)

// The property RoPE exists for: after rotation, q·k depends on positions
// only through their difference, on every axis, for real-valued positions.
func TestRelativePosition(t *testing.T) {
	for _, d := range []int{1, 2, 3} {
		l, err := NewLayout(24, d, 0.75, 10000) // 24 is divisible by 2·D for D ≤ 3
		if err != nil {
			t.Fatal(err)
		}
		q, k := gradcheck.Rand(l.HeadDim, 1), gradcheck.Rand(l.HeadDim, 2)
		score := func(pq, pk []float64) float64 {
			var tab Table[float64]
			tab.Compute(l, append(append([]float64{}, pq...), pk...), 2)
			x := append(append([]float64{}, q...), k...)
			tab.Rotate(x, 1, false)
			return gradcheck.Dot(x[:l.HeadDim], x[l.HeadDim:])
		}
		shift := []float64{3.7, -12.25, 0.5}[:d]
		pq, pk := []float64{1.3, 40.1, 7}[:d], []float64{5.5, 2.2, 9.75}[:d]
		pq2, pk2 := make([]float64, d), make([]float64, d)
		for a := range shift {
			pq2[a], pk2[a] = pq[a]+shift[a], pk[a]+shift[a]
		}
		if a, b := score(pq, pk), score(pq2, pk2); math.Abs(a-b) > 1e-9*math.Abs(a) {
			t.Errorf("D=%d: q·k = %v, shifted %v; RoPE must be relative", d, a, b)
		}
		if a, b := score(pq, pk), score(pk, pq); math.Abs(a-b) < 1e-6 {
			t.Errorf("D=%d: swapping positions left q·k unchanged (%v): rotation inactive", d, a)
		}
	}
}

func TestRotateInverseAndNorm(t *testing.T) {
	l, _ := NewLayout(30, 1, 0.75, 10000)
	n, heads := 5, 3
	var tab Table[float64]
	tab.Compute(l, gradcheck.Rand(n, 3), n)
	x := gradcheck.Rand(n*heads*30, 4)
	orig := append([]float64(nil), x...)
	tab.Rotate(x, heads, false)
	for i := 0; i < n*heads; i++ {
		a, b := orig[i*30:(i+1)*30], x[i*30:(i+1)*30]
		if math.Abs(gradcheck.Dot(a, a)-gradcheck.Dot(b, b)) > 1e-9 {
			t.Fatalf("rotation changed a head's norm")
		}
	}
	tab.Rotate(x, heads, true)
	for i := range x {
		if math.Abs(x[i]-orig[i]) > 1e-12 {
			t.Fatalf("inverse rotation: %v, want %v", x[i], orig[i])
		}
	}
}

// p-RoPE leaves the lowest frequencies alone: with p = 0.75 and a = 30,
// pairs 11..14 pass unchanged, matching the authors' timescale buffer
// [1, 1.848, ..., 464.16, inf, inf, inf, inf].
func TestPRoPELayout(t *testing.T) {
	l, err := NewLayout(60, 2, 0.75, 10000)
	if err != nil {
		t.Fatal(err)
	}
	ts := l.Timescales()
	if l.R != 11 || len(ts) != 15 || math.Abs(ts[1]-1.8478498) > 1e-6 || math.Abs(ts[10]-464.15888) > 1e-4 || !math.IsInf(ts[11], 1) {
		t.Errorf("R = %d, timescales %v", l.R, ts)
	}
	var tab Table[float64]
	tab.Compute(l, []float64{17.3, 4.1}, 1)
	x := gradcheck.Rand(60, 5)
	y := append([]float64(nil), x...)
	tab.Rotate(y, 1, false)
	for ax := 0; ax < 2; ax++ {
		for j := 11; j < 15; j++ {
			for _, i := range []int{ax*30 + j, ax*30 + j + 15} {
				if y[i] != x[i] {
					t.Errorf("unrotated pair element %d changed", i)
				}
			}
		}
	}
	// p = 0 is no rotation at all.
	l0, _ := NewLayout(60, 2, 0, 10000)
	tab.Compute(l0, []float64{17.3, 4.1}, 1)
	z := append([]float64(nil), x...)
	tab.Rotate(z, 1, false)
	for i := range z {
		if z[i] != x[i] {
			t.Fatal("p = 0 rotated")
		}
	}
}

func TestLayoutRefusals(t *testing.T) {
	for _, c := range []struct {
		hd, d int
		p     float64
		want  string
	}{{30, 2, 0.75, "divisible"}, {60, 4, 0.75, "axes"}, {60, 1, 1.5, "p ="}, {60, 1, math.NaN(), "p ="}} {
		if _, err := NewLayout(c.hd, c.d, c.p, 10000); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewLayout(%d, %d, %v): %v, want error with %q", c.hd, c.d, c.p, err, c.want)
		}
	}
}

func TestIntCacheMatchesCompute(t *testing.T) {
	l, _ := NewLayout(24, 2, 0.75, 10000)
	pos := []float64{0, 3, 17, 2, 900, 5}
	var a, b Table[float64]
	a.Compute(l, pos, 3)
	var c IntCache[float64]
	if err := c.Fill(&b, l, pos, 3); err != nil {
		t.Fatal(err)
	}
	for i := range a.Cos {
		if math.Abs(a.Cos[i]-b.Cos[i]) > 1e-12 || math.Abs(a.Sin[i]-b.Sin[i]) > 1e-12 {
			t.Fatalf("cached table differs at %d", i)
		}
	}
	if err := c.Fill(&b, l, []float64{1.5, 2}, 1); err == nil || !strings.Contains(err.Error(), "integer") {
		t.Errorf("non-integer position: %v", err)
	}
}

func TestAbsolute(t *testing.T) {
	x := make([]float64, 2*8)
	AddAbsolute(x, []float64{0, 0, 3, 1}, 2, 8, 2)
	// Position 0: sin 0 = 0, cos 0 = 1 in every pair.
	for j := 0; j < 8; j++ {
		want := float64(j % 2)
		if x[j] != want {
			t.Errorf("pe(0)[%d] = %v, want %v", j, x[j], want)
		}
	}
	if math.Abs(x[8]-math.Sin(3)) > 1e-12 || math.Abs(x[12]-math.Sin(1)) > 1e-12 {
		t.Errorf("pe(3,1) = %v", x[8:])
	}
	if err := CheckAbsolute(180, 3); err != nil {
		t.Error(err)
	}
	if err := CheckAbsolute(10, 3); err == nil {
		t.Error("d_model 10 over 3 axes accepted")
	}
}
