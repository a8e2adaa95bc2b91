package tensor

import (
	"gonum.org/v1/gonum/blas/gonum"
)

// gonumBackend is the portable fallback: pure Go, row-major already, and
// parallel inside for large products. Always compiled, always supported.
type gonumBackend struct{}

func (gonumBackend) Name() string { return "gonum" }

func (gonumBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gonum.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

var _ = register(gonumBackend{}, rankGonum, true)
