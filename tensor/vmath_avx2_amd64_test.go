//go:build goexperiment.simd && amd64

package tensor

import "testing"

// TestVMathAVX2 runs the element-wise tests again on the 8-lane AVX2 code
// a CPU without AVX-512 takes (hasAVX512 off), so an AVX-512 test machine
// checks that code too: exp's accuracy, overflow and gradual underflow,
// SiLU, softmax with masked keys, RoPE's rotation, the row primitives,
// and the scalar tails after the vectors.
func TestVMathAVX2(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("this CPU lacks AVX2 and FMA")
	}
	defer func(v bool) { hasAVX512 = v }(hasAVX512)
	hasAVX512 = false
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Exp32Accuracy", TestExp32Accuracy},
		{"Exp32Edges", TestExp32Edges},
		{"SiLU32", TestSiLU32},
		{"SoftmaxRow32", TestSoftmaxRow32},
		{"DotAndSoftmaxGrad32Tails", TestDotAndSoftmaxGrad32Tails},
		{"RotatePairs32", TestRotatePairs32},
		{"RowPrimitives32", TestRowPrimitives32},
	} {
		t.Run(tc.name, tc.run)
	}
}
