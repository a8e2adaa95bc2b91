package tensor_test

import (
	"fmt"

	"romae/tensor"
)

// A weight that no longer changes (a served model's) is packed once; every
// product then reads the packed copy instead of re-packing W. The result
// is the same as Gemm on W as stored.
func ExamplePackWeight() {
	const out, in, rows = 2, 3, 2
	w := []float32{ // [out, in], as a Linear layer stores it
		1, 0, 2,
		0, 1, -1,
	}
	x := []float32{ // [rows, in]
		1, 2, 3,
		4, 5, 6,
	}
	pw := tensor.PackWeight(w, out, in)
	y := make([]float32, rows*out)
	tensor.GemmPacked(rows, 1, x, in, pw, 0, y, out) // y = x·Wᵀ
	fmt.Println(y)
	// Output: [7 -1 16 -1]
}

// A layer whose output only feeds a bf16 product stores it rounded, once,
// as BF16Rows; the product reads it in place. Where products run in
// float32 (the default precision) the same call runs on the rounded
// values widened back, so the result is the same everywhere for values
// bf16 holds exactly.
func ExampleGemmBF16Rows() {
	const rows, in, out = 2, 3, 2
	x := []float32{ // [rows, in], e.g. an RMSNorm's output
		1, 2, 3,
		4, 5, 6,
	}
	var xb tensor.BF16Rows
	xb.Resize(rows, in)
	xb.Store(0, rows, x, in) // a producer stores rows as it computes them
	w := []float32{          // [out, in]
		1, 0, 2,
		0, 1, -1,
	}
	y := make([]float32, rows*out)
	tensor.GemmBF16Rows(&xb, true, out, 1, w, in, 0, y, out) // y = x·Wᵀ
	fmt.Println(y)
	// Output: [7 -1 16 -1]
}
