package tensor

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// Kernels chosen by CPU, per precision. float32 products go to the
// selected Backend (ROMAE_GEMM, else the first of registry's order that
// this CPU runs: the avx512 8×32 FMA kernel on AVX-512 machines). bf16
// products go to one of the bf16 kernels below, chosen from what the CPU
// does fast (docs/performance.md, "Kernels by CPU"):
//
//	amx          Intel AMX tiles (TDPBF16PS): 7–14× the fp32 kernel where present
//	avx512-bf16  VDPBF16PS 8×32: 2× fp32 on AMD Zen 4/5; half of fp32 on Intel
//	fp32         the float32 kernel: Intel without AMX, where VDPBF16PS is
//	             slower than FMA; the products are then exact float32
//
// ROMAE_GEMM=amx or ROMAE_GEMM=avx512-bf16 (SetBackend) forces a bf16
// kernel the CPU has, for comparison.
const (
	bf16OnFP32 int32 = iota
	bf16DPBF16
	bf16AMX
)

var bf16KernelNames = [...]string{bf16OnFP32: "fp32", bf16DPBF16: "avx512-bf16", bf16AMX: "amx"}

// bf16Kernel is the kernel bf16 products run on.
var bf16Kernel atomic.Int32

func init() {
	k := chooseBF16(cpuInfo)
	if !bf16KernelSupported(k) {
		k = bf16OnFP32
	}
	bf16Kernel.Store(k)
}

// chooseBF16 is the per-CPU rule: AMX where the OS lets this process use
// it, VDPBF16PS where it is fast (AMD), the fp32 kernel otherwise.
func chooseBF16(c CPUInfo) int32 {
	switch {
	case c.AMX == "usable" && c.Has("avx512_bf16"):
		return bf16AMX
	case c.Has("avx512_bf16") && c.Vendor != "GenuineIntel":
		return bf16DPBF16
	}
	return bf16OnFP32
}

// bf16KernelNow is the kernel float32 products run on now: bf16OnFP32
// while the precision is fp32 or the CPU has no bf16 path.
func bf16KernelNow() int32 {
	if !bf16On.Load() || !BF16Supported() {
		return bf16OnFP32
	}
	return bf16Kernel.Load()
}

// bf16KernelSupported tells which bf16 kernels this build and CPU run.
func bf16KernelSupported(k int32) bool {
	switch k {
	case bf16AMX:
		return amxCompute != nil && cpuInfo.AMX == "usable" && BF16Supported() && !amxVerdict.failed.Load()
	case bf16DPBF16:
		return BF16Supported()
	}
	return true
}

// bfComputeFunc is a bf16 kernel's single-core product C = alpha·op(A)·B
// + beta·C with op(B) already rounded and packed in the kernel's layout.
type bfComputeFunc func(a bfA, m, n, k int, alpha float32, bpk []uint32, beta float32, c []float32, ldc int)

// bfA is op(A) as a bf16 kernel reads it: float32 (f, row stride ld,
// transposed when trans), which the kernel rounds and packs per block;
// or, when rows is set, already rounded bf16 pairs in BF16Rows' layout
// (ld pairs per row), read in place.
type bfA struct {
	f     []float32
	rows  []uint32
	ld    int
	trans bool
}

// from is op(A) from row i on.
func (a bfA) from(i int) bfA {
	switch {
	case a.rows != nil:
		a.rows = a.rows[i*a.ld:]
	case a.trans:
		a.f = a.f[i:]
	default:
		a.f = a.f[i*a.ld:]
	}
	return a
}

// amxCompute is the AMX back end's product and amxSelfCheck its run-time
// check of the tile instructions on one exact product, set by the AMX
// file in builds that have it (linux/amd64 with GOEXPERIMENT=simd).
var (
	amxCompute   bfComputeFunc
	amxSelfCheck func() error
)

// amxVerdict is amxSelfCheck's result, run once; failed is set with it so
// that bf16KernelSupported can read it without running the check.
var amxVerdict struct {
	once   sync.Once
	err    error
	failed atomic.Bool
}

// confirmAMX runs the tile self-check the first time bf16 products could
// reach the tiles (SetPrecision bf16, SetBackend amx), not at start-up:
// fp32 runs never execute a tile instruction. The AMX kernel was written
// from the instruction manuals and checked against an emulation of them
// (amx_linux_amd64_test.go); this is what stands between a
// misunderstanding of the hardware (an operand order, a layout, the tile
// configuration) and wrong bf16 results on a machine no test ran on. A
// check that faults fails like one that computes wrong numbers
// (faultsAsErrors); only an undefined instruction (a bad encoding, which
// TestAMXEncoding checks against GNU objdump) would still end the
// process. On failure bf16 products move to the next kernel for this CPU
// and the error says why.
func confirmAMX() error {
	amxVerdict.once.Do(func() {
		if amxSelfCheck != nil {
			amxVerdict.err = faultsAsErrors(amxSelfCheck)
			amxVerdict.failed.Store(amxVerdict.err != nil)
		}
	})
	return amxVerdict.err
}

// faultsAsErrors runs check with memory faults and panics returned as an
// error instead of ending the process. A tile configuration the CPU
// rejects makes LDTILECFG raise #GP, which Linux delivers as a SIGSEGV
// with no address; Go ends the process on that unless the goroutine asked
// for faults as panics (debug.SetPanicOnFault). A SIGILL cannot be
// recovered from in Go.
func faultsAsErrors(check func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tile self-check faulted: %v", r)
		}
	}()
	return check()
}

// checkBF16Kernel is called when bf16 products are turned on: if their
// kernel is AMX and its self-check fails, it falls back to the kernel
// this CPU would have without AMX and says so on stderr.
func checkBF16Kernel() {
	if bf16Kernel.Load() != bf16AMX {
		return
	}
	if err := confirmAMX(); err != nil {
		c := cpuInfo
		c.AMX = "off: " + err.Error()
		fallback := chooseBF16(c)
		bf16Kernel.Store(fallback)
		fmt.Fprintf(os.Stderr, "tensor: AMX %v; bf16 products run on the %s kernel\n", err, bf16KernelNames[fallback])
	}
}

// setBF16Kernel is SetBackend for the bf16 kernel names.
func setBF16Kernel(name string) (found bool, err error) {
	for k, n := range bf16KernelNames {
		if n == name && int32(k) != bf16OnFP32 {
			if !bf16KernelSupported(int32(k)) {
				return true, fmt.Errorf("bf16 kernel %q: not available on this CPU/build (%s)", name, CPU())
			}
			if int32(k) == bf16AMX {
				if err := confirmAMX(); err != nil {
					return true, fmt.Errorf("bf16 kernel %q: %v", name, err)
				}
			}
			bf16Kernel.Store(int32(k))
			return true, nil
		}
	}
	return false, nil
}

// BF16Kernels lists the bf16 kernels this build and CPU can run, the
// chosen one first.
func BF16Kernels() []string {
	cur := bf16Kernel.Load()
	out := []string{bf16KernelNames[cur]}
	for k := int32(len(bf16KernelNames) - 1); k >= 0; k-- {
		if k != cur && bf16KernelSupported(k) {
			out = append(out, bf16KernelNames[k])
		}
	}
	return out
}

// KernelInfo says what the matrix products of the current precision run
// on: back end, micro-kernel, the instruction-set features it uses and
// its k block (from the CPU's cache sizes).
type KernelInfo struct {
	Precision string   `json:"precision"`
	Backend   string   `json:"backend"`
	Kernel    string   `json:"kernel"`
	Features  []string `json:"features"`
	KBlock    int      `json:"k_block,omitempty"`
}

// Kernel describes the kernel the current precision's products run on.
func Kernel() KernelInfo {
	fp32KC, bf16KC, amxKC := kBlocks()
	if bf16On.Load() {
		switch bf16Kernel.Load() {
		case bf16AMX:
			return KernelInfo{PrecisionBF16, "avx512", "amx 32×32 (2×2 tiles, TDPBF16PS)", []string{"amx_tile", "amx_bf16", "avx512_bf16"}, amxKC}
		case bf16DPBF16:
			return KernelInfo{PrecisionBF16, "avx512", "vdpbf16ps 8×32", []string{"avx512f", "avx512bw", "avx512_bf16"}, bf16KC}
		}
		k := fp32Kernel("avx512", fp32KC)
		k.Precision = PrecisionBF16
		k.Kernel += " (bf16 requested: VDPBF16PS is slower than FMA on this CPU)"
		return k
	}
	return fp32Kernel(BackendName(), fp32KC)
}

// Numerics is what, besides its inputs, decides the bits this process
// computes: the precision, the kernels and the element-wise vector width,
// and the k splits, which come from the CPU's cache sizes. The core count
// does not enter (TestProductsSameOnAnyCoreCount), nor, as far as
// measured, the CPU model: a Zen 5 given the Xeon's cache sizes through
// ROMAE_CACHES ended scripts/demo.sh at the Xeon's test loss to the last
// bit (docs/performance.md, 2026-11-28).
// Training records it in its checkpoints, so a resumed run can say when
// it will not match an uninterrupted one, and how to make it.
type Numerics struct {
	Precision string `json:"precision"`
	Kernels   string `json:"kernels"` // fp32 back end, vector width, bf16's kernel
	KSplits   []int  `json:"k_splits,omitempty"`
	// Caches is the ROMAE_CACHES value that gives another machine these
	// k splits ("" where the CPU reported none); CPU names the machine.
	Caches string `json:"caches,omitempty"`
	CPU    string `json:"cpu,omitempty"`
}

// CurrentNumerics is this process's Numerics.
func CurrentNumerics() Numerics {
	c := CPU()
	n := Numerics{Precision: Precision(), Kernels: fmt.Sprintf("%s, %d-lane vectors", BackendName(), vectorLanes()), KSplits: kSplits(BackendName()), CPU: c.Name}
	if k := Kernel(); k.Precision == PrecisionBF16 {
		n.Kernels += ", bf16 " + k.Kernel
		n.KSplits = append(n.KSplits, k.KBlock)
	}
	if c.L1D > 0 && c.L2 > 0 {
		n.Caches = fmt.Sprintf("%dK,%dK", c.L1D>>10, c.L2>>10)
	}
	return n
}

// SameBits reports whether products under n and o compute the same bits.
func (n Numerics) SameBits(o Numerics) bool {
	return n.Precision == o.Precision && n.Kernels == o.Kernels && slices.Equal(n.KSplits, o.KSplits)
}

func fp32Kernel(backend string, kc int) KernelInfo {
	switch backend {
	case "avx512":
		return KernelInfo{PrecisionFP32, backend, "fma8x32 (assembly)", []string{"avx512f"}, kc}
	case "avx2":
		return KernelInfo{PrecisionFP32, backend, "fma3x32v (assembly, AVX2)", []string{"avx2", "fma"}, kc}
	}
	return KernelInfo{PrecisionFP32, backend, backend, nil, 0}
}
