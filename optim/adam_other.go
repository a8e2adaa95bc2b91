//go:build !(goexperiment.simd && amd64)

package optim

func adamVec(w, g, m, v []float32, dm float32, k *adamScalars) int { return 0 }
