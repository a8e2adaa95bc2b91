//go:build openblas && cgo

// Package openblas binds OpenBLAS's cblas_sgemm through cgo. It lives apart
// from package tensor because Go refuses Go assembly files (tensor's AVX-512
// and bf16 kernels) in a package that uses cgo.
package openblas

// #cgo LDFLAGS: -lopenblas
// #include <cblas.h>
import "C"

import "unsafe"

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices, as
// cblas_sgemm does.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	C.cblas_sgemm(C.CblasRowMajor, cblasTrans(transA), cblasTrans(transB),
		C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

func cblasTrans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// SetThreads sizes OpenBLAS's thread pool.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
