package tensor

import (
	"fmt"
	"os"
	"sync/atomic"
)

// Precision of the float32 matrix products. float64 products (gradient
// checks) are always exact float64.
//
//	"fp32": float32 operands, float32 accumulation (default).
//	"bf16": operands rounded to bfloat16 (8-bit mantissa, round to nearest
//	        even), products accumulated in float32. Weights, activations,
//	        gradients and optimiser state stay float32 everywhere else
//	        ("mixed precision": float32 master weights).
const (
	PrecisionFP32 = "fp32"
	PrecisionBF16 = "bf16"
)

var bf16On atomic.Bool

// ROMAE_PRECISION=bf16 turns the bf16 path on for any command (training,
// experiments) without a flag; refused with a warning where unsupported.
func init() {
	if p := os.Getenv("ROMAE_PRECISION"); p != "" {
		if err := SetPrecision(p); err != nil {
			fmt.Fprintf(os.Stderr, "tensor: ROMAE_PRECISION: %v; using fp32\n", err)
		}
	}
}

// SetPrecision selects the matrix-product precision. "bf16" is refused on
// a build or CPU that has no bf16 path.
func SetPrecision(p string) error {
	switch p {
	case PrecisionFP32, "":
		bf16On.Store(false)
		return nil
	case PrecisionBF16:
		if !BF16Supported() {
			return fmt.Errorf("precision bf16: %s", bf16Why())
		}
		checkBF16Kernel()
		bf16On.Store(true)
		return nil
	}
	return fmt.Errorf("precision %q: want fp32 or bf16", p)
}

// Precision is the matrix-product precision in use.
func Precision() string {
	if bf16On.Load() {
		return PrecisionBF16
	}
	return PrecisionFP32
}
