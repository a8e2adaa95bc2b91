package avxaudit

import (
	"strconv"
	"strings"
	"testing"
)

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
		{"tail jump", "10 vaddps %zmm1,%zmm2,%zmm3\n14 jmp 100 <romae/x.f>", 1},
		{"panic call", "10 vaddps %zmm1,%zmm2,%zmm3\n14 call 100 <runtime.panicIndex>\n18 vzeroupper\n1c ret", 0},
		{"memmove call", "10 vaddps %zmm1,%zmm2,%zmm3\n14 call 100 <runtime.memmove>\n18 vzeroupper\n1c ret", 1},
		{"scalar double", "10 vaddpd %zmm1,%zmm2,%zmm3\n14 addsd %xmm1,%xmm0\n18 vzeroupper\n1c ret", 1},
	} {
		var f Func
		f.Name = c.name
		for _, l := range strings.Split(c.code, "\n") {
			fs := strings.SplitN(l, " ", 3)
			addr, _ := strconv.ParseUint(fs[0], 16, 64)
			in := Insn{Addr: addr, Op: fs[1]}
			if len(fs) > 2 {
				in.Args = fs[2]
			}
			f.Insns = append(f.Insns, in)
		}
		probs, _ := Audit(f)
		if len(probs) != c.want {
			t.Errorf("%s: %d problems %q, want %d", c.name, len(probs), probs, c.want)
		}
	}
}
