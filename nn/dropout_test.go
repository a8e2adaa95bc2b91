package nn

import (
	"math/rand/v2"
	"testing"
)

// TestDropoutMaskStream: each element is dropped exactly when the value
// rand.Rand.Float64 would have drawn for it is below the rate, whether
// the masks come from the generator (several cores, four values in
// flight, jumped ahead) or from a rand.Rand over it (one at a time), and
// the generator is left where drawing one value per element leaves it.
func TestDropoutMaskStream(t *testing.T) {
	if !pcgMatches {
		t.Fatal("math/rand/v2's PCG is not the generator nn/pcg.go steps: dropout masks are drawn one value at a time")
	}
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 1 << 13, 1<<14 + 3, 100003} {
		for _, rate := range []float64{0, 1e-12, 0.1, 0.3, 0.5, 0.999999, 1} {
			want := make([]float32, n)
			ref := rand.New(rand.NewPCG(uint64(n), 77))
			keep := float32(1 / (1 - rate))
			for i := range want {
				if ref.Float64() >= rate {
					want[i] = keep
				}
			}
			next := ref.Uint64()
			for _, viaRand := range []bool{false, true} {
				pcg := rand.NewPCG(uint64(n), 77)
				var src rand.Source = pcg
				if viaRand {
					src = rand.New(pcg)
				}
				got := make([]float32, n)
				DropoutMask(got, rate, src)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("rand.Rand %v, n=%d rate=%v: element %d = %v, want %v", viaRand, n, rate, i, got[i], want[i])
					}
				}
				if v := pcg.Uint64(); v != next {
					t.Fatalf("rand.Rand %v, n=%d rate=%v: next value %#x, want %#x", viaRand, n, rate, v, next)
				}
			}
		}
	}
	// float64 masks, the gradient checks' precision.
	got, want := make([]float64, 20001), make([]float64, 20001)
	DropoutMask(got, 0.25, rand.NewPCG(3, 4))
	DropoutMask(want, 0.25, rand.New(rand.NewPCG(3, 4)))
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("float64 element %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestPCGJump: k steps of the affine map are pow(k), and the state read
// and written through the encoding round-trips.
func TestPCGJump(t *testing.T) {
	p := rand.NewPCG(12345, 678)
	s0, ok := pcgState(p)
	if !ok {
		t.Fatal("PCG state not readable")
	}
	s := s0
	for k := uint64(1); k <= 300; k++ {
		s = pcgStep.apply(s)
		if got := pcgStep.pow(k).apply(s0); got != s {
			t.Fatalf("pow(%d) gives %#x, %d steps %#x", k, got, k, s)
		}
		if p.Uint64() != pcgOutput(s) {
			t.Fatalf("value %d differs from the PCG's", k)
		}
	}
	q := rand.NewPCG(0, 0)
	if err := setPCGState(q, s); err != nil {
		t.Fatal(err)
	}
	if got, _ := pcgState(q); got != s {
		t.Fatalf("state written %#x, read back %#x", s, got)
	}
}

func BenchmarkDropoutMask(b *testing.B) {
	mask := make([]float32, 208*720) // the MLP's mask of a default-recipe step
	for _, c := range []struct {
		name string
		src  rand.Source
	}{{"PCG", rand.NewPCG(1, 2)}, {"Rand", rand.New(rand.NewPCG(1, 2))}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				DropoutMask(mask, 0.1, c.src)
			}
		})
	}
}
