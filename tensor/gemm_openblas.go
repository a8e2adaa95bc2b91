//go:build openblas && cgo

package tensor

import (
	"runtime"

	"romae/tensor/internal/openblas"
)

// openblasBackend calls OpenBLAS cblas_sgemm through cgo. Build with
// -tags openblas (needs libopenblas-dev). Each call costs a cgo transition
// (~100ns), which is noise next to even the small attention products.
type openblasBackend struct{}

func (openblasBackend) Name() string { return "openblas" }

func (openblasBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

var _ = register(openblasBackend{}, rankOpenBLAS, initOpenBLAS())

// initOpenBLAS pins OpenBLAS's pool to GOMAXPROCS: by default it sizes itself
// to the machine, which oversubscribes when GOMAXPROCS was lowered.
// SetThreads re-pins it.
func initOpenBLAS() bool {
	openblasThreads = openblas.SetThreads
	openblas.SetThreads(runtime.GOMAXPROCS(0))
	return true
}
