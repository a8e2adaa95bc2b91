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
	// PriorityOverload, romae serve's default, runs the forward passes on
	// SCHED_IDLE threads while the server is refusing requests (a 429
	// within the last overloadHold) and on normal ones otherwise, with a
	// guard against other busy processes (watchStarvation).
	PriorityOverload = "overload"
	// PriorityIdle runs them on SCHED_IDLE threads always.
	PriorityIdle = "idle"
	// PriorityNormal leaves the compute threads alone.
	PriorityNormal = "normal"
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
// ends: on 2 cores, refusals waited 5–7 ms at p99 for that, and 2.3–2.6 ms
// with idle-class compute (docs/serving.md, "Idle-class compute while
// refusing"). An idle-class thread also yields to every other busy thread
// of its cgroup, though — a co-tenant's, or a benchmark's load generator —
// so "overload" only switches while the server is refusing, when answering
// fast matters most, and switches back at once, for starvedHold, when a
// compute thread is starved (watchStarvation). Call it once, at start,
// before the server runs, as romae serve does; it fails, changing nothing,
// where the class is not available (not Linux).
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
		probe <- setThreadPolicy(0, true)
	}()
	if err := <-probe; err != nil {
		return err
	}
	priority.always.Store(mode == PriorityIdle)
	priority.adaptive.Store(mode == PriorityOverload)
	priority.idle.Store(mode == PriorityIdle)
	tensor.SetWorkerStart(applyComputePolicy)
	return nil
}

// priority is the process's compute class: idle is what the compute
// threads should be in now; each applies it before its next piece of work
// (tensor.SetWorkerStart runs applyComputePolicy on every worker after
// each change, the batcher checks before each forward pass). always is
// "idle", adaptive "overload".
var priority struct {
	always, adaptive, idle atomic.Bool
	lastRefusal            atomic.Int64 // unix ns
	locked                 sync.Map     // thread ids locked by applyComputePolicy

	// Until when "overload" stays normal (watchStarvation).
	suppressUntil atomic.Int64 // unix ns
	watching      atomic.Bool
}

// The starvation guard's settings: an idle-class compute thread that is
// runnable but gets less than starvedShare of a core over starvedTicks
// ticks of starvedTick in a row is yielding to another job, not to the
// server's network thread (which takes 0.1 ms per refusal), so the compute
// goes back to normal and "overload" stays normal for starvedHold.
var (
	starvedTick  = 10 * time.Millisecond
	starvedTicks = 3
	starvedShare = 0.25
	starvedHold  = 10 * time.Second
)

// computeManaged reports whether SetComputePriority chose a class other
// than normal, so the compute threads are locked and follow priority.idle.
func computeManaged() bool { return priority.always.Load() || priority.adaptive.Load() }

// noteRefusal records a 429: an "overload" server turns its compute
// idle-class at once.
func noteRefusal() {
	if !priority.adaptive.Load() {
		return
	}
	now := time.Now().UnixNano()
	priority.lastRefusal.Store(now)
	if now < priority.suppressUntil.Load() {
		return // starved recently: stay normal
	}
	if priority.idle.CompareAndSwap(false, true) {
		tensor.SetWorkerStart(applyComputePolicy)
		if priority.watching.CompareAndSwap(false, true) {
			go watchStarvation()
		}
	}
}

// watchStarvation runs while an "overload" server's compute is idle-class
// and turns it back to normal when one of the compute threads is runnable
// but gets less than starvedShare of a core, starvedTicks ticks in a row:
// then something other than the server holds the cores (a busy process in
// the same cgroup preempts an idle-class thread as the network thread
// does, and does not let go), and the pass waits for that thread. Without
// it the compute would run on what that job leaves: in a measurement, 13
// samples/s instead of 207 (docs/serving.md).
func watchStarvation() {
	defer priority.watching.Store(false)
	tick := time.NewTicker(starvedTick)
	defer tick.Stop()
	type seen struct {
		cpu     time.Duration
		wall    time.Time
		starved int
	}
	threads := map[int]*seen{}
	for range tick.C {
		if !priority.idle.Load() {
			return
		}
		fire := false
		priority.locked.Range(func(k, _ any) bool {
			tid := k.(int)
			now := time.Now()
			cpu, runnable, err := threadProgress(tid)
			if err != nil {
				return true // a thread that has ended
			}
			th := threads[tid]
			if th == nil {
				threads[tid] = &seen{cpu: cpu, wall: now}
				return true
			}
			if runnable && float64(cpu-th.cpu) < starvedShare*float64(now.Sub(th.wall)) {
				th.starved++
			} else {
				th.starved = 0
			}
			th.cpu, th.wall = cpu, now
			fire = fire || th.starved >= starvedTicks
			return true
		})
		if fire {
			priority.suppressUntil.Store(time.Now().Add(starvedHold).UnixNano())
			if priority.idle.CompareAndSwap(true, false) {
				// The pool's workers switch at their next chunk; a thread
				// in the middle of one, now.
				tensor.SetWorkerStart(applyComputePolicy)
				priority.locked.Range(func(k, _ any) bool {
					setThreadPolicy(k.(int), false)
					return true
				})
			}
			return
		}
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
// runs other goroutines. The lock comes before the id is read: read
// first, the goroutine could be moved to another thread in between, and
// the id recorded would then be an unlocked thread's, which the next
// goroutine to land there would take for its own and run on unlocked (CI
// saw a chunk of an "idle" server's pass run normal-class).
func applyComputePolicy() {
	runtime.LockOSThread()
	if _, seen := priority.locked.LoadOrStore(threadID(), true); seen {
		runtime.UnlockOSThread() // locked already: keep one level, not one per call
	}
	setThreadPolicy(0, priority.idle.Load()) // SetComputePriority checked it works
}
