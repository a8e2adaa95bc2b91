package serve

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Linux's scheduling policies (include/uapi/linux/sched.h).
const (
	schedNormal = 0
	schedIdle   = 5
)

// setThreadPolicy moves thread tid of this process (0: the calling
// thread, whose goroutine must be locked to it) to SCHED_IDLE, or back to
// SCHED_OTHER.
func setThreadPolicy(tid int, idle bool) error {
	policy := schedNormal
	if idle {
		policy = schedIdle
	}
	var param struct{ priority int32 }
	// sched_setscheduler acts on one thread; pid 0 is the caller's.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param))); errno != 0 {
		return fmt.Errorf("sched_setscheduler(%d, %d): %w", tid, policy, errno)
	}
	return nil
}

func threadID() int { return syscall.Gettid() }

// threadProgress reports thread tid's CPU time so far and whether it is
// runnable now (running or waiting for a core, not blocked): its CPU-time
// clock, (^tid << 3) | CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED
// (include/linux/posix-timers.h), and the state in its /proc stat. The
// scheduler's own run-queue delay (schedstat) is no use here: it is
// counted when a wait ends, and an idle-class thread beside busy cores
// hardly ever ends one.
func threadProgress(tid int) (cpu time.Duration, runnable bool, err error) {
	clock := int32(^tid<<3 | 4 | 2)
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false, fmt.Errorf("clock_gettime(thread %d): %w", tid, errno)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, false, err
	}
	// "tid (comm) S ...": the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false, fmt.Errorf("stat of thread %d: %q", tid, b)
	}
	return time.Duration(ts.Nano()), b[i+2] == 'R', nil
}
