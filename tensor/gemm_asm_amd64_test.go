//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"romae/internal/race"
)

// TestPackBT32 checks the register-transposing pack of op(B) = bᵀ against
// its definition, d[p·32 + j] = b[(j0+j)·ldb + pc + p] and zero for
// j ≥ w, over widths and k lengths on and off its 8×8 blocks.
func TestPackBT32(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("packBT32 needs AVX2; this CPU lacks it")
	}
	for _, tc := range []struct{ kb, w, ldb, pc, j0 int }{
		{60, 32, 201, 0, 0},  // attention: k = head dim, a full sliver
		{60, 9, 201, 0, 192}, // … and the last 9 of 201 columns
		{256, 20, 720, 256, 160},
		{16, 16, 16, 0, 0},
		{7, 32, 40, 3, 1},
		{33, 1, 50, 2, 0},
		{1, 17, 5, 4, 2},
		{9, 25, 12, 1, 3}, // 8 columns + 8 + 8 + 1; 8 steps + 1
		{8, 8, 8, 0, 0},
	} {
		t.Run(fmt.Sprintf("kb%d_w%d", tc.kb, tc.w), func(t *testing.T) {
			b := make([]float32, (tc.j0+tc.w)*tc.ldb)
			for i := range b {
				b[i] = float32(i) + 0.5
			}
			d := make([]float32, tc.kb*32)
			for i := range d {
				d[i] = -1 // every element must be written
			}
			packBT32(b, tc.ldb, tc.pc, tc.j0, tc.kb, tc.w, d)
			for p := range tc.kb {
				for j := range 32 {
					var want float32
					if j < tc.w {
						want = b[(tc.j0+j)*tc.ldb+tc.pc+p]
					}
					if got := d[p*32+j]; got != want {
						t.Fatalf("d[%d·32+%d] = %v, want %v", p, j, got, want)
					}
				}
			}
		})
	}
}

// TestPackBRows32 checks asmPackB's row-by-row pack of one k block of a
// non-transposed op(B), in 16-wide (packBRows32) and 8-wide moves
// (packBRows32AVX2), against the sliver-by-sliver one, element for
// element: widths on and off whole slivers (a last sliver of 1, 16, 17 or
// 31 columns), over asmNC (two column blocks), one step to a whole k
// block, and rows wider than n. A k block is asmKC deep at most, and
// asmKC follows the caches (256 on a Zen 4, 384 on the Xeon, 64 on a
// 256 KiB L2), so the depths are capped at it: fixed depths of 192–384
// failed on every CPU with a shorter block (ROMAE_CACHES=32K,1M showed
// it), as they exceed what asmPackB ever hands packBRows32.
func TestPackBRows32(t *testing.T) {
	packs := map[string]func(b []float32, ldb, n, k int, dst []float32){}
	if hasAVX512 {
		packs["avx512"] = packBRows32
	}
	if hasAVX2FMA {
		packs["avx2"] = packBRows32AVX2
	}
	if len(packs) == 0 {
		t.Skip("packBRows32 needs AVX-512 and packBRows32AVX2 AVX2; this CPU lacks both")
	}
	for name, pack := range packs {
		t.Run(name, func(t *testing.T) { testPackBRows(t, pack) })
	}
}

func testPackBRows(t *testing.T, pack func(b []float32, ldb, n, k int, dst []float32)) {
	for _, tc := range []struct{ n, k, ldb int }{
		{180, 192, 180}, {720, 192, 720}, {60, 201, 540}, {1, 5, 3},
		{16, 7, 16}, {17, 9, 40}, {31, 1, 31}, {33, asmKC, 33}, {800, 12, 801}, {20, 3, 20}, {45, 4, 47},
	} {
		tc.k = min(tc.k, asmKC)
		t.Run(fmt.Sprintf("n%d_k%d_ld%d", tc.n, tc.k, tc.ldb), func(t *testing.T) {
			b := make([]float32, (tc.k-1)*tc.ldb+tc.n)
			for i := range b {
				b[i] = float32(i) + 0.5
			}
			size := asmPackedLen(tc.n, tc.k)
			want, got := make([]float32, size), make([]float32, size)
			for i := range got {
				want[i], got[i] = -1, -2 // every element must be written
			}
			defer func(v bool) { packBByRows = v }(packBByRows)
			packBByRows = false
			asmPackB(false, b, tc.ldb, tc.n, tc.k, asmKC, want)
			pack(b, tc.ldb, tc.n, tc.k, got)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("packed[%d] = %v row by row, %v sliver by sliver", i, got[i], want[i])
				}
			}
		})
	}
}

// BenchmarkPackBT32 packs one 32-wide sliver of op(B) = bᵀ at the
// model's transposed shapes (attention's kᵀ and vᵀ, k = 60; a k block of
// 256 from rows of 720), beside a scalar loop storing one float per load
// (what the AVX2 back end ran before): go test ./tensor -run '^$'
// -bench PackBT32 -cpu 1.
func BenchmarkPackBT32(b *testing.B) {
	if !hasAVX2FMA {
		b.Skip("packBT32 needs AVX2; this CPU lacks it")
	}
	scalar := func(src []float32, ldb, pc, j0, kb, w int, d []float32) {
		for j := range w {
			for p, v := range src[(j0+j)*ldb+pc:][:kb] {
				d[p*32+j] = v
			}
		}
	}
	for _, s := range []struct{ kb, ldb int }{{60, 60}, {180, 180}, {256, 720}} {
		src, d := make([]float32, 32*s.ldb), make([]float32, s.kb*32)
		for _, v := range []struct {
			name string
			pack func(b []float32, ldb, pc, j0, kb, w int, d []float32)
		}{{"scalar", scalar}, {"transpose8", packBT32}} {
			b.Run(fmt.Sprintf("k%d/%s", s.kb, v.name), func(b *testing.B) {
				for range b.N {
					v.pack(src, s.ldb, 0, 0, s.kb, 32, d)
				}
			})
		}
	}
}

// TestAsmPackBParallel checks that the pack shared out over the workers
// lays op(B) out exactly as the serial asmPackB does, in the layout
// asmCompute reads, across column blocks
// (n > asmNC), k blocks (k > asmKC), partial slivers and both layouts of B.
func TestAsmPackBParallel(t *testing.T) {
	if !hasAVX512 {
		t.Skip("the layout is checked through the avx512 kernel; this CPU lacks AVX-512")
	}
	for _, tc := range []struct{ n, k int }{
		{540, 180}, {180, 720}, {720, 180}, // the model's weights
		{asmNC + 40, asmKC + 7}, {2*asmNC + 32, 2 * asmKC},
		{1, 1}, {33, 5}, {64, asmKC},
	} {
		for _, transB := range []bool{false, true} {
			t.Run(fmt.Sprintf("n%d_k%d_t%v", tc.n, tc.k, transB), func(t *testing.T) {
				ldb := tc.n
				if transB {
					ldb = tc.k
				}
				b := make([]float32, tc.n*tc.k)
				for i := range b {
					b[i] = float32(i) + 0.25
				}
				want := make([]float32, asmPackedLen(tc.n, tc.k))
				got := make([]float32, len(want))
				for i := range got {
					got[i], want[i] = -1, -2 // every element must be written
				}
				asmPackB(transB, b, ldb, tc.n, tc.k, asmKC, want)
				asmPackBParallel(transB, b, ldb, tc.n, tc.k, asmKC, got)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("packed[%d] = %v, want %v", i, got[i], want[i])
					}
				}
				// Both share the sliver code: check the layout itself by the
				// product asmCompute reads from it, against op(B) as stored.
				const m = 9
				a := make([]float32, m*tc.k)
				for i := range a {
					a[i] = float32(i%5 - 2)
				}
				c := make([]float32, m*tc.n)
				asmCompute(tileFMA, false, m, tc.n, tc.k, asmKC, 1, a, tc.k, got, 0, c, tc.n)
				for i := range m {
					for j := range tc.n {
						var sum, mag float64
						for p := range tc.k {
							bi := p*ldb + j // op(B)(p, j)
							if transB {
								bi = j*ldb + p
							}
							bv := b[bi]
							sum += float64(a[i*tc.k+p]) * float64(bv)
							mag += math.Abs(float64(a[i*tc.k+p]) * float64(bv))
						}
						if d := math.Abs(float64(c[i*tc.n+j]) - sum); d > 1e-5*mag {
							t.Fatalf("C[%d,%d] from the packed op(B) = %v, want %v", i, j, c[i*tc.n+j], sum)
						}
					}
				}
			})
		}
	}
}

// TestPackWeightUsesKernelLayout: PackWeight really packs for the kernel
// the products run on (TestGemmPacked would pass on the fallback alone):
// fp32 order on the assembly driver's back ends (avx512, avx2: one layout
// for both tile kinds), bf16 pairs for VDPBF16PS and for AMX (padded to 16
// pairs), the fp32 order again where bf16 products run on the fp32 kernel;
// under another back end it keeps no packed copy.
func TestPackWeightUsesKernelLayout(t *testing.T) {
	prev := BackendName()
	defer SetBackend(prev)
	w := make([]float32, 720*180)
	for _, be := range Backends() {
		SetBackend(be.Name())
		p := PackWeight(w, 720, 180)
		if _, asm := be.(*simdBackend); asm {
			if len(p.packed) != asmPackedLen(720, 180) {
				t.Fatalf("%s: packed %d floats, want %d", be.Name(), len(p.packed), asmPackedLen(720, 180))
			}
		} else if p.packed != nil || p.packedBF != nil {
			t.Fatalf("%s: packed a copy no product reads", be.Name())
		}
	}
	// bf16: rounded pairs in the layout of the kernel the products run on.
	if !BF16Supported() {
		return
	}
	prevKernel := bf16Kernel.Load()
	defer bf16Kernel.Store(prevKernel)
	defer SetPrecision(PrecisionFP32)
	SetPrecision(PrecisionBF16)
	for _, kern := range []int32{bf16DPBF16, bf16AMX, bf16OnFP32} {
		bf16Kernel.Store(kern)
		p := PackWeight(w, 720, 180)
		wantBF, want32 := 0, 0
		switch kern {
		case bf16DPBF16:
			wantBF = dpbfLayout.size(720, 180)
		case bf16AMX: // packing needs no tiles; the tile product is not run here
			if amxCompute != nil {
				wantBF = amxLayout.size(720, 180)
			}
		case bf16OnFP32: // products run on the fp32 kernel
			want32 = asmPackedLen(720, 180)
		}
		if len(p.packedBF) != wantBF || len(p.packed) != want32 {
			t.Fatalf("bf16 on %s: packed %d pairs and %d floats, want %d and %d",
				bf16KernelNames[kern], len(p.packedBF), len(p.packed), wantBF, want32)
		}
	}
}

// The k blocks on the machine classes seen so far; the Zen 4 values are
// the hand-tuned constants they replace.
func TestKBlock(t *testing.T) {
	for _, c := range []struct {
		name                     string
		l1d, l2                  int
		fp32, fp32AT, bf16, amxK int
		avx2Chunk                int
	}{
		{"zen4", 32 << 10, 1 << 20, 256, 128, 512, 256, 128},
		{"zen5", 48 << 10, 1 << 20, 256, 192, 512, 384, 192},
		{"xeon-amx", 48 << 10, 2 << 20, 384, 192, 512, 384, 192},
		{"small-l2", 32 << 10, 256 << 10, 64, 64, 128, 128, 128},
		{"unreported", 0, 0, 256, 256, 512, 384, 256},
	} {
		fp32, bf16, amxK := kBlocksFor(c.l1d, c.l2)
		if fp32 != c.fp32 || bf16 != c.bf16 || amxK != c.amxK {
			t.Errorf("%s: k blocks %d/%d/%d, want %d/%d/%d", c.name, fp32, bf16, amxK, c.fp32, c.bf16, c.amxK)
		}
		if got := kBlockAT(c.l1d, fp32); got != c.fp32AT {
			t.Errorf("%s: fp32 Aᵀ k block %d, want %d", c.name, got, c.fp32AT)
		}
		if got := sliverChunk(c.l1d, asmNR*4); got != c.avx2Chunk {
			t.Errorf("%s: AVX2 k chunk %d, want %d", c.name, got, c.avx2Chunk)
		}
	}
}

func TestEvenBlocks(t *testing.T) {
	for _, c := range []struct{ k, kc, want int }{
		{201, 192, 101}, {201, 384, 201}, {192, 192, 192}, {193, 192, 97}, {1067, 192, 178}, {1, 192, 1}, {6400, 192, 189},
	} {
		got := evenBlocks(c.k, c.kc)
		if got != c.want || got > c.kc || (c.k+got-1)/got != (c.k+c.kc-1)/c.kc {
			t.Errorf("evenBlocks(%d, %d) = %d, want %d (as many blocks as kc gives, none longer than kc)", c.k, c.kc, got, c.want)
		}
	}
}

// TestAsmOpATPacked runs the products with op(A) = Aᵀ packed by packAT8
// before the kernels read it (asmDirectAT false, the benchmarks' other
// variant) on each back end of the assembly driver: the 8-row kernels pack
// whole row blocks in 8-row panels, the AVX2 tiles (6-row panels) each
// panel alone.
func TestAsmOpATPacked(t *testing.T) {
	if race.Enabled {
		t.Skip("run by the default build: the same code is raced by TestSgemmBackends")
	}
	for _, be := range []struct {
		name string
		ok   bool
	}{{"avx512", hasAVX512}, {"avx2", hasAVX2FMA}} {
		t.Run(be.name, func(t *testing.T) {
			if !be.ok {
				t.Skipf("this CPU cannot run the %s back end", be.name)
			}
			defer SetBackend(BackendName())
			if err := SetBackend(be.name); err != nil {
				t.Fatal(err)
			}
			prev := asmDirectAT
			asmDirectAT = false
			defer func() { asmDirectAT = prev }()
			checkSgemm(t)
		})
	}
}

// TestSerialProductsDoNotAllocate: a single-core product on the assembly
// driver, and GemmPackedSerial, allocate nothing once their pooled buffers
// exist. The tile buffer of the partial tiles (n = 20 here) once escaped
// to the heap: 1 KiB per product and k block, 13 MB a fine-tuning step.
func TestSerialProductsDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates on its own")
	}
	defer SetBackend(registry[0].b.Name())
	for _, be := range []string{"avx512", "avx2"} {
		if SetBackend(be) != nil {
			continue
		}
		const m, n, k = 37, 20, 500 // two k blocks, a partial sliver and a short panel
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		w := PackWeight(b, n, k)
		for _, tc := range []struct {
			name string
			run  func()
		}{
			{"GemmSerial NN", func() { GemmSerial(false, false, m, n, k, 1, a, k, b, n, 0, c, n) }},
			{"GemmSerial TN", func() { GemmSerial(true, false, m, n, k, 0.5, a, m, b, n, 1, c, n) }},
			{"GemmPackedSerial", func() { GemmPackedSerial(m, 1, a, k, w, 0, c, n) }},
		} {
			tc.run() // fill the pools
			if got := testing.AllocsPerRun(20, tc.run); got != 0 {
				t.Errorf("%s/%s: %v allocations a call", be, tc.name, got)
			}
		}
	}
}

// TestSliversOuter: a product of a few panels whose k block fits L1d with
// one sliver runs its slivers outermost (sliversOuter) and gives, bit for
// bit, what the panels-outermost order gives: per tile the same kernel
// call. Both orders, packed and unpacked op(B), alpha 1 and ½, beta 0, 1
// and ½, last slivers of 20 and 28 columns.
func TestSliversOuter(t *testing.T) {
	tile, ok := asmTile()
	if !ok || tile != tileFMA {
		t.Skip("sliversOuter runs on the AVX-512 fp32 tiles only")
	}
	defer func(v bool) { sliverOuter = v }(sliverOuter)
	rng := rand.New(rand.NewPCG(5, 6))
	ran := false
	for _, m := range []int{16, 24, 32} {
		for _, k := range []int{60, 180} {
			for _, n := range []int{20, 180, 540} {
				ran = ran || sliversOuter(tile, false, m, k)
				a, w := to32(randSlice(rng, m*k)), to32(randSlice(rng, n*k))
				c0 := to32(randSlice(rng, m*n))
				pw := PackWeight(w, n, k)
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, 0.5}} {
					run := func(outer bool) []float32 {
						sliverOuter = outer
						c := append([]float32(nil), c0...)
						GemmPackedSerial(m, ab[0], a, k, pw, ab[1], c, n)
						d := append([]float32(nil), c0...)
						GemmSerial(false, true, m, n, k, ab[0], a, k, w, k, ab[1], d, n)
						return append(c, d...)
					}
					want, got := run(false), run(true)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("m=%d n=%d k=%d alpha=%v beta=%v: [%d] = %v slivers outermost, %v panels outermost", m, n, k, ab[0], ab[1], i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	if !ran && asmL1D >= (asmNR+32)*180*4 {
		t.Fatal("no product ran with its slivers outermost")
	}
}

// TestProductKC: on a Zen 3's caches (32 KiB L1d, 512 KiB L2) the AVX2
// tiles' products narrower than asmNC take deeper k blocks than asmKC, in
// even blocks, up to the L1d bound; where the L1d bound already sets
// asmKC (a Zen 4's or the Xeon's caches) they take asmKC in even blocks;
// the AVX-512 tiles and the weight gradients keep theirs. On the Zen 3 caches the avx2
// back end's products stay correct (checkSgemm) and the fused linear
// backward stays bit for bit the two products (its dIn reads W packed in
// productKC's blocks), and so do weights packed once (GemmPacked).
func TestProductKC(t *testing.T) {
	t.Cleanup(func() { setKBlocks(cpuInfo.L1D, cpuInfo.L2) })
	for _, c := range []struct {
		name    string
		l1d, l2 int
		tile    tileKernel
		transA  bool
		n, k    int
		want    int
	}{
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 60, 201, 201},  // attention's P·V: one block, not 128 + 73
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 180, 720, 180}, // 4 × 180 (Goto's order), not 5 × 128 + 80 or 3 × 240
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 180, 180, 180},
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 540, 180, 180}, // one pass in Goto's order (≤ avx2GotoK = 215), not 90 + 90
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 720, 180, 180},
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 540, 230, 115}, // past avx2GotoK: 128·768/544 = 180 → 160: 115 + 115
		{"zen3", 32 << 10, 512 << 10, tileFMA256, false, 720, 720, 120},
		{"zen3", 32 << 10, 512 << 10, tileFMA256, true, 180, 6400, 128}, // weight gradient: asmKC
		{"zen3", 32 << 10, 512 << 10, tileFMA, false, 60, 201, 128},     // AVX-512 tiles: asmKC
		// The L1d bound sets asmKC: asmKC's depth, in even blocks.
		{"zen4", 32 << 10, 1 << 20, tileFMA256, false, 60, 201, 201},
		{"zen4", 32 << 10, 1 << 20, tileFMA256, false, 180, 720, 180},
		{"zen4", 32 << 10, 1 << 20, tileFMA256, false, 720, 180, 180},
		{"xeon", 48 << 10, 2 << 20, tileFMA256, false, 720, 320, 320},  // avx2GotoK = 323
		{"xeon", 48 << 10, 2 << 20, tileFMA256, false, 180, 1000, 250}, // 384 → avx2GotoK 323: 4 × 250
		{"xeon", 48 << 10, 2 << 20, tileFMA, false, 180, 1000, 384},
	} {
		setKBlocks(c.l1d, c.l2)
		if got := productKC(c.tile, c.transA, c.n, c.k); got != c.want {
			t.Errorf("%s caches, tile %d, transA %v, n %d, k %d: k block %d, want %d (asmKC %d)", c.name, c.tile, c.transA, c.n, c.k, got, c.want, asmKC)
		}
	}

	if !hasAVX2FMA {
		t.Skip("the avx2 back end needs AVX2 and FMA; this CPU lacks them")
	}
	defer SetBackend(BackendName())
	defer SetThreads(0)
	if err := SetBackend("avx2"); err != nil {
		t.Fatal(err)
	}
	setKBlocks(32<<10, 512<<10)
	checkSgemm(t)
	SetThreads(2)
	const n, i, o = 2048, 60, 300 // dIn = dOut·W over k = 300: 150 + 150
	rng := rand.New(rand.NewPCG(11, 12))
	dOut, in, w := to32(randSlice(rng, n*o)), to32(randSlice(rng, n*i)), to32(randSlice(rng, o*i))
	run := func(fuse bool) (dIn, dW []float32) {
		defer func(v bool) { fuseLinearGrads = v }(fuseLinearGrads)
		fuseLinearGrads = fuse
		dIn, dW = make([]float32, n*i), make([]float32, o*i)
		LinearGrads(dIn, dW, dOut, in, w, n, i, o, false)
		return dIn, dW
	}
	wantIn, wantW := run(false)
	gotIn, gotW := run(true)
	for j := range wantIn {
		if math.Float32bits(gotIn[j]) != math.Float32bits(wantIn[j]) {
			t.Fatalf("dIn[%d]: %v fused, %v one product after the other", j, gotIn[j], wantIn[j])
		}
	}
	for j := range wantW {
		if math.Float32bits(gotW[j]) != math.Float32bits(wantW[j]) {
			t.Fatalf("dW[%d]: %v fused, %v one product after the other", j, gotW[j], wantW[j])
		}
	}
	// X·Wᵀ for a W [180, 720] (k blocks of 240) packed once, as Gemm.
	x, wt := to32(randSlice(rng, 50*720)), to32(randSlice(rng, 180*720))
	pw := PackWeight(wt, 180, 720)
	if !pw.InKernelOrder() {
		t.Fatal("a weight packed on the avx2 back end is not in its kernel's order")
	}
	got, want := make([]float32, 50*180), make([]float32, 50*180)
	GemmPacked(50, 1, x, 720, pw, 0, got, 180)
	Gemm(false, true, 50, 180, 720, 1, x, 720, wt, 720, 0, want, 180)
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Fatalf("GemmPacked C[%d] = %v, Gemm gives %v", j, got[j], want[j])
		}
	}
	// Packed on other caches (another k block): not read in that order.
	setKBlocks(48<<10, 2<<20)
	if pw.InKernelOrder() {
		t.Error("a weight packed in k blocks of 240 reads as in kernel order under blocks of 360")
	}
}

// TestAVX2GotoOrder: the AVX2 tiles give the same bits in Goto's loop
// order (slivers256) as in panel256's, on products with several row
// blocks, short last panels (5 and 1 rows), slivers narrower than 8
// columns, Aᵀ read in place and packed (its short panel), alpha ≠ 1 and
// beta ∉ {0, 1}, weights packed once over several k blocks, and k blocks
// deeper than avx2KChunk that Goto's order runs in one pass (k = 180;
// panel256 then runs them in one chunk too, so each sum is the same),
// and several of them taken block of rows by block of rows through all
// the k blocks (gotoRowBlocks: k = 700 on 131 and 260 rows).
func TestAVX2GotoOrder(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("the avx2 back end needs AVX2 and FMA; this CPU lacks them")
	}
	defer SetBackend(BackendName())
	if err := SetBackend("avx2"); err != nil {
		t.Fatal(err)
	}
	defer func(v bool) { avx2SliversOuter = v }(avx2SliversOuter)
	defer func(v int) { avx2KChunk = v }(avx2KChunk)
	chunk := avx2KChunk
	rng := rand.New(rand.NewPCG(7, 8))
	ran, ranDeep := false, false
	for _, m := range []int{7, 32, 131, 260} {
		for _, n := range []int{36, 180} {
			for _, k := range []int{60, 90, 180, 200, 700} {
				for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}} {
					lda, ldb := k, n
					if tr[0] {
						lda = m
					}
					if tr[1] {
						ldb = k
					}
					a, b := to32(randSlice(rng, m*k)), to32(randSlice(rng, k*n))
					c0 := to32(randSlice(rng, m*n))
					pw := PackWeight(b, n, k) // b as an [n, k] weight: op(B) = bᵀ
					kb := min(k, productKC(tileFMA256, tr[0], n, k))
					inGoto := avx2Goto(tr[0], kb)
					for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, 0.5}} {
						run := func(goto_ bool) []float32 {
							avx2SliversOuter = goto_
							avx2KChunk = chunk
							if !goto_ && inGoto {
								avx2KChunk = max(chunk, kb) // one chunk, as Goto's order runs it
							}
							c := append([]float32(nil), c0...)
							GemmSerial(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, n)
							if !tr[0] {
								d := append([]float32(nil), c0...)
								GemmPackedSerial(m, ab[0], a, k, pw, ab[1], d, n)
								c = append(c, d...)
							}
							return c
						}
						want, got := run(false), run(true)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("m=%d n=%d k=%d trans=%v alpha=%v beta=%v: [%d] = %v in Goto's order, %v in panel256's", m, n, k, tr, ab[0], ab[1], i, got[i], want[i])
							}
						}
					}
					avx2SliversOuter, avx2KChunk = true, chunk
					ran = ran || inGoto
					ranDeep = ranDeep || inGoto && kb > chunk
				}
			}
		}
	}
	if !ran {
		t.Fatal("no product ran in Goto's order")
	}
	if !ranDeep && avx2GotoK >= 180 {
		t.Fatalf("no k block deeper than avx2KChunk (%d) ran in Goto's order (avx2GotoK %d)", chunk, avx2GotoK)
	}
}
