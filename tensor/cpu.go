package tensor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUInfo is what the GEMM dispatch knows about the processor: read once
// from CPUID at start-up (amd64; elsewhere only the architecture).
type CPUInfo struct {
	Vendor string `json:"vendor"` // CPUID vendor string: AuthenticAMD, GenuineIntel
	Name   string `json:"name"`   // brand string, as lscpu's "Model name"
	Family int    `json:"family"` // display family (base + extended)
	Model  int    `json:"model"`  // display model (extended << 4 | base)
	// Features are the instruction-set extensions romae's kernels can
	// use, as this CPU and OS report them (amx_* only when the OS saves
	// tile state in XCR0).
	Features []string `json:"features"`
	// Caches in bytes: L1 data and L2 per core, L3 per package; from
	// CPUID leaf 4 (Intel) or 0x8000001D (AMD; 0x80000005/6 where a
	// guest hides that), 0 when not reported.
	L1D, L2, L3 int `json:"-"`
	// CachesFrom is "ROMAE_CACHES" where that set them ("": CPUID).
	CachesFrom string `json:"-"`
	// AMX is "usable", or why the AMX back end is off here.
	AMX string `json:"amx"`
}

// Has reports whether the CPU has feature f (a name from Features).
func (c CPUInfo) Has(f string) bool {
	for _, x := range c.Features {
		if x == f {
			return true
		}
	}
	return false
}

// Class names the machine class the dispatch distinguishes: "amd-zen4",
// "amd-zen5", "intel-amx", "intel", "amd", or the architecture.
func (c CPUInfo) Class() string {
	switch c.Vendor {
	case "AuthenticAMD":
		switch {
		case c.Family == 0x19 && (c.Model >= 0x10 && c.Model <= 0x1F || c.Model >= 0x60 && c.Model <= 0xAF):
			return "amd-zen4"
		case c.Family == 0x1A:
			return "amd-zen5"
		}
		return "amd"
	case "GenuineIntel":
		if c.AMX == "usable" {
			return "intel-amx"
		}
		return "intel"
	}
	return c.Vendor
}

// String is one line for logs and `romae version`.
func (c CPUInfo) String() string {
	return fmt.Sprintf("%s (%s family %d model %d; %s; %s; AMX %s)",
		c.Name, c.Vendor, c.Family, c.Model, c.Caches(), strings.Join(c.Features, " "), c.AMX)
}

// Caches is the cache sizes the blocking uses, and where they came from
// when not from CPUID.
func (c CPUInfo) Caches() string {
	if c.L1D <= 0 && c.L2 <= 0 {
		// A guest whose hypervisor hides the cache leaves, or not amd64.
		return "cache sizes not reported: blocking at its defaults (ROMAE_CACHES sets them)"
	}
	s := fmt.Sprintf("L1d %d KiB, L2 %d KiB, L3 %d KiB", c.L1D>>10, c.L2>>10, c.L3>>10)
	if c.CachesFrom != "" {
		s += " from " + c.CachesFrom
	}
	return s
}

var cpuInfo = func() CPUInfo {
	c, err := withCaches(detectCPU(), os.Getenv("ROMAE_CACHES"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "tensor: ROMAE_CACHES: %v; using the sizes CPUID reports\n", err)
	}
	return c
}()

// withCaches is c with the cache sizes in spec ("L1D,L2" or "L1D,L2,L3",
// each in bytes with an optional K or M suffix, as in "32K,1M") in place
// of those CPUID reported: for guests whose hypervisor reports none or
// the host's, and to run another machine class's blocking and
// chunk-or-layer decisions on this one. An empty spec keeps CPUID's; a
// malformed one returns c unchanged with the error (start-up reports it
// on stderr and goes on, as for ROMAE_GEMM).
func withCaches(c CPUInfo, spec string) (CPUInfo, error) {
	if spec == "" {
		return c, nil
	}
	sizes, err := parseCaches(spec)
	if err != nil {
		return c, err
	}
	c.L1D, c.L2, c.CachesFrom = sizes[0], sizes[1], "ROMAE_CACHES"
	if len(sizes) == 3 {
		c.L3 = sizes[2]
	}
	return c, nil
}

// parseCaches reads "L1D,L2[,L3]" (see withCaches) into bytes.
func parseCaches(spec string) ([]int, error) {
	fields := strings.Split(spec, ",")
	if len(fields) < 2 || len(fields) > 3 {
		return nil, fmt.Errorf("%q: want L1D,L2 or L1D,L2,L3 sizes (e.g. 32K,1M)", spec)
	}
	names := []string{"L1D", "L2", "L3"}
	sizes := make([]int, len(fields))
	for i, f := range fields {
		f = strings.TrimSpace(f)
		unit := 1
		switch {
		case strings.HasSuffix(f, "K"), strings.HasSuffix(f, "k"):
			unit, f = 1<<10, f[:len(f)-1]
		case strings.HasSuffix(f, "M"), strings.HasSuffix(f, "m"):
			unit, f = 1<<20, f[:len(f)-1]
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n > 1<<30/unit {
			return nil, fmt.Errorf("%q: %s size %q is not a positive byte count (e.g. 48K, 2M)", spec, names[i], fields[i])
		}
		sizes[i] = n * unit
	}
	return sizes, nil
}

// CPU returns the processor as the GEMM dispatch saw it at start-up.
func CPU() CPUInfo {
	c := cpuInfo
	c.Features = append([]string(nil), c.Features...)
	return c
}

// kBlock is the k-block length of a packed product on this CPU's caches:
// the packed B panel (kc × nc elements of elemBytes) takes at most 3/4 of
// L2, so it stays there while every A panel of the block streams past it,
// and the mr-row A panel (kc × mr) at most 1/4 of L1d, so it stays in L1
// while the B slivers stream. A multiple of 32 in [64, 512]; def where the
// CPU reports no cache sizes. On the Zen 4 (1 MiB L2, 32 KiB L1d) this
// gives the 256 (fp32) and 512 (bf16) that were tuned there by hand; on
// the Xeon (2 MiB, 48 KiB) 384 for fp32.
func kBlock(l1d, l2, nc, mr, elemBytes, def int) int {
	if l1d <= 0 || l2 <= 0 {
		return def
	}
	kc := min(l2*3/4/(nc*elemBytes), l1d/4/(mr*elemBytes))
	return min(max(kc&^31, 64), 512)
}

// sliverChunk is how many k steps of a sliver (stepBytes a step) fill at
// most half of an L1d of l1d bytes: a multiple of 32 within [64, 512], 256
// when the CPU reports no L1d size.
func sliverChunk(l1d, stepBytes int) int {
	if l1d <= 0 {
		return 256
	}
	return min(max(l1d/2/stepBytes&^31, 64), 512)
}

// gotoDepth is the deepest k block whose steps (stepBytes each: a sliver
// of B and one panel of A) fit in an L1d of l1d bytes; 256 when the CPU
// reports no L1d. The whole L1d, not a margin for C's lines: on a Zen 3
// (BenchmarkSgemmAVX2GotoDepth's shapes with k = 201 and 214, one core)
// one pass over 201 steps, 30.5 KB of its 32 KiB, ran 2–9% faster than
// panel256's chunks, and no slower at 214.
func gotoDepth(l1d, stepBytes int) int {
	if l1d <= 0 {
		return 256
	}
	return max(l1d/stepBytes, 64)
}
