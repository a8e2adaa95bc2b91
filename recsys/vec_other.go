//go:build !(goexperiment.simd && amd64)

package recsys

// sineVec has no vector path in this build: the caller does every element.
func sineVec(out, deriv, pre []float32, w0 float32) int { return 0 }

// angleGradVec has no vector path in this build.
func angleGradVec(dAngles, yq, dq, yk, dk []float32, B, L, H, hd, R int) bool { return false }
