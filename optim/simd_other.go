//go:build !(goexperiment.simd && amd64)

package optim

func adamVec(w, g, m, v []float32, dm float32, k *adamScalars, small bool) int { return 0 }

func sumSquaresVec(x []float32) (float64, int) { return 0, 0 }
