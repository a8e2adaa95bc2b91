//go:build goexperiment.simd && amd64 && !race && !openblas

// Not in the openblas build: its cgo test binary is linked externally and
// GNU objdump does not see the Go functions these tests disassemble the way
// it does in the default build (the assembly under test is the same).

package tensor

import (
	"testing"

	"romae/internal/avxaudit"
)

// TestNoSSEAfterAVX checks this package's machine code, as linked into the
// test binary, for the AVX-512 → SSE transition penalty (package avxaudit).
func TestNoSSEAfterAVX(t *testing.T) {
	if len(auditLinked) == 0 {
		t.Fatal("no entry points")
	}
	avxaudit.Check(t, "romae/tensor.", 10)
}

// auditLinked makes sure the package's vector entry points that its own
// tests do not call are linked into the test binary, so they are audited.
var auditLinked = []any{SumSq32, Dot3_32, Dot32, ScaleMul32, RMSNormGrad32, MulAcc32, SoftmaxGrad32,
	AddScaled32, RotatePairs32, Add32, Scale32, Exp32Slice, SiLU32, SiLUGrad32, SoftmaxRow32, MovingAverage32}
