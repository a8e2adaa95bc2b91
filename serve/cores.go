package serve

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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

// Compute priorities (SetComputePriority).
const (
	// PriorityNormal leaves the compute threads in the normal class.
	PriorityNormal = "normal"
	// PriorityIdle runs the forward passes on SCHED_IDLE threads always.
	PriorityIdle = "idle"
	// PriorityOverload runs them on SCHED_IDLE threads while the server is
	// refusing requests (a 429 within the last overloadHold), normal
	// otherwise.
	PriorityOverload = "overload"
)

// overloadHold is how long after its last 429 an "overload" server keeps
// its compute idle-class.
var overloadHold = time.Second

// SetComputePriority chooses the scheduling class of the threads that run
// the forward passes (the batcher's goroutine and the tensor pool's
// workers, locked to their OS threads when the class is not normal).
// Linux's SCHED_IDLE class yields a core at once to any normal thread that
// wakes — the network thread with a request to read or refuse — where a
// normal compute thread keeps its core until the scheduler's time slice
// ends: on 2 cores, refusals waited 5–6 ms at p99 for that (docs/serving.md,
// "Idle compute"). The price of "idle" is that the compute also yields to
// every other thread of its cgroup, the load generator's in a benchmark
// and another job's on a shared machine, so it is only worth it while the
// server is refusing: "overload" switches the class on at a 429 and back
// after a quiet overloadHold, leaving throughput below saturation alone.
// Call it once, at start, before the server runs; it fails, changing
// nothing, where the class is not available.
func SetComputePriority(mode string) error {
	switch mode {
	case PriorityNormal:
		return nil
	case PriorityIdle, PriorityOverload:
	default:
		return fmt.Errorf("compute priority %q: want %s, %s or %s", mode, PriorityNormal, PriorityIdle, PriorityOverload)
	}
	// Probe on a thread that is thrown away: a goroutine that exits locked
	// takes its thread with it, so no idle thread returns to Go's pool.
	probe := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		probe <- setThreadPolicy(true)
	}()
	if err := <-probe; err != nil {
		return err
	}
	priority.mode.Store(mode == PriorityIdle)
	priority.adaptive.Store(mode == PriorityOverload)
	priority.idle.Store(mode == PriorityIdle)
	tensor.SetWorkerStart(applyComputePolicy)
	return nil
}

// priority is the process's compute class: idle is what the compute
// threads should be in now; each applies it before its next piece of work
// (tensor.SetWorkerStart runs applyComputePolicy on every worker after
// each change, the batcher checks before each forward pass). mode is
// "idle", adaptive "overload".
var priority struct {
	mode, adaptive, idle atomic.Bool
	lastRefusal          atomic.Int64 // unix ns
	locked               sync.Map     // thread ids locked by applyComputePolicy
}

// computeManaged reports whether SetComputePriority chose a class other
// than normal, so the compute threads are locked and follow priority.idle.
func computeManaged() bool { return priority.mode.Load() || priority.adaptive.Load() }

// noteRefusal records a 429: an "overload" server turns its compute
// idle-class at once.
func noteRefusal() {
	if !priority.adaptive.Load() {
		return
	}
	priority.lastRefusal.Store(time.Now().UnixNano())
	if priority.idle.CompareAndSwap(false, true) {
		tensor.SetWorkerStart(applyComputePolicy)
	}
}

// settleComputePolicy turns an "overload" server's compute back to normal
// once overloadHold has passed without a 429; the batcher calls it before
// each forward pass.
func settleComputePolicy() {
	if !priority.adaptive.Load() || !priority.idle.Load() {
		return
	}
	if time.Since(time.Unix(0, priority.lastRefusal.Load())) > overloadHold && priority.idle.CompareAndSwap(true, false) {
		tensor.SetWorkerStart(applyComputePolicy)
	}
}

// applyComputePolicy locks the calling goroutine to its thread (once) and
// puts the thread in the class priority.idle says. A locked goroutine
// owns its thread until it exits, when the thread ends with it, so a
// thread id seen here again is this goroutine's and no idle thread ever
// runs other goroutines.
func applyComputePolicy() {
	if _, seen := priority.locked.LoadOrStore(threadID(), true); !seen {
		runtime.LockOSThread()
	}
	setThreadPolicy(priority.idle.Load()) // SetComputePriority checked it works
}
