//go:build goexperiment.simd && amd64

package tensor

// BF16Supported reports whether the bf16 matrix-product path can run here.
func BF16Supported() bool { return false }

func bf16Why() string { return "not implemented yet" }

func sgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return false
}
