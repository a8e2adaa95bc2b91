//go:build !(goexperiment.simd && amd64)

package optim

import "testing"

func eachVectorWidth(t *testing.T, f func(t *testing.T)) { t.Run("native", f) }
