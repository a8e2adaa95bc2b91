//go:build amd64 && !(goexperiment.simd && linux)

package tensor

// amxStatus: the AMX back end is built only for linux/amd64 with
// GOEXPERIMENT=simd (its packing shares the bf16 path's assembly, and
// the tile-data permission is a Linux arch_prctl).
func amxStatus(c CPUInfo) string {
	if !c.Has("amx_tile") || !c.Has("amx_bf16") {
		return "no AMX-BF16 on this CPU"
	}
	return "not in this build (needs linux/amd64 with GOEXPERIMENT=simd)"
}
