package tensor

import (
	"encoding/binary"
	"strings"
)

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

func xgetbv0() (eax, edx uint32)

// detectCPU reads vendor, family/model, brand, the features the kernels
// use and the cache sizes from CPUID. AMX additionally needs the OS to
// save tile state (XCR0 bits 17–18) and, on Linux, the per-process
// permission (amxPermit); without both the back end is never registered.
func detectCPU() CPUInfo {
	var c CPUInfo
	maxLeaf, b, cx, d := cpuid(0, 0)
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], b)
	binary.LittleEndian.PutUint32(v[4:], d)
	binary.LittleEndian.PutUint32(v[8:], cx)
	c.Vendor = string(v[:])
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt >= 0x80000004 {
		var name [48]byte
		for i := range uint32(3) {
			a, b, cx, d := cpuid(0x80000002+i, 0)
			for j, r := range []uint32{a, b, cx, d} {
				binary.LittleEndian.PutUint32(name[16*i+4*uint32(j):], r)
			}
		}
		c.Name = strings.TrimSpace(strings.TrimRight(string(name[:]), "\x00"))
	}
	if maxLeaf < 1 {
		return c
	}
	sig, _, ecx1, _ := cpuid(1, 0)
	base, model, ext := int(sig>>8&0xF), int(sig>>4&0xF), int(sig>>16&0xF)
	c.Family, c.Model = base, model
	if base == 0xF {
		c.Family += int(sig >> 20 & 0xFF)
	}
	if base == 0x6 || base == 0xF {
		c.Model |= ext << 4
	}
	osxsave := ecx1&(1<<27) != 0
	var xcr0 uint32
	if osxsave {
		xcr0, _ = xgetbv0()
	}
	avxOS := osxsave && xcr0&0x6 == 0x6
	avx512OS := avxOS && xcr0&0xE0 == 0xE0
	tileOS := osxsave && xcr0&(3<<17) == 3<<17
	add := func(ok bool, name string) {
		if ok {
			c.Features = append(c.Features, name)
		}
	}
	add(avxOS && ecx1&(1<<12) != 0, "fma")
	if maxLeaf >= 7 {
		_, b7, _, d7 := cpuid(7, 0)
		a71, _, _, _ := cpuid(7, 1)
		add(avxOS && b7&(1<<5) != 0, "avx2")
		add(avx512OS && b7&(1<<16) != 0, "avx512f")
		add(avx512OS && b7&(1<<30) != 0, "avx512bw")
		add(avx512OS && b7&(1<<31) != 0, "avx512vl")
		add(avx512OS && a71&(1<<5) != 0, "avx512_bf16")
		add(tileOS && d7&(1<<24) != 0, "amx_tile")
		add(tileOS && d7&(1<<22) != 0, "amx_bf16")
	}
	c.L1D, c.L2, c.L3 = cacheSizes(c.Vendor, maxLeaf, cpuid)
	c.AMX = amxStatus(c)
	return c
}

// cacheSizes walks the deterministic cache parameters: leaf 4 on Intel,
// 0x8000001D on AMD (same layout), asked of id (cpuid; tests pass
// recorded registers). Each subleaf is one cache: type in EAX[4:0] (1
// data, 3 unified; 0 ends the list), level in EAX[7:5], size = ways ×
// partitions × line × sets, each field stored minus one. AMD guests whose
// hypervisor hides 0x8000001D (no TOPOEXT: the Zen 5 of 2026-11-28), or
// leaves it empty, still fill in the older leaves 0x80000005/6, read then.
func cacheSizes(vendor string, maxLeaf uint32, id func(leaf, sub uint32) (a, b, c, d uint32)) (l1d, l2, l3 int) {
	leaf := uint32(4)
	amd := vendor == "AuthenticAMD"
	maxExt, _, _, _ := id(0x80000000, 0)
	if amd {
		_, _, ecx, _ := id(0x80000001, 0)
		if maxExt < 0x8000001D || ecx&(1<<22) == 0 { // TOPOEXT
			return amdLegacyCaches(maxExt, id)
		}
		leaf = 0x8000001D
	} else if maxLeaf < 4 {
		return 0, 0, 0
	}
	for sub := uint32(0); sub < 16; sub++ {
		a, b, c, _ := id(leaf, sub)
		typ, level := a&0x1F, a>>5&7
		if typ == 0 {
			break
		}
		size := int(b>>22+1) * int(b>>12&0x3FF+1) * int(b&0xFFF+1) * int(c+1)
		switch {
		case level == 1 && typ == 1:
			l1d = size
		case level == 2 && typ != 2:
			l2 = size
		case level == 3 && typ != 2:
			l3 = size
		}
	}
	if amd && l1d == 0 && l2 == 0 {
		return amdLegacyCaches(maxExt, id)
	}
	return l1d, l2, l3
}

// amdLegacyCaches decodes AMD's older cache leaves: L1d KiB in
// 0x80000005 ECX[31:24], L2 KiB in 0x80000006 ECX[31:16], L3 in 512 KiB
// units in 0x80000006 EDX[31:18] (zero fields: no such cache reported).
func amdLegacyCaches(maxExt uint32, id func(leaf, sub uint32) (a, b, c, d uint32)) (l1d, l2, l3 int) {
	if maxExt < 0x80000006 {
		return 0, 0, 0
	}
	_, _, ecx5, _ := id(0x80000005, 0)
	_, _, ecx6, edx6 := id(0x80000006, 0)
	return int(ecx5>>24) << 10, int(ecx6>>16) << 10, int(edx6>>18) << 19
}
