package tensor

import (
	"runtime"
	"sync"
)

// ParallelFor splits [0,n) into contiguous chunks over runtime.GOMAXPROCS(0)
// workers and calls fn(lo, hi) for each chunk. It runs fn(0, n) inline when
// n < minChunk*2 or GOMAXPROCS is 1, because on a 2-core box a goroutine
// hand-off (~1µs) costs more than small element-wise loops. Chunks are
// contiguous so each worker streams through its own region of memory. The
// last chunk runs on the calling goroutine, which saves one hand-off and
// keeps the caller busy instead of parked. Returns when all chunks are done.
func ParallelFor(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if minChunk < 1 {
		minChunk = 1
	}
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 || n < minChunk*2 {
		fn(0, n)
		return
	}
	chunks := min(workers, n/minChunk)
	var wg sync.WaitGroup
	wg.Add(chunks - 1)
	// Chunk i is [i*n/chunks, (i+1)*n/chunks): sizes differ by at most one.
	for i := 0; i < chunks-1; i++ {
		lo, hi := i*n/chunks, (i+1)*n/chunks
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	fn((chunks-1)*n/chunks, n)
	wg.Wait()
}
