//go:build goexperiment.simd && amd64

package tensor

// linearGrads32 is LinearGrads's fused form, or false (doing nothing)
// where the two products would not both run on one of the assembly
// drivers (fp32 tiles, or the bf16 kernel precision bf16 chose: AMX or
// VDPBF16PS) in the forms it reproduces: dIn as asmParallelM and
// bfParallelM compute it (op(B) = W packed once and shared, rows in whole
// panels), dW as splitK does (kPieces pieces of the rows, each a serial
// product into dW or a partial sum, added in piece order). Piece p also
// computes dIn's rows from the first whole panel at or after its first
// row to the one at or after the next piece's, before each of its k
// blocks the panels that block reaches, so every element of both is
// computed by the same kernel calls as before.
//
// inRows, when set, is the layer input as bf16 rows (in is then nil): the
// weight gradient's op(B) is packed from them, which only a bf16 driver
// does (false otherwise).
func linearGrads32(dIn, dW, dOut, in []float32, inRows *BF16Rows, w []float32, n, i, o int, accumIn bool) bool {
	wk, p := workers(), kPieces(o, i, n)
	if wk <= 1 || p <= 1 || o*i*n < simdParallelFMAs || kPieces(n, i, o) > 1 || o*i > 1<<20 {
		return false
	}
	var beta float32
	if accumIn {
		beta = 1
	}
	// Sgemm's choice between its row and column splits of dIn, made on
	// the fp32 tile's panels whichever kernel runs it.
	sb, ok := f32Backend().(*simdBackend)
	if !ok || !simdAsmKernel {
		return false
	}
	if mr := sb.tile.panelRows(); (n+mr-1)/mr < 2*wk && (n+mr-1)/mr < (i+asmNR-1)/asmNR {
		return false
	}
	var g gradsDriver
	if bf, ok := bfDriverFor(bf16KernelNow()); ok {
		g = bf16Grads(bf, w, in, inRows, i, o)
	} else if t, ok := asmTile(); ok && inRows == nil {
		g = asmGrads(t, w, in, i, o)
	} else {
		return false
	}
	defer g.release()
	bufp := kScratch.get((p - 1) * o * i)
	buf := *bufp
	panelUp := func(r int) int { return min((r+g.rows-1)/g.rows*g.rows, n) }
	ParallelFor(p, 1, func(lo, hi int) {
		for pc := lo; pc < hi; pc++ {
			k0, k1 := pc*n/p, (pc+1)*n/p
			c, bet := dW, float32(1)
			if pc > 0 {
				c, bet = buf[(pc-1)*o*i:], 0
			}
			// The last k block reaches end, the next piece's first panel.
			done, end := panelUp(k0), panelUp(k1)
			dInRows := func(r1 int) {
				if r1 > done {
					g.dIn(dIn[done*i:], dOut[done*o:], r1-done, beta)
					done = r1
				}
			}
			kc := g.kc(k1 - k0)
			dWBlock, release := g.dWBlocks(min(k1-k0, kc))
			a := dOut[k0*o:]
			forKBlocks(true, false, k1-k0, kc, o, i, bet, func(kb, aOff, bOff int, bt float32) {
				dInRows(min(panelUp(k0+aOff/o+kb), end))
				dWBlock(c, a[aOff:], k0+bOff/i, kb, bt)
			})
			release()
		}
	})
	addPieces(dW, i, buf, o, i, p)
	kScratch.put(bufp)
	return true
}

// gradsDriver is how linearGrads32 runs its products on one assembly
// driver, for a layer of i inputs and o outputs: rows is its panel (the
// rows of dIn a call computes at once), kc is serial's k block for a
// product of depth k, dIn computes rows of dIn = dOut·W on W packed once
// (release returns that), and dWBlocks lends a piece a packing buffer for
// k blocks up to kb deep: dW computes one k block of dW (+)= dOutᵀ·in,
// the layer input's rows r0 … r0+kb−1 against dOut's (from its start),
// into c; done returns the buffer.
type gradsDriver struct {
	rows     int
	kc       func(k int) int
	dIn      func(dIn, dOut []float32, rows int, beta float32)
	dWBlocks func(kb int) (dW func(c, dOut []float32, r0, kb int, beta float32), done func())
	release  func()
}

// asmGrads is the fp32 tiles' gradsDriver: serialAsm's and asmParallelM's
// calls.
func asmGrads(t tileKernel, w, in []float32, i, o int) gradsDriver {
	wp, wkc := asmBufs.get(asmPackedLen(i, o)), productKC(t, false, i, o)
	asmPackBParallel(false, w, i, i, o, wkc, *wp)
	return gradsDriver{
		rows: t.panelRows(),
		kc:   func(k int) int { return productKC(t, true, i, k) },
		dIn: func(dIn, dOut []float32, rows int, beta float32) {
			asmCompute(t, false, rows, i, o, wkc, 1, dOut, o, *wp, beta, dIn, i)
		},
		dWBlocks: func(kb int) (func(c, dOut []float32, r0, kb int, beta float32), func()) {
			bp := asmBufs.get(asmPackedLen(i, kb))
			return func(c, dOut []float32, r0, kb int, beta float32) {
				asmPackB(false, in[r0*i:], i, i, kb, kb, *bp)
				asmCompute(t, true, o, i, kb, kb, 1, dOut, o, *bp, beta, c, i)
			}, func() { asmBufs.put(bp) }
		},
		release: func() { asmBufs.put(wp) },
	}
}

// bf16Grads is bf16 driver d's gradsDriver: serialBF16's and
// bfParallelM's calls, with the layer input's k blocks packed from in or,
// when set, from its bf16 rows inRows (the same pairs).
func bf16Grads(d bfDriver, w, in []float32, inRows *BF16Rows, i, o int) gradsDriver {
	wp := bf16Bufs.get(d.layout.size(i, o))
	d.layout.packParallel(false, w, i, i, o, *wp)
	return gradsDriver{
		rows: d.rows,
		kc:   func(int) int { return d.layout.kc },
		dIn: func(dIn, dOut []float32, rows int, beta float32) {
			d.compute(bfA{f: dOut, ld: o}, rows, i, o, 1, *wp, beta, dIn, i)
		},
		dWBlocks: func(kb int) (func(c, dOut []float32, r0, kb int, beta float32), func()) {
			bp := bf16Bufs.get(d.layout.size(i, kb))
			return func(c, dOut []float32, r0, kb int, beta float32) {
				if inRows != nil {
					d.layout.packRows(inRows, r0, i, kb, *bp, 1)
				} else {
					d.layout.pack(false, in[r0*i:], i, i, kb, *bp)
				}
				d.compute(bfA{f: dOut, ld: o, trans: true}, o, i, kb, 1, *bp, beta, c, i)
			}, func() { bf16Bufs.put(bp) }
		},
		release: func() { bf16Bufs.put(wp) },
	}
}

// dWFromRows is dW += dOutᵀ·in with the layer input in as bf16 rows, on
// the bf16 kernel in use, as Sgemm(true, false, o, i, n, 1, dOut, o, in',
// i, 1, dW, i) computes it from float32 rows in' that round to in, to the
// bit: each element summed over the same k blocks in the same order (the
// row and column splits Sgemm chooses change only who computes it), in
// kPieces pieces added in piece order where Sgemm splits k. False (doing
// nothing) where products run on no bf16 kernel.
func dWFromRows(dW, dOut []float32, in *BF16Rows, n, i, o int) bool {
	d, ok := bfDriverFor(bf16KernelNow())
	if !ok {
		return false
	}
	w := workers()
	small := o*i*n < simdParallelFMAs
	kc := d.layout.kc
	// piece is rows k0 … k1−1's share on wk workers, into c.
	piece := func(k0, k1 int, c []float32, beta float32, wk int) {
		bp := bf16Bufs.get(d.layout.size(i, min(k1-k0, kc)))
		for pc := k0; pc < k1; pc += kc {
			kb := min(kc, k1-pc)
			d.layout.packRows(in, pc, i, kb, *bp, wk)
			bet := beta
			if pc > k0 {
				bet = 1
			}
			d.computeM(wk, bfA{f: dOut[pc*o:], ld: o, trans: true}, o, i, kb, 1, *bp, bet, c, i)
		}
		bf16Bufs.put(bp)
	}
	// Pieces of k on one core too, as Sgemm cuts them.
	p := 1
	if !small {
		p = kPieces(o, i, n)
	}
	if p <= 1 {
		wk := w
		if small {
			wk = 1
		}
		piece(0, n, dW, 1, wk)
		return true
	}
	bufp := kScratch.get((p - 1) * o * i)
	buf := *bufp
	ParallelFor(p, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			k0, k1 := j*n/p, (j+1)*n/p
			if j == 0 {
				piece(k0, k1, dW, 1, 1)
			} else {
				piece(k0, k1, buf[(j-1)*o*i:], 0, 1)
			}
		}
	})
	addPieces(dW, i, buf, o, i, p)
	kScratch.put(bufp)
	return true
}
