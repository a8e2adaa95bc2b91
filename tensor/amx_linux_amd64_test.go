//go:build goexperiment.simd && amd64 && linux && !openblas

// Not in the openblas build: its cgo test binary is linked externally and
// GNU objdump does not see the Go functions these tests disassemble the way
// it does in the default build (the assembly under test is the same).

package tensor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"romae/internal/avxaudit"
	"romae/internal/race"
)

// TestAMXGemm runs the bf16 product checks on the AMX tiles. It needs a
// CPU with AMX-BF16 and Linux's tile-data permission; elsewhere it skips
// and says why (TestAMXDriverEmulated still checks the packing and the
// driver there, and TestAMXEncoding the instructions).
func TestAMXGemm(t *testing.T) {
	if !bf16KernelSupported(bf16AMX) {
		t.Skipf("AMX not usable here: %s (CPU: %s)", cpuInfo.AMX, cpuInfo.Name)
	}
	prev := bf16Kernel.Load()
	defer bf16Kernel.Store(prev)
	if err := SetBackend("amx"); err != nil {
		t.Fatal(err)
	}
	checkBF16Gemm(t)
}

// emulateAMXStrip is amxStrip in Go: the same pointers, strides, tile
// configuration and flags (which must agree with each other), and
// TDPBF16PS's arithmetic (C[i][j] += A[i][2p]·B[p][j].lo +
// A[i][2p+1]·B[p][j].hi, bf16 operands, float32 sums). Like the tiles, it
// reads and writes only the configured rows and columns.
func emulateAMXStrip(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bstride uintptr, c unsafe.Pointer, ldc uintptr, slivers, flags int, accum bool, cfg *amxConfig) {
	rows := int(cfg[48]) + int(cfg[50])
	w := int(binary.LittleEndian.Uint16(cfg[16:])+binary.LittleEndian.Uint16(cfg[18:])) / 4
	if cfg[0] != 1 || rows < 1 || w < 1 || amxFlags(rows, w) != flags || *cfg != amxConfigs[rows-1][w-1] {
		panic(fmt.Sprintf("tile config (%d rows, %d columns) and flags %d disagree", rows, w, flags))
	}
	kk := 32 * chunks // k values (2 per pair)
	av, bv := make([]float32, rows*kk), make([]float32, kk*w)
	for i := range rows {
		row := unsafe.Slice((*uint16)(unsafe.Add(a, uintptr(i)*lda)), kk)
		for p, h := range row {
			av[i*kk+p] = float32frombits(uint32(h) << 16)
		}
	}
	for s := range slivers {
		bs, cs := unsafe.Add(b, uintptr(s)*bstride), unsafe.Add(c, 128*s)
		for p := range kk / 2 {
			row := unsafe.Slice((*uint32)(unsafe.Add(bs, uintptr(p)*128)), w)
			for j, u := range row {
				bv[2*p*w+j], bv[(2*p+1)*w+j] = float32frombits(u<<16), float32frombits(u&0xFFFF0000)
			}
		}
		for i := range rows {
			crow := unsafe.Slice((*float32)(unsafe.Add(cs, uintptr(i)*ldc)), w)
			for j := range w {
				var sum float32
				if accum {
					sum = crow[j]
				}
				for p := range kk {
					sum += av[i*kk+p] * bv[p*w+j]
				}
				crow[j] = sum
			}
		}
	}
}

// TestAMXSelfCheck: the run-time tile check passes on the emulated
// tiles (and on AMX hardware, where it runs the real kernel), and fails
// for kernels that get the accumulation, the A row stride or the k depth
// wrong.
func TestAMXSelfCheck(t *testing.T) {
	if bf16KernelSupported(bf16AMX) {
		if err := checkTileKernel(amxStrip); err != nil {
			t.Errorf("AMX hardware: %v", err)
		}
	}
	for _, tc := range []struct {
		name   string
		kernel amxKernelFunc
		ok     bool
	}{
		{"emulated", emulateAMXStrip, true},
		{"no accumulate", func(ch int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bs uintptr, c unsafe.Pointer, ldc uintptr, sl, f int, _ bool, cfg *amxConfig) {
			emulateAMXStrip(ch, a, lda, b, bs, c, ldc, sl, f, false, cfg)
		}, false},
		{"A rows packed tight", func(ch int, a unsafe.Pointer, _ uintptr, b unsafe.Pointer, bs uintptr, c unsafe.Pointer, ldc uintptr, sl, f int, acc bool, cfg *amxConfig) {
			emulateAMXStrip(ch, a, uintptr(ch)*64, b, bs, c, ldc, sl, f, acc, cfg)
		}, false},
		{"one chunk short", func(ch int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bs uintptr, c unsafe.Pointer, ldc uintptr, sl, f int, acc bool, cfg *amxConfig) {
			emulateAMXStrip(ch-1, a, lda, b, bs, c, ldc, sl, f, acc, cfg)
		}, false},
		{"slivers packed tight", func(ch int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, _ uintptr, c unsafe.Pointer, ldc uintptr, sl, f int, acc bool, cfg *amxConfig) {
			emulateAMXStrip(ch, a, lda, b, uintptr(ch)*16*amxNR*4, c, ldc, sl, f, acc, cfg)
		}, false},
		{"one sliver", func(ch int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bs uintptr, c unsafe.Pointer, ldc uintptr, _, f int, acc bool, cfg *amxConfig) {
			emulateAMXStrip(ch, a, lda, b, bs, c, ldc, 1, f, acc, cfg)
		}, false},
		{"whole tiles always", func(ch int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bs uintptr, c unsafe.Pointer, ldc uintptr, sl, _ int, acc bool, _ *amxConfig) {
			emulateAMXStrip(ch, a, lda, b, bs, c, ldc, sl, amxFlags(amxMR, amxNR), acc, &amxConfigs[amxMR-1][amxNR-1])
		}, false},
	} {
		if err := checkTileKernel(tc.kernel); (err == nil) != tc.ok {
			t.Errorf("%s: self-check error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestAMXSelfCheckFallback: when the self-check fails, by a wrong number
// or by a fault, turning bf16 on moves its products to the kernel this CPU
// has without AMX, and forcing amx is refused with the check's error.
func TestAMXSelfCheckFallback(t *testing.T) {
	if !BF16Supported() {
		t.Skip("no bf16 precision on this CPU (" + bf16Why() + "), so nothing to fall back within")
	}
	prevKernel, prevCheck, prevCPU := bf16Kernel.Load(), amxSelfCheck, cpuInfo
	defer func() {
		bf16Kernel.Store(prevKernel)
		amxSelfCheck, cpuInfo = prevCheck, prevCPU
		amxVerdict.once, amxVerdict.err = sync.Once{}, nil
		amxVerdict.failed.Store(false)
		SetPrecision(PrecisionFP32)
	}()
	for _, tc := range []struct {
		name, err string
		check     func() error
	}{
		{"wrong number", "want 2", func() error { return errors.New("tile self-check: C[0][0] = 1, want 2") }},
		// A general-protection fault, as LDTILECFG raises on a tile
		// configuration the CPU rejects: a load from a non-canonical
		// address. Without faultsAsErrors it ends the test binary.
		{"fault", "faulted", func() error { return checkTileKernel(generalProtectionFault) }},
	} {
		if tc.name == "fault" && race.Enabled {
			t.Log("fault: skipped under -race (the race runtime would itself fault on the address)")
			continue
		}
		amxVerdict.once, amxVerdict.err = sync.Once{}, nil
		amxSelfCheck = tc.check
		cpuInfo.AMX = "usable"
		bf16Kernel.Store(bf16AMX)
		if err := SetPrecision(PrecisionBF16); err != nil {
			t.Fatal(err)
		}
		c := cpuInfo
		c.AMX = "off"
		if got, want := bf16Kernel.Load(), chooseBF16(c); got != want || got == bf16AMX {
			t.Errorf("%s: after a failed self-check bf16 runs on %s, want %s", tc.name, bf16KernelNames[got], bf16KernelNames[want])
		}
		if err := SetBackend("amx"); err == nil || amxCompute != nil && !strings.Contains(err.Error(), "not available") {
			t.Errorf("%s: SetBackend(amx) after a failed self-check: %v", tc.name, err)
		}
		if err := confirmAMX(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: self-check error %v, want one saying %q", tc.name, err, tc.err)
		}
		SetPrecision(PrecisionFP32)
	}
}

// generalProtectionFault is a tile kernel that loads from a non-canonical
// address, which raises #GP (Linux: SIGSEGV, si_code SI_KERNEL, no
// address), the fault a rejected LDTILECFG raises.
func generalProtectionFault(int, unsafe.Pointer, uintptr, unsafe.Pointer, uintptr, unsafe.Pointer, uintptr, int, int, bool, *amxConfig) {
	bad := uintptr(1) << 63
	p := *(*unsafe.Pointer)(unsafe.Pointer(&bad))
	faultSink = *(*byte)(p)
}

var faultSink byte

// TestAMXDriverEmulated checks the AMX back end's packing (both A
// layouts, zero padding of rows, columns and k pairs), blocking and
// stores on any AVX512-BF16 machine, with the tiles emulated in Go.
func TestAMXDriverEmulated(t *testing.T) {
	emulateAMX(t)
	poisonBuffers()
	checkBF16Gemm(t)
}

// emulateAMX makes the bf16 products run on the AMX driver with the tiles
// emulated in Go until t ends (it bypasses the CPU check), or skips t
// where the bf16 packing assembly cannot run.
func emulateAMX(t *testing.T) {
	if !BF16Supported() {
		t.Skip("no bf16 path here (the AMX packing shares its assembly)")
	}
	prevK, prevKernel := bf16Kernel.Load(), amxKernel
	t.Cleanup(func() { bf16Kernel.Store(prevK); amxKernel = prevKernel })
	amxKernel = emulateAMXStrip
	bf16Kernel.Store(bf16AMX)
}

// poisonBuffers fills the recycled packing buffers (op(A) per core, op(B))
// with NaN pairs: padding that is not zeroed (rows, columns, k pairs)
// turns results into NaN.
func poisonBuffers() {
	const nan2 = 0x7FC07FC0
	for range cap(amxBufs) {
		b := &amxBuf{packed: make([]uint32, 1<<20)}
		for i := range b.packed {
			b.packed[i] = nan2
		}
		select {
		case amxBufs <- b:
		default:
		}
	}
	for range cap(bf16Bufs) {
		b := make([]uint32, 1<<20)
		for i := range b {
			b[i] = nan2
		}
		bf16Bufs.put(&b)
	}
}

// TestAMXPackedWeightEmulated: weights packed once for AMX (PackWeight),
// and repacked in place (Repack), give GemmPacked exactly Gemm's result on
// the AMX kernel, tiles emulated in Go, for the model's shapes and odd ones
// (an odd k block, n over one column block, rows short of a tile).
func TestAMXPackedWeightEmulated(t *testing.T) {
	emulateAMX(t)
	if err := SetPrecision(PrecisionBF16); err != nil {
		t.Fatal(err)
	}
	defer SetPrecision(PrecisionFP32)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []struct{ m, out, in int }{{200, 540, 180}, {200, 180, 720}, {1, 20, 180}, {45, 800, 131}} {
		w := to32(randSlice(rng, s.out*s.in))
		a := to32(randSlice(rng, s.m*s.in))
		p := PackWeight(w, s.out, s.in)
		if len(p.packedBF) != amxLayout.size(s.out, s.in) || p.bfKernel != bf16AMX {
			t.Fatalf("%+v: packed %d pairs for kernel %d, want AMX's layout", s, len(p.packedBF), p.bfKernel)
		}
		// Then repacked in place over NaNs (training's pack per pass):
		// every padding pair must be written again.
		w2 := to32(randSlice(rng, s.out*s.in))
		for _, repack := range []bool{false, true} {
			if repack {
				for i := range p.packedBF {
					p.packedBF[i] = 0x7fc07fc0
				}
				p.Repack(w2)
				w = w2
			}
			poisonBuffers()
			want, got := make([]float32, s.m*s.out), make([]float32, s.m*s.out)
			Gemm(false, true, s.m, s.out, s.in, 1, a, s.in, w, s.in, 0, want, s.out)
			GemmPacked(s.m, 1, a, s.in, p, 0, got, s.out)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.IsNaN(float64(got[i])) {
					t.Fatalf("%+v (repacked %v): C[%d] = %v, Gemm gives %v", s, repack, i, got[i], want[i])
				}
			}
		}
	}
}

// TestAMXEncoding disassembles amxStrip from this test binary with GNU
// objdump (which decodes AMX) and checks each byte-spelled instruction:
// a wrong byte in amx_linux_amd64.s shows here even without AMX.
func TestAMXEncoding(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("GNU objdump (binutils) not installed")
	}
	fns, err := avxaudit.Disassemble(objdump, os.Args[0], "romae/tensor.amxStrip")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fns {
		for _, in := range f.Insns {
			if strings.HasPrefix(in.Op, "tile") || strings.HasPrefix(in.Op, "tdp") || strings.HasPrefix(in.Op, "ldtile") {
				got = append(got, in.Op+" "+in.Args)
			}
		}
	}
	loadC := []string{
		"tileloadd (%rdi,%r12,1),%tmm0", "tileloadd 0x40(%rdi,%r12,1),%tmm1",
		"tileloadd (%r11,%r12,1),%tmm2", "tileloadd 0x40(%r11,%r12,1),%tmm3",
	}
	zeroC := []string{"tilezero %tmm0", "tilezero %tmm1", "tilezero %tmm2", "tilezero %tmm3"}
	chunk := []string{
		"tileloadd (%rsi,%rdx,1),%tmm4", "tileloadd (%r9,%r10,1),%tmm6", "tdpbf16ps %tmm6,%tmm4,%tmm0",
		"tileloadd 0x40(%r9,%r10,1),%tmm7", "tdpbf16ps %tmm7,%tmm4,%tmm1",
		"tileloadd (%rbx,%rdx,1),%tmm5", "tdpbf16ps %tmm6,%tmm5,%tmm2", "tdpbf16ps %tmm7,%tmm5,%tmm3",
	}
	storeC := []string{
		"tilestored %tmm0,(%rdi,%r12,1)", "tilestored %tmm1,0x40(%rdi,%r12,1)",
		"tilestored %tmm2,(%r11,%r12,1)", "tilestored %tmm3,0x40(%r11,%r12,1)",
	}
	// The 2×2 path, then the edge path (the same instructions, each behind
	// its flag test).
	block := slices.Concat(loadC, zeroC, chunk, storeC)
	want := slices.Concat([]string{"ldtilecfg (%rax)"}, block, block, []string{"tilerelease "})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("amxStrip disassembles to\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAMXBF16RowsEmulated: the AMX kernel reads BF16Rows in place (32-row
// tiles of 16 pairs, the rows' padding), tiles emulated in Go, and gives
// Gemm's result to the bit; the packing buffers are poisoned so that A
// read from them rather than from the rows would show.
func TestAMXBF16RowsEmulated(t *testing.T) {
	emulateAMX(t)
	if err := SetPrecision(PrecisionBF16); err != nil {
		t.Fatal(err)
	}
	defer SetPrecision(PrecisionFP32)
	poisonBuffers()
	checkGemmBF16Rows(t)
}

// TestGemmOtherClassBlocks checks the products with the k blocks that the
// other machine classes' caches give (kBlocksFor, TestKBlock's table), so the
// blocking only those machines run is checked on this one: the Xeon's
// (fp32 384, AMX 384; the AMX driver with its tiles emulated) and a small
// L2's (fp32 64, bf16 128). Zen 5 computes Zen 4's fp32 and VDPBF16PS
// blocks.
func TestGemmOtherClassBlocks(t *testing.T) {
	if !hasAVX512 {
		t.Skip("the avx512 back end needs AVX-512; this CPU lacks it")
	}
	if race.Enabled {
		t.Skip("run by the default build: under -race it takes ~100 s and the same code is raced by TestSgemmBackends and TestBF16Gemm")
	}
	for _, c := range []struct {
		name    string
		l1d, l2 int
		bf16    string // bf16 kernel to check
	}{
		{"xeon-amx", 48 << 10, 2 << 20, "amx"},
		{"small-l2", 32 << 10, 256 << 10, "avx512-bf16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() { setKBlocks(cpuInfo.L1D, cpuInfo.L2) })
			setKBlocks(c.l1d, c.l2)
			fp32, bf16, amx := kBlocks()
			t.Logf("k blocks: fp32 %d, bf16 %d, AMX %d", fp32, bf16, amx)
			t.Run("fp32", func(t *testing.T) {
				defer SetBackend(BackendName())
				if err := SetBackend("avx512"); err != nil {
					t.Fatal(err)
				}
				checkSgemm(t)
			})
			t.Run("bf16-"+c.bf16, func(t *testing.T) {
				if c.bf16 == "amx" {
					emulateAMX(t)
				} else {
					if !BF16Supported() {
						t.Skip("no bf16 path here")
					}
					prev := bf16Kernel.Load()
					defer bf16Kernel.Store(prev)
					if err := SetBackend(c.bf16); err != nil {
						t.Fatal(err)
					}
				}
				checkBF16Gemm(t)
			})
		})
	}
}

// BenchmarkAMXStrip runs the tile kernel alone, one core, on operands in
// L1/L2: 32 rows of C over 1, 6 and 23 slivers (n = 32, 192, 736) at the
// k depths the drivers use, called once per 32×32 block (as the driver
// did before the strip kernel) and once per strip. GFLOP/s per core.
func BenchmarkAMXStrip(b *testing.B) {
	if !bf16KernelSupported(bf16AMX) {
		b.Skipf("AMX not usable here: %s", cpuInfo.AMX)
	}
	full := &amxConfigs[amxMR-1][amxNR-1]
	for _, k := range []int{64, 192, 384, 768} {
		for _, sl := range []int{1, 6, 23} {
			chunks, kpad := k/32, k/2
			a := make([]uint32, amxMR*kpad)
			bb := make([]uint32, sl*kpad*amxNR)
			c := make([]float32, amxMR*sl*amxNR)
			ldc, bstride := uintptr(sl*amxNR*4), uintptr(kpad*amxNR*4)
			flops := float64(2 * amxMR * amxNR * k * sl)
			b.Run(fmt.Sprintf("k%d/slivers%d/per-block", k, sl), func(b *testing.B) {
				for range b.N {
					for s := range sl {
						amxStrip(chunks, unsafe.Pointer(&a[0]), uintptr(kpad*4), unsafe.Pointer(&bb[s*kpad*amxNR]), 0, unsafe.Pointer(&c[s*amxNR]), ldc, 1, amxFlags(amxMR, amxNR), false, full)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run(fmt.Sprintf("k%d/slivers%d/strip", k, sl), func(b *testing.B) {
				for range b.N {
					amxStrip(chunks, unsafe.Pointer(&a[0]), uintptr(kpad*4), unsafe.Pointer(&bb[0]), bstride, unsafe.Pointer(&c[0]), ldc, sl, amxFlags(amxMR, amxNR), false, full)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
