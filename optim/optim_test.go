package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"romae/internal/race"
	"romae/tensor"
)

// newParams lays parameters out as the model does: views into one
// contiguous weight buffer and one gradient buffer.
func newParams(sizes []int, decay []bool, seed uint64) []*tensor.Param[float32] {
	n := 0
	for _, s := range sizes {
		n += s
	}
	W, G := make([]float32, n), make([]float32, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range W {
		W[i] = float32(r.NormFloat64())
	}
	ps := make([]*tensor.Param[float32], len(sizes))
	off := 0
	for i, s := range sizes {
		ps[i] = &tensor.Param[float32]{Name: fmt.Sprintf("p%d", i), Shape: []int{s}, W: W[off : off+s], G: G[off : off+s], Decay: decay[i]}
		off += s
	}
	return ps
}

// fillGrads writes gradients with a spread of magnitudes (so eps and the
// second moment matter), deterministic per step.
func fillGrads(ps []*tensor.Param[float32], step int) {
	r := rand.New(rand.NewPCG(uint64(step), 2))
	for _, p := range ps {
		for i := range p.G {
			p.G[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-3)))
		}
	}
}

func snapshotW(ps []*tensor.Param[float32]) [][]float32 {
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = append([]float32(nil), p.W...)
	}
	return out
}

// closeTo compares the float32 implementation with a float64 reference;
// a few float32 roundings per step accumulate to well under 1e-5 relative.
func closeTo(t *testing.T, what string, got float32, want float64) {
	t.Helper()
	if d := math.Abs(float64(got) - want); d > 1e-5*math.Max(1, math.Abs(want)) || math.IsNaN(float64(got)) {
		t.Fatalf("%s = %.9g, want %.9g (diff %.3g)", what, got, want, d)
	}
}

// refAdamW is torch.optim.AdamW's single-tensor update in float64:
//
//	w *= 1 - lr·wd (if decay); m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²
//	w -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)
type refAdamW struct {
	b1, b2, eps, wd float64
	t               int
	w, m, v         [][]float64
}

func newRefAdamW(o *AdamW, ps []*tensor.Param[float32]) *refAdamW {
	r := &refAdamW{b1: o.Beta1, b2: o.Beta2, eps: o.Eps, wd: o.WeightDecay}
	for _, p := range ps {
		w := make([]float64, len(p.W))
		for i, x := range p.W {
			w[i] = float64(x)
		}
		r.w = append(r.w, w)
		r.m = append(r.m, make([]float64, len(p.W)))
		r.v = append(r.v, make([]float64, len(p.W)))
	}
	return r
}

func (r *refAdamW) step(ps []*tensor.Param[float32], lr float64) {
	r.t++
	bc1 := 1 - math.Pow(r.b1, float64(r.t))
	bc2 := 1 - math.Pow(r.b2, float64(r.t))
	for k, p := range ps {
		for i, g32 := range p.G {
			g := float64(g32)
			if p.Decay {
				r.w[k][i] *= 1 - lr*r.wd
			}
			r.m[k][i] = r.b1*r.m[k][i] + (1-r.b1)*g
			r.v[k][i] = r.b2*r.v[k][i] + (1-r.b2)*g*g
			r.w[k][i] -= lr / bc1 * r.m[k][i] / (math.Sqrt(r.v[k][i])/math.Sqrt(bc2) + r.eps)
		}
	}
}

func TestAdamWMatchesReference(t *testing.T) {
	for _, cfg := range []*AdamW{
		NewAdamW(),
		{Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.05},
		{Beta1: 0.3, Beta2: 0.9, Eps: 1e-8, WeightDecay: 0}, // lerp's other branch
	} {
		ps := newParams([]int{7, 33, 5}, []bool{true, false, true}, 1)
		ref := newRefAdamW(cfg, ps)
		for s := range 6 {
			lr := 1e-3 * float64(s+1)
			fillGrads(ps, s)
			cfg.Step(ps, lr)
			ref.step(ps, lr)
		}
		for k, p := range ps {
			for i := range p.W {
				closeTo(t, fmt.Sprintf("β1=%v %s[%d]", cfg.Beta1, p.Name, i), p.W[i], ref.w[k][i])
			}
		}
	}
}

// On the first step the bias-corrected moments are g and g², so AdamW moves
// each weight by lr·g/(|g|+eps) after decay: checkable by hand.
func TestAdamWFirstStepByHand(t *testing.T) {
	ps := newParams([]int{2, 2}, []bool{true, false}, 0)
	copy(ps[0].W, []float32{1, -2})
	copy(ps[1].W, []float32{1, -2})
	for _, p := range ps {
		copy(p.G, []float32{0.5, -1e-3})
	}
	NewAdamW().Step(ps, 0.1)
	// decayed: w·(1 − 0.1·0.01) − 0.1·g/(|g|+1e-8)
	want := [][]float64{
		{0.999 - 0.1*0.5/(0.5+1e-8), -2*0.999 + 0.1*1e-3/(1e-3+1e-8)},
		{1 - 0.1*0.5/(0.5+1e-8), -2 + 0.1*1e-3/(1e-3+1e-8)},
	}
	for k, p := range ps {
		for i := range p.W {
			closeTo(t, fmt.Sprintf("%s[%d]", p.Name, i), p.W[i], want[k][i])
		}
	}
}

// Zero gradients isolate decay: only Decay parameters may move, and by
// exactly the factor 1 − lr·wd, under both optimisers.
func TestDecayMask(t *testing.T) {
	for _, o := range []Optimizer{NewAdamW(), &SGD{WeightDecay: 0.01}, &SGD{WeightDecay: 0.01, Momentum: 0.9, Nesterov: true}} {
		ps := newParams([]int{10, 10}, []bool{true, false}, 3)
		before := snapshotW(ps)
		for range 3 {
			o.Step(ps, 0.5)
		}
		for i := range ps[1].W {
			if ps[1].W[i] != before[1][i] {
				t.Fatalf("%s moved undecayed weight %d: %v -> %v", o.Name(), i, before[1][i], ps[1].W[i])
			}
		}
		for i := range ps[0].W {
			if ps[0].W[i] == before[0][i] {
				t.Fatalf("%s did not decay weight %d", o.Name(), i)
			}
		}
		if _, ok := o.(*AdamW); ok {
			closeTo(t, "decayed", ps[0].W[0], float64(before[0][0])*math.Pow(1-0.5*0.01, 3))
		}
	}
}

// refSGD is torch.optim.SGD's update in float64:
//
//	d = g + wd·w (if decay)
//	b = d on the first step, else b = μ·b + (1−dampening)·d
//	d = d + μ·b if nesterov else b;  w -= lr·d
type refSGD struct {
	o    SGD
	w, b [][]float64
	init bool
}

func (r *refSGD) step(ps []*tensor.Param[float32], lr float64) {
	if r.w == nil {
		for _, p := range ps {
			w := make([]float64, len(p.W))
			for i, x := range p.W {
				w[i] = float64(x)
			}
			r.w = append(r.w, w)
			r.b = append(r.b, make([]float64, len(p.W)))
		}
	}
	for k, p := range ps {
		for i, g32 := range p.G {
			d := float64(g32)
			if p.Decay {
				d += r.o.WeightDecay * r.w[k][i]
			}
			if r.o.Momentum != 0 {
				if !r.init {
					r.b[k][i] = d
				} else {
					r.b[k][i] = r.o.Momentum*r.b[k][i] + (1-r.o.Dampening)*d
				}
				if r.o.Nesterov {
					d += r.o.Momentum * r.b[k][i]
				} else {
					d = r.b[k][i]
				}
			}
			r.w[k][i] -= lr * d
		}
	}
	r.init = true
}

func TestSGDMatchesReference(t *testing.T) {
	for _, cfg := range []SGD{
		{},
		{WeightDecay: 1e-2},
		{Momentum: 0.9},
		{Momentum: 0.9, WeightDecay: 1e-2},
		{Momentum: 0.9, Nesterov: true, WeightDecay: 1e-2},
		{Momentum: 0.5, Dampening: 0.3},
	} {
		ps := newParams([]int{9, 17}, []bool{true, false}, 4)
		o := cfg
		ref := &refSGD{o: cfg}
		ref.step(ps, 0) // capture initial weights only (zero grads, lr 0)
		ref.init = false
		for s := range 5 {
			fillGrads(ps, s+10)
			o.Step(ps, 0.1)
			ref.step(ps, 0.1)
		}
		for k, p := range ps {
			for i := range p.W {
				closeTo(t, fmt.Sprintf("%+v %s[%d]", cfg, p.Name, i), p.W[i], ref.w[k][i])
			}
		}
	}
}

// PyTorch's first momentum step uses the gradient as the buffer, so the
// first update equals plain SGD's even with dampening.
func TestSGDFirstMomentumStepIsGradient(t *testing.T) {
	ps := newParams([]int{4}, []bool{false}, 5)
	w0 := ps[0].W[0]
	ps[0].G[0] = 2
	(&SGD{Momentum: 0.9, Dampening: 0.5}).Step(ps, 0.1)
	if got, want := ps[0].W[0], w0-float32(0.1)*2; got != want {
		t.Fatalf("first momentum step: got %v want %v", got, want)
	}
}

func TestAdamWValidate(t *testing.T) {
	for _, o := range []*AdamW{{Beta1: 1, Beta2: 0.9}, {Beta1: 0.9, Beta2: -0.1}, {Beta1: 0.9, Beta2: 0.9, Eps: -1}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := NewAdamW().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSGDValidate(t *testing.T) {
	if err := (&SGD{Nesterov: true}).Validate(); err == nil {
		t.Fatal("nesterov without momentum accepted")
	}
	if err := (&SGD{Nesterov: true, Momentum: 0.9, Dampening: 0.1}).Validate(); err == nil {
		t.Fatal("nesterov with dampening accepted")
	}
	if err := (&SGD{Nesterov: true, Momentum: 0.9}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// Resuming from State must reproduce the uninterrupted run bit for bit; the
// big case crosses parallelMin so the multi-core path is covered too.
func TestStateRoundTripBitIdentical(t *testing.T) {
	for _, sizes := range [][]int{{13, 40, 3}, {parallelMin, 3*parallelMin + 7, 5}} {
		for _, mk := range []func() Optimizer{
			func() Optimizer { return NewAdamW() },
			func() Optimizer { return &SGD{Momentum: 0.9, WeightDecay: 1e-3} },
			func() Optimizer { return &SGD{Momentum: 0.9, Nesterov: true} },
		} {
			decay := []bool{true, false, true}
			a := mk()
			pa := newParams(sizes, decay, 6)
			for s := range 3 {
				fillGrads(pa, s)
				a.Step(pa, 1e-2)
			}
			st := a.State()
			pb := newParams(sizes, decay, 6)
			for k := range pb {
				copy(pb[k].W, pa[k].W)
			}
			// The snapshot must be a copy: stepping a must not change it.
			for s := 3; s < 6; s++ {
				fillGrads(pa, s)
				a.Step(pa, 1e-2)
			}
			b := mk()
			if err := b.LoadState(st); err != nil {
				t.Fatal(err)
			}
			for s := 3; s < 6; s++ {
				fillGrads(pb, s)
				b.Step(pb, 1e-2)
			}
			for k := range pa {
				for i := range pa[k].W {
					if math.Float32bits(pa[k].W[i]) != math.Float32bits(pb[k].W[i]) {
						t.Fatalf("%s sizes %v: resumed %s[%d] = %v, uninterrupted %v", a.Name(), sizes, pa[k].Name, i, pb[k].W[i], pa[k].W[i])
					}
				}
			}
		}
	}
}

func TestLoadStateErrors(t *testing.T) {
	good := map[string][]float32{StepKey: {3}, ExpAvgPrefix + "a": {1, 2}, ExpAvgSqPrefix + "a": {1, 2}}
	if err := NewAdamW().LoadState(good); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]map[string][]float32{
		"no step":      {ExpAvgPrefix + "a": {1}, ExpAvgSqPrefix + "a": {1}},
		"bad step":     {StepKey: {1.5}},
		"unpaired":     {StepKey: {1}, ExpAvgPrefix + "a": {1}},
		"unpaired sq":  {StepKey: {1}, ExpAvgSqPrefix + "a": {1}},
		"length":       {StepKey: {1}, ExpAvgPrefix + "a": {1}, ExpAvgSqPrefix + "a": {1, 2}},
		"foreign key":  {StepKey: {1}, MomentumPrefix + "a": {1}},
		"negative stp": {StepKey: {-1}},
	} {
		if err := NewAdamW().LoadState(st); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := (&SGD{}).LoadState(map[string][]float32{StepKey: {1}, ExpAvgPrefix + "a": {1}}); err == nil {
		t.Error("sgd accepted adamw state")
	}
	// A checkpoint from another model fails loudly at the next Step.
	o := NewAdamW()
	if err := o.LoadState(map[string][]float32{StepKey: {1}, ExpAvgPrefix + "p0": {1}, ExpAvgSqPrefix + "p0": {1}}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"p0"`) {
			t.Fatalf("size mismatch: recovered %v", r)
		}
	}()
	o.Step(newParams([]int{3}, []bool{true}, 1), 0.1)
}

func TestStepDoesNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("sync.Pool drops items under -race")
	}
	for _, sizes := range [][]int{{100, 30}, {2 * parallelMin, 3}} {
		ps := newParams(sizes, []bool{true, false}, 7)
		fillGrads(ps, 1)
		for _, o := range []Optimizer{NewAdamW(), &SGD{Momentum: 0.9}, &SGD{}} {
			o.Step(ps, 1e-3) // first Step allocates the state
			if n := testing.AllocsPerRun(20, func() { o.Step(ps, 1e-3) }); n != 0 {
				t.Errorf("%s on %v: %v allocations per Step", o.Name(), sizes, n)
			}
		}
		ClipGradNorm(ps, 1)
		if n := testing.AllocsPerRun(20, func() { ClipGradNorm(ps, 1e9) }); n != 0 {
			t.Errorf("ClipGradNorm on %v: %v allocations", sizes, n)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	ps := newParams([]int{1, 1}, []bool{true, true}, 0)
	ps[0].G[0], ps[1].G[0] = 3, 4
	if n := ClipGradNorm(ps, 10); n != 5 || ps[0].G[0] != 3 || ps[1].G[0] != 4 {
		t.Fatalf("below max: norm %v grads %v %v", n, ps[0].G[0], ps[1].G[0])
	}
	if n := ClipGradNorm(ps, 1); n != 5 {
		t.Fatalf("norm %v, want 5", n)
	}
	c := 1 / (5 + 1e-6)
	closeTo(t, "g0", ps[0].G[0], 3*c)
	closeTo(t, "g1", ps[1].G[0], 4*c)

	ps[1].G[0] = float32(math.NaN())
	ps[0].G[0] = 3
	if n := ClipGradNorm(ps, 1); !math.IsNaN(n) || ps[0].G[0] != 3 {
		t.Fatalf("NaN grad: norm %v, g0 %v (must stay 3)", n, ps[0].G[0])
	}
	ps[1].G[0] = float32(math.Inf(-1))
	if n := ClipGradNorm(ps, 1); !math.IsInf(n, 1) || ps[0].G[0] != 3 {
		t.Fatalf("Inf grad: norm %v, g0 %v", n, ps[0].G[0])
	}
}

// Large enough for several blocks and the parallel path: the norm must match
// a plain float64 sum and not depend on the number of cores.
func TestClipGradNormLargeDeterministic(t *testing.T) {
	eachVectorWidth(t, clipGradNormLargeDeterministic)
}

func clipGradNormLargeDeterministic(t *testing.T) {
	sizes := []int{3*clipBlock + 11, 5, parallelMin * 2}
	ps := newParams(sizes, []bool{true, true, true}, 8)
	fillGrads(ps, 9)
	var ss float64
	for _, p := range ps {
		for _, g := range p.G {
			ss += float64(g) * float64(g)
		}
	}
	n2 := ClipGradNorm(ps, math.Inf(1))
	prev := runtime.GOMAXPROCS(1)
	n1 := ClipGradNorm(ps, math.Inf(1))
	runtime.GOMAXPROCS(prev)
	if n1 != n2 {
		t.Fatalf("norm depends on cores: %v vs %v", n1, n2)
	}
	if math.Abs(n2-math.Sqrt(ss)) > 1e-12*n2 {
		t.Fatalf("norm %v, plain sum gives %v", n2, math.Sqrt(ss))
	}
	g := append([]float32(nil), ps[2].G...)
	ClipGradNorm(ps, n2/2)
	coef := float32(n2 / 2 / (n2 + 1e-6))
	for i := range g {
		if ps[2].G[i] != g[i]*coef {
			t.Fatalf("scaled grad %d: %v want %v", i, ps[2].G[i], g[i]*coef)
		}
	}
}

// The vectorised AdamW update must round exactly like the scalar one (and
// so like PyTorch's kernel), for both of PyTorch's lerp formulas.
func TestAdamKernelVectorBitExact(t *testing.T) { eachVectorWidth(t, adamKernelVectorBitExact) }

func adamKernelVectorBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, lerpW := range []float32{0.1, 0.7} {
		k := adamScalars{decayMul: 0.999, lerpW: lerpW, beta2: 0.95, oneMinusBeta2: 0.05, bc2Sqrt: 0.3, eps: 1e-8, negStepSize: -1e-3}
		n := 53
		var in [4][]float32
		for j := range in {
			in[j] = make([]float32, n)
			for i := range in[j] {
				in[j][i] = float32(rng.NormFloat64())
			}
		}
		for i := range in[3] {
			in[3][i] *= in[3][i] // v ≥ 0
		}
		cp := func() [4][]float32 {
			var c [4][]float32
			for j := range in {
				c[j] = append([]float32(nil), in[j]...)
			}
			return c
		}
		want, got := cp(), cp()
		adamScalar(want[0], want[1], want[2], want[3], 0.999, &k)
		adamKernel(got[0], got[1], got[2], got[3], 0.999, &k)
		for j, name := range []string{"w", "g", "m", "v"} {
			for i := range got[j] {
				if math.Float32bits(got[j][i]) != math.Float32bits(want[j][i]) {
					t.Fatalf("lerpW %v: %s[%d] = %v, scalar %v", lerpW, name, i, got[j][i], want[j][i])
				}
			}
		}
	}
}
