// Package avxaudit checks compiled x86-64 code for the AVX-512 → SSE
// transition penalty (docs/performance.md, "Transition penalty"): Go
// compiles float32 and float64 scalars to legacy-SSE instructions (MOVSS,
// UCOMISS, XORPS, CVTSS2SD…), and on Intel each one that runs while the
// upper halves of Y/ZMM0–15 are dirty costs ~140 ns.
//
// Each package with vector code calls Check from a test built with
// goexperiment.simd && amd64 && !race && !openblas: the race build calls
// out everywhere, and the openblas build's externally linked cgo binary is
// not disassembled the same way. The test binary must link the package's
// vector entry points, so a package lists those its own tests do not call.
package avxaudit

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var upperReg = regexp.MustCompile(`%[yz]mm([0-9]+)\b`)

// dirtiesUpper: the instruction names ymm0–15 or zmm0–15 (whose upper
// halves VZEROUPPER clears; zmm16–31 have no SSE alias and do not count).
func dirtiesUpper(in Insn) bool {
	if !strings.HasPrefix(in.Op, "v") {
		return false
	}
	for _, m := range upperReg.FindAllStringSubmatch(in.Args, -1) {
		if n, _ := strconv.Atoi(m[1]); n < 16 {
			return true
		}
	}
	return false
}

// legacySSE: a non-VEX instruction on xmm registers.
func legacySSE(in Insn) bool {
	return !strings.HasPrefix(in.Op, "v") && strings.Contains(in.Args, "%xmm")
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

// Audit runs a data-flow pass over f's control-flow graph: the upper state
// is dirty after any instruction that names ymm0–15 or zmm0–15 and clean
// after VZEROUPPER/VZEROALL. It lists, sorted, each legacy-SSE instruction
// reachable in the dirty state, each return or tail jump in the dirty
// state, and each call made in the dirty state (the callee may be scalar
// code or memmove's SSE moves) except calls that never return (panics).
// Callees are assumed to return clean: each package audits its own.
// usesVec tells whether f touches ymm/zmm0–15 at all.
func Audit(f Func) (problems []string, usesVec bool) {
	n := len(f.Insns)
	if n == 0 {
		return nil, false
	}
	index := map[uint64]int{}
	for i, in := range f.Insns {
		index[in.Addr] = i
	}
	// Successors of instruction i (-1: leaves the function).
	succ := func(i int) []int {
		in := f.Insns[i]
		switch {
		case isReturn(in.Op) || in.Op == "ud2" || in.Op == "int3":
			return nil
		case isJump(in.Op):
			var s []int
			if m := jumpTarget.FindStringSubmatch(in.Args); m != nil {
				addr, _ := strconv.ParseUint(m[1], 16, 64)
				if j, ok := index[addr]; ok {
					s = append(s, j)
				} else {
					s = append(s, -1) // tail jump out of the function
				}
			}
			if in.Op != "jmp" && i+1 < n {
				s = append(s, i+1)
			}
			return s
		case isCall(in.Op) && noReturn(in.Args):
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
			in := f.Insns[i]
			problems = append(problems, fmt.Sprintf("%#x %s %s: %s", in.Addr, in.Op, in.Args, what))
		}
	}
	work := []int{0}
	seen := make([]bool, n)
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		seen[i] = true
		in := f.Insns[i]
		dirty := dirtyIn[i]
		switch {
		case in.Op == "vzeroupper" || in.Op == "vzeroall":
			dirty = false
		case dirtiesUpper(in):
			usesVec = true
			dirty = true
		case legacySSE(in) && dirty:
			report(i, "legacy SSE with dirty upper state")
		case isCall(in.Op):
			if dirty && !noReturn(in.Args) {
				report(i, "call with dirty upper state")
			}
			dirty = false
		}
		next := succ(i)
		if len(next) == 0 && dirty && isReturn(in.Op) {
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
