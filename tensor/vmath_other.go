//go:build !(goexperiment.simd && amd64)

package tensor

import "math"

func siluVec(out, in []float32) int           { return 0 }
func siluGradVec(dIn, dOut, in []float32) int { return 0 }
func scaleVec(x []float32, a float32)         { scaleTail(x, a) }

func softmaxMax(s []float32, scale float32, bias []float32) float32 {
	mx := float32(math.Inf(-1))
	for j, v := range s {
		v *= scale
		if bias != nil {
			v += bias[j]
		}
		mx = max(mx, v)
	}
	return mx
}

func softmaxExp(s []float32, scale, mx float32, bias, keep []float32) float32 {
	var sum float32
	for j, v := range s {
		v *= scale
		if bias != nil {
			v += bias[j] // −Inf: e = 0 exactly
		}
		e := Exp32(v - mx)
		s[j] = e
		sum += e
	}
	return sum
}

func expVec(out, in []float32) int { return 0 }
