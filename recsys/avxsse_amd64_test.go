//go:build goexperiment.simd && amd64 && !race && !openblas

// Not in the race build (instrumentation calls out everywhere) nor the
// openblas one (its externally linked cgo binary disassembles differently).

package recsys

import (
	"testing"

	"romae/internal/avxaudit"
)

// TestNoSSEAfterAVX checks this package's machine code, as linked into the
// test binary, for the AVX-512 → SSE transition penalty (package avxaudit).
func TestNoSSEAfterAVX(t *testing.T) {
	avxaudit.Check(t, "romae/recsys.", 7) // sineVec, angleGradVec, gram2x4, reluVec, reluGradVec, learnedAnglesVec, anglesBackwardVec (and more where not inlined)
}
