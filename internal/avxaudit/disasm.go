package avxaudit

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

var (
	objdumpInsn = regexp.MustCompile(`^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$`)
	jumpTarget  = regexp.MustCompile(`^(?:0x)?([0-9a-f]+)(?:\s|$)`)
)

// Insn is one disassembled instruction in GNU objdump's AT&T syntax; the
// target of a call or jump is written "addr <function>".
type Insn struct {
	Addr     uint64
	Op, Args string
}

// Func is one function's machine code, in address order.
type Func struct {
	Name  string
	Test  bool // defined in a _test.go file
	Insns []Insn
}

// Disassemble disassembles every function of the ELF binary bin whose
// name starts with prefix, one objdump run over their address span.
// Function bounds, names and files come from the Go symbol table
// (.gopclntab), which go test's stripped binaries keep; call targets are
// named from it.
func Disassemble(objdump, bin, prefix string) ([]Func, error) {
	ef, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	text, pcln := ef.Section(".text"), ef.Section(".gopclntab")
	if text == nil || pcln == nil {
		return nil, fmt.Errorf("%s: no .text or .gopclntab", bin)
	}
	pclnData, err := pcln.Data()
	if err != nil {
		return nil, err
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pclnData, text.Addr))
	if err != nil {
		return nil, err
	}
	var fns []Func
	var ranges [][2]uint64
	lo, hi := ^uint64(0), uint64(0)
	for _, f := range tab.Funcs {
		if !strings.HasPrefix(f.Name, prefix) || f.End <= f.Entry {
			continue
		}
		file, _, _ := tab.PCToLine(f.Entry)
		fns = append(fns, Func{Name: f.Name, Test: strings.HasSuffix(file, "_test.go")})
		ranges = append(ranges, [2]uint64{f.Entry, f.End})
		lo, hi = min(lo, f.Entry), max(hi, f.End)
	}
	if len(fns) == 0 {
		return nil, fmt.Errorf("%s: no functions %s*", bin, prefix)
	}
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn",
		fmt.Sprintf("--start-address=%#x", lo), fmt.Sprintf("--stop-address=%#x", hi), bin).Output()
	if err != nil {
		return nil, fmt.Errorf("objdump: %v", err)
	}
	byAddr := map[uint64]int{} // entry address → function index
	for i, r := range ranges {
		byAddr[r[0]] = i
	}
	cur := -1
	for _, l := range strings.Split(string(out), "\n") {
		m := objdumpInsn.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		if i, ok := byAddr[addr]; ok {
			cur = i
		}
		if cur < 0 || addr >= ranges[cur][1] {
			cur = -1
			continue
		}
		in := Insn{addr, m[2], strings.TrimSpace(m[3])}
		if isCall(in.Op) || isJump(in.Op) {
			if t := jumpTarget.FindStringSubmatch(in.Args); t != nil {
				ta, _ := strconv.ParseUint(t[1], 16, 64)
				if f := tab.PCToFunc(ta); f != nil {
					in.Args = fmt.Sprintf("%x <%s>", ta, f.Name)
				}
			}
		}
		fns[cur].Insns = append(fns[cur].Insns, in)
	}
	return fns, nil
}

func isJump(op string) bool   { return strings.HasPrefix(op, "j") }
func isReturn(op string) bool { return strings.HasPrefix(op, "ret") }
func isCall(op string) bool   { return strings.HasPrefix(op, "call") }
