//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkGemmKernels runs the model's product shapes (benchShapes) on
// every kernel this CPU has, side by side in one run: the fp32 back end
// and each bf16 kernel (amx, avx512-bf16). GFLOP/s counts 2·m·n·k per
// product over the wall time of both cores.
//
//	GOEXPERIMENT=simd go test ./tensor -run '^$' -bench GemmKernels
func BenchmarkGemmKernels(b *testing.B) {
	defer SetPrecision(Precision())
	defer bf16Kernel.Store(bf16Kernel.Load())
	kernels := []string{"fp32"}
	for _, k := range BF16Kernels() {
		if k != bf16KernelNames[bf16OnFP32] {
			kernels = append(kernels, k)
		}
	}
	for _, sh := range benchShapes {
		for _, kern := range kernels {
			b.Run(fmt.Sprintf("%s/%s", sh.name, kern), func(b *testing.B) {
				if kern == "fp32" {
					SetPrecision(PrecisionFP32)
				} else {
					if err := SetPrecision(PrecisionBF16); err != nil {
						b.Fatal(err)
					}
					if _, err := setBF16Kernel(kern); err != nil {
						b.Fatal(err)
					}
				}
				benchShapeRun(b, sh)
			})
		}
	}
}
