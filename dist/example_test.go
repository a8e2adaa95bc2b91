package dist_test

import (
	"fmt"
	"sync"

	"romae/dist"
)

// Two ranks sum their gradients; each rank's loss weighs by its share of
// the global batch. Under mpirun each rank is a process and gets its
// communicator from dist.Open; here they are goroutines.
func ExampleNewLoopback() {
	comms := dist.NewLoopback(2)
	sums := make([][]float32, 2)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			lo, hi := dist.Split(5, c.Rank(), c.Size()) // this rank's samples of a batch of 5
			grad := []float32{float32(hi - lo), 1}
			if err := c.AllreduceSum32(grad); err != nil {
				panic(err)
			}
			sums[r] = grad
		})
	}
	wg.Wait()
	fmt.Println(sums[0], sums[1])
	// Output: [5 2] [5 2]
}
