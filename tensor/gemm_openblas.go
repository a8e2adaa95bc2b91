//go:build openblas && cgo

package tensor

// #cgo LDFLAGS: -lopenblas
// #include <cblas.h>
import "C"

import (
	"runtime"
	"unsafe"
)

// openblasBackend calls OpenBLAS cblas_sgemm through cgo. Build with
// -tags openblas (needs libopenblas-dev). Each call costs a cgo transition
// (~100ns), which is noise next to even the small attention products.
type openblasBackend struct{}

func (openblasBackend) Name() string { return "openblas" }

func (openblasBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
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

var _ = register(openblasBackend{}, rankOpenBLAS, initOpenBLAS())

// initOpenBLAS pins OpenBLAS's pool to GOMAXPROCS: by default it sizes itself
// to the machine, which oversubscribes when GOMAXPROCS was lowered.
func initOpenBLAS() bool {
	C.openblas_set_num_threads(C.int(runtime.GOMAXPROCS(0)))
	return true
}
