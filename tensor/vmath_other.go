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

func sumSqVec(x []float32) (float32, int)                             { return 0, 0 }
func dot3Vec(a, b, c []float32) (float32, int)                        { return 0, 0 }
func dotVec(a, b []float32) (float32, int)                            { return 0, 0 }
func scaleMulVec(y, x, g []float32, s float32) int                    { return 0 }
func rmsGradVec(dx, dy, g, x []float32, s, c float32, accum bool) int { return 0 }
func mulAccVec(acc, a, b []float32, s float32) int                    { return 0 }
func addScaledVec(out, x, y []float32, s float32) int                 { return 0 }
func movingAverageVec(avg, x []float32, d float32) int                { return 0 }
func rotateVec(y1, y2, x1, x2, c, s []float32, sign float32) int      { return 0 }
func softmaxGradVec(ds, p []float32, dot, scale float32) int          { return 0 }

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for j := range dst {
		dst[j] += src[j]
	}
}

func vectorLanes() int { return 1 }
