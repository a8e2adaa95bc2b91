//go:build !amd64

package tensor

import "runtime"

// detectCPU: the kernels beyond gonum are amd64-only, so elsewhere the
// architecture is all the dispatch needs.
func detectCPU() CPUInfo {
	return CPUInfo{Vendor: runtime.GOARCH, Name: runtime.GOARCH, AMX: "not an amd64 CPU"}
}
