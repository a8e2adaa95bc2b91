package tensor

import "testing"

// regs is a CPUID, recorded or encoded by hand: (leaf, subleaf) → EAX, EBX, ECX, EDX.
type regs map[[2]uint32][4]uint32

func (r regs) cpuid(leaf, sub uint32) (a, b, c, d uint32) {
	v := r[[2]uint32{leaf, sub}]
	return v[0], v[1], v[2], v[3]
}

// cache encodes one deterministic-cache subleaf (leaf 4, 0x8000001D).
func cache(typ, level, ways, sets uint32) [4]uint32 {
	return [4]uint32{typ | level<<5, (ways-1)<<22 | 63, sets - 1, 0}
}

// TestCacheSizes decodes each path of cacheSizes from registers: this
// Zen 5 guest's as recorded (`cpuid -1 -r`, 2026-11-28), and a Zen 4's
// and a Xeon's as their manuals encode them.
func TestCacheSizes(t *testing.T) {
	zen5Guest := regs{
		{0x80000000, 0}: {0x80000021, 0, 0, 0},
		{0x80000001, 0}: {0x00b00f21, 0x40000000, 0x440001f1, 0x25d3fbff}, // TOPOEXT (ECX bit 22) clear
		{0x80000005, 0}: {0, 0, 0x300c0140, 0},
		{0x80000006, 0}: {0, 0, 0x04006140, 0x0fe09140},
	}
	zen4 := regs{
		{0x80000000, 0}: {0x80000028, 0, 0, 0},
		{0x80000001, 0}: {0, 0, 1 << 22, 0},
		{0x8000001D, 0}: cache(1, 1, 8, 64),     // L1d 32 KiB
		{0x8000001D, 1}: cache(2, 1, 8, 64),     // L1i
		{0x8000001D, 2}: cache(3, 2, 8, 2048),   // L2 1 MiB
		{0x8000001D, 3}: cache(3, 3, 16, 32768), // L3 32 MiB
		// The older leaves disagree on purpose: 0x8000001D wins.
		{0x80000005, 0}: {0, 0, 0x40000000, 0},
		{0x80000006, 0}: {0, 0, 0x02000000, 0},
	}
	emptyTopology := regs{}
	for k, v := range zen5Guest {
		emptyTopology[k] = v
	}
	emptyTopology[[2]uint32{0x80000001, 0}] = [4]uint32{0, 0, 1 << 22, 0} // TOPOEXT set, 0x8000001D all zero
	xeon := regs{
		{4, 0}: cache(1, 1, 12, 64),     // L1d 48 KiB
		{4, 1}: cache(2, 1, 8, 64),      // L1i
		{4, 2}: cache(3, 2, 16, 2048),   // L2 2 MiB
		{4, 3}: cache(3, 3, 15, 122880), // L3 112.5 MiB
	}
	for _, tc := range []struct {
		name       string
		vendor     string
		maxLeaf    uint32
		r          regs
		l1, l2, l3 int
	}{
		{"zen5 guest without TOPOEXT", "AuthenticAMD", 0x10, zen5Guest, 48 << 10, 1 << 20, 1016 * 512 << 10},
		{"zen4", "AuthenticAMD", 0x10, zen4, 32 << 10, 1 << 20, 32 << 20},
		{"TOPOEXT with an empty leaf", "AuthenticAMD", 0x10, emptyTopology, 48 << 10, 1 << 20, 1016 * 512 << 10},
		{"AMD without either", "AuthenticAMD", 0x10, regs{{0x80000000, 0}: {0x80000004, 0, 0, 0}}, 0, 0, 0},
		{"xeon", "GenuineIntel", 0x20, xeon, 48 << 10, 2 << 20, 15 * 122880 * 64},
		{"intel without leaf 4", "GenuineIntel", 2, xeon, 0, 0, 0},
	} {
		l1, l2, l3 := cacheSizes(tc.vendor, tc.maxLeaf, tc.r.cpuid)
		if l1 != tc.l1 || l2 != tc.l2 || l3 != tc.l3 {
			t.Errorf("%s: L1d %d L2 %d L3 %d, want %d %d %d", tc.name, l1, l2, l3, tc.l1, tc.l2, tc.l3)
		}
	}
}

// TestAMDLegacyCachesAgree: where an AMD CPU reports both the cache
// topology leaf and the older leaves, their L1d and L2 sizes agree, so a
// guest that hides the first blocks as the same CPU does on bare metal.
func TestAMDLegacyCachesAgree(t *testing.T) {
	c := CPU()
	if c.Vendor != "AuthenticAMD" {
		t.Skipf("AMD's older cache leaves; this CPU is %s", c.Vendor)
	}
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if _, _, ecx, _ := cpuid(0x80000001, 0); maxExt < 0x8000001D || ecx&(1<<22) == 0 {
		t.Skip("no TOPOEXT here: the older leaves are the only ones (TestCacheSizes decodes them)")
	}
	hidden := func(leaf, sub uint32) (a, b, c, d uint32) {
		a, b, c, d = cpuid(leaf, sub)
		if leaf == 0x80000001 {
			c &^= 1 << 22
		}
		return a, b, c, d
	}
	l1, l2, _ := cacheSizes(c.Vendor, 0, hidden)
	w1, w2, _ := cacheSizes(c.Vendor, 0, cpuid)
	if l1 != w1 || l2 != w2 {
		t.Errorf("0x80000005/6: L1d %d L2 %d; 0x8000001D: %d %d", l1, l2, w1, w2)
	}
}
