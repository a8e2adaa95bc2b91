//go:build !(goexperiment.simd && amd64)

package recsys

// sineVec has no vector path in this build: the caller does every element.
func sineVec(out, deriv, pre []float32, w0 float32) int { return 0 }

// angleGradVec has no vector path in this build.
func angleGradVec(dAngles, yq, dq, yk, dk []float32, B, L, H, hd, R int) bool { return false }

// gramVec has no vector path in this build.
func gramVec(c, a []float32, ra int, b []float32, rb, n int) bool { return false }

// reluVec has no vector path in this build.
func reluVec(out, pre []float32) int { return 0 }

// reluGradVec has no vector path in this build.
func reluGradVec(d, h []float32) int { return 0 }

// learnedAnglesVec has no vector path in this build.
func learnedAnglesVec(angles, f, omega, pos []float32, lambda float64, theta []float64, N, R int) int {
	return 0
}

// anglesBackwardVec has no vector path in this build.
func anglesBackwardVec(dF, dOmega, dAngles, f, omega, pos []float32, theta []float64, N, R int) (float32, int) {
	return 0, 0
}

// timeFeaturesVec has no vector path in this build.
func timeFeaturesVec(x []float32, n int, ts []float64) int { return 0 }
