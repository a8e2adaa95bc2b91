package tensor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// TestProductsSameOnAnyCoreCount: every product romae's own kernels run
// gives the same bits on one core as on two, three or four: Gemm in each
// of its splits (rows of C with op(B) packed once and shared, in both
// orientations of A and B; rows with op(B) packed per chunk; columns of
// C; pieces of k), GemmPacked, and a linear layer's backward pass with and
// without dIn, from float32 and from bf16 inputs, on every back end built
// in but OpenBLAS (-tags openblas), which splits its sums by its thread
// count, and under every bf16 kernel this CPU has. A training run then
// gives the same model whatever the number of cores it ran on (model's
// TestTrainingSameOnAnyCoreCount).
func TestProductsSameOnAnyCoreCount(t *testing.T) {
	if os.Getenv("ROMAE_EMULATED_CPU") != "" {
		t.Skip("minutes under emulation; the avx2 back end runs it natively")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer SetThreads(0)
	defer SetBackend(BackendName())
	defer SetPrecision(Precision())
	defer bf16Kernel.Store(bf16Kernel.Load())
	type config struct{ backend, precision string }
	var configs []config
	for _, be := range Backends() {
		if be.Name() != "openblas" { // it splits its sums by its thread count
			configs = append(configs, config{be.Name(), PrecisionFP32})
		}
	}
	for _, name := range BF16Kernels() {
		if BF16Supported() && name != bf16KernelNames[bf16OnFP32] {
			configs = append(configs, config{name, PrecisionBF16})
		}
	}
	// m, n, k: the default recipe's weight gradients (k = 208 rows, op(A)
	// = Aᵀ) and activations × weights, a product whose op(B) is too large
	// to share, one split by columns, one split over k.
	shapes := []struct{ m, n, k int }{
		{180, 720, 208}, {720, 180, 208}, {208, 540, 180}, {201, 60, 201},
		{64, 2100, 640}, {8, 1200, 300}, {96, 80, 4100}, {4100, 80, 96},
	}
	if testing.Short() {
		shapes = shapes[:4]
	}
	for _, cf := range configs {
		if err := SetPrecision(cf.precision); err != nil {
			t.Fatal(err)
		}
		if err := SetBackend(cf.backend); err != nil {
			t.Fatal(err)
		}
		for _, s := range shapes {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				rng := rand.New(rand.NewPCG(uint64(s.m*s.n), uint64(s.k)))
				a, b, c0 := to32(randSlice(rng, s.m*s.k)), to32(randSlice(rng, s.k*s.n)), to32(randSlice(rng, s.m*s.n))
				lda, ldb := s.k, s.n
				if tr[0] {
					lda = s.m
				}
				if tr[1] {
					ldb = s.k
				}
				name := fmt.Sprintf("%s-%s/gemm %dx%dx%d trans %v", cf.backend, cf.precision, s.m, s.n, s.k, tr)
				sameOnCores(t, name, func() [][]float32 {
					c := append([]float32(nil), c0...)
					Gemm(tr[0], tr[1], s.m, s.n, s.k, 1.5, a, lda, b, ldb, 0.5, c, s.n)
					return [][]float32{c}
				})
			}
			// A linear layer of i = k inputs and o = n outputs on m rows.
			n, i, o := s.m, s.k, s.n
			rng := rand.New(rand.NewPCG(uint64(n), uint64(o)))
			in, w, dOut := to32(randSlice(rng, n*i)), to32(randSlice(rng, o*i)), to32(randSlice(rng, n*o))
			dIn0, dW0 := to32(randSlice(rng, n*i)), to32(randSlice(rng, o*i))
			var rows BF16Rows
			rows.Resize(n, i)
			rows.Store(0, n, in, i)
			name := fmt.Sprintf("%s-%s/linear %d rows %d→%d", cf.backend, cf.precision, n, i, o)
			sameOnCores(t, name, func() [][]float32 {
				out := make([]float32, n*o)
				GemmPacked(n, 1, in, i, PackWeight(w, o, i), 0, out, o)
				var got [][]float32
				for _, accum := range []bool{false, true} {
					dIn, dW := append([]float32(nil), dIn0...), append([]float32(nil), dW0...)
					LinearGrads(dIn, dW, dOut, in, w, n, i, o, accum)
					bfIn, bfW := append([]float32(nil), dIn0...), append([]float32(nil), dW0...)
					LinearGradsBF16In(bfIn, bfW, dOut, &rows, w, n, i, o, accum)
					got = append(got, dIn, dW, bfIn, bfW)
				}
				aloneW := append([]float32(nil), dW0...)
				LinearGrads(nil, aloneW, dOut, in, w, n, i, o, false)
				return append(got, out, aloneW)
			})
		}
	}
}

// sameOnCores runs f under SetThreads 1 to 4 and fails unless every
// slice it returns has the same bits each time.
func sameOnCores(t *testing.T, name string, f func() [][]float32) {
	t.Helper()
	SetThreads(1)
	want := f()
	for threads := 2; threads <= 4; threads++ {
		SetThreads(threads)
		got := f()
		for r := range want {
			sameBits(t, fmt.Sprintf("%s: result %d on %d cores against one", name, r, threads), got[r], want[r])
		}
	}
}
