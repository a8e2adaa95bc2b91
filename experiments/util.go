package experiments

import "math"

func sqrt(x float64) float64 { return math.Sqrt(math.Max(x, 0)) }
