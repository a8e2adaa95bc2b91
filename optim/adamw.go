package optim

import (
	"fmt"
	"math"
	"strings"

	"romae/tensor"
)

// AdamW is torch.optim.AdamW (amsgrad=False, maximize=False), with weight
// decay applied only to parameters whose Decay flag is set — the usual
// "no decay on norms, biases and learned tokens" split, done through the
// flag rather than PyTorch's parameter groups.
//
// Per element, for step t (1-based) and learning rate lr, exactly as
// PyTorch's single-tensor path orders the float32 operations:
//
//	w = w·(1 − lr·wd)                         (only if Decay)
//	m = lerp(m, g, 1 − β1)
//	v = v·β2 + (1 − β2)·g·g
//	denom = sqrt(v) / sqrt(1 − β2^t) + eps
//	w = w + (−lr / (1 − β1^t))·m / denom
//
// The zero value is not useful; start from NewAdamW for PyTorch's defaults.
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64

	step  int64
	state map[string]*adamSlot // by parameter name; survives re-binding
	b     binding[*adamSlot]
	k     adamScalars // per-step constants read by the workers
}

type adamSlot struct{ m, v []float32 }

type adamScalars struct {
	decayMul, lerpW, beta2, oneMinusBeta2, bc2Sqrt, eps, negStepSize float32
}

// State keys of AdamW's moment buffers, followed by the parameter name
// (PyTorch's names for them).
const (
	ExpAvgPrefix   = "exp_avg."
	ExpAvgSqPrefix = "exp_avg_sq."
)

// NewAdamW returns AdamW with torch.optim.AdamW's defaults: betas
// (0.9, 0.999), eps 1e-8, weight decay 0.01.
func NewAdamW() *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
}

// Name implements Optimizer.
func (o *AdamW) Name() string { return "adamw" }

// Validate reports the hyperparameters PyTorch rejects.
func (o *AdamW) Validate() error {
	if !(o.Beta1 >= 0 && o.Beta1 < 1 && o.Beta2 >= 0 && o.Beta2 < 1) {
		return fmt.Errorf("adamw: betas (%v, %v) must lie in [0, 1)", o.Beta1, o.Beta2)
	}
	if !(o.Eps >= 0 && o.WeightDecay >= 0) {
		return fmt.Errorf("adamw: eps %v and weight decay %v must be non-negative", o.Eps, o.WeightDecay)
	}
	return nil
}

// Step implements Optimizer. It panics on hyperparameters Validate rejects,
// and does not allocate once the parameter list has been seen (the first
// Step allocates the moment buffers).
func (o *AdamW) Step(params []*tensor.Param[float32], lr float64) {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	if !o.b.same(params) {
		if o.state == nil {
			o.state = map[string]*adamSlot{}
		}
		o.b.bind(params, func(p *tensor.Param[float32]) *adamSlot {
			s := o.state[p.Name]
			if s == nil {
				s = &adamSlot{m: make([]float32, len(p.W)), v: make([]float32, len(p.W))}
				o.state[p.Name] = s
			}
			if len(s.m) != len(p.W) || len(s.v) != len(p.W) {
				panic(fmt.Sprintf("optim: AdamW state for %q has %d values, parameter has %d (checkpoint from another model?)", p.Name, len(s.m), len(p.W)))
			}
			return s
		})
	}
	o.step++
	t := float64(o.step)
	bc1 := 1 - math.Pow(o.Beta1, t)
	bc2 := 1 - math.Pow(o.Beta2, t)
	o.k = adamScalars{
		decayMul:      float32(1 - lr*o.WeightDecay),
		lerpW:         float32(1 - o.Beta1),
		beta2:         float32(o.Beta2),
		oneMinusBeta2: float32(1 - o.Beta2),
		bc2Sqrt:       float32(math.Sqrt(bc2)),
		eps:           float32(o.Eps),
		negStepSize:   float32(-lr / bc1),
	}
	parallelRange(o, o.b.total(), parallelMin)
}

func (o *AdamW) runRange(lo, hi int) {
	k := o.k
	for i := o.b.first(lo); i < len(o.b.params) && o.b.offs[i] < hi; i++ {
		p, s, off := o.b.params[i], o.b.slots[i], o.b.offs[i]
		a, z := max(lo-off, 0), min(hi-off, len(p.W))
		// Multiplying by exactly 1 leaves a float unchanged, so one kernel
		// serves both kinds of parameter with a single pass over memory.
		dm := float32(1)
		if p.Decay {
			dm = k.decayMul
		}
		adamKernel(p.W[a:z], p.G[a:z], s.m[a:z], s.v[a:z], dm, &k)
	}
}

// adamKernel updates one parameter range: 16 lanes at a time where the
// CPU can (adamVec, bit-identical), the remainder in scalar code.
func adamKernel(w, g, m, v []float32, dm float32, k *adamScalars) {
	n := adamVec(w, g[:len(w)], m[:len(w)], v[:len(w)], dm, k, k.lerpW < 0.5)
	adamScalar(w[n:], g[n:], m[n:], v[n:], dm, k)
}

func adamScalar(w, g, m, v []float32, dm float32, k *adamScalars) {
	g, m, v = g[:len(w)], m[:len(w)], v[:len(w)] // drop bounds checks
	lw, b2, omb2, bc2s, eps, ns := k.lerpW, k.beta2, k.oneMinusBeta2, k.bc2Sqrt, k.eps, k.negStepSize
	// PyTorch's lerp kernel switches formula at weight 0.5 for accuracy;
	// mirror it so β1 < 0.5 rounds the same way too.
	// The float32(...) conversions forbid fusing a multiply and an add into
	// one FMA (which Go does on arm64), keeping PyTorch's separate roundings
	// on every architecture.
	if lw < 0.5 {
		for i := range w {
			gi, mi := g[i], m[i]
			mi += float32(lw * (gi - mi))
			vi := float32(v[i]*b2) + float32(float32(omb2*gi)*gi)
			m[i], v[i] = mi, vi
			w[i] = float32(w[i]*dm) + float32(ns*mi)/(float32(math.Sqrt(float64(vi)))/bc2s+eps)
		}
		return
	}
	olw := 1 - lw
	for i := range w {
		gi := g[i]
		mi := gi - float32((gi-m[i])*olw)
		vi := float32(v[i]*b2) + float32(float32(omb2*gi)*gi)
		m[i], v[i] = mi, vi
		w[i] = float32(w[i]*dm) + float32(ns*mi)/(float32(math.Sqrt(float64(vi)))/bc2s+eps)
	}
}

// State implements Optimizer.
func (o *AdamW) State() map[string][]float32 {
	st := map[string][]float32{StepKey: stepState(o.step)}
	for name, s := range o.state {
		st[ExpAvgPrefix+name] = clone(s.m)
		st[ExpAvgSqPrefix+name] = clone(s.v)
	}
	return st
}

// LoadState implements Optimizer. It checks that the snapshot is
// well-formed (step present, every first moment paired with a second moment
// of the same length, no foreign keys) but cannot check sizes against the
// model until the next Step, which panics on a mismatch.
func (o *AdamW) LoadState(st map[string][]float32) error {
	step, err := loadStep(st)
	if err != nil {
		return fmt.Errorf("adamw: %w", err)
	}
	state := map[string]*adamSlot{}
	for key, val := range st {
		switch {
		case key == StepKey:
		case strings.HasPrefix(key, ExpAvgSqPrefix):
			name := key[len(ExpAvgSqPrefix):]
			if _, ok := st[ExpAvgPrefix+name]; !ok {
				return fmt.Errorf("adamw: state has %q but no %q", key, ExpAvgPrefix+name)
			}
		case strings.HasPrefix(key, ExpAvgPrefix):
			name := key[len(ExpAvgPrefix):]
			v, ok := st[ExpAvgSqPrefix+name]
			if !ok {
				return fmt.Errorf("adamw: state has %q but no %q", key, ExpAvgSqPrefix+name)
			}
			if len(v) != len(val) {
				return fmt.Errorf("adamw: state for %q has %d first-moment and %d second-moment values", name, len(val), len(v))
			}
			state[name] = &adamSlot{m: clone(val), v: clone(v)}
		default:
			return fmt.Errorf("adamw: unexpected state entry %q", key)
		}
	}
	o.step, o.state, o.b = step, state, binding[*adamSlot]{}
	return nil
}
