package tensor

import "testing"

// TestAMDLegacyCaches decodes leaves 0x80000005/6 as recorded on the
// machines seen, and as AMD's manual encodes a Zen 4's caches.
func TestAMDLegacyCaches(t *testing.T) {
	for _, tc := range []struct {
		name               string
		ecx5, ecx6, edx6   uint32
		wantL1, wantL2, w3 int
	}{
		// Oxide Virtual Turin-like Processor (family 26 model 2), 2026-11-28:
		// no TOPOEXT, so these are the only cache leaves (`cpuid -1 -r`).
		{"zen5 guest", 0x300c0140, 0x04006140, 0x0fe09140, 48 << 10, 1 << 20, 1016 * 512 << 10},
		// EPYC 9004: 32 KiB 8-way L1d, 1 MiB 8-way L2, 32 MiB L3 (64 units).
		{"zen4", 0x20080140, 0x04006140, 64<<18 | 0x9140, 32 << 10, 1 << 20, 32 << 20},
		{"none reported", 0, 0, 0, 0, 0, 0},
	} {
		l1, l2, l3 := amdLegacyCaches(tc.ecx5, tc.ecx6, tc.edx6)
		if l1 != tc.wantL1 || l2 != tc.wantL2 || l3 != tc.w3 {
			t.Errorf("%s: L1d %d L2 %d L3 %d, want %d %d %d", tc.name, l1, l2, l3, tc.wantL1, tc.wantL2, tc.w3)
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
	if !amdCacheTopology() {
		t.Skip("no TOPOEXT here: the older leaves are the only ones (TestAMDLegacyCaches decodes them)")
	}
	_, _, ecx5, _ := cpuid(0x80000005, 0)
	_, _, ecx6, edx6 := cpuid(0x80000006, 0)
	l1, l2, _ := amdLegacyCaches(ecx5, ecx6, edx6)
	w1, w2, _ := cacheSizes(c.Vendor, 0)
	if l1 != w1 || l2 != w2 {
		t.Errorf("0x80000005/6: L1d %d L2 %d; 0x8000001D: %d %d", l1, l2, w1, w2)
	}
}
