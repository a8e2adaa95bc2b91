package tensor

import (
	"sync"
	"sync/atomic"
	"time"
)

// ParallelFor splits [0,n) into contiguous chunks and calls fn(lo, hi) for
// each, on the calling goroutine and a persistent pool of GOMAXPROCS(0)−1
// workers (fewer after SetThreads). It runs fn(0, n) inline when
// n < minChunk*2 or there is one worker, because on a 2-core box a
// hand-off (~1–5 µs) costs more than small element-wise loops. Returns when all chunks are done.
//
// Chunks are claimed, not assigned: the caller and any worker that picks
// the call up take the next unclaimed chunk until none is left. So a core
// that another process is holding simply claims fewer chunks (the box is
// shared; a static split waited for the slow core), a busy pool never
// deadlocks a nested call (the caller can run every chunk itself), and no
// goroutine is spawned per call. When n allows, there are up to 4 chunks
// per worker for that balancing; chunks stay contiguous so each one
// streams through its own region of memory.
//
// With minChunk ≥ 16 the inner chunk boundaries are multiples of 16, so an
// element-wise vector kernel (16 float32 lanes, then a scalar tail that
// rounds differently) splits [0,n) into body and tail the same way however
// many cores share it: results do not depend on the core count.
func ParallelFor(n, minChunk int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if minChunk < 1 {
		minChunk = 1
	}
	w := workers()
	if w <= 1 || n < minChunk*2 {
		fn(0, n)
		return
	}
	align := 0
	if minChunk >= pfAlign {
		align = pfAlign
	}
	parallelChunks(n, min(4*w, n/minChunk), w, align, fn)
}

// pfAlign is ParallelFor's chunk alignment: AVX-512's float32 lanes.
const pfAlign = 16

// parallelChunks runs fn over exactly chunks pieces of [0,n) on the caller
// and up to workers−1 pool workers, the inner boundaries rounded down to
// multiples of align (0: not rounded). A GEMM whose chunks each pack their
// own copy of the shared operand uses few chunks, as more would repeat
// that work.
func parallelChunks(n, chunks, workers, align int, fn func(lo, hi int)) {
	if chunks <= 1 || workers <= 1 {
		fn(0, n)
		return
	}
	t := &pfTask{fn: fn, n: n, chunks: chunks, align: align}
	t.wg.Add(chunks)
	pfStart(workers - 1)
	// Offer the call to every worker that is idle; a full queue means the
	// pool is busy and the caller does the work.
	for range min(workers-1, chunks-1) {
		select {
		case pfQueue <- t:
		default:
		}
	}
	t.run()
	// The last chunks are usually a few µs from done: poll for them
	// before sleeping, as the workers poll for the next call.
	for start := time.Now(); t.done.Load() < int32(chunks) && time.Since(start) < pfSpin; {
	}
	t.wg.Wait()
}

// pfSpin is how long a pool worker polls for the next call before it
// sleeps, and a caller for its last chunks. A forward pass is hundreds of
// parallel calls a few hundred µs apart; waking a sleeping goroutine
// costs ~7 µs at each end of a call (measured on the Zen 4 KVM guest),
// about a tenth of a lone 200-token pass. Polling this long after each
// call costs at most that much CPU when no call follows.
const pfSpin = 50 * time.Microsecond

// pfTask is one ParallelFor call: chunk i is [b(i), b(i+1)) with b(i) =
// i*n/chunks, rounded down to a multiple of align when align > 0 (b(chunks)
// stays n).
type pfTask struct {
	fn               func(lo, hi int)
	n, chunks, align int
	next, done       atomic.Int32
	wg               sync.WaitGroup
}

func (t *pfTask) run() {
	c := t.chunks
	for {
		i := int(t.next.Add(1)) - 1
		if i >= c {
			return
		}
		t.fn(t.bound(i), t.bound(i+1))
		t.done.Add(1)
		t.wg.Done()
	}
}

func (t *pfTask) bound(i int) int {
	b := i * t.n / t.chunks
	if t.align > 0 && i < t.chunks {
		b -= b % t.align
	}
	return b
}

var (
	pfQueue   = make(chan *pfTask, 64)
	pfMu      sync.Mutex
	pfWorkers int
)

// pfStart makes sure at least want workers are running. They idle blocked
// on the queue, which costs nothing between calls.
func pfStart(want int) {
	if int(pfCount.Load()) >= want {
		return
	}
	pfMu.Lock()
	defer pfMu.Unlock()
	for pfWorkers < want {
		pfWorkers++
		go poolWorker()
	}
	pfCount.Store(int32(pfWorkers))
}

var pfCount atomic.Int32

// SetWorkerStart makes every pool worker call start once, on its own
// goroutine, before the next chunk it runs; every call counts as a change,
// so calling it again with the same function runs it again on each worker.
// A server uses it to lock the workers to OS threads and set those
// threads' scheduling class (serve.SetComputePriority); nil removes the
// hook.
func SetWorkerStart(start func()) {
	if start == nil {
		workerStart.Store(nil)
	} else {
		workerStart.Store(&start)
	}
	workerStartGen.Add(1)
}

var (
	workerStart    atomic.Pointer[func()]
	workerStartGen atomic.Int64
)

// pfNext is a worker's next call: polled for pfSpin, then waited for.
func pfNext() *pfTask {
	for start := time.Now(); time.Since(start) < pfSpin; {
		if len(pfQueue) > 0 {
			select {
			case t := <-pfQueue:
				return t
			default: // another worker took it
			}
		}
	}
	return <-pfQueue
}

// poolWorker is one pool goroutine, for the life of the process (the
// queue is never closed), calling the SetWorkerStart hook whenever it
// changed since its last task.
func poolWorker() {
	var seen int64
	for {
		t := pfNext()
		if g := workerStartGen.Load(); g != seen {
			seen = g
			if f := workerStart.Load(); f != nil {
				(*f)()
			}
		}
		t.run()
	}
}
