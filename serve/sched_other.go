//go:build !linux

package serve

import "errors"

func setThreadPolicy(idle bool) error {
	return errors.New("idle-class compute threads need Linux's SCHED_IDLE")
}

func threadID() int { return 0 }
