// Package optim holds the optimisers, gradient clipping and learning-rate
// schedule used to train romae models.
//
// The update rules follow PyTorch's torch.optim.AdamW and torch.optim.SGD
// operation by operation, in float32 as PyTorch does for float32 parameters,
// so that recipes from the paper (and runs of the authors' code) carry over
// without re-tuning. Optimiser state is exposed as named float32 slices so a
// checkpoint can store it next to the weights and a resumed run continues
// bit for bit.
package optim

import (
	"fmt"
	"math"
	"sort"

	"romae/tensor"
)

// Optimizer updates parameters in place from their gradients.
//
// State returns a snapshot (copies) of everything needed to continue
// exactly: moment buffers keyed by "<buffer>.<param name>" and the step
// count under "step". LoadState replaces the optimiser's state with such a
// snapshot; the next Step must be given parameters with the same names and
// sizes, and continues bit-identically to the run that produced it.
type Optimizer interface {
	Step(params []*tensor.Param[float32], lr float64)
	State() map[string][]float32
	LoadState(map[string][]float32) error
	Name() string
}

// StepKey is the State key of the step counter. It is stored as a single
// float32, as PyTorch stores its "step" tensor, which is exact up to 2^24
// (16.7M) steps — far beyond any run of this project.
const StepKey = "step"

// binding caches, for the parameter list of the last Step, each parameter's
// offset in the concatenated element range and its state slot, so the hot
// path does no map lookups or allocation while the list stays the same.
type binding[S any] struct {
	params []*tensor.Param[float32]
	offs   []int // offs[i] = elements before params[i]; len(params)+1 entries
	slots  []S
}

// same reports whether params is the list this binding was built for
// (element-wise pointer identity, so a caller may rebuild the slice freely).
func (b *binding[S]) same(params []*tensor.Param[float32]) bool {
	if len(params) != len(b.params) || b.offs == nil {
		return false
	}
	for i, p := range params {
		if p != b.params[i] || len(p.W) != b.offs[i+1]-b.offs[i] {
			return false
		}
	}
	return true
}

// bind rebuilds the cache; slot returns (creating if needed) the state of one
// parameter.
func (b *binding[S]) bind(params []*tensor.Param[float32], slot func(p *tensor.Param[float32]) S) {
	b.params = append(b.params[:0], params...)
	b.offs = append(b.offs[:0], 0)
	b.slots = b.slots[:0]
	seen := make(map[string]bool, len(params))
	for _, p := range params {
		if len(p.G) != len(p.W) {
			panic(fmt.Sprintf("optim: parameter %q has %d weights but %d gradients", p.Name, len(p.W), len(p.G)))
		}
		if seen[p.Name] {
			// State is keyed by name, so two parameters sharing one would
			// silently share moment buffers.
			panic(fmt.Sprintf("optim: duplicate parameter name %q", p.Name))
		}
		seen[p.Name] = true
		b.offs = append(b.offs, b.offs[len(b.offs)-1]+len(p.W))
		b.slots = append(b.slots, slot(p))
	}
}

// total is the number of elements over all bound parameters.
func (b *binding[S]) total() int { return b.offs[len(b.offs)-1] }

// first returns the index of the parameter holding global element lo.
func (b *binding[S]) first(lo int) int {
	return sort.Search(len(b.params), func(i int) bool { return b.offs[i+1] > lo })
}

// stepState encodes the step count for State.
func stepState(step int64) []float32 { return []float32{float32(step)} }

// loadStep decodes and checks the step count of a state snapshot.
func loadStep(st map[string][]float32) (int64, error) {
	s, ok := st[StepKey]
	if !ok {
		return 0, fmt.Errorf("optimizer state has no %q entry", StepKey)
	}
	if len(s) != 1 {
		return 0, fmt.Errorf("optimizer state %q has %d values, want 1", StepKey, len(s))
	}
	f := float64(s[0])
	if f < 0 || f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("optimizer state %q = %v is not a step count", StepKey, s[0])
	}
	return int64(f), nil
}

func clone(s []float32) []float32 { return append([]float32(nil), s...) }
