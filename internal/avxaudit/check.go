//go:build amd64 && !race && !openblas

package avxaudit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Check audits every function of the running test binary whose name
// starts with pkgPrefix (e.g. "romae/optim."), except those defined in
// _test.go files, and fails t on each transition Audit finds. It fails
// too when fewer than minVectorFuncs of them touch ymm/zmm0–15 (the
// disassembly was not understood, or the vector code was not linked), and
// skips when GNU objdump (binutils, the only disassembler here that
// decodes EVEX) is not installed.
func Check(t testing.TB, pkgPrefix string, minVectorFuncs int) {
	t.Helper()
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("GNU objdump (binutils) not installed: cannot disassemble the AVX-512 code")
	}
	fns, err := Disassemble(objdump, os.Args[0], pkgPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	vector := 0
	for _, f := range fns {
		if f.Test {
			continue
		}
		probs, usesVec := Audit(f)
		if usesVec {
			vector++
		}
		for _, p := range probs {
			bad = append(bad, f.Name+": "+p)
		}
	}
	if vector < minVectorFuncs {
		t.Fatalf("only %d of %d functions %s* use ymm/zmm, want ≥ %d: the disassembly was not understood or the vector code is not linked",
			vector, len(fns), pkgPrefix, minVectorFuncs)
	}
	if len(bad) > 0 {
		t.Errorf("%d AVX→SSE transitions:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
