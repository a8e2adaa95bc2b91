package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BF16Rows holds exactly RoundBF16 of what was stored, and zeros in the
// pairs that pad a row, stored in place or stored in a group's own rows
// and copied in (CopyRows).
func TestBF16RowsStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct{ rows, cols int }{{1, 1}, {3, 7}, {33, 32}, {40, 181}} {
		ld := s.cols + 3
		src := to32(randSlice(rng, s.rows*ld))
		var b BF16Rows
		b.Resize(s.rows, s.cols)
		for i := range b.pairs {
			b.pairs[i] = 0x7FC07FC0 // NaN pairs: padding left as it was shows
		}
		b.Store(0, s.rows/2, src, ld)
		var group BF16Rows
		group.Resize(s.rows-s.rows/2, s.cols)
		group.Store(0, s.rows-s.rows/2, src[s.rows/2*ld:], ld)
		b.CopyRows(s.rows/2, &group)
		got := b.Float32()
		for r := range s.rows {
			for j := range s.cols {
				if want := RoundBF16(src[r*ld+j]); math.Float32bits(got[r*s.cols+j]) != math.Float32bits(want) {
					t.Fatalf("%+v: [%d,%d] = %v, want %v", s, r, j, got[r*s.cols+j], want)
				}
			}
			pad := b.pairs[r*b.ld : (r+1)*b.ld]
			for p := s.cols / 2; p < len(pad); p++ {
				if p == s.cols/2 && s.cols%2 == 1 {
					if pad[p]>>16 != 0 {
						t.Fatalf("%+v: row %d: the odd column's pair has %#x in its high half", s, r, pad[p])
					}
					continue
				}
				if pad[p] != 0 {
					t.Fatalf("%+v: row %d: padding pair %d = %#x", s, r, p, pad[p])
				}
			}
		}
	}
}

// StoreCols fills rows part by part as Store fills them whole: parts of
// even widths, the last one odd when the row is, into padding prefilled
// with NaN pairs; Widen reads back any rows as Float32 has them.
func TestBF16RowsStoreCols(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct {
		rows, cols int
		parts      []int // widths, summing to cols
	}{{3, 2, []int{2}}, {5, 7, []int{2, 4, 1}}, {33, 180, []int{60, 60, 60}}, {40, 181, []int{60, 60, 61}}} {
		ld := s.cols + 5
		src := to32(randSlice(rng, s.rows*ld))
		var want, got BF16Rows
		want.Resize(s.rows, s.cols)
		want.Store(0, s.rows, src, ld)
		got.Resize(s.rows, s.cols)
		for i := range got.pairs {
			got.pairs[i] = 0x7FC07FC0
		}
		for p := len(s.parts) - 1; p >= 0; p-- { // the parts in reverse order
			c0 := 0
			for _, w := range s.parts[:p] {
				c0 += w
			}
			got.StoreCols(1, s.rows-1, c0, s.parts[p], src[ld+c0:], ld)
			got.StoreCols(0, 1, c0, s.parts[p], src[c0:], ld)
		}
		for r := range s.rows {
			if g, w := got.pairs[r*got.ld:(r+1)*got.ld], want.pairs[r*want.ld:(r+1)*want.ld]; fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("%+v: row %d:\n got %x\nwant %x", s, r, g, w)
			}
		}
		wide := make([]float32, (s.rows-2)*s.cols)
		got.Widen(wide, 2, s.rows-2)
		if all := got.Float32(); fmt.Sprint(wide) != fmt.Sprint(all[2*s.cols:]) {
			t.Fatalf("%+v: Widen of rows 2… differs from Float32's", s)
		}
	}
}

// A product reading A as BF16Rows gives, on every bf16 kernel this CPU
// runs, exactly what Gemm gives on the float32 A (which it rounds the same
// way), and Gemm on the widened A where products run in float32.
func TestGemmBF16Rows(t *testing.T) {
	defer SetPrecision(PrecisionFP32)
	t.Run("fp32", checkGemmBF16Rows)
	if !BF16Supported() {
		return
	}
	prev := bf16Kernel.Load()
	defer bf16Kernel.Store(prev)
	for _, name := range BF16Kernels() {
		if name == bf16KernelNames[bf16OnFP32] {
			continue
		}
		if err := SetBackend(name); err != nil {
			t.Fatal(err)
		}
		if err := SetPrecision(PrecisionBF16); err != nil {
			t.Fatal(err)
		}
		t.Run(name, checkGemmBF16Rows)
	}
}

// checkGemmBF16Rows compares GemmBF16Rows and GemmPackedBF16Rows bit for
// bit with Gemm and GemmPacked at the current precision and kernel, on
// the model's shapes (q|k|v, the MLP, a lone sample) and edge ones: rows
// short of a panel and of a tile, odd k, k over one k block, n over one
// column block, alpha and beta.
func checkGemmBF16Rows(t *testing.T) {
	if BF16Operands() != (Precision() == PrecisionBF16 && BF16Supported()) {
		t.Fatalf("BF16Operands() = %v at precision %s", BF16Operands(), Precision())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	mlpRows := 200
	if testing.Short() {
		mlpRows = 48 // still 6 panels, over two k blocks (qemu-user: see batchRows)
	}
	for _, s := range []struct{ m, n, k int }{{batchRows(), 540, 180}, {mlpRows, 180, 720}, {1, 20, 180}, {45, 800, 131}, {37, 70, 1030}, {9, 33, 17}} {
		for _, ab := range [][2]float32{{1, 0}, {0.5, 1}} {
			for _, transB := range []bool{false, true} {
				name := fmt.Sprintf("m%d n%d k%d transB=%v alpha=%v beta=%v", s.m, s.n, s.k, transB, ab[0], ab[1])
				a := to32(randSlice(rng, s.m*s.k))
				b := to32(randSlice(rng, s.n*s.k))
				c0 := to32(randSlice(rng, s.m*s.n))
				ldb := s.n
				if transB {
					ldb = s.k
				}
				var rows BF16Rows
				rows.Resize(s.m, s.k)
				rows.Store(0, s.m, a, s.k)
				want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
				aw := a
				if !BF16Operands() {
					aw = rows.Float32() // the fallback runs on the rounded A
				}
				Gemm(false, transB, s.m, s.n, s.k, ab[0], aw, s.k, b, ldb, ab[1], want, s.n)
				GemmBF16Rows(&rows, transB, s.n, ab[0], b, ldb, ab[1], got, s.n)
				sameBits(t, name, got, want)
				if !transB {
					continue
				}
				w := PackWeight(b, s.n, s.k)
				want, got = append(want[:0], c0...), append(got[:0], c0...)
				GemmPacked(s.m, ab[0], aw, s.k, w, ab[1], want, s.n)
				GemmPackedBF16Rows(&rows, ab[0], w, ab[1], got, s.n)
				sameBits(t, name+" packed", got, want)
			}
		}
	}
}

func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s: C[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}
