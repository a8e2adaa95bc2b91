//go:build !(goexperiment.simd && amd64)

package tensor

// Without the avx512 kernel there is no packed layout: GemmPacked uses W
// as stored.

func packWeight32(dst, w []float32, n, k int) ([]float32, int) { return nil, 0 }

func packedKC32(n, k int) int { return 0 }

func asmActive() bool { return false }

func gemmPacked32(w, m, n, k, kc int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) bool {
	return false
}

func packWeightBF16(dst []uint32, w []float32, n, k int) ([]uint32, int32) { return nil, 0 }

func gemmPackedBF16(w int, kern int32, a bfA, m, n, k int, alpha float32, bp []uint32, beta float32, c []float32, ldc int) bool {
	return false
}

func packedWorkers(m, n, k int) int { return 1 }

// PrefetchRows is a hint with no effect on this build.
func PrefetchRows[T Float](x []T, rows, ld, n int) {}

// linearGrads32 has no fused form on this build.
func linearGrads32(dIn, dW, dOut, in []float32, inRows *BF16Rows, w []float32, n, i, o int, accumIn bool) bool {
	return false
}

func dWFromRows(dW, dOut []float32, in *BF16Rows, n, i, o int) bool { return false }
