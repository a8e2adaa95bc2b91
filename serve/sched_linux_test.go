package serve

import (
	"net/http"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"romae/model"
	"romae/tensor"
)

// threadPolicy is the calling thread's scheduling policy.
func threadPolicy() int {
	p, _, _ := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	return int(p)
}

// The compute priorities on real threads: with "idle" the forward passes
// run on SCHED_IDLE threads (the batcher's and the tensor pool's) and the
// test's own thread stays normal; with "overload" they are normal until a
// request is refused, idle-class right after, and normal again once no
// request has been refused for overloadHold; "starved" is overload with
// busy processes on every core once the compute is idle-class, which the
// starvation guard must notice, turning the compute normal so the held
// passes finish. SetComputePriority changes the whole process, so each
// case runs in a child process.
func TestComputePriority(t *testing.T) {
	for _, mode := range []string{PriorityIdle, PriorityOverload, "starved"} {
		t.Run(mode, func(t *testing.T) {
			if inChild(t) {
				computePriorityChild(t, mode)
			}
		})
	}
}

func computePriorityChild(t *testing.T, mode string) {
	if threadPolicy() != schedNormal {
		t.Fatal("the test starts on a thread that is not normal-class")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer tensor.SetThreads(0)
	defer tensor.SetWorkerStart(nil)
	// Long enough for both held passes to start inside the hold after the
	// refusal under -race on a loaded 2-core machine (at 200 ms the second
	// one sometimes began after it and ran normal-class).
	overloadHold = time.Second
	starved := mode == "starved"
	if starved {
		mode = PriorityOverload
	}
	if err := SetComputePriority(mode); err != nil {
		t.Fatal(err)
	}
	chunkSpin := spinIterations(20 * time.Millisecond)
	ReserveNetworkP(2) // one pool worker beside the batcher

	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	ts := startServer(t, path, Config{MaxBatch: 1, QueueSamples: 1, Limits: Limits{MaxBodyBytes: 1 << 20, MaxSamples: 1,
		MaxTokens: 64, MaxQueries: 8, MaxAbsValue: 1e6, MaxAbsPosition: 1e6}})
	// Each pass records its threads' policies: the batcher's, and those of
	// the chunks of a ParallelFor, which sleep so that the pool's worker
	// claims some of them. gate, when set, holds the pass.
	var mu sync.Mutex
	var policies []map[int]int // per pass: policy by thread id
	var gate chan struct{}
	hook := func(string) {
		mu.Lock()
		g := gate
		pass := map[int]int{syscall.Gettid(): threadPolicy()}
		policies = append(policies, pass)
		mu.Unlock()
		if g != nil {
			<-g
		}
		tensor.ParallelFor(8, 1, func(lo, hi int) {
			mu.Lock()
			pass[syscall.Gettid()] = threadPolicy()
			mu.Unlock()
			if starved {
				spinSink.Add(spin(chunkSpin)) // CPU work, which a busy core starves
				return
			}
			// Sleep until a second thread has joined (up to 2 s), so
			// that a pool worker slow to wake on a loaded machine still
			// claims a chunk rather than the batcher running all eight.
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				joined := len(pass) >= 2
				mu.Unlock()
				if joined {
					break
				}
			}
		})
	}
	ts.bat.beforeForward.Store(&hook)
	body := requestBody(synthSamples(1), nil, nil)
	// expect checks the last pass: every thread in the class want, and
	// more than one thread. orNormal also takes normal-class threads: for
	// an idle-class pass that the starvation guard turned normal partway
	// (on a machine busy with other work, which idle-class threads yield
	// to: under scripts/test.sh the other packages' tests).
	expectOr := func(when string, want int, orNormal bool) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		pass := policies[len(policies)-1]
		if len(pass) < 2 {
			t.Errorf("%s: the pass ran on %d thread(s); want the batcher's and a pool worker's", when, len(pass))
		}
		for tid, p := range pass {
			if p != want && !(orNormal && p == schedNormal) {
				t.Errorf("%s: thread %d ran with policy %d, want %d (starvation guard fired: %v)", when, tid, p, want, orNormal)
			}
		}
	}
	expect := func(when string, want int) { t.Helper(); expectOr(when, want, false) }
	predict := func(when string) {
		t.Helper()
		if code, _, _ := ts.post(t, "/v1/predict", body); code != http.StatusOK {
			t.Fatalf("%s: predict: %d", when, code)
		}
	}

	if mode == PriorityIdle {
		predict("idle")
		expect("idle", schedIdle)
	} else {
		predict("before any refusal")
		expect("before any refusal", schedNormal)

		// Hold a pass, fill the one-sample queue, and be refused.
		mu.Lock()
		gate = make(chan struct{})
		mu.Unlock()
		held := make(chan int, 2)
		go func() { c, _, _ := ts.post(t, "/v1/predict", body); held <- c }()
		waitFor(t, "the held pass", func() bool { mu.Lock(); defer mu.Unlock(); return len(policies) == 2 })
		go func() { c, _, _ := ts.post(t, "/v1/predict", body); held <- c }()
		waitFor(t, "a full queue", func() bool { return ts.bat.full() })
		if code, _, _ := ts.post(t, "/v1/predict", body); code != http.StatusTooManyRequests {
			t.Fatalf("a request to a full queue got %d, want 429", code)
		}
		refused := time.Now()
		if starved {
			if !priority.idle.Load() {
				t.Fatal("the compute is not idle-class after a refusal")
			}
			// Busy processes on every core, from now to the end of the test.
			for range runtime.NumCPU() {
				hog := exec.Command("sh", "-c", "while :; do :; done")
				if err := hog.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { hog.Process.Kill(); hog.Wait() }()
			}
		}
		start := time.Now()
		mu.Lock()
		close(gate)
		gate = nil
		mu.Unlock()
		for range 2 {
			if c := <-held; c != http.StatusOK {
				t.Fatalf("a queued request got %d", c)
			}
		}
		if starved {
			// 8 chunks of 20 ms on an idle-class thread beside busy
			// cores would take minutes; the guard turns them normal.
			t.Logf("the held passes took %v beside the busy processes", time.Since(start).Round(time.Millisecond))
			if time.Since(start) > 5*time.Second {
				t.Errorf("the held passes took %v", time.Since(start))
			}
			if priority.idle.Load() || priority.suppressUntil.Load() < time.Now().UnixNano() {
				t.Error("the starvation guard did not turn the compute normal and hold it there")
			}
			if code, _, _ := ts.post(t, "/v1/predict", body); code != http.StatusOK {
				t.Fatalf("after the guard: predict: %d", code)
			}
			expect("after the guard", schedNormal)
			return
		}
		// The guard fires only where the held passes' threads were
		// runnable and starved: then they turned normal, and the hold
		// stays normal for starvedHold.
		guarded := priority.suppressUntil.Load() > refused.UnixNano()
		if guarded {
			t.Logf("the starvation guard fired during the held passes (a busy machine); they could turn normal")
		}
		if held := time.Since(refused); held > overloadHold {
			t.Fatalf("the held passes ended %v after the refusal, past the %v hold the check needs", held, overloadHold)
		}
		expectOr("right after a refusal", schedIdle, guarded)

		time.Sleep(overloadHold + 50*time.Millisecond)
		predict("after a quiet hold")
		expect("after a quiet hold", schedNormal)
	}
	if threadPolicy() != schedNormal {
		t.Error("the test's own thread changed class")
	}
}
