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
// Where the float32 product does not run on the packed layout (float64,
// bf16 products, a back end other than the avx512 kernel, or a build
// without it) GemmPacked falls back to W as stored, so a PackedWeight is
// always correct to use.
type PackedWeight[T Float] struct {
	w       []T // as stored, [out, in]
	out, in int
	packed  []float32 // op(B) = Wᵀ in the kernel's order; nil: none
}

// PackWeight packs w [out, in] (row-major, as a Linear layer stores it).
// It keeps w, which must not change while the PackedWeight is in use.
func PackWeight[T Float](w []T, out, in int) *PackedWeight[T] {
	if out <= 0 || in <= 0 || len(w) < out*in {
		panic(fmt.Sprintf("tensor.PackWeight: len(w)=%d for a [%d, %d] weight", len(w), out, in))
	}
	p := &PackedWeight[T]{w: w[:out*in], out: out, in: in}
	if is32[T]() {
		p.packed = packWeight32(as32(p.w), out, in)
	}
	return p
}

// Shape is W's [out, in].
func (p *PackedWeight[T]) Shape() (out, in int) { return p.out, p.in }

// GemmPacked computes C = alpha·A·Wᵀ + beta·C, A m×in (row stride lda), C
// m×out (row stride ldc): Gemm(false, true, m, out, in, alpha, A, lda, W,
// in, beta, C, ldc) with W packed once.
func GemmPacked[T Float](m int, alpha T, a []T, lda int, w *PackedWeight[T], beta T, c []T, ldc int) {
	n, k := w.out, w.in
	checkGemm("GemmPacked", false, true, m, n, k, len(a), lda, len(w.w), k, len(c), ldc)
	if m > 0 && alpha != 0 && w.packed != nil && is32[T]() &&
		gemmPacked32(m, n, k, float32(alpha), as32(a), lda, w.packed, float32(beta), as32(c), ldc) {
		return
	}
	Gemm(false, true, m, n, k, alpha, a, lda, w.w, k, beta, c, ldc)
}
