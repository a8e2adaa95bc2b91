//go:build !linux

package serve

import (
	"errors"
	"time"
)

func setThreadPolicy(tid int, idle bool) error {
	return errors.New("idle-class compute threads need Linux's SCHED_IDLE")
}

func threadID() int { return 0 }

func threadProgress(tid int) (time.Duration, bool, error) {
	return 0, false, errors.New("no per-thread CPU clock")
}
