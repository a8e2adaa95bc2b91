//go:build !(goexperiment.simd && amd64)

package rope

func rotateCopy32(dst, src, cos, sin []float32, l Layout, L, heads int, dOff, sOff headStrides, lo, hi int, inverse bool) bool {
	return false
}
