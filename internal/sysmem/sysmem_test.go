package sysmem

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

const meminfo = "MemTotal:       24600000 kB\nMemFree:        20000000 kB\nMemAvailable:   16000000 kB\nSwapTotal:       2000000 kB\nSwapFree:        1000000 kB\n"

func TestAvailable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		want   int64
		source string
		ok     bool
	}{
		{"meminfo", map[string]string{"proc/meminfo": meminfo}, 17000000 << 10, "MemAvailable + SwapFree", true},
		{"no MemAvailable", map[string]string{"proc/meminfo": "MemTotal: 1 kB\nSwapFree: 5 kB\n"}, 0, "", false},
		{"malformed", map[string]string{"proc/meminfo": "MemAvailable: lots\n"}, 0, "", false},
		{"nothing", map[string]string{}, 0, "", false},
		{"cgroup v2 limit below", map[string]string{
			"proc/meminfo":                 meminfo,
			"proc/self/cgroup":             "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "8589934592\n", "sys/fs/cgroup/job/memory.current": "1073741824\n",
		}, 7 << 30, "cgroup limit /sys/fs/cgroup/job/memory.max − usage", true},
		{"cgroup v2 no limit", map[string]string{
			"proc/meminfo":                 meminfo,
			"proc/self/cgroup":             "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "max\n", "sys/fs/cgroup/job/memory.current": "1073741824\n",
		}, 17000000 << 10, "MemAvailable + SwapFree", true},
		{"cgroup v2 namespaced root", map[string]string{
			"proc/meminfo":             meminfo,
			"proc/self/cgroup":         "0::/hidden/from/us\n",
			"sys/fs/cgroup/memory.max": "4294967296", "sys/fs/cgroup/memory.current": "5368709120",
		}, 0, "cgroup limit /sys/fs/cgroup/memory.max − usage", true},
		{"cgroup v1 no limit", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": "4:memory:/x\n3:cpu:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712", "sys/fs/cgroup/memory/memory.usage_in_bytes": "20094976",
		}, 17000000 << 10, "MemAvailable + SwapFree", true},
		{"cgroup v1 limit below", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": "7:cpu,memory:/x\n",
			"sys/fs/cgroup/memory/x/memory.limit_in_bytes": "2147483648", "sys/fs/cgroup/memory/x/memory.usage_in_bytes": "1073741824",
		}, 1 << 30, "cgroup limit /sys/fs/cgroup/memory/x/memory.limit_in_bytes − usage", true},
		{"ulimit -v", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/limits": "Limit                     Soft Limit           Hard Limit           Units     \nMax address space         4096000000           unlimited            bytes     \n",
			"proc/self/status": "Name:\tromae\nVmSize:\t  1000000 kB\n",
		}, 4096000000 - 1000000<<10, "address-space limit (ulimit -v) − VmSize", true},
		{"no ulimit -v", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/limits": "Max address space         unlimited            unlimited            bytes     \n",
		}, 17000000 << 10, "MemAvailable + SwapFree", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, source, ok := availableIn(root)
			if got != tc.want || source != tc.source || ok != tc.ok {
				t.Errorf("availableIn = %d, %q, %v; want %d, %q, %v", got, source, ok, tc.want, tc.source, tc.ok)
			}
		})
	}
}

// TestAvailableHere reads this machine's: on Linux there is always a
// /proc/meminfo with MemAvailable (kernels since 3.14).
func TestAvailableHere(t *testing.T) {
	got, source, ok := Available()
	if runtime.GOOS != "linux" {
		if ok {
			t.Errorf("Available on %s = %d (%s), want not ok", runtime.GOOS, got, source)
		}
		return
	}
	if !ok || got <= 0 {
		t.Fatalf("Available = %d, %q, %v; want a positive amount", got, source, ok)
	}
	t.Logf("%.1f GiB available (%s)", float64(got)/(1<<30), source)
}
