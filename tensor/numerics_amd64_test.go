//go:build goexperiment.simd && amd64

package tensor

import "testing"

// TestNumerics: the recorded ROMAE_CACHES value gives the recorded k
// splits back; the three classes' caches are three different sets of
// bits (their k splits differ: TestKBlock); precision is part of them.
func TestNumerics(t *testing.T) {
	t.Cleanup(func() { setKBlocks(cpuInfo.L1D, cpuInfo.L2) })
	here := CurrentNumerics()
	if here.Caches != "" {
		sizes, err := parseCaches(here.Caches)
		if err != nil {
			t.Fatalf("recorded caches %q: %v", here.Caches, err)
		}
		setKBlocks(sizes[0], sizes[1])
		if again := CurrentNumerics(); !again.SameBits(here) {
			t.Errorf("ROMAE_CACHES=%s gives k splits %v, recorded %v", here.Caches, again.KSplits, here.KSplits)
		}
	}

	if b := BackendName(); b == "avx512" || b == "avx2" {
		classes := []struct {
			name    string
			l1d, l2 int
		}{{"zen3", 32 << 10, 512 << 10}, {"zen4", 32 << 10, 1 << 20}, {"zen5", 48 << 10, 1 << 20}, {"xeon", 48 << 10, 2 << 20}}
		var seen []Numerics
		for _, c := range classes {
			setKBlocks(c.l1d, c.l2)
			n := CurrentNumerics()
			if !n.SameBits(CurrentNumerics()) {
				t.Errorf("%s caches: Numerics differs from itself", c.name)
			}
			for i, o := range seen {
				if n.SameBits(o) {
					t.Errorf("%s and %s caches read as the same bits: k splits %v, %v", c.name, classes[i].name, n.KSplits, o.KSplits)
				}
			}
			seen = append(seen, n)
		}
		setKBlocks(cpuInfo.L1D, cpuInfo.L2)
	}

	if BF16Supported() {
		p := Precision()
		t.Cleanup(func() { SetPrecision(p) })
		SetPrecision(PrecisionBF16)
		bf := CurrentNumerics()
		SetPrecision(PrecisionFP32)
		if fp := CurrentNumerics(); bf.SameBits(fp) || bf.Precision != PrecisionBF16 {
			t.Errorf("bf16 %+v and fp32 %+v read as the same bits", bf, fp)
		}
	}
}
