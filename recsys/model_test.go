package recsys

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"romae/events"
	"romae/internal/gradcheck"
	"romae/rope"
	"romae/tensor"
)

// synthData is a small event log with structure to learn: each user likes
// one of two item halves, and watches items in a drifting order, with
// irregular gaps. One event-side categorical column, item categories.
func synthData(users, items int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 5))
	vocab := &events.Vocab{Items: events.NewIndex("item", nil), EventCats: []*events.Index{events.NewIndex("device", []string{"app", "web"})}}
	ids := make([]string, items)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	vocab.Items = events.NewIndex("item", ids)
	l := &events.Log{Path: "synth", Vocab: vocab, HasLabel: true}
	for u := 0; u < users; u++ {
		n := 6 + rng.IntN(20)
		t := 1.5e9 + rng.Float64()*1e8
		cur := rng.IntN(items)
		half := u % 2
		usr := events.User{ID: fmt.Sprint(u)}
		for i := 0; i < n; i++ {
			cur = (cur + 1 + rng.IntN(3)) % items
			t += rng.ExpFloat64() * 3600 * float64(1+rng.IntN(48))
			label := int8(0)
			if (cur < items/2) == (half == 0) && rng.Float64() < 0.8 {
				label = 1
			}
			usr.Events = append(usr.Events, events.Event{Item: int32(cur + 1), Label: label, Time: t, Cats: []int32{int32(1 + rng.IntN(2))}, Line: int32(i + 2)})
		}
		l.Users = append(l.Users, usr)
	}
	feat := &events.ItemFeatures{Values: events.NewIndex("genres", []string{"a", "b", "c"}), Of: make([][]int32, items+1)}
	for i := 1; i <= items; i++ {
		feat.Of[i] = []int32{int32(1 + i%3)}
		if i%4 == 0 {
			feat.Of[i] = append(feat.Of[i], int32(1+(i+1)%3))
		}
	}
	return &Data{Log: l, Items: feat}
}

func testConfig(task, variant string, d *Data, maxLen int) Config {
	c := DefaultConfig(task, variant)
	c.DModel, c.Heads, c.Depth, c.FFN, c.SirenHidden = 8, 2, 2, 12, 5
	c.MaxLen = maxLen
	c.Items, c.ItemCats, c.EventCats = d.Log.Vocab.Items.Len(), d.Items.Values.Len(), []int{d.Log.Vocab.EventCats[0].Len()}
	return c
}

func mustSplit(t testing.TB, d *Data, rule events.SplitRule) {
	sp, err := rule.Apply(d.Log)
	if err != nil {
		t.Fatal(err)
	}
	d.Split = sp
}

// Every parameter gradient of every variant and task agrees with central
// finite differences in float64: the embeddings' scatter, the angle
// network, ω and λ, RoPE's angle gradient, the causal blocks and both
// heads (sampled and full softmax).
func TestModelGradients(t *testing.T) {
	d := synthData(4, 9, 1)
	mustSplit(t, d, events.SplitRule{Rule: events.LastFraction, Val: 0.2, Test: 0.2})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range Variants() {
			negSets := []*Negatives{nil}
			if task == TaskNext {
				// Sampled, with and without the logQ correction; item 3
				// twice, and some tokens' own targets among them.
				logQ := make([]float64, d.Log.Vocab.Items.Len())
				for i := range logQ {
					logQ[i] = 0.3*float64(i) - 1
				}
				items := []int32{2, 5, 7, 9, 3, 3}
				negSets = append(negSets, &Negatives{Items: items}, &Negatives{Items: items, LogQ: logQ})
			}
			for _, neg := range negSets {
				name := fmt.Sprintf("%s/%s/full-softmax", task, variant)
				if neg != nil {
					name = fmt.Sprintf("%s/%s/sampled/logQ=%v", task, variant, neg.LogQ != nil)
				}
				t.Run(name, func(t *testing.T) {
					cfg := testConfig(task, variant, d, 6)
					m, err := New[float64](cfg, d.Items.Of, 3)
					if err != nil {
						t.Fatal(err)
					}
					// Weights of order 1, so that every term matters.
					rng := rand.New(rand.NewPCG(9, 9))
					for i := range m.W {
						m.W[i] += 0.3 * rng.NormFloat64()
					}
					ws := m.Windows(d, events.Train)
					bt, err := d.Collate(nil, ws[:3], task)
					if err != nil {
						t.Fatal(err)
					}
					work := m.NewWorkspace()
					loss := func() float64 {
						l, _, err := m.Loss(work, bt, neg)
						if err != nil {
							t.Fatal(err)
						}
						return l
					}
					m.ZeroGrad()
					if _, n, _ := m.Loss(work, bt, neg); n == 0 {
						t.Fatal("no scored tokens")
					}
					m.Backward(work)
					for _, p := range m.Params {
						if err := gradcheck.Check(p.Name, p.W, p.G, loss, 24); err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
	}
}

// SIREN-RoPE with ω = 0 is RoPE on the reversed index exactly (λ starts
// at 1): same shared weights, bit-identical outputs.
func TestSirenOmegaZeroIsRoPEIndex(t *testing.T) {
	d := synthData(6, 11, 2)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	// Heads of width 4, and of 16 and 32 (8 and 16 pairs: the float32
	// vector kernels' widths).
	for _, size := range [][2]int{{8, 2}, {32, 2}, {64, 2}} {
		for _, task := range []string{TaskRanking, TaskNext} {
			for _, variant := range []string{PosSiren, PosSirenSin, PosSirenMLP} {
				cfg := func(v string) Config {
					c := testConfig(task, v, d, 7)
					c.DModel, c.Heads = size[0], size[1]
					return c
				}
				idx, err := New[float32](cfg(PosIndex), d.Items.Of, 4)
				if err != nil {
					t.Fatal(err)
				}
				sir, err := New[float32](cfg(variant), d.Items.Of, 4)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range idx.Params {
					q := sir.Param(p.Name)
					if q == nil {
						t.Fatalf("%s lacks %s", variant, p.Name)
					}
					for i := range p.W {
						if p.W[i] != q.W[i] {
							t.Fatalf("%s: shared weight %s differs at init", variant, p.Name)
						}
					}
				}
				clear(sir.Param("siren.omega").W)
				bt, err := d.Collate(nil, idx.Windows(d, events.Train), task)
				if err != nil {
					t.Fatal(err)
				}
				w1, w2 := idx.NewWorkspace(), sir.NewWorkspace()
				l1, _, err1 := idx.Loss(w1, bt, nil)
				l2, _, err2 := sir.Loss(w2, bt, nil)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if l1 != l2 {
					t.Errorf("%s/%s: loss %v, RoPE on the index %v", task, variant, l2, l1)
				}
				for i := range w1.out {
					if w1.out[i] != w2.out[i] {
						t.Fatalf("%s/%s: output %d differs: %v vs %v", task, variant, i, w2.out[i], w1.out[i])
					}
				}
				// And ω ≠ 0 does change them (the test can fail).
				sir.Param("siren.omega").W[0] = 1
				if l3, _, _ := sir.Loss(w2, bt, nil); l3 == l1 {
					t.Errorf("%s/%s: ω ≠ 0 left the loss unchanged", task, variant)
				}
			}
		}
	}
}

// A token's output depends on earlier events only: changing the last
// event of a window (its item, time and outcome) leaves every earlier
// output unchanged, for every variant.
func TestNoFutureLeak(t *testing.T) {
	d := synthData(3, 9, 3)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range Variants() {
			m, err := New[float32](testConfig(task, variant, d, 8), d.Items.Of, 5)
			if err != nil {
				t.Fatal(err)
			}
			ws := []events.Window{{User: 0, Start: 0, End: 6, Targets: []int{1}}}
			bt, err := d.Collate(nil, ws, task)
			if err != nil {
				t.Fatal(err)
			}
			work := m.NewWorkspace()
			if err := m.forward(work, bt); err != nil {
				t.Fatal(err)
			}
			before := append([]float32(nil), work.out...)
			last := bt.L - 1
			bt.Item[last], bt.Time[last], bt.Action[last] = bt.Item[last]%8+1, bt.Time[last]+12345, 2-bt.Action[last]%2
			if err := m.forward(work, bt); err != nil {
				t.Fatal(err)
			}
			dm := m.Cfg.DModel
			for i := 0; i < last*dm; i++ {
				if work.out[i] != before[i] {
					t.Fatalf("%s/%s: output of token %d changed with the last event", task, variant, i/dm)
				}
			}
			changed := false
			for i := last * dm; i < len(before); i++ {
				changed = changed || work.out[i] != before[i]
			}
			if !changed {
				t.Errorf("%s/%s: the last token's own output did not change", task, variant)
			}
		}
	}
}

// Two variants built from one seed share their common weights, so a
// comparison between them is paired from initialisation on.
func TestVariantsShareInitialWeights(t *testing.T) {
	d := synthData(2, 9, 4)
	base, _ := New[float32](testConfig(TaskNext, PosNone, d, 6), d.Items.Of, 7)
	for _, v := range Variants()[1:] {
		m, err := New[float32](testConfig(TaskNext, v, d, 6), d.Items.Of, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range base.Params {
			q := m.Param(p.Name)
			if q == nil || math.Float32bits(q.W[0]) != math.Float32bits(p.W[0]) || q.W[len(q.W)-1] != p.W[len(p.W)-1] {
				t.Errorf("%s: %s differs from the none variant's", v, p.Name)
			}
		}
	}
}

// The float32 sine layer (the vector kernel where there is one) agrees
// with math.Sincos of the same float32 argument, over the range it covers
// and past it (where it hands over to math.Sincos).
func TestSineFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 1 << 16
	pre, out, deriv := make([]float32, n+7), make([]float32, n+7), make([]float32, n+7)
	for i := range pre {
		pre[i] = float32((rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(5)-2)))
	}
	pre[100] = 1e5 // a block the vector path must leave to math.Sincos
	const w0 = 10
	sine(out, deriv, pre, w0)
	for i, p := range pre {
		x := float64(float32(w0) * p)
		s, c := math.Sincos(x)
		// The scalar path rounds ω0·pre in float64, the vector one in
		// float32: allow that rounding (6e-8 relative) on top of 4e-7.
		tol := 4e-7 + 6e-8*math.Abs(x)
		if math.Abs(float64(out[i])-s) > tol || math.Abs(float64(deriv[i])-w0*c) > w0*tol {
			t.Fatalf("sin(%v) = %v, cos·ω0 %v; want %v, %v", x, out[i], deriv[i], s, w0*c)
		}
	}
}

func TestTokenFeatures(t *testing.T) {
	x := make([]float64, 3*numFeatures)
	// A window of 3 slots of a model taking 5, its last token on Thursday
	// 1970-01-01 06:00 UTC, its first at 00:00.
	windowFeatures(x, 3, 3, 5, []float64{0, 0, 6 * 3600})
	cycleFeatures(x, 3)
	want := []float64{0.5, 6*3600/secondsPerYear - 55, 1, 0, math.Sin(2 * math.Pi / 28), math.Cos(2 * math.Pi / 28)}
	want0 := []float64{1, -55, 0, 1, 0, 1}
	for i := range want {
		if math.Abs(x[3*i+2]-want[i]) > 1e-12 || math.Abs(x[3*i]-want0[i]) > 1e-12 {
			t.Errorf("feature %d = %v, want %v (first token: %v, want %v)", i, x[3*i+2], want[i], x[3*i], want0[i])
		}
	}
	// A negative time (before 1970) still gets a phase in [0, 1).
	if p := phase(-3600, secondsPerDay); math.Abs(p-23.0/24) > 1e-15 {
		t.Errorf("phase(−1 h) = %v, want 23/24", p)
	}
	// Whole seconds on both sides of period boundaries, before and after
	// 1970, and at random: the remainder is exact, the phase in [0, 1).
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 20000; i++ {
		for _, period := range []float64{secondsPerDay, secondsPerWeek} {
			k := float64(rng.IntN(40000) - 20000)
			ts := []float64{k*period - 1, k * period, k*period + 1, math.Round((rng.Float64()*2 - 1) * 2e9)}
			for _, ti := range ts {
				want := math.Mod(ti, period)
				if want < 0 {
					want += period
				}
				if p := phase(ti, period); p < 0 || p >= 1 || math.Abs(p*period-want) > 1e-9 {
					t.Fatalf("phase(%v, %v) = %v, want %v/period", ti, period, p, want)
				}
			}
		}
	}
}

// The float32 angle gradient matches rope's AngleGrad, for each layout of
// its vector pass — a whole head row per vector (hd 16), 16 pairs per
// vector (hd 32) — and where it has none (hd 48).
func TestAngleGradVector(t *testing.T) {
	for _, hd := range []int{16, 32, 48} {
		B, L, H := 3, 5, 2
		l, err := rope.NewLayout(hd, 1, 1, 1e5)
		if err != nil {
			t.Fatal(err)
		}
		tab := &rope.Table[float32]{Layout: l, N: B * L}
		n := B * H * L * hd
		vals := [4][]float32{}
		for i := range vals {
			vals[i] = make([]float32, n)
			for j, v := range gradcheck.Rand(n, uint64(i+1)) {
				vals[i][j] = float32(v)
			}
		}
		got, want := make([]float32, B*L*l.R), make([]float32, B*L*l.R)
		for i := range got {
			got[i] = float32(i%5) - 2 // it accumulates
			want[i] = got[i]
		}
		angleGrad(tab, got, vals[0], vals[1], vals[2], vals[3], B, L, H)
		tab.AngleGrad(want, vals[0], vals[1], B, L, H)
		tab.AngleGrad(want, vals[2], vals[3], B, L, H)
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("hd %d: dAngle %d = %v, rope.AngleGrad %v", hd, i, got[i], want[i])
			}
		}
	}
}

// The angle network's weight-gradient product in float32 (the vector
// kernel where there is one: 2×4 blocks, repeated edge rows, a scalar
// tail past the last 16 tokens) matches a float64 sum, at sizes that
// leave every kind of edge.
func TestGramFloat32(t *testing.T) {
	for _, sz := range [][3]int{{8, 33, 1632}, {16, 17, 50}, {32, 7, 16}, {5, 3, 7}, {1, 1, 40}, {3, 6, 33}} {
		ra, rb, n := sz[0], sz[1], sz[2]
		a, b := gradcheck.Rand(ra*n, 1), gradcheck.Rand(rb*n, 2)
		a32, b32, c := make([]float32, ra*n), make([]float32, rb*n), make([]float32, ra*rb)
		for i, v := range a {
			a32[i] = float32(v)
		}
		for i, v := range b {
			b32[i] = float32(v)
		}
		gram(c, a32, ra, b32, rb, n)
		for r := 0; r < ra; r++ {
			for s := 0; s < rb; s++ {
				var want, mag float64
				for k := 0; k < n; k++ {
					p := float64(a32[r*n+k]) * float64(b32[s*n+k])
					want, mag = want+p, mag+math.Abs(p)
				}
				if got := float64(c[r*rb+s]); math.Abs(got-want) > 1e-6*mag {
					t.Fatalf("%v: c[%d,%d] = %v, want %v", sz, r, s, got, want)
				}
			}
		}
	}
}

// ReLU and its gradient in float32 (vector blocks and a scalar tail)
// match the definition.
func TestReluFloat32(t *testing.T) {
	pre := make([]float32, 37)
	for i := range pre {
		pre[i] = float32(i%7) - 3
	}
	h, d := make([]float32, len(pre)), make([]float32, len(pre))
	relu(h, pre)
	for i := range d {
		d[i] = float32(i + 1)
	}
	reluGrad(d, h)
	for i, p := range pre {
		wantH, wantD := max(p, 0), float32(i+1)
		if p <= 0 {
			wantD = 0
		}
		if h[i] != wantH || d[i] != wantD {
			t.Fatalf("element %d (pre %v): relu %v, grad %v; want %v, %v", i, p, h[i], d[i], wantH, wantD)
		}
	}
}

// The float32 model — the vector kernels of the angle network, ReLU,
// sines and angle gradient, at a head width (16) and angle-network width
// (16) that take them — computes the float64 model's loss and gradients
// to float32 accuracy, for every variant with the angle network.
func TestFloat32MatchesFloat64(t *testing.T) {
	d := synthData(6, 30, 7)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range []string{PosSiren, PosSirenSin, PosSirenMLP, PosSirenEmb} {
			cfg := testConfig(task, variant, d, 21)
			cfg.DModel, cfg.Heads, cfg.FFN, cfg.SirenHidden = 32, 2, 24, 16
			m64, err := New[float64](cfg, d.Items.Of, 3)
			if err != nil {
				t.Fatal(err)
			}
			m32, err := New[float32](cfg, d.Items.Of, 3)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			for i := range m64.W {
				m32.W[i] = float32(m64.W[i] + 0.1*rng.NormFloat64())
				m64.W[i] = float64(m32.W[i])
			}
			bt, err := d.Collate(nil, m32.Windows(d, events.Train), task)
			if err != nil {
				t.Fatal(err)
			}
			if n := bt.B * bt.L; n < 32 || n%16 == 0 {
				t.Fatalf("%d tokens: want 16-token blocks and a tail", n)
			}
			w64, w32 := m64.NewWorkspace(), m32.NewWorkspace()
			m64.ZeroGrad()
			m32.ZeroGrad()
			l64, _, err1 := m64.Loss(w64, bt, nil)
			l32, _, err2 := m32.Loss(w32, bt, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Abs(l32-l64) > 1e-5*math.Abs(l64) {
				t.Errorf("%s/%s: float32 loss %v, float64 %v", task, variant, l32, l64)
			}
			m64.Backward(w64)
			m32.Backward(w32)
			// The angle network's output bias shifts every angle alike,
			// which relative rotation cancels: its exact gradient is 0 and
			// float32's is rounding, measured against the largest gradient.
			var all float64
			for _, g := range m64.G {
				all = max(all, math.Abs(g))
			}
			for k, p := range m64.Params {
				var scale, worst float64
				for i, g := range p.G {
					scale = max(scale, math.Abs(g))
					worst = max(worst, math.Abs(float64(m32.Params[k].G[i])-g))
				}
				if worst > 1e-4*scale+1e-6*all {
					t.Errorf("%s/%s: %s: float32 gradient off by %.3g (largest %.3g)", task, variant, p.Name, worst, scale)
				}
			}
		}
	}
}

// On two cores the angle network runs beside the embeddings (sideBySide):
// loss and every gradient are bit for bit those of one core, for each
// variant with the network and RoPE on the index, on both tasks.
func TestSideBySideMatchesOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer tensor.SetThreads(0)
	d := synthData(6, 30, 7)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range []string{PosIndex, PosSiren, PosSirenSin, PosSirenMLP, PosSirenEmb} {
			cfg := testConfig(task, variant, d, 21)
			var loss [2]float64
			var grads [2][]float32
			for i, threads := range []int{1, 2} {
				tensor.SetThreads(threads)
				m, err := New[float32](cfg, d.Items.Of, 3)
				if err != nil {
					t.Fatal(err)
				}
				bt, err := d.Collate(nil, m.Windows(d, events.Train), task)
				if err != nil {
					t.Fatal(err)
				}
				ws := m.NewWorkspace()
				m.ZeroGrad()
				if loss[i], _, err = m.Loss(ws, bt, nil); err != nil {
					t.Fatal(err)
				}
				m.Backward(ws)
				grads[i] = append([]float32(nil), m.G...)
			}
			if loss[0] != loss[1] {
				t.Errorf("%s/%s: loss %v on one core, %v on two", task, variant, loss[0], loss[1])
			}
			for k := range grads[0] {
				if grads[0][k] != grads[1][k] {
					t.Errorf("%s/%s: gradient %d is %v on one core, %v on two", task, variant, k, grads[0][k], grads[1][k])
					break
				}
			}
		}
	}
}

// The float32 vector kernels of the learned angles (a block of 16 tokens
// turned between feature-major and token-major in registers) agree with
// the scalar loops: the angles bit for bit (the same float64 roundings),
// the gradients to float32 accuracy; for both widths they take and a
// token count with a scalar tail.
func TestLearnedAnglesVector(t *testing.T) {
	for _, R := range []int{8, 16} {
		N := 16*5 + 7
		l, err := rope.NewLayout(2*R, 1, 1, 1e5)
		if err != nil {
			t.Fatal(err)
		}
		th := l.InvTimescale
		rnd := func(n int, seed uint64) []float32 {
			x := make([]float32, n)
			for i, v := range gradcheck.Rand(n, seed) {
				x[i] = float32(v)
			}
			return x
		}
		f, omega, dAngles := rnd(R*N, 1), rnd(R, 2), rnd(N*R, 3)
		pos := make([]float32, N)
		for i := range pos {
			pos[i] = float32((i * 7) % 51)
		}
		const lambda = 0.93
		angles := make([]float32, N*R)
		done := learnedAngles(angles, f, omega, pos, lambda, th, N, R)
		for r := 0; r < done; r++ {
			for j := 0; j < R; j++ {
				want := float32(lambda*float64(pos[r])*th[j] + float64(f[j*N+r])*float64(omega[j]))
				if angles[r*R+j] != want {
					t.Fatalf("R %d: angle [%d, %d] = %v, want %v", R, r, j, angles[r*R+j], want)
				}
			}
		}
		dF, dOmega := make([]float32, R*N), make([]float32, R)
		dLambda, done2 := anglesBackwardFast(dF, dOmega, dAngles, f, omega, pos, th, N, R)
		if hasVectorAngles := done > 0; hasVectorAngles != (done2 > 0) || done != done2 || done%16 != 0 || done > N {
			t.Fatalf("R %d: kernels did %d and %d of %d tokens", R, done, done2, N)
		}
		var wantL float64
		wantO := make([]float64, R)
		for r := 0; r < done2; r++ {
			for j := 0; j < R; j++ {
				g := dAngles[r*R+j]
				if dF[j*N+r] != g*omega[j] {
					t.Fatalf("R %d: dF [%d, %d] = %v, want %v", R, j, r, dF[j*N+r], g*omega[j])
				}
				wantO[j] += float64(g) * float64(f[j*N+r])
				wantL += float64(g) * float64(float32(float64(pos[r])*th[j]))
			}
		}
		for j := range wantO {
			if math.Abs(float64(dOmega[j])-wantO[j]) > 1e-5*(1+math.Abs(wantO[j])) {
				t.Errorf("R %d: dω[%d] = %v, want %v", R, j, dOmega[j], wantO[j])
			}
		}
		if math.Abs(float64(dLambda)-wantL) > 1e-5*(1+math.Abs(wantL)) {
			t.Errorf("R %d: dλ = %v, want %v", R, dLambda, wantL)
		}
	}
}

// The float32 features (the vector kernel for the time features where
// there is one) are the float64 ones rounded, bit for bit: the same
// float64 operations in the same order.
func TestWindowFeaturesFloat32(t *testing.T) {
	const L, n = 7, 7 * 13 // 91 tokens: 11 blocks of 8 and a tail
	rng := rand.New(rand.NewPCG(4, 4))
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = math.Round(rng.Float64() * 2e9) // 1970–2033, whole seconds
		if i%5 == 0 {
			ts[i] = -ts[i] / 7 // before 1970
		}
		if i%11 == 0 {
			ts[i] += 0.37 // fractional
		}
	}
	ts[3] = 3 * secondsPerWeek // on a period boundary
	x64, x32 := make([]float64, n*numFeatures), make([]float32, n*numFeatures)
	windowFeatures(x64, n, L, 9, ts)
	windowFeatures(x32, n, L, 9, ts)
	for _, row := range []int{0, 1, 2, 4} {
		for r := 0; r < n; r++ {
			if want := float32(x64[row*n+r]); x32[row*n+r] != want {
				t.Fatalf("row %d, token %d (t = %v): %v, want %v", row, r, ts[r], x32[row*n+r], want)
			}
		}
	}
}
