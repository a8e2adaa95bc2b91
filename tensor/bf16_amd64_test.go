//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
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

// BenchmarkKernel runs each 8×32 micro-kernel alone on L1-resident
// panels (k = 180, the model's d: 90 bf16 pairs or 180 fp32 steps),
// storing into a small C: the ceiling the packed products can approach.
// GFLOP/s is per core.
func BenchmarkKernel(b *testing.B) {
	const k = 180
	c := make([]float32, 8*32)
	b.Run("fp32-fma", func(b *testing.B) {
		if !hasAVX512 {
			b.Skip("no AVX-512")
		}
		a, bb := make([]float32, 8*k), make([]float32, k*32)
		for range b.N {
			fma8x32c(k, unsafe.Pointer(&a[0]), 4, k*4, unsafe.Pointer(&bb[0]), unsafe.Pointer(&c[0]), 32*4, 32)
		}
		b.ReportMetric(float64(2*8*32*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	// The AVX2 tiles on one 6-row panel (3+3 rows), as panel256 runs it,
	// and on the 8-row panel it ran before (3+3+2).
	for _, rows := range []int{6, 8} {
		b.Run(fmt.Sprintf("fp32-fma-avx2-%drows", rows), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2")
			}
			a, bb := make([]float32, 8*k), make([]float32, k*32)
			var out [256]float32
			for range b.N {
				panel256(k, avx2KChunk, unsafe.Pointer(&a[0]), 4, k*4, unsafe.Pointer(&bb[0]), c, 32, rows, 32, 1, 0, &out)
			}
			b.ReportMetric(float64(2*rows*32*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("bf16-vdpbf16ps", func(b *testing.B) {
		if !BF16Supported() {
			b.Skip("no bf16 path here")
		}
		const kp = k / 2
		a, bb := make([]uint32, bfMR*kp), make([]uint32, kp*bfNR)
		for range b.N {
			dpbf16x8x32c(kp, unsafe.Pointer(&a[0]), 4, kp*4, unsafe.Pointer(&bb[0]), unsafe.Pointer(&c[0]), bfNR*4, bfNR)
		}
		b.ReportMetric(float64(2*bfMR*bfNR*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// TestTranspose16x16: the assembly transpose against the definition, on
// strided rows, leaving everything around the block as it was.
func TestTranspose16x16(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	const sld, dld = 21, 19 // row strides in values, wider than 16
	src := make([]uint32, 16*sld)
	for i := range src {
		src[i] = uint32(i*2654435761) ^ 0x9E3779B9
	}
	dst := make([]uint32, 16*dld+5)
	for i := range dst {
		dst[i] = 0xDEADBEEF
	}
	transpose16x16(&dst[0], dld*4, &src[0], sld*4)
	for i := range 16 {
		for j := range dld {
			want := uint32(0xDEADBEEF)
			if j < 16 {
				want = src[j*sld+i]
			}
			if got := dst[i*dld+j]; got != want {
				t.Fatalf("dst[%d][%d] = %#x, want %#x", i, j, got, want)
			}
		}
	}
	for _, v := range dst[16*dld:] {
		if v != 0xDEADBEEF {
			t.Fatal("wrote past the block")
		}
	}
}

// TestPackBF16BRows: op(B) packed from bf16 rows (a training pass's kept
// activations, LinearGradsBF16In) is the packing of the float32 rows they
// were stored from, pair for pair, in both bf16 layouts: k blocks that
// start at any row and end on an odd row with more rows after it (the
// odd row pairs with zeros, not the next row), slivers narrower than 32
// columns, and column counts that are not multiples of 32.
func TestPackBF16BRows(t *testing.T) {
	defer SetThreads(0)
	SetThreads(2)
	if !BF16Supported() {
		t.Skipf("no bf16 kernel on this CPU (%s): nothing packs bf16 rows", bf16Why())
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const rows = 1100 // ≥ the deepest k block pair below (7 + 2·512 − 3)
	for _, n := range []int{8, 20, 32, 180, 720, 800} {
		b := to32(randSlice(rng, rows*n))
		var br BF16Rows
		br.Resize(rows, n)
		br.Store(0, rows, b, n)
		for _, l := range []bfLayout{dpbfLayout, amxLayout} {
			for _, rk := range [][2]int{{0, 1}, {3, 2}, {5, 7}, {1, 33}, {0, l.kc}, {2, l.kc + 1}, {7, 2*l.kc - 3}} {
				r0, k := rk[0], rk[1]
				want, got := make([]uint32, l.size(n, k)), make([]uint32, l.size(n, k))
				l.pack(false, b[r0*n:], n, n, k, want)
				for _, parallel := range []bool{false, true} {
					for i := range got {
						got[i] = 0xdeadbeef // every pair must be written
					}
					w := 1
					if parallel {
						w = 2
					}
					l.packRows(&br, r0, n, k, got, w)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("n %d, kc %d, rows %d…%d, parallel %v: pair %d = %#x from bf16 rows, %#x from float32", n, l.kc, r0, r0+k-1, parallel, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
