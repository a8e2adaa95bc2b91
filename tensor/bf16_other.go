//go:build !(goexperiment.simd && amd64)

package tensor

import "math"

// BF16Supported reports whether the bf16 matrix-product path can run here.
func BF16Supported() bool { return false }

func bf16Why() string { return "needs a GOEXPERIMENT=simd amd64 build" }

func sgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return false
}

func bf16Backend() Backend { return nil }

func gemmRowsBF16(a *BF16Rows, transB bool, n int, alpha float32, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	return false
}

func roundRowPairs(src []float32, dst []uint32) { roundRowPairsGo(src, dst) }

// RoundBF16 is f rounded to the nearest bfloat16, as a float32.
func RoundBF16(f float32) float32 {
	u := math.Float32bits(f)
	return math.Float32frombits(((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16)
}

func kBlocks() (fp32, bf16, amx int) { return 0, 0, 0 }

func kSplits(backend string) []int { return nil }
