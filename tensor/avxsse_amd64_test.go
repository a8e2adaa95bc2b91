//go:build goexperiment.simd && amd64 && !race && !openblas

// Not in the openblas build: its cgo test binary is linked externally and
// GNU objdump does not see the Go functions these tests disassemble the way
// it does in the default build (the assembly under test is the same).

package tensor

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestNoSSEAfterAVX checks the machine code of this package, as linked
// into the test binary, for the AVX-512 → SSE transition penalty
// (docs/performance.md, "Transition penalty"): Go compiles float32
// scalars to legacy-SSE instructions (MOVSS, UCOMISS, XORPS, CVTSS2SD…),
// and on Intel each one that runs while the upper halves of Y/ZMM0–15
// are dirty costs ~140 ns. A data-flow pass over each function's control
// flow graph marks the upper state dirty after any instruction that names
// ymm0–15 or zmm0–15 and clean after VZEROUPPER/VZEROALL; it fails on a
// legacy-SSE instruction reachable in the dirty state, a return or tail
// jump in the dirty state, and a call made in the dirty state (the callee
// may be scalar code or memmove's SSE moves), except calls that never
// return (panics) and calls of the package's vector helpers. It needs
// GNU objdump (binutils), the only disassembler here that decodes EVEX,
// and a non-race build (race instrumentation calls out everywhere).
func TestNoSSEAfterAVX(t *testing.T) {
	if len(auditLinked) == 0 {
		t.Fatal("no entry points")
	}
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("GNU objdump (binutils) not installed: cannot disassemble the AVX-512 code")
	}
	fns, err := disassemblePackage(objdump, os.Args[0], "romae/tensor.")
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) < 20 {
		t.Fatalf("disassembled only %d functions of the package", len(fns))
	}
	var bad []string
	vector := 0
	for _, f := range fns {
		if f.test {
			continue
		}
		probs, usesVec := auditUpperState(f)
		if usesVec {
			vector++
		}
		for _, p := range probs {
			bad = append(bad, f.name+": "+p)
		}
	}
	if vector < 10 {
		t.Fatalf("only %d functions use ymm/zmm: the disassembly was not understood", vector)
	}
	if len(bad) > 0 {
		t.Errorf("%d AVX→SSE transitions:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// auditLinked makes sure the package's vector entry points that its own
// tests do not call are linked into the test binary, so they are audited.
var auditLinked = []any{SumSq32, Dot3_32, Dot32, ScaleMul32, RMSNormGrad32, MulAcc32, SoftmaxGrad32,
	AddScaled32, RotatePairs32, Add32, Scale32, Exp32Slice, SiLU32, SiLUGrad32, SoftmaxRow32}

// TestUpperStateAudit feeds the audit hand-written instruction sequences,
// so a pass that stopped seeing transitions would fail here.
func TestUpperStateAudit(t *testing.T) {
	for _, c := range []struct {
		name string
		code string // one instruction per line: "addr mnemonic operands"
		want int    // problems found
	}{
		{"clean", "10 vmulps %zmm1,%zmm2,%zmm3\n14 vzeroupper\n18 movss %xmm0,(%rax)\n1c ret", 0},
		{"sse after zmm", "10 vmulps %zmm1,%zmm2,%zmm3\n14 ucomiss %xmm0,%xmm1\n18 vzeroupper\n1c ret", 1},
		{"high registers only", "10 vfmadd231ps %zmm18,%zmm16,%zmm17\n14 movss %xmm0,(%rax)\n18 ret", 0},
		{"dirty return", "10 vaddps %ymm1,%ymm2,%ymm3\n14 ret", 1},
		{"loop back edge", "10 ucomiss %xmm0,%xmm1\n14 vaddps %zmm1,%zmm2,%zmm3\n18 dec %rcx\n1c jne 10\n20 vzeroupper\n24 ret", 1},
		{"branch joins", "10 jne 20\n14 vaddps %zmm1,%zmm2,%zmm3\n18 jmp 24\n20 vzeroupper\n24 movss %xmm0,(%rax)\n28 ret", 2},
		{"panic call", "10 vaddps %zmm1,%zmm2,%zmm3\n14 call 100 <runtime.panicIndex>\n18 vzeroupper\n1c ret", 0},
		{"memmove call", "10 vaddps %zmm1,%zmm2,%zmm3\n14 call 100 <runtime.memmove>\n18 vzeroupper\n1c ret", 1},
	} {
		var f asmFunc
		f.name = c.name
		for _, l := range strings.Split(c.code, "\n") {
			fs := strings.SplitN(l, " ", 3)
			addr, _ := strconv.ParseUint(fs[0], 16, 64)
			in := insn{addr: addr, op: fs[1]}
			if len(fs) > 2 {
				in.args = fs[2]
			}
			f.insns = append(f.insns, in)
		}
		probs, _ := auditUpperState(f)
		if len(probs) != c.want {
			t.Errorf("%s: %d problems %q, want %d", c.name, len(probs), probs, c.want)
		}
	}
}

var upperReg = regexp.MustCompile(`%[yz]mm([0-9]+)\b`)

// dirtiesUpper: the instruction names ymm0–15 or zmm0–15 (whose upper
// halves VZEROUPPER clears; zmm16–31 have no SSE alias and do not count).
func dirtiesUpper(in insn) bool {
	if !strings.HasPrefix(in.op, "v") {
		return false
	}
	for _, m := range upperReg.FindAllStringSubmatch(in.args, -1) {
		if n, _ := strconv.Atoi(m[1]); n < 16 {
			return true
		}
	}
	return false
}

// legacySSE: a non-VEX instruction on xmm registers.
func legacySSE(in insn) bool {
	return !strings.HasPrefix(in.op, "v") && strings.Contains(in.args, "%xmm")
}

// noReturn are callees that end the goroutine's normal flow: the state
// they start in does not matter.
func noReturn(args string) bool {
	for _, s := range []string{"runtime.panic", "runtime.goPanic", "runtime.morestack", "runtime.throw"} {
		if strings.Contains(args, "<"+s) {
			return true
		}
	}
	return false
}

// auditUpperState runs the dirty-upper-state data flow over f and lists
// the transitions it finds; usesVec tells whether f touches ymm/zmm0–15.
func auditUpperState(f asmFunc) (problems []string, usesVec bool) {
	n := len(f.insns)
	index := map[uint64]int{}
	for i, in := range f.insns {
		index[in.addr] = i
	}
	// Successors of instruction i (-1: leaves the function).
	succ := func(i int) []int {
		in := f.insns[i]
		switch {
		case isReturn(in.op) || in.op == "ud2" || in.op == "int3":
			return nil
		case isJump(in.op):
			var s []int
			if m := jumpTarget.FindStringSubmatch(in.args); m != nil {
				addr, _ := strconv.ParseUint(m[1], 16, 64)
				if j, ok := index[addr]; ok {
					s = append(s, j)
				} else {
					s = append(s, -1) // tail jump out of the function
				}
			}
			if in.op != "jmp" && i+1 < n {
				s = append(s, i+1)
			}
			return s
		case isCall(in.op) && noReturn(in.args):
			return nil
		}
		if i+1 < n {
			return []int{i + 1}
		}
		return nil
	}
	// dirtyIn[i]: the upper state may be dirty when i starts.
	dirtyIn := make([]bool, n)
	reported := map[int]bool{}
	report := func(i int, what string) {
		if !reported[i] {
			reported[i] = true
			in := f.insns[i]
			problems = append(problems, fmt.Sprintf("%#x %s %s: %s", in.addr, in.op, in.args, what))
		}
	}
	work := []int{0}
	seen := make([]bool, n)
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		seen[i] = true
		in := f.insns[i]
		dirty := dirtyIn[i]
		switch {
		case in.op == "vzeroupper" || in.op == "vzeroall":
			dirty = false
		case dirtiesUpper(in):
			usesVec = true
			dirty = true
		case legacySSE(in) && dirty:
			report(i, "legacy SSE with dirty upper state")
		case isCall(in.op):
			if dirty && !noReturn(in.args) {
				report(i, "call with dirty upper state")
			}
			dirty = false // callees leave it clean (this audit checks ours)
		}
		next := succ(i)
		if len(next) == 0 && dirty && isReturn(in.op) {
			report(i, "returns with dirty upper state")
		}
		for _, j := range next {
			if j < 0 {
				if dirty {
					report(i, "jumps out with dirty upper state")
				}
				continue
			}
			if !seen[j] || (dirty && !dirtyIn[j]) {
				dirtyIn[j] = dirtyIn[j] || dirty
				work = append(work, j)
			}
		}
	}
	sort.Strings(problems)
	return problems, usesVec
}
