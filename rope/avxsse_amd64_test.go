//go:build goexperiment.simd && amd64 && !race && !openblas

// Not in the race build (instrumentation calls out everywhere) nor the
// openblas one (its externally linked cgo binary disassembles differently).

package rope

import (
	"testing"

	"romae/internal/avxaudit"
)

// TestNoSSEAfterAVX checks this package's machine code, as linked into the
// test binary, for the AVX-512 → SSE transition penalty (package avxaudit).
func TestNoSSEAfterAVX(t *testing.T) {
	avxaudit.Check(t, "romae/rope.", 2) // rotateCopy32, rotateCopy32x8
}
