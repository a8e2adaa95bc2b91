//go:build goexperiment.simd && amd64

package optim

import "testing"

// eachVectorWidth runs f on the vector code this CPU would take and, on an
// AVX-512 CPU that also has AVX2, again on the 8-lane code the CPUs
// without AVX-512 take.
func eachVectorWidth(t *testing.T, f func(t *testing.T)) {
	t.Run("native", f)
	if hasAVX512 && hasAVX2FMA {
		t.Run("avx2", func(t *testing.T) {
			hasAVX512 = false
			defer func() { hasAVX512 = true }()
			f(t)
		})
	}
}
