//go:build goexperiment.simd && amd64 && linux

package tensor

// The AMX bf16 back end (Intel Sapphire Rapids and later): products on
// tile registers, 32×32 fp32 C blocks from 2×2 TDPBF16PS tiles, bf16
// operands packed once per block in the layouts the tiles load:
//
//	A: rows of op(A), kpad pairs each (row stride kpad·4 bytes), rows
//	   padded with zeros to a multiple of 32, pairs to a multiple of 16
//	B: the VDPBF16PS path's 32-column slivers ([pair][32] uint32, which
//	   is the VNNI layout TDPBF16PS wants), pairs zero-padded likewise
//	   (amxLayout; packed once per product and shared by the
//	   workers, or once per weight by PackWeight)
//
// It is used only when CPUID reports AMX-TILE and AMX-BF16, XCR0 shows
// the OS saving tile state, and Linux granted this process the tile-data
// permission (arch_prctl ARCH_REQ_XCOMP_PERM), asked once at start-up
// before any tile instruction; otherwise amxStatus says why and the
// dispatch never selects it.

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"syscall"
	"unsafe"

	"simd/archsimd"

	"romae/internal/simdpart"
)

//go:noescape
func amxStrip(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bstride uintptr, c unsafe.Pointer, ldc uintptr, slivers int, flags int, accum bool, cfg *amxConfig)

// amxKernelFunc is amxStrip's signature (amxKernel: tests emulate it).
type amxKernelFunc = func(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, bstride uintptr, c unsafe.Pointer, ldc uintptr, slivers int, flags int, accum bool, cfg *amxConfig)

// amxConfig is LDTILECFG's 64-byte operand: palette, start row, then
// bytes per row (uint16) and rows (uint8) of each of 16 tiles.
type amxConfig [64]byte

// amxStrip's flags: the tiles of columns 16–31 exist (the sliver is wider
// than 16 columns), those of rows 16–31 exist (more than 16 rows).
const (
	amxCols2 = 1
	amxRows2 = 2
)

// amxConfigs[r-1][w-1] configures the tiles for a block of r rows of C
// and w columns (1 ≤ r, w ≤ 32): C tiles tmm0–3 of min(r,16) or r−16 rows
// by min(w,16) or w−16 columns, A tiles tmm4/5 of as many rows by 32
// bf16, B tiles tmm6/7 of 16 pairs by as many columns. A tile with no
// rows is left unconfigured (amxFlags says so to the kernel). A short
// block is loaded and stored by the tiles as it is: nothing past its
// rows or columns is read from C or written.
var amxConfigs = func() (t [amxMR][amxNR]amxConfig) {
	for r := 1; r <= amxMR; r++ {
		for w := 1; w <= amxNR; w++ {
			c := &t[r-1][w-1]
			c[0] = 1
			rows := [2]int{min(r, 16), max(r-16, 0)}
			cols := [2]int{min(w, 16), max(w-16, 0)}
			set := func(tile, rows, colsb int) {
				if rows > 0 && colsb > 0 {
					binary.LittleEndian.PutUint16(c[16+2*tile:], uint16(colsb))
					c[48+tile] = uint8(rows)
				}
			}
			for i := range 2 {
				for j := range 2 {
					set(2*i+j, rows[i], 4*cols[j]) // C
				}
				set(4+i, rows[i], 64)   // A: 32 bf16 of k
				set(6+i, 16, 4*cols[i]) // B: 16 pairs
			}
		}
	}
	return
}()

// amxFlags is amxStrip's flags for a block of r rows and w columns.
func amxFlags(r, w int) int {
	f := 0
	if w > 16 {
		f |= amxCols2
	}
	if r > 16 {
		f |= amxRows2
	}
	return f
}

const (
	sysArchPrctl      = 158 // linux/amd64
	archGetXcompPerm  = 0x1022
	archReqXcompPerm  = 0x1023
	xfeatureXtiledata = 18

	amxMR = 32
	amxNR = 32
	amxMC = 128
)

// amxKernel is the tile kernel, a variable so the driver and packing can
// be tested on machines without AMX against an emulation of the tiles.
var amxKernel amxKernelFunc = amxStrip

// Set in a variable initialiser, which runs before dispatch.go's init.
var _ = func() bool {
	amxCompute = amxComputePacked
	amxSelfCheck = func() error { return checkTileKernel(amxKernel) } // amxKernel: tests emulate it
	return true
}()

// checkTileKernel runs a tile kernel on products with an exact answer
// and says where one differs. The operands are small integers, so every
// bf16 value and float32 sum is exact: any difference is the kernel's (an
// instruction, the tile configuration, which operand half is which k),
// not rounding. A strip of two whole slivers, stored and then accumulated
// onto; then short blocks of each tile arrangement (rows past 16 or not,
// columns past 16 or not) in a third sliver, which must leave every value
// of C outside them as it was. Three k chunks, A rows, B slivers and C
// rows strided wider than they are.
func checkTileKernel(kernel amxKernelFunc) error {
	const chunks, pairs, lda, ldc = 3, 48, 56, 100 // lda in pairs, ldc in floats
	const bstride = pairs*amxNR + 64               // pairs between slivers
	const sentinel = -1e9
	val := func(i, j int) float32 { return float32((i*7+j*3)%9 - 4) }
	a := make([]uint32, amxMR*lda) // row i, pair p: A(i, 2p) | A(i, 2p+1)<<16
	for i := range amxMR {
		for p := range pairs {
			a[i*lda+p] = bfPair(val(i, 2*p), val(i, 2*p+1))
		}
	}
	b := make([]uint32, 3*bstride) // sliver s, pair p, column j: B(2p, 32s+j) | B(2p+1, 32s+j)<<16
	for s := range 3 {
		for p := range pairs {
			for j := range amxNR {
				b[s*bstride+p*amxNR+j] = bfPair(val(2*p+5, 32*s+j), val(2*p+6, 32*s+j))
			}
		}
	}
	product := func(i, j int) (sum float32) {
		for q := range 2 * pairs {
			sum += val(i, q) * val(q+5, j)
		}
		return sum
	}
	c := make([]float32, amxMR*ldc)
	for i := range c {
		c[i] = sentinel
	}
	run := func(col0, slivers, rows, w int, accum bool) {
		kernel(chunks, unsafe.Pointer(&a[0]), lda*4, unsafe.Pointer(&b[col0/amxNR*bstride]), bstride*4,
			unsafe.Pointer(&c[col0]), ldc*4, slivers, amxFlags(rows, w), accum, &amxConfigs[rows-1][w-1])
	}
	// check: C's block of rows × [col0, col0+w) holds times × the
	// product, the rest of C from col0 on is old (values before the call).
	check := func(what string, col0, rows, w int, times float32, old []float32) error {
		for i := range amxMR {
			for j := col0; j < ldc; j++ {
				want := old[i*ldc+j]
				if i < rows && j < col0+w {
					want = times * product(i, j)
				}
				if got := c[i*ldc+j]; got != want {
					return fmt.Errorf("tile self-check, %s: C[%d][%d] = %v, want %v", what, i, j, got, want)
				}
			}
		}
		return nil
	}
	before := slices.Clone(c)
	for pass, accum := range []bool{false, true} {
		run(0, 2, amxMR, amxNR, accum)
		if err := check(fmt.Sprintf("strip of 2 slivers (accumulate %v)", accum), 0, amxMR, 2*amxNR, float32(pass+1), before); err != nil {
			return err
		}
	}
	for _, blk := range [][2]int{{19, 7}, {5, 20}, {9, 3}, {32, 17}} {
		rows, w := blk[0], blk[1]
		before := slices.Clone(c)
		for pass, accum := range []bool{false, true} {
			run(2*amxNR, 1, rows, w, accum)
			if err := check(fmt.Sprintf("%d×%d block (accumulate %v)", rows, w, accum), 2*amxNR, rows, w, float32(pass+1), before); err != nil {
				return err
			}
		}
		for i := range amxMR { // back to the sentinel for the next block
			for j := 2 * amxNR; j < ldc; j++ {
				c[i*ldc+j] = sentinel
			}
		}
	}
	return nil
}

// amxStatus asks Linux for the tile-data permission when the CPU and OS
// support AMX, and says whether the back end may be used. It asks at
// start-up, before anything could reach a tile instruction, rather than
// on first use: no path can then run one without it. The price is that
// Linux sizes this process's signal frames for tile state (~11 KB),
// which Go's 32 KiB signal stacks hold; C code of a cgo build that sets
// up smaller alternate signal stacks would fail to.
func amxStatus(c CPUInfo) string {
	switch {
	case !c.Has("amx_tile") || !c.Has("amx_bf16"):
		return "no AMX-BF16 on this CPU (or the OS does not save tile state)"
	case !c.Has("avx512_bf16"):
		return "AMX without AVX512_BF16 (the packing needs VCVTNE2PS2BF16)"
	case os.Getenv("ROMAE_AMX") == "off":
		return "disabled by ROMAE_AMX=off"
	}
	if _, _, e := syscall.RawSyscall(sysArchPrctl, archReqXcompPerm, xfeatureXtiledata, 0); e != 0 {
		return fmt.Sprintf("Linux refused the tile-data permission (arch_prctl ARCH_REQ_XCOMP_PERM: %v)", e)
	}
	var perm uint64
	if _, _, e := syscall.RawSyscall(sysArchPrctl, archGetXcompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 || perm&(1<<xfeatureXtiledata) == 0 {
		return fmt.Sprintf("tile-data permission not granted (ARCH_GET_XCOMP_PERM %#x, %v)", perm, e)
	}
	return "usable"
}

// amxBuf is one core's A-packing space and partial-tile buffer, recycled
// through amxBufs (out would escape through amxKernel, a func value).
type amxBuf struct {
	packed []uint32
	out    [amxMR * amxNR]float32
}

var amxBufs = make(chan *amxBuf, 16)

// amxComputePacked is the single-core AMX product on op(B) packed in
// amxLayout: a float32 A packed per 128-row block (BF16Rows are read in
// place: their rows are padded to 32 and to 16 pairs), then for each 32
// rows of C one strip call over the whole slivers and one for a short last
// sliver, the tiles loading and storing C themselves (a short row tile or
// sliver as it is); alpha ≠ 1 or beta ∉ {0, 1}, which no model product
// has, goes through a buffer and storeTile32.
func amxComputePacked(a bfA, m, n, k int, alpha float32, bpk []uint32, beta float32, c []float32, ldc int) {
	layout := amxLayout
	need := amxMC * layout.pairs(layout.kc)
	var bufp *amxBuf
	select {
	case bufp = <-amxBufs:
	default:
		bufp = new(amxBuf)
	}
	if len(bufp.packed) < need {
		bufp.packed = make([]uint32, need)
	}
	abuf, out := bufp.packed[:need], &bufp.out
	off := 0
	for jc := 0; jc < n; jc += bfNC {
		nb := min(bfNC, n-jc)
		full, last := nb/amxNR, nb%amxNR
		for pc := 0; pc < k; pc += layout.kc {
			kb := min(layout.kc, k-pc)
			kpad := layout.pairs(kb)
			sliver := kpad * amxNR // pairs per packed sliver
			bbuf := bpk[off:]
			off += (nb + amxNR - 1) / amxNR * sliver
			_ = bpk[off-1] // bounds: the block's slivers
			bet := beta
			if pc > 0 {
				bet = 1
			}
			direct := alpha == 1 && (bet == 0 || bet == 1)
			for ic := 0; ic < m; ic += amxMC {
				mb := min(amxMC, m-ic)
				astride := uintptr(kpad) * 4
				if a.rows == nil {
					amxPackA(a.trans, a.f, a.ld, ic, pc, mb, kb, kpad, abuf)
				} else {
					astride = uintptr(a.ld) * 4
				}
				for i := ic; i < ic+mb; i += amxMR {
					rows := min(amxMR, m-i)
					var ap unsafe.Pointer
					if a.rows == nil {
						ap = unsafe.Pointer(&abuf[(i-ic)*kpad])
					} else {
						ap = unsafe.Pointer(&a.rows[i*a.ld+pc/2])
					}
					if direct {
						cRow := c[i*ldc+jc:]
						_ = cRow[(rows-1)*ldc+nb-1] // bounds: the whole strip
						if full > 0 {
							amxKernel(kpad/16, ap, astride, unsafe.Pointer(&bbuf[0]), uintptr(sliver)*4, unsafe.Pointer(&cRow[0]), uintptr(ldc)*4,
								full, amxFlags(rows, amxNR), bet == 1, &amxConfigs[rows-1][amxNR-1])
						}
						if last > 0 {
							amxKernel(kpad/16, ap, astride, unsafe.Pointer(&bbuf[full*sliver]), 0, unsafe.Pointer(&cRow[full*amxNR]), uintptr(ldc)*4,
								1, amxFlags(rows, last), bet == 1, &amxConfigs[rows-1][last-1])
						}
						continue
					}
					for s, js := 0, 0; js < nb; s, js = s+1, js+amxNR {
						amxKernel(kpad/16, ap, astride, unsafe.Pointer(&bbuf[s*sliver]), 0, unsafe.Pointer(&out[0]), amxNR*4,
							1, amxFlags(amxMR, amxNR), false, &amxConfigs[amxMR-1][amxNR-1])
						for r0 := 0; r0 < rows; r0 += 8 {
							storeTile32(c[(i+r0)*ldc+jc+js:], ldc, min(8, rows-r0), min(amxNR, nb-js), alpha, bet, (*[256]float32)(out[r0*amxNR:]))
						}
					}
				}
			}
		}
	}
	select {
	case amxBufs <- bufp:
	default:
	}
}

// amxPackA packs rows ic..ic+mb of op(A), k range pc..pc+kb, as bf16
// rows of kpad pairs (zero pairs past kb), mb rounded up to 32 rows with
// zero rows: dst[r·kpad + p] = A(r, 2p) | A(r, 2p+1)<<16.
func amxPackA(transA bool, a []float32, lda, ic, pc, mb, kb, kpad int, dst []uint32) {
	rowsPad := (mb + amxMR - 1) &^ (amxMR - 1)
	dst = dst[:rowsPad*kpad]
	n := kp(kb)
	if !transA {
		for r := range rowsPad {
			row := dst[r*kpad : (r+1)*kpad]
			if r >= mb {
				clear(row)
				continue
			}
			packRowPairs(a[(ic+r)*lda+pc:], kb, row)
			clear(row[n:])
		}
		return
	}
	// op(A)(r, p) = a[p·lda + r]: per 16 pairs, each pair's two stored
	// rows of a are read whole and interleaved into tmp (amxPairRow:
	// contiguous reads, VCVTNE2PS2BF16), then 16×16 transposes turn tmp's
	// [pair][row] into the tiles' [row][pair].
	tp := bf16Bufs.get(16 * rowsPad)
	tmp := (*tp)[:16*rowsPad]
	for p0 := 0; p0 < kpad; p0 += 16 {
		for q := range 16 {
			row := tmp[q*rowsPad : (q+1)*rowsPad]
			if p := p0 + q; p < n {
				amxPairRow(a[(pc+2*p)*lda+ic:], lda, 2*p+1 < kb, mb, row)
			} else {
				clear(row)
			}
		}
		amxTransposeTmp(tmp, rowsPad, dst[p0:], kpad)
	}
	bf16Bufs.put(tp)
}

// amxPairRow writes dst[r] = bf16(a[r]) | bf16(a[lda+r])<<16 for r < mb
// (the high half zero when !two: an odd k's last pair), and zeros up to
// len(dst), a multiple of 16.
//
//go:noinline
func amxPairRow(a []float32, lda int, two bool, mb int, dst []uint32) {
	r0 := a[:mb]
	var r1 []float32
	if two {
		r1 = a[lda : lda+mb]
	}
	r := 0
	if g := mb / 16; two && g > 0 {
		_ = dst[16*g-1] // bounds: the groups written
		// panel = 32 bytes: each group's two 8-lane halves land side by side.
		packATPairs(&dst[0], &r0[0], uintptr(lda)*4, g, 32, &interleaveWords[0])
		r = 16 * g
	}
	for ; r < len(dst); r += 16 {
		var lo, hi archsimd.Float32x16
		if w := max(0, min(16, mb-r)); w > 0 {
			lo = simdpart.Load16(r0[r : r+w])
			if two {
				hi = simdpart.Load16(r1[r : r+w])
			}
		}
		interleave16(lo, hi).StoreSlice(dst[r:])
	}
	archsimd.ClearAVXUpperBits()
}

// amxTransposeTmp stores tmp's 16 rows of rows pairs ([pair][row]) as
// rows rows of 16 pairs, row i at dst[i·ld:].
func amxTransposeTmp(tmp []uint32, rows int, dst []uint32, ld int) {
	_, _ = tmp[15*rows+rows-1], dst[(rows-1)*ld+15] // bounds: every block read and written
	for r0 := 0; r0 < rows; r0 += 16 {
		transpose16x16(&dst[r0*ld], uintptr(ld)*4, &tmp[r0], uintptr(rows)*4)
	}
}
