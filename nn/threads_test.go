package nn

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"romae/tensor"
)

// The element-wise float32 kernels run a 16-lane vector body and a scalar
// tail that rounds differently; split over cores, every piece has its own
// tail unless the pieces start on 16-element boundaries. Their results
// must not depend on how many cores share the work (a training run is
// then the same on 1 and 2 cores), for sizes that split unevenly.
func TestElementwiseSameOnAnyCoreCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer tensor.SetThreads(0)
	for _, n := range []int{16000, 12345, 50001} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		in, dOut := make([]float32, n), make([]float32, n)
		for i := range in {
			in[i], dOut[i] = float32(6*rng.NormFloat64()), float32(rng.NormFloat64())
		}
		var act, grad [3][]float32
		for k, threads := range []int{1, 2, 3} {
			tensor.SetThreads(threads)
			act[k], grad[k] = make([]float32, n), make([]float32, n)
			SiLUForward(act[k], in, n)
			SiLUBackward(grad[k], dOut, in, n)
		}
		for k := 1; k < 3; k++ {
			for i := range in {
				if act[k][i] != act[0][i] || grad[k][i] != grad[0][i] {
					t.Errorf("n %d, element %d: SiLU %v / gradient %v on %d cores, %v / %v on one", n, i, act[k][i], grad[k][i], k+1, act[0][i], grad[0][i])
					break
				}
			}
		}
	}
}
