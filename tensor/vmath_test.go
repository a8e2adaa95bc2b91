package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// relErr of a float32 result against the float64 truth.
func relErr(got float32, want float64) float64 {
	if want == 0 {
		return math.Abs(float64(got))
	}
	return math.Abs(float64(got)-want) / math.Abs(want)
}

// Exp32 and its vector form: max relative error < 1e-6 over the range
// where e^x is a normal float32, checked densely and at the edges.
func TestExp32Accuracy(t *testing.T) {
	var xs []float32
	for x := -87.0; x <= 88.7; x += 0.000731 {
		xs = append(xs, float32(x))
	}
	xs = append(xs, 0, -0, 1e-8, -1e-8, 0.5, -0.5, 88.72, -87.33)
	vec := make([]float32, len(xs))
	Exp32Slice(vec, xs)
	var worstS, worstV float64
	var atS, atV float32
	for i, x := range xs {
		want := math.Exp(float64(x))
		if e := relErr(Exp32(x), want); e > worstS {
			worstS, atS = e, x
		}
		if e := relErr(vec[i], want); e > worstV {
			worstV, atV = e, x
		}
	}
	t.Logf("max rel err: scalar %.3g at %v, vector %.3g at %v (%d points)", worstS, atS, worstV, atV, len(xs))
	if worstS >= 1e-6 || worstV >= 1e-6 {
		t.Errorf("max rel err scalar %.3g at %v, vector %.3g at %v; want < 1e-6", worstS, atS, worstV, atV)
	}
}

func TestExp32Edges(t *testing.T) {
	in := []float32{float32(math.Inf(1)), 100, float32(math.Inf(-1)), -200, -100, -90}
	out := make([]float32, 16+len(in))
	src := make([]float32, 16+len(in))
	copy(src[16:], in) // tail goes through the scalar code
	copy(src, in)      // head through the vector code
	Exp32Slice(out, src)
	for i, x := range in {
		for _, got := range []float32{Exp32(x), out[i], out[16+i]} {
			want := math.Exp(float64(x))
			switch {
			case math.IsInf(want, 1):
				if !math.IsInf(float64(got), 1) {
					t.Errorf("exp(%v) = %v, want +Inf", x, got)
				}
			case want < 1e-38:
				if got < 0 || got > 1e-38 {
					t.Errorf("exp(%v) = %v, want ≈0", x, got)
				}
			}
		}
	}
	if v := Exp32(float32(math.NaN())); v == v {
		t.Errorf("exp(NaN) = %v", v)
	}
}

func TestSiLU32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 1000
	in, dOut := make([]float32, n), make([]float32, n)
	for i := range in {
		in[i], dOut[i] = float32(rng.NormFloat64()*6), float32(rng.NormFloat64())
	}
	in[3], in[4] = -95, 95
	out, dIn := make([]float32, n), make([]float32, n)
	SiLU32(out, in)
	SiLUGrad32(dIn, dOut, in)
	for i, x := range in {
		s := 1 / (1 + math.Exp(-float64(x)))
		want := float64(x) * s
		if math.Abs(float64(out[i])-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("silu(%v) = %v, want %v", x, out[i], want)
		}
		g := float64(dOut[i]) * s * (1 + float64(x)*(1-s))
		if math.Abs(float64(dIn[i])-g) > 2e-6*math.Max(1, math.Abs(g)) {
			t.Fatalf("silu'(%v)·%v = %v, want %v", x, dOut[i], dIn[i], g)
		}
	}
}

func TestSoftmaxRow32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, L := range []int{1, 5, 16, 17, 33, 51, 201} {
		s := make([]float32, L)
		bias, keep := make([]float32, L), make([]float32, L)
		for j := range s {
			s[j] = float32(rng.NormFloat64() * 5)
			if L == 17 {
				s[j] = -20 - float32(j) // all negative: a zero-filled tail lane must not win the max
			}
			keep[j] = 1
			if j%3 == 2 {
				bias[j], keep[j] = float32(math.Inf(-1)), 0
			}
		}
		for _, masked := range []bool{false, true} {
			got := append(append(make([]float32, 0, L+16), s...), 7) // sentinel past the row
			got = got[:L]
			var b, k []float32
			if masked {
				b, k = bias, keep
			}
			SoftmaxRow32(got, 0.5, b, k)
			if got[:L+1][L] != 7 {
				t.Fatalf("L=%d: SoftmaxRow32 wrote past the row", L)
			}
			mx := math.Inf(-1)
			for j, v := range s {
				if !masked || keep[j] == 1 {
					mx = math.Max(mx, 0.5*float64(v))
				}
			}
			var sum float64
			want := make([]float64, L)
			for j, v := range s {
				if !masked || keep[j] == 1 {
					want[j] = math.Exp(0.5*float64(v) - mx)
					sum += want[j]
				}
			}
			for j := range want {
				want[j] /= sum
				if masked && keep[j] == 0 && got[j] != 0 {
					t.Fatalf("L=%d: masked column %d = %v, want exactly 0", L, j, got[j])
				}
				if math.Abs(float64(got[j])-want[j]) > 1e-6 {
					t.Fatalf("L=%d masked=%v: p[%d] = %v, want %v", L, masked, j, got[j], want[j])
				}
			}
		}
	}
	// Scores whose exponent would overflow float32 unless capped: a masked
	// key scoring far above the unmasked maximum (a padded token in
	// training, GunPoint seed 3's NaN at step 996), and rows far below
	// zero, whose zero-filled tail lanes sit 100 above the maximum.
	inf := float32(math.Inf(-1))
	for _, c := range []struct {
		name    string
		s, bias []float32
		want    []float64
	}{
		{"masked key 800 above the rest", []float32{-600, 200, -601}, []float32{0, inf, 0}, []float64{1 / (1 + math.Exp(-1)), 0, math.Exp(-1) / (1 + math.Exp(-1))}},
		{"all scores near -100, tail lanes", []float32{-100, -101, -100}, nil, []float64{1 / (2 + math.Exp(-1)), math.Exp(-1) / (2 + math.Exp(-1)), 1 / (2 + math.Exp(-1))}},
	} {
		for _, L := range []int{3, 16 + 3} { // the tail alone, and a full vector then a tail
			s, bias, keep := make([]float32, L), make([]float32, L), make([]float32, L)
			for j := range s {
				s[j], bias[j] = c.s[j%3], 0
				if c.bias != nil {
					bias[j] = c.bias[j%3]
				}
				keep[j] = 1
				if bias[j] != 0 {
					keep[j] = 0
				}
			}
			var b, k []float32
			if c.bias != nil {
				b, k = bias, keep
			}
			SoftmaxRow32(s, 1, b, k)
			var sum float64
			for j := range L {
				sum += c.want[j%3]
			}
			for j, v := range s {
				if want := c.want[j%3] / sum; math.Abs(float64(v)-want) > 1e-6 || (want == 0 && v != 0) {
					t.Fatalf("%s, L=%d: p[%d] = %v, want %v", c.name, L, j, v, want)
				}
			}
		}
	}

	// Every column masked: zeros, not NaN.
	s := []float32{1, 2, 3}
	SoftmaxRow32(s, 1, []float32{inf, inf, inf}, []float32{0, 0, 0})
	if s[0] != 0 || s[1] != 0 || s[2] != 0 {
		t.Errorf("all-masked row = %v, want zeros", s)
	}
}

// Dot32 and SoftmaxGrad32 at every tail length (masked last group):
// against float64, and nothing written past the row.
func TestDotAndSoftmaxGrad32Tails(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for L := 1; L <= 40; L++ {
		p, ds, mask := make([]float32, L), make([]float32, L+1), make([]float32, L)
		for j := range p {
			p[j], ds[j], mask[j] = rng.Float32(), float32(rng.NormFloat64()), float32(j%2)*2
		}
		ds[L] = 7
		var dot float64
		for j := range p {
			dot += float64(p[j]) * float64(ds[j])
		}
		if got := Dot32(p, ds[:L]); math.Abs(float64(got)-dot) > 1e-5*(1+math.Abs(dot)) {
			t.Fatalf("L=%d: Dot32 = %v, want %v", L, got, dot)
		}
		want := make([]float64, L)
		var dm float64
		for j := range p {
			dm += float64(p[j]) * float64(ds[j]) * float64(mask[j])
		}
		for j := range p {
			want[j] = float64(p[j]) * (float64(ds[j])*float64(mask[j]) - dm) * 0.25
		}
		SoftmaxGrad32(ds[:L], p, mask, 0.25)
		for j := range want {
			if math.Abs(float64(ds[j])-want[j]) > 1e-5 {
				t.Fatalf("L=%d: SoftmaxGrad32[%d] = %v, want %v", L, j, ds[j], want[j])
			}
		}
		if ds[L] != 7 {
			t.Fatalf("L=%d: SoftmaxGrad32 wrote past the row", L)
		}
	}
}

func TestParallelForCoversOnce(t *testing.T) {
	for _, n := range []int{1, 7, 64, 1000, 12345} {
		hits := make([]int32, n)
		ParallelFor(n, 3, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hits[i]++
			}
			// Nested calls must not deadlock on a busy pool.
			ParallelFor(8, 1, func(lo, hi int) {})
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, h)
			}
		}
	}
}

func BenchmarkExp32Slice(b *testing.B) {
	in, out := make([]float32, 1<<16), make([]float32, 1<<16)
	for i := range in {
		in[i] = float32(i%200) - 150
	}
	b.SetBytes(4 << 16)
	for range b.N {
		Exp32Slice(out, in)
	}
}

func TestRotatePairs32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 11, 15, 16, 17, 33} {
		for _, inverse := range []bool{false, true} {
			x1, x2, c, s := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range n {
				x1[i], x2[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
				th := rng.Float64() * 6
				c[i], s[i] = float32(math.Cos(th)), float32(math.Sin(th))
			}
			// Guard cells after each slice must survive the masked stores.
			buf1, buf2 := append(append([]float32(nil), x1...), 7), append(append([]float32(nil), x2...), 9)
			// Out of place into y (x untouched), then in place.
			y1, y2 := append(make([]float32, n), 5), append(make([]float32, n), 6)
			RotatePairs32(y1[:n], y2[:n], x1, x2, c, s, inverse)
			RotatePairs32(buf1[:n], buf2[:n], buf1[:n], buf2[:n], c, s, inverse)
			for i := range n {
				if y1[i] != buf1[i] || y2[i] != buf2[i] {
					t.Fatalf("n %d pair %d: out of place (%v, %v) != in place (%v, %v)", n, i, y1[i], y2[i], buf1[i], buf2[i])
				}
			}
			if y1[n] != 5 || y2[n] != 6 {
				t.Fatalf("n %d: out-of-place rotation wrote past y", n)
			}
			sg := 1.0
			if inverse {
				sg = -1
			}
			for i := range n {
				a, b, ci, si := float64(x1[i]), float64(x2[i]), float64(c[i]), sg*float64(s[i])
				w1, w2 := a*ci-b*si, b*ci+a*si
				if math.Abs(float64(buf1[i])-w1) > 1e-6 || math.Abs(float64(buf2[i])-w2) > 1e-6 {
					t.Fatalf("n %d inverse %v pair %d: got (%v, %v), want (%v, %v)", n, inverse, i, buf1[i], buf2[i], w1, w2)
				}
			}
			if buf1[n] != 7 || buf2[n] != 9 {
				t.Fatalf("n %d: wrote past the slice", n)
			}
		}
	}
}

// The row primitives of the normalisation and softmax passes at every
// length up to 40 (vector body and scalar tail): against float64, and
// nothing written past the row.
func TestRowPrimitives32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func(n int) []float32 {
		v := make([]float32, n+1) // one sentinel past the row
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	near := func(got float32, want float64, scale float64) bool {
		return math.Abs(float64(got)-want) <= 1e-5*math.Max(1, scale)
	}
	for L := 0; L <= 40; L++ {
		a, b, c, g := vec(L), vec(L), vec(L), vec(L)
		var ss, d3, d2, abs3, abs2 float64
		for i := range L {
			ss += float64(a[i]) * float64(a[i])
			d3 += float64(a[i]) * float64(b[i]) * float64(c[i])
			abs3 += math.Abs(float64(a[i]) * float64(b[i]) * float64(c[i]))
			d2 += float64(a[i]) * float64(b[i])
			abs2 += math.Abs(float64(a[i]) * float64(b[i]))
		}
		if got := SumSq32(a[:L]); !near(got, ss, ss) {
			t.Fatalf("L=%d: SumSq32 = %v, want %v", L, got, ss)
		}
		if got := Dot3_32(a[:L], b, c); !near(got, d3, abs3) {
			t.Fatalf("L=%d: Dot3_32 = %v, want %v", L, got, d3)
		}
		if got := Dot32(a[:L], b); !near(got, d2, abs2) {
			t.Fatalf("L=%d: Dot32 = %v, want %v", L, got, d2)
		}
		const s, k = 0.75, 0.3
		for _, op := range []struct {
			name string
			run  func(dst []float32)
			want func(i int, old float32) float64
		}{
			{"ScaleMul32", func(y []float32) { ScaleMul32(y, a, g, s) },
				func(i int, _ float32) float64 { return s * float64(a[i]) * float64(g[i]) }},
			{"RMSNormGrad32", func(dx []float32) { RMSNormGrad32(dx, a, g, b, s, k, false) },
				func(i int, _ float32) float64 { return s * (float64(a[i])*float64(g[i]) - k*float64(b[i])) }},
			{"RMSNormGrad32 accum", func(dx []float32) { RMSNormGrad32(dx, a, g, b, s, k, true) },
				func(i int, old float32) float64 {
					return float64(old) + s*(float64(a[i])*float64(g[i])-k*float64(b[i]))
				}},
			{"MulAcc32", func(acc []float32) { MulAcc32(acc, a, b, s) },
				func(i int, old float32) float64 { return float64(old) + s*float64(a[i])*float64(b[i]) }},
			{"AddScaled32", func(out []float32) { AddScaled32(out, a, b, s) },
				func(i int, _ float32) float64 { return float64(a[i]) + s*float64(b[i]) }},
			{"Scale32", func(x []float32) { Scale32(x, s) },
				func(i int, old float32) float64 { return s * float64(old) }},
		} {
			dst := vec(L)
			old := append([]float32(nil), dst...)
			op.run(dst[:L])
			for i := range L {
				if want := op.want(i, old[i]); !near(dst[i], want, math.Abs(want)) {
					t.Fatalf("L=%d: %s[%d] = %v, want %v", L, op.name, i, dst[i], want)
				}
			}
			if dst[L] != old[L] {
				t.Fatalf("L=%d: %s wrote past the row", L, op.name)
			}
		}
	}
}

// TestMovingAverage32: every element d·avg + (1−d)·x rounded as the
// scalar expression rounds it, in the vector body, the tail and across
// the cores ParallelFor splits the longest cases over; nothing past the
// slice written.
func TestMovingAverage32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 100, 1 << 15, 3<<15 + 5} {
		for _, d := range []float32{0.99, 0.5, 0.1} {
			avg, x := make([]float32, n+1), make([]float32, n)
			for i := range avg {
				avg[i] = float32(rng.NormFloat64())
			}
			for i := range x {
				x[i] = float32(rng.NormFloat64()) * 3
			}
			want := append([]float32(nil), avg...)
			for i := range x {
				want[i] = d*want[i] + (1-d)*x[i]
			}
			MovingAverage32(avg[:n], x, d)
			for i := range avg {
				if avg[i] != want[i] {
					t.Fatalf("n=%d d=%v: element %d = %v, want %v", n, d, i, avg[i], want[i])
				}
			}
		}
	}
}
