//go:build goexperiment.simd && amd64

package tensor

import (
	"fmt"
	"testing"
)

// TestPackBT32 checks the register-transposing pack of op(B) = bᵀ against
// its definition, d[p·32 + j] = b[(j0+j)·ldb + pc + p] and zero for
// j ≥ w, over widths and k lengths on and off the 16×16 blocks.
func TestPackBT32(t *testing.T) {
	if !hasAVX512 {
		t.Skip("packBT32 needs AVX-512; this CPU lacks it")
	}
	for _, tc := range []struct{ kb, w, ldb, pc, j0 int }{
		{60, 32, 201, 0, 0},  // attention: k = head dim, a full sliver
		{60, 9, 201, 0, 192}, // … and the last 9 of 201 columns
		{256, 20, 720, 256, 160},
		{16, 16, 16, 0, 0},
		{7, 32, 40, 3, 1},
		{33, 1, 50, 2, 0},
		{1, 17, 5, 4, 2},
	} {
		t.Run(fmt.Sprintf("kb%d_w%d", tc.kb, tc.w), func(t *testing.T) {
			b := make([]float32, (tc.j0+tc.w)*tc.ldb)
			for i := range b {
				b[i] = float32(i) + 0.5
			}
			d := make([]float32, tc.kb*32)
			for i := range d {
				d[i] = -1 // every element must be written
			}
			packBT32(b, tc.ldb, tc.pc, tc.j0, tc.kb, tc.w, d)
			for p := range tc.kb {
				for j := range 32 {
					var want float32
					if j < tc.w {
						want = b[(tc.j0+j)*tc.ldb+tc.pc+p]
					}
					if got := d[p*32+j]; got != want {
						t.Fatalf("d[%d·32+%d] = %v, want %v", p, j, got, want)
					}
				}
			}
		})
	}
}
