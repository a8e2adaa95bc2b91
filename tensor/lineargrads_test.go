package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLinearGrads: the fused backward of a linear layer (dIn and dW a k
// piece at a time, linearGrads32) gives dIn and dW bit for bit equal to
// the two products one after the other, and runs wherever the fp32
// assembly kernels and more than one core do. Row counts that end inside
// a panel, pieces that start inside one, dIn overwritten and added to,
// every back end and tile this CPU has, and under precision bf16 every
// bf16 kernel it has.
func TestLinearGrads(t *testing.T) {
	defer SetThreads(0)
	defer SetBackend(BackendName())
	defer SetPrecision(Precision())
	defer bf16Kernel.Store(bf16Kernel.Load())
	cases := []struct {
		n, i, o int
		single  bool // one k piece: never fused
	}{
		{2048, 8, 64, false},   // 2 pieces on panel edges: the smallest product fused
		{2101, 16, 64, false},  // a last panel of 5 rows; pieces start mid-panel
		{3001, 72, 40, false},  // a last panel of 1 row
		{4103, 180, 96, false}, // 4 pieces, n not a multiple of the AVX2 tiles' 6 rows either
		{1633, 720, 40, true},  // the weight gradient split by rows of dW; a last k block of 97 rows
	}
	if testing.Short() { // under emulation (scripts/test.sh) the larger ones took 24 s
		cases = cases[:2]
	}
	type config struct{ backend, precision string }
	var configs []config
	for _, be := range Backends() {
		configs = append(configs, config{be.Name(), PrecisionFP32})
	}
	for _, name := range BF16Kernels() {
		if BF16Supported() && name != bf16KernelNames[bf16OnFP32] {
			configs = append(configs, config{name, PrecisionBF16})
		}
	}
	for _, cf := range configs {
		for _, threads := range []int{1, 2} {
			for _, tc := range cases {
				for _, accum := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s-%s/threads=%d/%dx%dx%d/accum=%v", cf.backend, cf.precision, threads, tc.n, tc.i, tc.o, accum), func(t *testing.T) {
						if err := SetPrecision(cf.precision); err != nil {
							t.Fatal(err)
						}
						if err := SetBackend(cf.backend); err != nil {
							t.Fatal(err)
						}
						SetThreads(threads)
						rng := rand.New(rand.NewPCG(uint64(tc.n), 7))
						dOut, in, w := to32(randSlice(rng, tc.n*tc.o)), to32(randSlice(rng, tc.n*tc.i)), to32(randSlice(rng, tc.o*tc.i))
						dIn0, dW0 := to32(randSlice(rng, tc.n*tc.i)), to32(randSlice(rng, tc.o*tc.i))
						run := func(fuse bool) (dIn, dW []float32) {
							defer func(v bool) { fuseLinearGrads = v }(fuseLinearGrads)
							fuseLinearGrads = fuse
							dIn, dW = append([]float32(nil), dIn0...), append([]float32(nil), dW0...)
							LinearGrads(dIn, dW, dOut, in, w, tc.n, tc.i, tc.o, accum)
							return dIn, dW
						}
						wantIn, wantW := run(false)
						gotIn, gotW := run(true)
						for _, g := range []struct {
							name      string
							got, want []float32
						}{{"dIn", gotIn, wantIn}, {"dW", gotW, wantW}} {
							for j := range g.want {
								if math.Float32bits(g.got[j]) != math.Float32bits(g.want[j]) || math.IsNaN(float64(g.got[j])) {
									t.Fatalf("%s[%d]: %v fused, %v one product after the other", g.name, j, g.got[j], g.want[j])
								}
							}
						}
						onBF16 := BF16Operands()

						// The input as bf16 rows, as a bf16 training pass keeps it: the
						// same bits as LinearGrads on those rows widened, and under bf16
						// precision as on the float32 input itself (its products round it).
						var rows BF16Rows
						rows.Resize(tc.n, tc.i)
						rows.Store(0, tc.n, in, tc.i)
						wide := rows.Float32()
						dIn, dW := append([]float32(nil), dIn0...), append([]float32(nil), dW0...)
						LinearGrads(dIn, dW, dOut, wide, w, tc.n, tc.i, tc.o, accum)
						bfIn, bfW := append([]float32(nil), dIn0...), append([]float32(nil), dW0...)
						LinearGradsBF16In(bfIn, bfW, dOut, &rows, w, tc.n, tc.i, tc.o, accum)
						// Without dIn nothing is fused: the weight gradient alone,
						// split over k in pieces where Gemm splits it.
						aloneW, bfAloneW := append([]float32(nil), dW0...), append([]float32(nil), dW0...)
						LinearGrads(nil, aloneW, dOut, wide, w, tc.n, tc.i, tc.o, accum)
						LinearGradsBF16In(nil, bfAloneW, dOut, &rows, w, tc.n, tc.i, tc.o, accum)
						for _, g := range []struct {
							name      string
							got, want []float32
						}{{"dIn", bfIn, dIn}, {"dW", bfW, dW}, {"dW alone", bfAloneW, aloneW}, {"dIn against float32 input", bfIn, wantIn}, {"dW against float32 input", bfW, wantW}} {
							if !onBF16 && strings.HasSuffix(g.name, "input") {
								continue // fp32 products: the rounded input is another input
							}
							for j := range g.want {
								if math.Float32bits(g.got[j]) != math.Float32bits(g.want[j]) || math.IsNaN(float64(g.got[j])) {
									t.Fatalf("%s[%d]: %v from bf16 rows, %v", g.name, j, g.got[j], g.want[j])
								}
							}
						}

						// Fused over at least two workers: threads capped by
						// GOMAXPROCS (under GOMAXPROCS=1, as on a one-CPU
						// machine, nothing is).
						fused := linearGrads32(gotIn, gotW, dOut, in, nil, w, tc.n, tc.i, tc.o, accum)
						if want := (asmActive() || onBF16) && workers() > 1 && !tc.single; fused != want {
							t.Fatalf("fused: %v, want %v (fp32 assembly kernels %v, bf16 kernel %v)", fused, want, asmActive(), onBF16)
						}
						fusedRows := linearGrads32(gotIn, gotW, dOut, nil, &rows, w, tc.n, tc.i, tc.o, accum)
						if want := onBF16 && workers() > 1 && !tc.single; fusedRows != want {
							t.Fatalf("fused from bf16 rows: %v, want %v (bf16 kernel %v)", fusedRows, want, onBF16)
						}
					})
				}
			}
		}
	}
}

// BenchmarkLinearGrads compares LinearGrads fused and one product after
// the other on RoMAE-tiny fine-tuning's four linear layers (6432 rows),
// side by side in one run.
func BenchmarkLinearGrads(b *testing.B) {
	const n = 6432
	for _, sh := range []struct {
		name string
		i, o int
	}{{"qkv", 180, 540}, {"wo", 180, 180}, {"w1", 180, 720}, {"w2", 720, 180}} {
		rng := rand.New(rand.NewPCG(1, 2))
		dOut, in, w := to32(randSlice(rng, n*sh.o)), to32(randSlice(rng, n*sh.i)), to32(randSlice(rng, sh.o*sh.i))
		dIn, dW := make([]float32, n*sh.i), make([]float32, sh.o*sh.i)
		for _, fuse := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/fused=%v", sh.name, fuse), func(b *testing.B) {
				defer func(v bool) { fuseLinearGrads = v }(fuseLinearGrads)
				fuseLinearGrads = fuse
				for range b.N {
					LinearGrads(dIn, dW, dOut, in, w, n, sh.i, sh.o, false)
				}
				b.ReportMetric(float64(4*n*sh.i*sh.o)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
