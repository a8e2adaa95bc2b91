package serve

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Linux's scheduling policies (include/uapi/linux/sched.h).
const (
	schedNormal = 0
	schedIdle   = 5
)

// setThreadPolicy moves the calling OS thread to SCHED_IDLE, or back to
// SCHED_OTHER. The caller must have locked its goroutine to the thread.
func setThreadPolicy(idle bool) error {
	policy := schedNormal
	if idle {
		policy = schedIdle
	}
	var param struct{ priority int32 }
	// pid 0 is the calling thread: sched_setscheduler acts per thread.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, uintptr(policy), uintptr(unsafe.Pointer(&param))); errno != 0 {
		return fmt.Errorf("sched_setscheduler(%d): %w", policy, errno)
	}
	return nil
}

func threadID() int { return syscall.Gettid() }
