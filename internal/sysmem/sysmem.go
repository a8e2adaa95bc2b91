// Package sysmem tells how much memory this process can still take, so
// that a run too large for the machine is refused with an error that says
// why, before it allocates, instead of being killed by the kernel part-way
// (the Linux OOM killer ends a process with no message of its own).
package sysmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available is the memory this process can still allocate, in bytes:
// MemAvailable plus SwapFree from /proc/meminfo, or what a cgroup memory
// limit leaves (cgroup v2 memory.max − memory.current, v1
// memory.limit_in_bytes − memory.usage_in_bytes) or an address-space
// limit (ulimit -v) leaves when that is less. source says which. ok is
// false where none can be read (not Linux).
func Available() (bytes int64, source string, ok bool) { return availableIn("/") }

// availableIn is Available on the files under root (tests give a tree of
// their own).
func availableIn(root string) (int64, string, bool) {
	avail, source, ok := int64(0), "", false
	if b, err := os.ReadFile(filepath.Join(root, "proc/meminfo")); err == nil {
		if v, found := parseMeminfo(b); found {
			avail, source, ok = v, "MemAvailable + SwapFree", true
		}
	}
	for _, lim := range cgroupLimits(root) {
		if left := max(lim.limit-lim.used, 0); !ok || left < avail {
			avail, source, ok = left, fmt.Sprintf("cgroup limit %s − usage", lim.file), true
		}
	}
	if left, found := addressSpaceLeft(root); found && (!ok || left < avail) {
		avail, source, ok = left, "address-space limit (ulimit -v) − VmSize", true
	}
	return avail, source, ok
}

// addressSpaceLeft is the soft RLIMIT_AS of /proc/self/limits less the
// process's virtual size (VmSize of /proc/self/status): what a process run
// under `ulimit -v` may still map. found is false without such a limit.
func addressSpaceLeft(root string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/limits"))
	if err != nil {
		return 0, false
	}
	var limit int64 = -1
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max address space"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if v, err := strconv.ParseInt(f[0], 10, 64); err == nil { // "unlimited" is not
					limit = v
				}
			}
		}
	}
	if limit < 0 {
		return 0, false
	}
	var size int64
	if b, err := os.ReadFile(filepath.Join(root, "proc/self/status")); err == nil {
		size = kBFields(b)["VmSize"]
	}
	return max(limit-size, 0), true
}

// parseMeminfo is MemAvailable + SwapFree of a /proc/meminfo, in bytes.
func parseMeminfo(b []byte) (int64, bool) {
	f := kBFields(b)
	avail, found := f["MemAvailable"]
	return avail + f["SwapFree"], found
}

// kBFields are the "Name: N kB" lines of a /proc file (meminfo, status),
// in bytes by name; other lines are left out.
func kBFields(b []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		f := strings.Fields(rest) // "24344396 kB"
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb >= 0 {
			out[name] = kb << 10
		}
	}
	return out
}

type cgroupLimit struct {
	file        string
	limit, used int64
}

// cgroupLimits are the memory limits of this process's cgroups that are
// set: v2 (the "0::" line of /proc/self/cgroup) and v1 (the "memory"
// controller's line), each looked up at its path and, inside a container
// whose cgroup namespace hides that path, at the hierarchy's root.
func cgroupLimits(root string) []cgroupLimit {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil
	}
	var out []cgroupLimit
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, limFile, useFile string
		switch {
		case f[0] == "0" && f[1] == "":
			dir, limFile, useFile = "sys/fs/cgroup", "memory.max", "memory.current"
		case strings.Contains(","+f[1]+",", ",memory,"):
			dir, limFile, useFile = "sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		for _, d := range []string{filepath.Join(dir, f[2]), dir} {
			lim, okL := readInt(filepath.Join(root, d, limFile))
			used, okU := readInt(filepath.Join(root, d, useFile))
			if !okL || !okU {
				continue
			}
			if lim < 1<<60 { // v1 writes "no limit" as a page-rounded 2⁶³−1
				out = append(out, cgroupLimit{filepath.Join("/", d, limFile), lim, used})
			}
			break
		}
	}
	return out
}

// readInt reads a file holding one integer; "max" (cgroup v2's no limit)
// and anything else are not one.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil && v >= 0
}
