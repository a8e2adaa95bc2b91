package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// refGemm is the float64 triple loop everything is checked against.
func refGemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	// op(A) and op(B)ᵀ copied to contiguous rows first: each element is
	// then one unit-stride dot product, which keeps the reference cheap
	// under the race detector.
	id := func(x float64) float64 { return x }
	opA, opBT := opRows(m, k, transA, a, lda, id), opRows(n, k, !transB, b, ldb, id)
	for i := range m {
		ai := opA[i*k : i*k+k]
		for j := range n {
			var s float64
			for p, bv := range opBT[j*k : j*k+k] {
				s += ai[p] * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

// opRows is rows×k matrix X (trans: Xᵀ, read from x with rows ld apart)
// as contiguous float64 rows, each element through conv: opRows(m, k,
// transA, a, …) is op(A), opRows(n, k, !transB, b, …) is op(B)ᵀ.
func opRows[T Float](rows, k int, trans bool, x []T, ld int, conv func(T) float64) []float64 {
	out := make([]float64, rows*k)
	for i := range rows {
		for p := range k {
			if trans {
				out[i*k+p] = conv(x[p*ld+i])
			} else {
				out[i*k+p] = conv(x[i*ld+p])
			}
		}
	}
	return out
}

// gemmCase is one shape/stride/scalar combination; pad is extra row stride.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float64
	pad            int
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,alpha=%g,beta=%g,pad=%d", tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad)
}

// dims returns stored shapes and leading dimensions.
func (tc gemmCase) dims() (lda, ldb, ldc, lenA, lenB, lenC int) {
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc = max(1, ac)+tc.pad, max(1, bc)+tc.pad, max(1, tc.n)+tc.pad
	return lda, ldb, ldc, span(ar, ac, lda), span(br, bc, ldb), span(tc.m, tc.n, ldc)
}

func gemmCases() []gemmCase {
	var cases []gemmCase
	sizes := []int{1, 3, 17, 64, 65, 200, 257}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			// Every size on every axis once, with the others random from the
			// same list: covers all edge classes without the full 7³ cube.
			// Under -short (qemu-user, where these small cases were 70% of
			// the multiply-adds, and -race) each shape takes one of the
			// alpha/beta pairs in turn rather than all three.
			for si, s := range sizes {
				for axis := range 3 {
					d := [3]int{sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]}
					d[axis] = s
					for ai, ab := range [][2]float64{{1, 0}, {0.5, 1}, {1, -0.5}} {
						if testing.Short() && ai != (si+axis)%3 {
							continue
						}
						cases = append(cases, gemmCase{tA, tB, d[0], d[1], d[2], ab[0], ab[1], rng.IntN(2) * (1 + rng.IntN(5))})
					}
				}
			}
			// Shapes like the model's, big enough to hit k blocking and
			// the parallel split (under -short, for qemu-user, smaller ones
			// that still do: k past every k block, over 1<<20 FMAs).
			big := [3][3]int{{300, 180, 720}, {180, 180, 1100}, {1000, 97, 33}}
			if testing.Short() {
				big = [3][3]int{{96, 64, 600}, {48, 40, 1100}, {400, 97, 33}}
			}
			cases = append(cases,
				gemmCase{tA, tB, big[0][0], big[0][1], big[0][2], 1, 0, 0},
				gemmCase{tA, tB, big[1][0], big[1][1], big[1][2], 0.5, 1, 3},
				gemmCase{tA, tB, big[2][0], big[2][1], big[2][2], 1, -0.5, 1},
				// A last sliver of 23 columns (the AVX2 tiles' overlapping
				// last vector) written and added into C, over k chunks.
				gemmCase{tA, tB, 50, 183, 300, 1, 0, 0},
				gemmCase{tA, tB, 50, 183, 300, 1, 1, 0},
				// k-heavy (weight gradients): the k-split path.
				gemmCase{tA, tB, 37, 45, 3000, 1, 1, 2},
				gemmCase{tA, tB, 20, 33, 9000, 0.5, 0, 0},
			)
		}
	}
	return cases
}

// batchRows is the rows of a training batch's products (32 samples × 200
// tokens), or 200 (one sample) under -short: scripts/test.sh runs the
// package with -short under qemu-user, where the AVX2 kernels run at ~0.02
// GFLOP/s (an Intel Xeon host, 2026-11-27; one 6400-row product took 27 s)
// and under the race detector. 200 rows still split over the workers and
// span 25 panels of 8 rows, or 34 of 6 ending in a short one of 2.
func batchRows() int {
	if testing.Short() {
		return 200
	}
	return 6400
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// checkClose compares C against the reference, also checking that the
// padding between rows was left untouched.
func checkClose[T Float](t *testing.T, tc gemmCase, got []T, want []float64, ldc int, tol float64) {
	t.Helper()
	bad := 0
	for i, w := range want {
		g := float64(got[i])
		inside := i%ldc < tc.n
		if !inside {
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%v: padding C[%d] changed: %g -> %g", tc, i, w, g)
				return
			}
			continue
		}
		if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
			if bad++; bad <= 3 {
				t.Errorf("%v: C[%d,%d] = %g, want %g (tol %g)", tc, i/ldc, i%ldc, g, w, tol)
			}
		}
	}
}

// Each backend against the float64 reference. Operands are exact float32
// values so the only error is float32 accumulation, which grows with k.
func TestSgemmBackends(t *testing.T) {
	for _, be := range Backends() {
		t.Run(be.Name(), func(t *testing.T) {
			prev := BackendName()
			if err := SetBackend(be.Name()); err != nil {
				t.Fatal(err)
			}
			defer SetBackend(prev)
			checkSgemm(t)
		})
	}
}

// checkSgemm runs gemmCases on the current back end, Gemm and GemmSerial.
func checkSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range gemmCases() {
		lda, ldb, ldc, la, lb, lc := tc.dims()
		a, b, c := randSlice(rng, la), randSlice(rng, lb), randSlice(rng, lc)
		a32, b32, c32 := to32(a), to32(b), to32(c)
		for i := range a {
			a[i] = float64(a32[i])
		}
		for i := range b {
			b[i] = float64(b32[i])
		}
		for i := range c {
			c[i] = float64(c32[i])
		}
		if tc.beta == 0 {
			// beta==0 must overwrite: NaN in C must not leak.
			for i := range c32 {
				if i%ldc < tc.n {
					c32[i] = float32(math.NaN())
				}
			}
		}
		cs32 := append([]float32(nil), c32...)
		refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float32(tc.alpha), a32, lda, b32, ldb, float32(tc.beta), c32, ldc)
		checkClose(t, tc, c32, c, ldc, 2e-6*math.Sqrt(float64(tc.k))+1e-6)
		GemmSerial(tc.transA, tc.transB, tc.m, tc.n, tc.k, float32(tc.alpha), a32, lda, b32, ldb, float32(tc.beta), cs32, ldc)
		checkClose(t, tc, cs32, c, ldc, 2e-6*math.Sqrt(float64(tc.k))+1e-6)
		if t.Failed() {
			return
		}
	}
}

func TestDgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range gemmCases() {
		lda, ldb, ldc, la, lb, lc := tc.dims()
		a, b, c := randSlice(rng, la), randSlice(rng, lb), randSlice(rng, lc)
		got := append([]float64(nil), c...)
		if tc.beta == 0 {
			for i := range got {
				if i%ldc < tc.n {
					got[i] = math.NaN()
				}
			}
		}
		refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
		serial := append([]float64(nil), got...)
		Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, got, ldc)
		checkClose(t, tc, got, c, ldc, 1e-12)
		GemmSerial(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, serial, ldc)
		checkClose(t, tc, serial, c, ldc, 1e-12)
		if t.Failed() {
			return
		}
	}
}

// Named element types go through the same path as float32.
type myFloat float32

func TestGemmNamedType(t *testing.T) {
	a := []myFloat{1, 2, 3, 4}
	b := []myFloat{5, 6, 7, 8}
	c := make([]myFloat, 4)
	Gemm(false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2)
	want := []myFloat{19, 22, 43, 50}
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("got %v want %v", c, want)
		}
	}
}

// k==0 and alpha==0 are C = beta·C, with beta==0 clearing NaN.
func TestGemmDegenerate(t *testing.T) {
	for _, be := range Backends() {
		SetBackend(be.Name())
		c := []float32{float32(math.NaN()), 2, 3, 4}
		Gemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
		if c[0] != 0 || c[3] != 0 {
			t.Errorf("%s: k=0 beta=0: %v", be.Name(), c)
		}
		c = []float32{1, 2, 3, 4}
		Gemm(false, false, 2, 2, 2, 0, []float32{1, 1, 1, 1}, 2, []float32{1, 1, 1, 1}, 2, 2, c, 2)
		if c[0] != 2 || c[3] != 8 {
			t.Errorf("%s: alpha=0 beta=2: %v", be.Name(), c)
		}
		c64 := []float64{1, 2}
		Gemm(false, false, 2, 1, 0, 1, nil, 1, nil, 1, 0.5, c64, 1)
		if c64[0] != 0.5 || c64[1] != 1 {
			t.Errorf("float64 k=0: %v", c64)
		}
	}
	SetBackend(Backends()[0].Name())
}

func TestGemmPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	a := make([]float32, 6)
	mustPanic("short A", func() { Gemm(false, false, 3, 2, 3, 1, a, 3, a, 2, 0, a, 2) })
	mustPanic("bad lda", func() { Gemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, a, 2) })
	mustPanic("bad ldc", func() { Gemm(false, false, 2, 3, 1, 1, a, 1, a, 3, 0, a, 2) })
	mustPanic("short C", func() { Gemm(false, false, 3, 3, 1, 1, a, 1, a, 3, 0, a, 3) })
	mustPanic("negative", func() { Gemm(false, false, -1, 3, 1, 1, a, 1, a, 3, 0, a, 3) })
	mustPanic("serial short C", func() { GemmSerial(false, false, 3, 3, 1, 1, a, 1, a, 3, 0, a, 3) })
}

func TestSetBackend(t *testing.T) {
	if err := SetBackend("no-such-backend"); err == nil {
		t.Fatal("want error")
	}
	for _, be := range Backends() {
		if err := SetBackend(be.Name()); err != nil || BackendName() != be.Name() {
			t.Fatalf("SetBackend(%q): %v, now %q", be.Name(), err, BackendName())
		}
	}
	SetBackend(Backends()[0].Name())
}

// SetThreads caps how many goroutines a ParallelFor runs on at once, below
// GOMAXPROCS, and 0 restores GOMAXPROCS (a server keeps a P free this way).
func TestSetThreadsCapsParallelism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer SetThreads(0)
	for _, tc := range []struct{ threads, wantMax, wantChunks int }{
		{1, 1, 1}, // inline on the caller
		{2, 2, 8}, // 4 chunks per worker
		{3, 3, 12},
		{0, 4, 16}, // GOMAXPROCS
		{9, 4, 16}, // never above GOMAXPROCS
	} {
		SetThreads(tc.threads)
		var active, peak, chunks atomic.Int32
		ParallelFor(1000, 1, func(lo, hi int) {
			chunks.Add(1)
			n := active.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond) // let the others overlap
			active.Add(-1)
		})
		if int(peak.Load()) > tc.wantMax || int(chunks.Load()) != tc.wantChunks {
			t.Errorf("SetThreads(%d) with GOMAXPROCS 4: %d chunks, up to %d at once; want %d chunks, at most %d at once",
				tc.threads, chunks.Load(), peak.Load(), tc.wantChunks, tc.wantMax)
		}
	}
}

// SetWorkerStart's hook runs on the worker goroutines, once per worker
// and change, before the chunks they claim; the caller's chunks do not run
// it.
func TestSetWorkerStart(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2)))
	defer SetWorkerStart(nil)
	var mu sync.Mutex
	started := map[uint64]int{} // hook calls per goroutine
	SetWorkerStart(func() {
		mu.Lock()
		started[goroutineID()]++
		mu.Unlock()
	})
	for range 3 {
		var workerChunks atomic.Int32
		caller := goroutineID()
		ParallelFor(16, 1, func(lo, hi int) {
			time.Sleep(2 * time.Millisecond) // let the workers claim some
			if id := goroutineID(); id != caller {
				workerChunks.Add(1)
				mu.Lock()
				n := started[id]
				mu.Unlock()
				if n != 1 {
					t.Errorf("a worker ran a chunk after %d hook calls, want 1", n)
				}
			}
		})
		if workerChunks.Load() == 0 {
			t.Fatal("no chunk ran on a worker")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := started[goroutineID()]; ok {
		t.Error("the hook ran on the caller")
	}
}

// goroutineID is the calling goroutine's number, from its stack header.
func goroutineID() uint64 {
	var buf [32]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

func TestParallelFor(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 100, 1001} {
		for _, minChunk := range []int{0, 1, 2, 5, 64, 2000} {
			hits := make([]int32, n)
			ParallelFor(n, minChunk, func(lo, hi int) {
				if lo >= hi {
					t.Errorf("n=%d minChunk=%d: empty chunk [%d,%d)", n, minChunk, lo, hi)
				}
				for i := lo; i < hi; i++ {
					hits[i]++ // chunks are disjoint, so no race
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("n=%d minChunk=%d: index %d hit %d times", n, minChunk, i, h)
				}
			}
		}
	}
}
