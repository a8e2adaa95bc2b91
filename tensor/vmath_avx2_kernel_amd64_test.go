//go:build goexperiment.simd && amd64

package tensor

import (
	"math"
	"math/rand/v2"
	"simd/archsimd"
	"testing"
)

// expKernelInput is n values spread over exp's whole range and the edges:
// overflow, gradual underflow, exact zeros and ±Inf.
func expKernelInput(n int, rng *rand.Rand) []float32 {
	x := make([]float32, n)
	edges := []float32{0, float32(math.Copysign(0, -1)), 88.7, 89, 90, -87.3, -103, -104, -150, 1e-8, float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := range x {
		if i%7 == 3 {
			x[i] = edges[(i/7)%len(edges)]
			continue
		}
		x[i] = float32(rng.NormFloat64() * 30)
	}
	return x
}

// TestExpKernelsAVX2 holds the assembly loops to the archsimd ones bit for
// bit, on every length class of the pairs-then-one loop: a changed
// operand order, a fused multiply-add where exp8 has none, or a lost
// tail vector changes bits here.
func TestExpKernelsAVX2(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("this CPU lacks AVX2 and FMA")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	same := func(t *testing.T, what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d of %d is %v (%#x), archsimd gives %v (%#x)", what, i, len(want), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
	for _, n := range []int{8, 16, 24, 40, 200, 720} {
		in, dOut := expKernelInput(n, rng), expKernelInput(n, rng)
		want, got := make([]float32, n+8), make([]float32, n+8)

		expVec8Ref(want[:n], in)
		expAVX2(&got[0], &in[0], n)
		same(t, "exp", got, want)

		siluVec8Ref(want[:n], in)
		siluAVX2(&got[0], &in[0], n)
		same(t, "silu", got, want)

		siluGradVec8Ref(want[:n], dOut, in)
		siluGradAVX2(&got[0], &dOut[0], &in[0], n)
		same(t, "silu gradient", got, want)

		keep := make([]float32, n)
		for i := range keep {
			keep[i] = float32(rng.IntN(2))
		}
		for _, k := range [][]float32{nil, keep} {
			s1, s2 := append([]float32(nil), in...), append([]float32(nil), in...)
			mx := float32(40)
			wantSum, j := softmaxExp8Ref(s1, 0.125, mx, k)
			if j != n {
				t.Fatalf("softmaxExp8 covered %d of %d", j, n)
			}
			var acc [8]float32
			var kp *float32
			if k != nil {
				kp = &k[0]
			}
			softmaxExpAVX2(&s2[0], n, 0.125, -mx, kp, &acc)
			same(t, "softmax exponentials", s2, s1)
			gotSum := hsum8(archsimd.LoadFloat32x8(&acc))
			if math.Float32bits(gotSum) != math.Float32bits(wantSum) {
				t.Fatalf("n=%d keep=%v: softmax sum %v, archsimd %v", n, k != nil, gotSum, wantSum)
			}
		}
		for i := n; i < n+8; i++ {
			if got[i] != 0 {
				t.Fatalf("n=%d: wrote past the end (element %d = %v)", n, i, got[i])
			}
		}
	}
}

// BenchmarkExpKernelsAVX2 times the archsimd and assembly loops side by
// side on a fine-tuning step's rows (720 SiLU inputs, 201 attention
// scores), ns per element.
func BenchmarkExpKernelsAVX2(b *testing.B) {
	if !hasAVX2FMA {
		b.Skip("this CPU lacks AVX2 and FMA")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	in, dOut, out := make([]float32, 720*64), make([]float32, 720*64), make([]float32, 720*64)
	for i := range in {
		in[i], dOut[i] = float32(rng.NormFloat64()*2), float32(rng.NormFloat64())
	}
	scores := make([]float32, 200*64)
	for i := range scores {
		scores[i] = float32(rng.NormFloat64() * 8)
	}
	for _, bc := range []struct {
		name string
		run  func()
	}{
		{"silu/archsimd", func() { siluVec8Ref(out, in) }},
		{"silu/asm", func() { siluAVX2(&out[0], &in[0], len(in)) }},
		{"silugrad/archsimd", func() { siluGradVec8Ref(out, dOut, in) }},
		{"silugrad/asm", func() { siluGradAVX2(&out[0], &dOut[0], &in[0], len(in)) }},
		{"softmaxexp/archsimd", func() {
			for r := 0; r < len(scores); r += 200 {
				softmaxExp8Ref(scores[r:r+200], 0.125, 1, nil)
			}
		}},
		{"softmaxexp/asm", func() {
			var acc [8]float32
			for r := 0; r < len(scores); r += 200 {
				softmaxExpAVX2(&scores[r], 200, 0.125, -1, nil, &acc)
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				bc.run()
			}
			n := len(in)
			if bc.name[:4] == "soft" {
				n = len(scores)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
		})
	}
}

// exp8 and the loops below are the archsimd form of the assembly loops
// (vmath_avx2_kernel_amd64.s), kept as their reference; vmath_avx2_amd64.go
// says what exp8 computes and why.
func exp8(x archsimd.Float32x8) archsimd.Float32x8 {
	k := &exp8K
	x = x.Max(archsimd.LoadFloat32x8(&k.min)).Min(archsimd.LoadFloat32x8(&k.max))
	n := x.Mul(archsimd.LoadFloat32x8(&k.log2e)).RoundToEven()
	r := n.MulAdd(archsimd.LoadFloat32x8(&k.negLn2Hi), x)
	r = n.MulAdd(archsimd.LoadFloat32x8(&k.negLn2Lo), r)
	p := archsimd.LoadFloat32x8(&k.p0)
	p = p.MulAdd(r, archsimd.LoadFloat32x8(&k.p1))
	p = p.MulAdd(r, archsimd.LoadFloat32x8(&k.p2))
	p = p.MulAdd(r, archsimd.LoadFloat32x8(&k.p3))
	p = p.MulAdd(r, archsimd.LoadFloat32x8(&k.p4))
	p = p.MulAdd(r, archsimd.LoadFloat32x8(&k.p5))
	p = p.MulAdd(r.Mul(r), r).Add(archsimd.LoadFloat32x8(&k.one))
	ni := n.ConvertToInt32()
	n1 := ni.ShiftAllRight(1)
	bias := archsimd.LoadInt32x8(&exp8Bias)
	s1 := n1.Add(bias).ShiftAllLeft(23).AsFloat32x8()
	s2 := ni.Sub(n1).Add(bias).ShiftAllLeft(23).AsFloat32x8()
	return p.Mul(s1).Mul(s2)
}

func siluVec8Ref(out, in []float32) int {
	var zero archsimd.Float32x8
	one := archsimd.BroadcastFloat32x8(1)
	i := 0
	for ; i+8 <= len(out); i += 8 {
		x := archsimd.LoadFloat32x8Slice(in[i:])
		x.Div(exp8(zero.Sub(x)).Add(one)).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func siluGradVec8Ref(dIn, dOut, in []float32) int {
	var zero archsimd.Float32x8
	one := archsimd.BroadcastFloat32x8(1)
	i := 0
	for ; i+8 <= len(dIn); i += 8 {
		x := archsimd.LoadFloat32x8Slice(in[i:])
		s := one.Div(exp8(zero.Sub(x)).Add(one))
		t := x.Mul(one.Sub(s)).Add(one) // dOut·s·(1 + x·(1−s))
		archsimd.LoadFloat32x8Slice(dOut[i:]).Mul(s).Mul(t).StoreSlice(dIn[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

func expVec8Ref(out, in []float32) int {
	i := 0
	for ; i+8 <= len(out); i += 8 {
		exp8(archsimd.LoadFloat32x8Slice(in[i:])).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits()
	return i
}

// softmaxExp8Ref is softmaxExp's vector part over s[:j], j a multiple of 8:
// s = e^(scale·s − mx) (0 where keep is 0), and the sum of those. The
// exponent is capped at 0 as in softmaxExp.
func softmaxExp8Ref(s []float32, scale, mx float32, keep []float32) (sum float32, j int) {
	vs, vmx := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(-mx)
	var acc, zero archsimd.Float32x8
	for ; j+8 <= len(s); j += 8 {
		e := exp8(archsimd.LoadFloat32x8Slice(s[j:]).MulAdd(vs, vmx).Min(zero))
		if keep != nil {
			e = e.Mul(archsimd.LoadFloat32x8Slice(keep[j:]))
		}
		e.StoreSlice(s[j:])
		acc = acc.Add(e)
	}
	return hsum8(acc), j
}
