//go:build goexperiment.simd && amd64

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// packRowPairs (VCVTNE2PS2BF16 blocks, archsimd tail) must round exactly
// like the scalar bf16Bits, ties to even included, for every row length.
func TestPackRowPairsExact(t *testing.T) {
	if !BF16Supported() {
		t.Skip("no bf16 path here")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	src := make([]float32, 200)
	for i := range src {
		switch i % 4 {
		case 0: // exact ties: 1 + odd/256 lies halfway between two bf16 values
			src[i] = float32(1+float64(2*rng.IntN(64)+1)/256) * float32(1-2*rng.IntN(2))
		default:
			src[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		}
	}
	for kb := 1; kb <= len(src); kb += 7 {
		got := make([]uint32, kp(kb)+1)
		got[kp(kb)] = 0xDEADBEEF
		packRowPairs(src, kb, got)
		for p := range kp(kb) {
			want := bf16Bits(src[2*p])
			if 2*p+1 < kb {
				want |= bf16Bits(src[2*p+1]) << 16
			}
			if got[p] != want {
				t.Fatalf("kb=%d pair %d: %#08x, want %#08x (%v, %v)", kb, p, got[p], want, src[2*p], src[min(2*p+1, kb-1)])
			}
		}
		if got[kp(kb)] != 0xDEADBEEF {
			t.Fatalf("kb=%d: wrote past the row", kb)
		}
	}
}

// BenchmarkBF16Kernel is the 8×32 VDPBF16PS micro-kernel alone on
// L1-resident panels (kp = 90 pairs: k = 180, the model's d), storing into
// a small C: the ceiling the packed product can approach. GFLOP/s is per
// core.
func BenchmarkBF16Kernel(b *testing.B) {
	if !BF16Supported() {
		b.Skip("no bf16 path here")
	}
	const kp = 90
	a, bb := make([]uint32, bfMR*kp), make([]uint32, kp*bfNR)
	for i := range a {
		a[i] = 0x3f803f80
	}
	for i := range bb {
		bb[i] = 0x3f803f80
	}
	c := make([]float32, bfMR*bfNR)
	b.SetBytes(0)
	for range b.N {
		dpbf16x8x32c(kp, unsafe.Pointer(&a[0]), 4, kp*4, unsafe.Pointer(&bb[0]), unsafe.Pointer(&c[0]), bfNR*4)
	}
	b.ReportMetric(float64(2*bfMR*bfNR*2*kp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
