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
	"syscall"
	"unsafe"

	"simd/archsimd"

	"romae/internal/simdpart"
)

//go:noescape
func amxTile32(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, accum bool, cfg *amxConfig)

// amxConfig is LDTILECFG's 64-byte operand: palette, start row, then
// bytes per row (uint16) and rows (uint8) of each of 16 tiles.
type amxConfig [64]byte

// amxCfg: palette 1, tiles 0–7 of 16 rows × 64 bytes.
var amxCfg = func() *amxConfig {
	c := new(amxConfig)
	c[0] = 1
	for t := range 8 {
		binary.LittleEndian.PutUint16(c[16+2*t:], 64)
		c[48+t] = 16
	}
	return c
}()

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
var amxKernel = amxTile32

// Set in a variable initialiser, which runs before dispatch.go's init.
var _ = func() bool {
	amxCompute = amxComputePacked
	amxSelfCheck = func() error { return checkTileKernel(amxKernel) } // amxKernel: tests emulate it
	return true
}()

// checkTileKernel runs a tile kernel on one 32×32 product with an exact
// answer and says where it differs. The operands are small integers, so
// every bf16 value and float32 sum is exact: any difference is the
// kernel's (an instruction, the tile configuration, which operand half is
// which k), not rounding. Three k chunks, A rows and C rows strided wider
// than they are, C stored and then accumulated onto.
func checkTileKernel(kernel func(chunks int, a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, accum bool, cfg *amxConfig)) error {
	const chunks, pairs, lda, ldc = 3, 48, 56, 40 // lda in pairs, ldc in floats
	val := func(i, j int) float32 { return float32((i*7+j*3)%9 - 4) }
	a := make([]uint32, amxMR*lda) // row i, pair p: A(i, 2p) | A(i, 2p+1)<<16
	for i := range amxMR {
		for p := range pairs {
			a[i*lda+p] = bfPair(val(i, 2*p), val(i, 2*p+1))
		}
	}
	b := make([]uint32, pairs*amxNR) // pair p, column j: B(2p, j) | B(2p+1, j)<<16
	for p := range pairs {
		for j := range amxNR {
			b[p*amxNR+j] = bfPair(val(2*p+5, j), val(2*p+6, j))
		}
	}
	c := make([]float32, amxMR*ldc)
	for pass, accum := range []bool{false, true} {
		kernel(chunks, unsafe.Pointer(&a[0]), lda*4, unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), ldc*4, accum, amxCfg)
		for i := range amxMR {
			for j := range amxNR {
				var want float32
				for q := range 2 * pairs {
					want += val(i, q) * val(q+5, j)
				}
				want *= float32(pass + 1)
				if got := c[i*ldc+j]; got != want {
					return fmt.Errorf("tile self-check: C[%d][%d] = %v, want %v (accumulate %v)", i, j, got, want, accum)
				}
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
// place: their rows are padded to 32 and to 16 pairs), then 32×32 tiles of C,
// stored by the tiles themselves where a tile is whole and alpha = 1,
// beta ∈ {0, 1}, else through storeTile32.
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
		for pc := 0; pc < k; pc += layout.kc {
			kb := min(layout.kc, k-pc)
			kpad := layout.pairs(kb)
			bbuf := bpk[off:]
			off += (nb + amxNR - 1) / amxNR * amxNR * kpad
			bet := beta
			if pc > 0 {
				bet = 1
			}
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
					direct := rows == amxMR && alpha == 1 && (bet == 0 || bet == 1)
					for s, js := 0, 0; js < nb; s, js = s+1, js+amxNR {
						bp := unsafe.Pointer(&bbuf[s*kpad*amxNR])
						if direct && nb-js >= amxNR {
							cRow := c[i*ldc+jc+js:]
							_ = cRow[(amxMR-1)*ldc+amxNR-1] // bounds: the whole tile
							amxKernel(kpad/16, ap, astride, bp, unsafe.Pointer(&cRow[0]), uintptr(ldc)*4, bet == 1, amxCfg)
							continue
						}
						amxKernel(kpad/16, ap, astride, bp, unsafe.Pointer(&out[0]), amxNR*4, false, amxCfg)
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
	// op(A)(r, p) = a[p·lda + r]: for 16 rows and 16 pairs at a time,
	// lane i of vector q = the pair q of row i (two stored rows of a
	// interleaved), then a 16×16 transpose makes vector i row i's pairs.
	var v [16]archsimd.Uint32x16
	for r0 := 0; r0 < rowsPad; r0 += 16 {
		w := max(0, min(16, mb-r0)) // real rows in this group
		for p0 := 0; p0 < kpad; p0 += 16 {
			for q := range 16 {
				p := p0 + q
				v[q] = archsimd.Uint32x16{}
				if w == 0 || p >= n {
					continue
				}
				lo := a[(pc+2*p)*lda+ic+r0:]
				var x0, x1 archsimd.Float32x16
				if w == 16 {
					x0 = archsimd.LoadFloat32x16Slice(lo)
				} else {
					x0 = simdpart.Load16(lo[:w])
				}
				if 2*p+1 < kb {
					hi := a[(pc+2*p+1)*lda+ic+r0:]
					if w == 16 {
						x1 = archsimd.LoadFloat32x16Slice(hi)
					} else {
						x1 = simdpart.Load16(hi[:w])
					}
				}
				v[q] = interleave16(x0, x1)
			}
			transpose16(&v)
			for i := range 16 {
				v[i].StoreSlice(dst[(r0+i)*kpad+p0:])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}
