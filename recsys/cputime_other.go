//go:build !unix

package recsys

import "time"

// cpuTime is not measured here (CompareSteps reports wall time only).
func cpuTime() time.Duration { return 0 }
