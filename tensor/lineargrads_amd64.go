//go:build goexperiment.simd && amd64

package tensor

// linearGrads32 is LinearGrads's fused form, or false (doing nothing)
// where the two products would not both run on the fp32 assembly kernels
// in the forms it reproduces: dIn as asmParallelM computes it (op(B) = W
// packed once and shared, rows in whole panels), dW as splitK does (kPieces
// pieces of the rows, each a serialAsm product into dW or a partial sum,
// added in piece order). Piece p also computes dIn's rows from the first
// whole panel at or after its first row to the one at or after the next
// piece's, before each of its k blocks the panels that block reaches, so
// every element of both is computed by the same kernel calls as before.
func linearGrads32(dIn, dW, dOut, in, w []float32, n, i, o int, accumIn bool) bool {
	t, ok := asmTile()
	wk, p := workers(), kPieces(o, i, n)
	if !ok || wk <= 1 || p <= 1 || o*i*n < simdParallelFMAs || kPieces(n, i, o) > 1 || o*i > 1<<20 {
		return false
	}
	mr := t.panelRows()
	if mT, nT := (n+mr-1)/mr, (i+asmNR-1)/asmNR; mT < 2*wk && mT < nT {
		return false
	}
	var beta float32
	if accumIn {
		beta = 1
	}
	wp := asmBufs.get(asmPackedLen(i, o))
	asmPackBParallel(false, w, i, i, o, *wp)
	bufp := kScratch.get((p - 1) * o * i)
	buf := *bufp
	panelUp := func(r int) int { return min((r+mr-1)/mr*mr, n) }
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
					asmCompute(t, false, r1-done, i, o, 1, dOut[done*o:], o, *wp, beta, dIn[done*i:], i)
					done = r1
				}
			}
			kc := serialKC(t, true, k1-k0)
			bp := asmBufs.get(asmPackedLen(i, min(k1-k0, kc)))
			a, b := dOut[k0*o:], in[k0*i:]
			forKBlocks(true, false, k1-k0, kc, o, i, bet, func(kb, aOff, bOff int, bt float32) {
				dInRows(min(panelUp(k0+aOff/o+kb), end))
				asmPackB(false, b[bOff:], i, i, kb, *bp)
				asmCompute(t, true, o, i, kb, 1, a[aOff:], o, *bp, bt, c, i)
			})
			asmBufs.put(bp)
		}
	})
	addPieces(dW, i, buf, o, i, p)
	kScratch.put(bufp)
	asmBufs.put(wp)
	return true
}
