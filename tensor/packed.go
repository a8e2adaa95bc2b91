package tensor

import "fmt"

// PackedWeight is a weight matrix W [out, in] that will not change again,
// laid out once for the products X·Wᵀ of a Linear layer's forward pass.
//
// Every product packs its op(B) into the kernel's order itself, which for
// a weight is work done again on every call: in a lone 200-token
// forward pass of RoMAE-tiny, packing the weights (read from memory with
// a transposing, strided access) was a fifth of the CPU time. A model
// that only serves (model.Model.PackWeights) packs each weight once and
// the products read the packed copy in order.
//
// W is packed for the kernel the float32 products run on when PackWeight
// is called: the fp32 FMA kernel's order, or for bf16 products (VDPBF16PS,
// AMX) rounded to bf16 pairs in that kernel's order, so a bf16 pass does
// not round the weights again either. Where the products do not run on
// that kernel when GemmPacked is called (float64, the precision, bf16
// kernel or back end changed since, a back end other than avx512, or a
// build without it) GemmPacked falls back to W as stored, so a
// PackedWeight is always correct to use.
type PackedWeight[T Float] struct {
	w        []T // as stored, [out, in]
	out, in  int
	packed   []float32 // op(B) = Wᵀ in the fp32 kernel's order; nil: none
	kc       int       // the k block packed is laid out in
	packedBF []uint32  // op(B) = Wᵀ as bf16 pairs in bfKernel's order; nil: none
	bfKernel int32     // the bf16 kernel packedBF is laid out for
}

// PackWeight packs w [out, in] (row-major, as a Linear layer stores it).
// It keeps w, which must not change while the PackedWeight is in use.
func PackWeight[T Float](w []T, out, in int) *PackedWeight[T] {
	if out <= 0 || in <= 0 {
		panic(fmt.Sprintf("tensor.PackWeight: a [%d, %d] weight", out, in))
	}
	p := &PackedWeight[T]{out: out, in: in}
	p.Repack(w)
	return p
}

// Repack packs w, a weight of p's shape, in place of the one p holds,
// reusing p's memory: for training, where a weight changes once per step
// but several products in one pass read it (model: the q|k|v product in
// groups of samples).
func (p *PackedWeight[T]) Repack(w []T) {
	if len(w) < p.out*p.in {
		panic(fmt.Sprintf("tensor.PackedWeight.Repack: len(w)=%d for a [%d, %d] weight", len(w), p.out, p.in))
	}
	p.w = w[:p.out*p.in]
	if !is32[T]() {
		return
	}
	bf := p.packedBF
	p.packed, p.kc = packWeight32(p.packed, as32(p.w), p.out, p.in)
	p.packedBF = nil
	if p.packed == nil {
		p.packedBF, p.bfKernel = packWeightBF16(bf, as32(p.w), p.out, p.in)
	}
}

// InKernelOrder reports whether W is held in the order of the kernel the
// products run on now; false: GemmPacked reads W as stored, packing it
// on every call as Gemm does.
func (p *PackedWeight[T]) InKernelOrder() bool {
	return is32[T]() && (p.packed != nil && packedKC32(p.out, p.in) == p.kc || p.packedBF != nil && bf16KernelNow() == p.bfKernel)
}

// Shape is W's [out, in].
func (p *PackedWeight[T]) Shape() (out, in int) { return p.out, p.in }

// GemmPacked computes C = alpha·A·Wᵀ + beta·C, A m×in (row stride lda), C
// m×out (row stride ldc): Gemm(false, true, m, out, in, alpha, A, lda, W,
// in, beta, C, ldc) with W packed once.
func GemmPacked[T Float](m int, alpha T, a []T, lda int, w *PackedWeight[T], beta T, c []T, ldc int) {
	gemmPacked("GemmPacked", false, m, alpha, a, lda, w, beta, c, ldc)
}

// GemmPackedSerial is GemmPacked on the calling goroutine alone, as
// GemmSerial is Gemm: for callers that already share rows out over the
// cores and run a layer's products one chunk of rows at a time.
func GemmPackedSerial[T Float](m int, alpha T, a []T, lda int, w *PackedWeight[T], beta T, c []T, ldc int) {
	gemmPacked("GemmPackedSerial", true, m, alpha, a, lda, w, beta, c, ldc)
}

func gemmPacked[T Float](fn string, serial bool, m int, alpha T, a []T, lda int, w *PackedWeight[T], beta T, c []T, ldc int) {
	n, k := w.out, w.in
	checkGemm(fn, false, true, m, n, k, len(a), lda, len(w.w), k, len(c), ldc)
	if m > 0 && alpha != 0 && is32[T]() {
		wk := 1
		if !serial {
			wk = packedWorkers(m, n, k)
		}
		switch {
		case w.packed != nil && gemmPacked32(wk, m, n, k, w.kc, float32(alpha), as32(a), lda, w.packed, float32(beta), as32(c), ldc):
			return
		case w.packedBF != nil && gemmPackedBF16(wk, w.bfKernel, bfA{f: as32(a), ld: lda}, m, n, k, float32(alpha), w.packedBF, float32(beta), as32(c), ldc):
			return
		}
	}
	gemm(fn, serial, false, true, m, n, k, alpha, a, lda, w.w, k, beta, c, ldc)
}
