package serve

import (
	"runtime"

	"romae/tensor"
)

// ReserveNetworkP sizes this process for serving: the forward passes'
// matrix products split over compute goroutines (GOMAXPROCS when compute
// ≤ 0) and GOMAXPROCS becomes compute+1, so that one P is always free for
// the goroutines that accept connections, read requests and answer them.
// Without it a forward pass holds every P, a connection the network makes
// ready is only noticed when the compute blocks or by the runtime's 10 ms
// poll, and its goroutine then waits for a P: refusals the handler answers
// in 0.1 ms reached the client after 5 ms (median) to 20 ms (p99) on
// 2 cores (docs/serving.md). The spare P is idle but while requests are
// handled, and its thread sleeps in the network poller, so the compute
// keeps its cores. It changes process-wide settings (runtime.GOMAXPROCS,
// tensor.SetThreads): call it once, at start, as romae serve does. It
// returns compute.
func ReserveNetworkP(compute int) int {
	if compute <= 0 {
		compute = runtime.GOMAXPROCS(0)
	}
	tensor.SetThreads(compute)
	runtime.GOMAXPROCS(compute + 1)
	return compute
}
