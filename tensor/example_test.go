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
