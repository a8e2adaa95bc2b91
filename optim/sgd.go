package optim

import (
	"errors"
	"fmt"
	"strings"

	"romae/tensor"
)

// SGD is torch.optim.SGD (maximize=False). Weight decay is PyTorch's coupled
// L2 term, added to the gradient, and only for parameters whose Decay flag is
// set. Per element, in float32:
//
//	d = g + wd·w                              (only if Decay)
//	b = d                                     (first step: PyTorch clones d)
//	b = b·momentum + (1 − dampening)·d        (later steps)
//	d = d + momentum·b  if Nesterov, else d = b   (only if momentum ≠ 0)
//	w = w − lr·d
//
// The zero value is plain SGD, as are PyTorch's defaults; the paper
// fine-tunes with Momentum 0.9.
type SGD struct {
	Momentum, Dampening, WeightDecay float64
	Nesterov                         bool

	step  int64
	state map[string]*sgdSlot
	b     binding[*sgdSlot]
	k     sgdScalars
}

// sgdSlot is one parameter's momentum buffer. init is false until the
// buffer holds a value, because PyTorch's first step copies the gradient
// rather than decaying a zero buffer (which would scale it by 1−dampening).
type sgdSlot struct {
	buf  []float32
	init bool
}

type sgdScalars struct {
	wd, mom, oneMinusDamp, negLR float32
}

// MomentumPrefix is the State key prefix of SGD's momentum buffers,
// followed by the parameter name (PyTorch's name for them).
const MomentumPrefix = "momentum_buffer."

// Name implements Optimizer.
func (o *SGD) Name() string { return "sgd" }

// Validate reports the configurations PyTorch rejects.
func (o *SGD) Validate() error {
	if o.Momentum < 0 || o.WeightDecay < 0 {
		return fmt.Errorf("sgd: momentum %v and weight decay %v must be non-negative", o.Momentum, o.WeightDecay)
	}
	if o.Nesterov && (o.Momentum <= 0 || o.Dampening != 0) {
		return errors.New("sgd: Nesterov momentum requires a momentum and zero dampening")
	}
	return nil
}

// Step implements Optimizer. It panics on a configuration Validate rejects,
// and does not allocate once the parameter list has been seen.
func (o *SGD) Step(params []*tensor.Param[float32], lr float64) {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	if !o.b.same(params) {
		if o.state == nil {
			o.state = map[string]*sgdSlot{}
		}
		o.b.bind(params, func(p *tensor.Param[float32]) *sgdSlot {
			s := o.state[p.Name]
			if s == nil {
				s = &sgdSlot{}
				o.state[p.Name] = s
			}
			if s.init && len(s.buf) != len(p.W) {
				panic(fmt.Sprintf("optim: SGD momentum buffer for %q has %d values, parameter has %d (checkpoint from another model?)", p.Name, len(s.buf), len(p.W)))
			}
			return s
		})
	}
	if o.Momentum != 0 {
		for i, s := range o.b.slots {
			if s.buf == nil { // also when Momentum was switched on after binding
				s.buf = make([]float32, len(o.b.params[i].W))
			}
		}
	}
	o.step++
	o.k = sgdScalars{
		wd:           float32(o.WeightDecay),
		mom:          float32(o.Momentum),
		oneMinusDamp: float32(1 - o.Dampening),
		negLR:        float32(-lr),
	}
	parallelRange(o, o.b.total(), parallelMin)
	if o.Momentum != 0 {
		for _, s := range o.b.slots {
			s.init = true
		}
	}
}

func (o *SGD) runRange(lo, hi int) {
	k := o.k
	for i := o.b.first(lo); i < len(o.b.params) && o.b.offs[i] < hi; i++ {
		p, s, off := o.b.params[i], o.b.slots[i], o.b.offs[i]
		a, z := max(lo-off, 0), min(hi-off, len(p.W))
		w, g := p.W[a:z], p.G[a:z]
		wd := float32(0)
		if p.Decay {
			wd = k.wd
		}
		if o.Momentum == 0 {
			sgdPlain(w, g, wd, k.negLR)
			continue
		}
		sgdMomentum(w, g, s.buf[a:z], wd, s.init, o.Nesterov, &k)
	}
}

// Undecayed parameters pass wd = 0; the branch on it is loop-invariant and
// skips the add, so d is the gradient bit for bit (adding 0·w would turn −0
// into +0 and Inf weights into NaN). The float32(...) conversions keep
// PyTorch's separate roundings (no FMA fusion).
func sgdPlain(w, g []float32, wd, negLR float32) {
	g = g[:len(w)]
	for i := range w {
		d := g[i]
		if wd != 0 {
			d += float32(wd * w[i])
		}
		w[i] += float32(negLR * d)
	}
}

func sgdMomentum(w, g, buf []float32, wd float32, init, nesterov bool, k *sgdScalars) {
	g, buf = g[:len(w)], buf[:len(w)]
	mom, omd, negLR := k.mom, k.oneMinusDamp, k.negLR
	for i := range w {
		d := g[i]
		if wd != 0 {
			d += float32(wd * w[i])
		}
		b := d
		if init {
			b = float32(buf[i]*mom) + float32(omd*d)
		}
		buf[i] = b
		if nesterov {
			d += float32(mom * b)
		} else {
			d = b
		}
		w[i] += float32(negLR * d)
	}
}

// State implements Optimizer. Momentum buffers appear only once they hold a
// value, as in PyTorch, so a resumed run knows whether to clone or decay.
func (o *SGD) State() map[string][]float32 {
	st := map[string][]float32{StepKey: stepState(o.step)}
	for name, s := range o.state {
		if s.init {
			st[MomentumPrefix+name] = clone(s.buf)
		}
	}
	return st
}

// LoadState implements Optimizer; sizes are checked against the model at the
// next Step, which panics on a mismatch.
func (o *SGD) LoadState(st map[string][]float32) error {
	step, err := loadStep(st)
	if err != nil {
		return fmt.Errorf("sgd: %w", err)
	}
	state := map[string]*sgdSlot{}
	for key, val := range st {
		switch {
		case key == StepKey:
		case strings.HasPrefix(key, MomentumPrefix):
			state[key[len(MomentumPrefix):]] = &sgdSlot{buf: clone(val), init: true}
		default:
			return fmt.Errorf("sgd: unexpected state entry %q", key)
		}
	}
	o.step, o.state, o.b = step, state, binding[*sgdSlot]{}
	return nil
}
