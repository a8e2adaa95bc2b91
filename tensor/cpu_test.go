package tensor

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestCPUMatchesLinux compares what CPUID gave the dispatch with what
// the Linux kernel reports for cpu0: /proc/cpuinfo's vendor, family,
// model, brand and flags, and the sysfs cache sizes.
func TestCPUMatchesLinux(t *testing.T) {
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skip("compares CPUID with Linux's /proc/cpuinfo on amd64")
	}
	if os.Getenv("ROMAE_EMULATED_CPU") != "" {
		// qemu-user answers CPUID for the CPU it emulates but passes
		// /proc/cpuinfo through from the host (scripts/test.sh runs these tests as an emulated Haswell).
		t.Skip("ROMAE_EMULATED_CPU is set: CPUID is an emulator's, /proc/cpuinfo the host's")
	}
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip(err)
	}
	info := map[string]string{}
	for _, l := range strings.Split(strings.SplitN(string(raw), "\n\n", 2)[0], "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	c := CPU()
	if c.Vendor != info["vendor_id"] || strconv.Itoa(c.Family) != info["cpu family"] || strconv.Itoa(c.Model) != info["model"] {
		t.Errorf("CPUID says %q family %d model %d; /proc/cpuinfo %q family %s model %s",
			c.Vendor, c.Family, c.Model, info["vendor_id"], info["cpu family"], info["model"])
	}
	flags := map[string]bool{}
	for _, f := range strings.Fields(info["flags"]) {
		flags[f] = true
	}
	if c.Name != info["model name"] {
		// The kernel read its brand string once, at boot. A virtual
		// machine restored from a snapshot on another host (the Firecracker
		// Zen 5 of 2026-11-28: booted as "AMD EPYC", CPUID now says "Oxide
		// Virtual Turin-like Processor") keeps the old one; on bare metal
		// a difference is our decoding's fault.
		if !flags["hypervisor"] {
			t.Errorf("CPUID brand %q; /proc/cpuinfo %q", c.Name, info["model name"])
		} else {
			t.Logf("CPUID brand %q, /proc/cpuinfo %q: a guest whose kernel booted on another host", c.Name, info["model name"])
		}
	}
	for _, f := range []string{"fma", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile", "amx_bf16"} {
		if c.Has(f) != flags[f] {
			t.Errorf("feature %s: CPUID+XCR0 %v, /proc/cpuinfo %v", f, c.Has(f), flags[f])
		}
	}
	if os.Getenv("ROMAE_CACHES") != "" {
		t.Skip("ROMAE_CACHES is set: the cache sizes are its, not CPUID's")
	}
	if c.L1D == 0 && c.L2 == 0 {
		t.Skip("CPUID reports no cache parameters here")
	}
	for idx := 0; ; idx++ {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(idx) + "/"
		level, err := os.ReadFile(dir + "level")
		if err != nil {
			break
		}
		typ, _ := os.ReadFile(dir + "type")
		size, _ := os.ReadFile(dir + "size")
		kib, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(string(size)), "K"))
		var got int
		switch strings.TrimSpace(string(level)) + strings.TrimSpace(string(typ)) {
		case "1Data":
			got = c.L1D
		case "2Unified":
			got = c.L2
		case "3Unified":
			got = c.L3
		default:
			continue
		}
		if got != kib<<10 {
			t.Errorf("cache index%d (L%s %s): CPUID %d B, sysfs %s", idx, strings.TrimSpace(string(level)), strings.TrimSpace(string(typ)), got, strings.TrimSpace(string(size)))
		}
	}
}

func TestChooseBF16(t *testing.T) {
	for _, c := range []struct {
		cpu  CPUInfo
		want string
	}{
		{CPUInfo{Vendor: "AuthenticAMD", Family: 25, Model: 17, Features: []string{"avx512f", "avx512_bf16"}}, "avx512-bf16"},
		{CPUInfo{Vendor: "AuthenticAMD", Family: 26, Features: []string{"avx512f", "avx512_bf16"}}, "avx512-bf16"},
		{CPUInfo{Vendor: "GenuineIntel", Features: []string{"avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}, AMX: "usable"}, "amx"},
		{CPUInfo{Vendor: "GenuineIntel", Features: []string{"avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}, AMX: "Linux refused"}, "fp32"},
		{CPUInfo{Vendor: "GenuineIntel", Features: []string{"avx512f", "avx512_bf16"}}, "fp32"},
		{CPUInfo{Vendor: "AuthenticAMD", Features: []string{"avx2", "fma"}}, "fp32"},
	} {
		if got := bf16KernelNames[chooseBF16(c.cpu)]; got != c.want {
			t.Errorf("%s %v AMX %q: %s, want %s", c.cpu.Vendor, c.cpu.Features, c.cpu.AMX, got, c.want)
		}
	}
}

func TestWithCaches(t *testing.T) {
	base := CPUInfo{Name: "x", L1D: 48 << 10, L2: 2 << 20, L3: 480 << 20}
	for _, tc := range []struct {
		spec          string
		l1d, l2, l3   int
		wantUnchanged bool
	}{
		{spec: "", wantUnchanged: true},
		{spec: "32K,1M", l1d: 32 << 10, l2: 1 << 20, l3: 480 << 20},
		{spec: "48k, 1m, 32M", l1d: 48 << 10, l2: 1 << 20, l3: 32 << 20},
		{spec: "32768,524288", l1d: 32768, l2: 524288, l3: 480 << 20},
		{spec: "32K", wantUnchanged: true},
		{spec: "32K,1M,32M,1G", wantUnchanged: true},
		{spec: "32K,-1M", wantUnchanged: true},
		{spec: "32K,0", wantUnchanged: true},
		{spec: "32K,lots", wantUnchanged: true},
		{spec: "32K,4096M", wantUnchanged: true},
	} {
		got, err := withCaches(base, tc.spec)
		want := base
		if !tc.wantUnchanged {
			want.L1D, want.L2, want.L3 = tc.l1d, tc.l2, tc.l3
		}
		if got.L1D != want.L1D || got.L2 != want.L2 || got.L3 != want.L3 {
			t.Errorf("withCaches(%q): L1d %d L2 %d L3 %d, want %d %d %d", tc.spec, got.L1D, got.L2, got.L3, want.L1D, want.L2, want.L3)
		}
		if (err != nil) != (tc.wantUnchanged && tc.spec != "") {
			t.Errorf("withCaches(%q): error %v", tc.spec, err)
		}
	}
	if got := (CPUInfo{}).Caches(); !strings.Contains(got, "not reported") || !strings.Contains(got, "ROMAE_CACHES") {
		t.Errorf("no cache sizes: %q, want it said, with the variable that sets them", got)
	}
	if got, _ := withCaches(CPUInfo{}, "32K,1M"); got.Caches() != "L1d 32 KiB, L2 1024 KiB, L3 0 KiB from ROMAE_CACHES" {
		t.Errorf("sizes set where CPUID reported none: %q", got.Caches())
	}
	if _, err := withCaches(base, "32K,lots"); err == nil || !strings.Contains(err.Error(), `L2 size "lots"`) {
		t.Errorf("the error names neither the field nor the value: %v", err)
	}
}

// FuzzParseCaches: any ROMAE_CACHES value is either refused with an error
// or read as two or three sizes in (0, 1 GiB], never a panic.
func FuzzParseCaches(f *testing.F) {
	for _, s := range []string{"32K,1M", "48k, 2m, 105M", "32768,524288", "", ",", "1K,", "K,M", "9999999999999999999K,1M", "-0,1", " 1 , 2 ,3 ", "1G,1M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		sizes, err := parseCaches(spec)
		if err != nil {
			return
		}
		if len(sizes) < 2 || len(sizes) > 3 {
			t.Fatalf("%q: %d sizes", spec, len(sizes))
		}
		for _, n := range sizes {
			if n <= 0 || n > 1<<30 {
				t.Fatalf("%q: size %d", spec, n)
			}
		}
	})
}
