package serve

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"romae/model"
	"romae/tensor"
)

// With ReserveNetworkP, a request is answered while a forward pass holds
// every compute thread: here the pass spins for 0.3 s or more in loops the
// runtime cannot preempt, and requests sent every 2 ms during it must be
// refused (the queue is full) within 100 ms each. Without the spare P they
// would wait for the pass to end. The loops are only unpreemptible with
// GODEBUG=asyncpreemptoff=1, which the runtime reads at start, so the test
// runs itself in a child process.
func TestRefusalDoesNotWaitForCompute(t *testing.T) {
	if !inChild(t, "GODEBUG=asyncpreemptoff=1") {
		return
	}
	// A collection would stop the world, which waits for the spinning
	// loops too.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer tensor.SetThreads(0)
	compute := ReserveNetworkP(2)

	const (
		chunks = 8                      // ParallelFor pieces of the pass
		chunk  = 75 * time.Millisecond  // each, on an idle core
		bound  = 100 * time.Millisecond // per refusal
	)
	perChunk := spinIterations(chunk)
	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	ts := startServer(t, path, Config{MaxBatch: 1, QueueSamples: 1, Limits: Limits{MaxBodyBytes: 1 << 20, MaxSamples: 1,
		MaxTokens: 64, MaxQueries: 8, MaxAbsValue: 1e6, MaxAbsPosition: 1e6}})
	entered, gate := make(chan struct{}), make(chan struct{})
	var spinStart, spinEnd atomic.Int64 // unix ns
	var passes atomic.Int32
	hook := func(string) {
		if passes.Add(1) != 1 {
			return // only the first pass spins
		}
		close(entered)
		<-gate
		spinStart.Store(time.Now().UnixNano())
		// Chunks are claimed by the caller and the pool's workers: as
		// many goroutines as the compute may use spin at once.
		tensor.ParallelFor(chunks, 1, func(lo, hi int) {
			for range hi - lo {
				spinSink.Add(spin(perChunk))
			}
		})
		spinEnd.Store(time.Now().UnixNano())
	}
	ts.bat.beforeForward.Store(&hook)

	body := requestBody(synthSamples(1), nil, nil)
	codes := make(chan int, 2)
	go func() { c, _, _ := ts.post(t, "/v1/predict", body); codes <- c }()
	<-entered // the batcher holds the first request
	go func() { c, _, _ := ts.post(t, "/v1/predict", body); codes <- c }()
	waitFor(t, "a full queue", func() bool { return ts.bat.full() })

	type answer struct {
		code       int
		start, end time.Time
	}
	answers := make(chan []answer, 1)
	var stop atomic.Bool
	go func() {
		var as []answer
		for !stop.Load() {
			start := time.Now()
			c, _, _ := ts.post(t, "/v1/predict", body)
			as = append(as, answer{c, start, time.Now()})
			time.Sleep(2 * time.Millisecond) // a client, not a busy loop
		}
		answers <- as
	}()
	time.Sleep(20 * time.Millisecond) // the refusals flow, then the pass spins
	close(gate)
	for range 2 {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("a queued request got %d", c)
		}
	}
	stop.Store(true)
	as := <-answers

	from, to := time.Unix(0, spinStart.Load()), time.Unix(0, spinEnd.Load())
	t.Logf("compute threads %d, GOMAXPROCS %d; the pass spun %v; %d requests sent meanwhile", compute, runtime.GOMAXPROCS(0), to.Sub(from).Round(time.Millisecond), len(as))
	during, slowest := 0, time.Duration(0)
	for _, a := range as {
		if a.start.Before(to) {
			slowest = max(slowest, a.end.Sub(a.start))
		}
		if a.code == http.StatusTooManyRequests && a.start.After(from) && a.end.Before(to) {
			during++
		}
	}
	if slowest > bound {
		t.Errorf("a request sent before the pass ended took %v to answer; want under %v", slowest, bound)
	}
	if during < 5 {
		t.Errorf("%d requests were refused while the pass spun (%v); want at least 5", during, to.Sub(from))
	}
}

// spinSink keeps the spinning loops' results alive.
var spinSink atomic.Uint64

// spin runs a loop without calls, which the runtime cannot preempt when
// asynchronous preemption is off.
func spin(n int) uint64 {
	x := uint64(n)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// spinIterations is how many iterations of spin last about d on this
// core (the fastest of a few tries, so that contention only lengthens the
// spin).
func spinIterations(d time.Duration) int {
	const n = 1 << 22
	best := time.Hour
	for range 5 {
		start := time.Now()
		spinSink.Add(spin(n))
		best = min(best, time.Since(start))
	}
	return int(float64(n) * float64(d) / float64(max(best, time.Microsecond)))
}
