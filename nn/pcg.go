package nn

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// Dropout masks are drawn from math/rand/v2's PCG, many values at a time:
// one value at a time, each 128-bit LCG step waits on the one before
// (three dependent multiplies, ~3.6 ns a value on an Intel Xeon), which
// made the MLP's masks 13% of a default-recipe fine-tuning step, drawn
// while the other cores waited. The generator is an affine map of its
// state, so its state k values on is one affine map away (affine.pow):
// each core takes a share of the mask, four values in flight at a time,
// and the values are exactly those p.Uint64() would have returned one
// by one, leaving the generator where that would have.

// u128 is a 128-bit unsigned integer, arithmetic mod 2¹²⁸.
type u128 struct{ hi, lo uint64 }

func mul128(a, b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	return u128{hi + a.hi*b.lo + a.lo*b.hi, lo}
}

func add128(a, b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// affine is the state map s → mul·s + inc.
type affine struct{ mul, inc u128 }

func (f affine) apply(s u128) u128 { return add128(mul128(f.mul, s), f.inc) }

// then is f followed by g.
func (f affine) then(g affine) affine {
	return affine{mul128(g.mul, f.mul), add128(mul128(g.mul, f.inc), g.inc)}
}

// pow is f applied k times (by squaring; every power of f commutes).
func (f affine) pow(k uint64) affine {
	r := affine{mul: u128{0, 1}}
	for ; k > 0; k >>= 1 {
		if k&1 != 0 {
			r = r.then(f)
		}
		f = f.then(f)
	}
	return r
}

// pcgStep is one step of math/rand/v2's PCG (its multiplier and
// increment), pcgStep4 four.
var (
	pcgStep  = affine{u128{2549297995355413924, 4865540595714422341}, u128{6364136223846793005, 1442695040888963407}}
	pcgStep4 = pcgStep.pow(4)
)

// pcgOutput is the value the PCG returns on reaching state s (DXSM).
func pcgOutput(s u128) uint64 {
	hi := s.hi
	hi ^= hi >> 32
	hi *= 0xda942042e4dd58b5
	hi ^= hi >> 48
	return hi * (s.lo | 1)
}

// pcgState reads p's state from its binary encoding ("pcg:", then the
// high and low words big-endian); ok false if that is not the encoding.
func pcgState(p *rand.PCG) (s u128, ok bool) {
	var buf [20]byte
	b, err := p.AppendBinary(buf[:0])
	if err != nil || len(b) != 20 || string(b[:4]) != "pcg:" {
		return u128{}, false
	}
	return u128{binary.BigEndian.Uint64(b[4:]), binary.BigEndian.Uint64(b[12:])}, true
}

func setPCGState(p *rand.PCG, s u128) error {
	b := binary.BigEndian.AppendUint64([]byte("pcg:"), s.hi)
	return p.UnmarshalBinary(binary.BigEndian.AppendUint64(b, s.lo))
}

// pcgMatches is whether this Go's PCG is the generator above: a Go
// release that changed it (or its encoding) leaves dropout on the
// one-value-at-a-time path, with the same masks as before it.
var pcgMatches = func() bool {
	p := rand.NewPCG(0x9e3779b97f4a7c15, 42)
	s, ok := pcgState(p)
	if !ok {
		return false
	}
	for range 8 {
		s = pcgStep.apply(s)
		if p.Uint64() != pcgOutput(s) {
			return false
		}
	}
	q := rand.NewPCG(0, 0)
	return setPCGState(q, s) == nil && q.Uint64() == p.Uint64()
}()
