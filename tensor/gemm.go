package tensor

// The matrix-multiply seam. Every matmul in romae (linear layers, attention,
// their gradients) goes through Gemm/GemmSerial, so the float32 back end can
// be swapped at run time (ROMAE_GEMM=<name> or SetBackend) without touching
// the model code.
//
// Measured float32 GFLOP/s, 2 cores (AMD EPYC family 25 model 17 = Zen 4:
// one 512-bit FMA per cycle per core, so peak is ~117 GFLOP/s per core and
// ~234 for the box, not the 670 a 2×512-bit Zen 5 would have):
//
//	GOEXPERIMENT=simd go test -tags openblas ./tensor -run '^$' \
//	    -bench Sgemm -benchtime=0.3s -count=3        (best of 3)
//
//	shape (m×n×k, trans)           avx512  openblas  avx2   gonum
//	qkv    6400×180×180   NN       136–158   116      88     28
//	ffn1   6400×720×180   NN       150–163   172      84     26
//	ffn2   6400×180×720   NN       129–141   156–160  89     27
//	dx     6400×180×720   NT       116–126   156–160  92     27
//	dw     180×180×6400   TN        65–82    131–141  61     15
//	dw     720×180×6400   TN       124–129   145–151  69     16
//	attnQK 96×(200×200×60) NT       85–98     76–85   45–66  17
//	attnPV 96×(200×60×200) NN      106–113    71–75   48–69  17
//
// The box is shared and numbers swing by up to 2× between runs when
// another process holds a core; the ranges are the quiet runs. Single
// core, avx512 does 75–82 (NN) and ~55 (dw) against a 106 in-L1 kernel.
// Hence the default order: openblas (when built with -tags openblas:
// best on the k-heavy weight gradients), then avx512 (best on attention),
// avx2, gonum.
//
// Since then (docs/performance.md): the avx512 back end runs an 8×32
// assembly micro-kernel (gemm_asm_*), splits k-heavy weight gradients
// over k, shares one packed B across its M-split chunks, and has a bf16
// mode (SetPrecision, bf16_*). The table above is the archsimd 4×32
// kernel; the CPU-time comparison is TestSgemmCPUEfficiency.

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Backend is one float32 GEMM implementation. Sgemm has the same contract as
// Gemm: row-major, C = alpha·op(A)·op(B) + beta·C, beta==0 overwrites C.
// Arguments arrive already validated and with m, n, k > 0 and alpha != 0.
type Backend interface {
	Name() string
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// serialBackend is implemented by back ends that can run a product on the
// calling goroutine only (GemmSerial); the others get Sgemm.
type serialBackend interface {
	sgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

type registered struct {
	b    Backend
	rank int // lower is preferred
}

// registry is filled by package-level variable initialisers in the back-end
// files (which Go runs before any init func), so init below sees them all.
var registry []registered

// register adds a back end if this CPU can run it. rank orders the default
// preference (lower first); the ranks come from benchmarks on the target box.
func register(b Backend, rank int, supported bool) bool {
	if supported {
		registry = append(registry, registered{b, rank})
		sort.SliceStable(registry, func(i, j int) bool { return registry[i].rank < registry[j].rank })
	}
	return supported
}

var current atomic.Pointer[Backend]

func init() {
	if len(registry) == 0 {
		panic("tensor: no GEMM back end registered")
	}
	b := registry[0].b
	current.Store(&b)
	if name := os.Getenv("ROMAE_GEMM"); name != "" {
		if err := SetBackend(name); err != nil {
			fmt.Fprintf(os.Stderr, "tensor: ROMAE_GEMM: %v; using %s\n", err, b.Name())
		}
	}
}

// Backends returns every back end compiled in and supported by this CPU, in
// preference order.
func Backends() []Backend {
	out := make([]Backend, len(registry))
	for i, r := range registry {
		out[i] = r.b
	}
	return out
}

// SetBackend selects the float32 back end by name, or, given a bf16
// kernel's name (amx, avx512-bf16: see dispatch.go), the kernel bf16
// products run on.
func SetBackend(name string) error {
	if found, err := setBF16Kernel(name); found {
		return err
	}
	for _, r := range registry {
		if r.b.Name() == name {
			b := r.b
			current.Store(&b)
			return nil
		}
	}
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.b.Name()
	}
	for _, k := range BF16Kernels() {
		if k != bf16KernelNames[bf16OnFP32] {
			names = append(names, k+" (bf16)")
		}
	}
	return fmt.Errorf("unknown GEMM back end %q (available: %s)", name, strings.Join(names, ", "))
}

// BackendName is the name of the float32 back end in use.
func BackendName() string { return (*current.Load()).Name() }

// Gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices.
// op(A) is m×k (A is m×k, or k×m when transA), op(B) is k×n (B is k×n, or
// n×k when transB), C is m×n; lda, ldb, ldc are row strides in elements.
// beta==0 overwrites C, so NaN/garbage already in C does not leak through.
// float32 goes to the selected Backend, float64 to gonum (gradient checks).
func Gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm("Gemm", false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmSerial is Gemm on the calling goroutine alone, for callers that
// already spread independent products over the cores (fused attention
// runs one (sample, head) per task), where a product that split itself
// would only add hand-offs.
func GemmSerial[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm("GemmSerial", true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemm is Gemm and GemmSerial: the checks and the k = 0 / alpha = 0 case,
// then the float32 back end (its single-core product when serial and it
// has one) or gonum for float64.
func gemm[T Float](fn string, serial, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkGemm(fn, transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if is32[T]() {
		a32, b32, c32 := as32(a), as32(b), as32(c)
		be := f32Backend()
		if sb, ok := be.(serialBackend); serial && ok {
			sb.sgemmSerial(transA, transB, m, n, k, float32(alpha), a32, lda, b32, ldb, float32(beta), c32, ldc)
			return
		}
		be.Sgemm(transA, transB, m, n, k, float32(alpha), a32, lda, b32, ldb, float32(beta), c32, ldc)
		return
	}
	dgemm(transA, transB, m, n, k, float64(alpha), as64(a), lda, as64(b), ldb, float64(beta), as64(c), ldc)
}

// checkGemm panics on shapes/strides/lengths that cannot be right; these are
// programmer errors, and a clear message beats an index panic deep in a kernel.
func checkGemm(fn string, transA, transB bool, m, n, k, lenA, lda, lenB, ldb, lenC, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("tensor.%s: negative dimension m=%d n=%d k=%d", fn, m, n, k))
	}
	ar, ac := m, k // A as stored
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if lda < max(1, ac) {
		panic(fmt.Sprintf("tensor.%s: lda=%d < %d columns of A (transA=%v, m=%d k=%d)", fn, lda, ac, transA, m, k))
	}
	if ldb < max(1, bc) {
		panic(fmt.Sprintf("tensor.%s: ldb=%d < %d columns of B (transB=%v, k=%d n=%d)", fn, ldb, bc, transB, k, n))
	}
	if ldc < max(1, n) {
		panic(fmt.Sprintf("tensor.%s: ldc=%d < n=%d", fn, ldc, n))
	}
	if m == 0 || n == 0 {
		return
	}
	if need := span(ar, ac, lda); lenA < need {
		panic(fmt.Sprintf("tensor.%s: A has %d elements, needs %d (%d×%d, lda=%d)", fn, lenA, need, ar, ac, lda))
	}
	if need := span(br, bc, ldb); lenB < need {
		panic(fmt.Sprintf("tensor.%s: B has %d elements, needs %d (%d×%d, ldb=%d)", fn, lenB, need, br, bc, ldb))
	}
	if need := span(m, n, ldc); lenC < need {
		panic(fmt.Sprintf("tensor.%s: C has %d elements, needs %d (%d×%d, ldc=%d)", fn, lenC, need, m, n, ldc))
	}
}

// span is how many elements a rows×cols matrix with row stride ld occupies.
func span(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// is32 tells float32-like T from float64-like T. Size rather than a type
// switch, so named element types (type F float32) also reach the fast path.
func is32[T Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// as32/as64 reinterpret a []T whose element is float32/float64 underneath;
// callers have checked the size, and ~float32 has float32's memory layout.
func as32[T Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func as64[T Float](s []T) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// scaleC is C = beta·C, the whole answer when k==0 or alpha==0 (handled here
// so back ends never see it; gonum would also reject k==0 with a short A).
// beta==0 stores zeros rather than multiplying, so NaN in C does not survive.
func scaleC[T Float](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// dgemm is the float64 path: gonum, only used by gradient checks, so
// correctness is all that matters. gonum's beta==0 path zeroes C.
func dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gonum.Implementation{}.Dgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// threads caps workers (0: no cap).
var threads atomic.Int32

// openblasThreads, set in OpenBLAS builds, sizes OpenBLAS's own pool.
var openblasThreads func(n int)

// SetThreads caps how many goroutines a product or a ParallelFor call
// splits over at n (n ≤ 0: GOMAXPROCS, the default). A server sets it
// below GOMAXPROCS so that a P stays free for its network goroutines:
// with every P in a long product, a goroutine the network wakes waits
// for Go's 10 ms preemption (docs/serving.md).
func SetThreads(n int) {
	threads.Store(int32(max(n, 0)))
	if openblasThreads != nil {
		openblasThreads(workers())
	}
}

// Workers is how many goroutines a product or ParallelFor may be split
// over: GOMAXPROCS, or fewer after SetThreads.
func Workers() int { return workers() }

func workers() int {
	w := runtime.GOMAXPROCS(0)
	if t := int(threads.Load()); t > 0 && t < w {
		return t
	}
	return w
}

// Default preference (lower first), from the measurements at the top of
// this file.
const (
	rankOpenBLAS = 10
	rankAVX512   = 20
	rankAVX2     = 30
	rankGonum    = 40
)

// f32Backend is the back end float32 products go to: the selected one, or
// the bf16-capable one while the precision is bf16.
func f32Backend() Backend {
	if bf16On.Load() {
		if b := bf16Backend(); b != nil {
			return b
		}
	}
	return *current.Load()
}
