//go:build goexperiment.simd

package tensor

import (
	"fmt"
	"syscall"
	"testing"
	"unsafe"
)

// tileStoreKernel runs one of the kernels that store a tile of rows×32
// into C on small-integer operands (exact in fp32 and bf16): A(r, p) =
// r+p−3 over k steps, B(p, j) = (p+2j)%5 − 2.
type tileStoreKernel struct {
	name    string
	rows    int
	minCols int // the AVX2 tiles store into C only from 8 columns on (avx2Tile)
	ok      bool
	run     func(k int, c unsafe.Pointer, ldcb uintptr, cols int)
}

func tileStoreKernels(k int) []tileStoreKernel {
	aF, bF := make([]float32, asmMR*k), make([]float32, k*asmNR)
	kp := kp(k)
	aP, bP := make([]uint32, bfMR*kp), make([]uint32, kp*bfNR)
	for r := range asmMR {
		for p := range k {
			aF[r*k+p] = float32(r + p - 3)
		}
	}
	for p := range k {
		for j := range asmNR {
			bF[p*asmNR+j] = float32((p+2*j)%5 - 2)
		}
	}
	for r := range bfMR {
		for q := range kp {
			aP[r*kp+q] = bfPair(aF[r*k+2*q], aF[r*k+2*q+1])
		}
	}
	for q := range kp {
		for j := range bfNR {
			bP[q*bfNR+j] = bfPair(bF[2*q*asmNR+j], bF[(2*q+1)*asmNR+j])
		}
	}
	fp32 := func(kernel func(int, unsafe.Pointer, uintptr, uintptr, unsafe.Pointer, unsafe.Pointer, uintptr, int)) func(int, unsafe.Pointer, uintptr, int) {
		return func(k int, c unsafe.Pointer, ldcb uintptr, cols int) {
			kernel(k, unsafe.Pointer(&aF[0]), 4, uintptr(k)*4, unsafe.Pointer(&bF[0]), c, ldcb, cols)
		}
	}
	bf16 := func(kernel func(int, unsafe.Pointer, uintptr, uintptr, unsafe.Pointer, unsafe.Pointer, uintptr, int)) func(int, unsafe.Pointer, uintptr, int) {
		return func(k int, c unsafe.Pointer, ldcb uintptr, cols int) {
			kernel(kp, unsafe.Pointer(&aP[0]), 4, uintptr(kp)*4, unsafe.Pointer(&bP[0]), c, ldcb, cols)
		}
	}
	avx2 := func(rows int) func(int, unsafe.Pointer, uintptr, int) {
		return func(k int, c unsafe.Pointer, ldcb uintptr, cols int) {
			tile, last := avx2Tile(rows, cols)
			tile(k, unsafe.Pointer(&aF[0]), 4, uintptr(k)*4, unsafe.Pointer(&bF[0]), c, ldcb, last)
		}
	}
	return []tileStoreKernel{
		{"fp32-fma", 8, 1, hasAVX512, fp32(fma8x32c)},
		{"fp32-fma-4rows", 4, 1, hasAVX512, fp32(fma4x32c)},
		{"fp32-fma-1row", 1, 1, hasAVX512, fp32(fma1x32c)},
		{"bf16-vdpbf16ps", 8, 1, hasBF16, bf16(dpbf16x8x32c)},
		{"bf16-vdpbf16ps-4rows", 4, 1, hasBF16, bf16(dpbf16x4x32c)},
		{"bf16-vdpbf16ps-1row", 1, 1, hasBF16, bf16(dpbf16x1x32c)},
		{"fp32-fma-avx2-3rows", 3, 8, hasAVX2FMA, avx2(3)},
		{"fp32-fma-avx2-2rows", 2, 8, hasAVX2FMA, avx2(2)},
		{"fp32-fma-avx2-1row", 1, 8, hasAVX2FMA, avx2(1)},
	}
}

// TestTileKernelStoresColumns checks the kernels' stores into C, plain
// and accumulating, for every column count a tile can have (from 8 on for
// the AVX2 tiles, whose last vector overlaps the one before it): the first
// cols columns of each of the kernel's rows get exactly the product (or C plus
// it), and nothing else of C changes. The last row's columns end at a
// page whose successor is unmapped, so a masked-off lane that touched
// memory would fault.
func TestTileKernelStoresColumns(t *testing.T) {
	const k, ldc = 12, 40 // k even: the bf16 kernel's pairs cover it
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	floats := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), page/4)

	want := func(r, j int) float32 {
		var s float32
		for p := range k {
			s += float32(r+p-3) * float32((p+2*j)%5-2)
		}
		return s
	}
	for _, kern := range tileStoreKernels(k) {
		if !kern.ok {
			t.Logf("%s: skipped, this CPU lacks its instructions", kern.name)
			continue
		}
		for cols := kern.minCols; cols <= asmNR; cols++ {
			for _, accum := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/cols%d/accum=%v", kern.name, cols, accum), func(t *testing.T) {
					// C's last valid element is the page's last float:
					// a row past the kernel's would fault.
					start := len(floats) - ((kern.rows-1)*ldc + cols)
					c := floats[start:]
					for i := range c {
						c[i] = float32(1000 + i)
					}
					ldcb := uintptr(ldc * 4)
					if accum {
						ldcb |= 1 << 63
					}
					kern.run(k, unsafe.Pointer(&c[0]), ldcb, cols)
					for i := range c {
						r, j := i/ldc, i%ldc
						old := float32(1000 + i)
						w := old
						if j < cols {
							w = want(r, j)
							if accum {
								w += old
							}
						}
						if c[i] != w {
							t.Fatalf("C(%d, %d) = %v, want %v", r, j, c[i], w)
						}
					}
				})
			}
		}
	}
}
