package model

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"

	"romae/tensor"
)

// TestTrainingSameOnAnyCoreCount: two training steps (dropout and drop
// path on) and an evaluation pass give the same losses and gradients, to
// the bit, on one core as on two, three or four, for pre-training and
// classification, under fp32 (the chosen back end, and the avx2 one where
// another was chosen) and every bf16 kernel this CPU has, with batches
// that leave the products too small to split (1 sample), split by rows
// (5) and by more rows than the cores' chunks hold (17). The weight
// gradients' products read op(A) = Aᵀ in k blocks of their own; split
// over cores they used the k blocks of the other products, so a run on a
// laptop's cores did not reproduce one on a server's.
func TestTrainingSameOnAnyCoreCount(t *testing.T) {
	if os.Getenv("ROMAE_EMULATED_CPU") != "" {
		t.Skip("minutes under emulation; the AVX2 back end runs it natively")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer tensor.SetThreads(0)
	check := func(t *testing.T, task string) {
		if tensor.BackendName() == "openblas" && !tensor.BF16Operands() {
			t.Skip("OpenBLAS (-tags openblas) splits its sums by its own thread count")
		}
		for _, B := range []int{1, 5, 17} {
			tensor.SetThreads(1)
			wantLoss, want, _ := trainSteps(t, task, B)
			for threads := 2; threads <= 4; threads++ {
				tensor.SetThreads(threads)
				gotLoss, got, _ := trainSteps(t, task, B)
				sameBits(t, fmt.Sprintf("with %d samples on %d cores", B, threads), gotLoss, wantLoss, got, want)
			}
		}
	}
	eachPrecisionTask(t, check)
	if prev := tensor.BackendName(); prev != "avx2" && slices.ContainsFunc(tensor.Backends(), func(b tensor.Backend) bool { return b.Name() == "avx2" }) {
		defer tensor.SetBackend(prev)
		if err := tensor.SetBackend("avx2"); err != nil {
			t.Fatal(err)
		}
		for _, task := range []string{TaskPretrain, TaskClassify} {
			t.Run("fp32-avx2/"+task, func(t *testing.T) { check(t, task) })
		}
	}
}
