package recsys

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/events"
	"romae/internal/bufs"
	"romae/nn"
	"romae/rope"
	"romae/tensor"
)

// Model is the causal Transformer:
//
//	token = item + mean(item categories) + Σ event categories (+ previous
//	        outcome, ranking) (+ slot embedding, absolute) (+ f(x), siren-emb)
//	→ depth × [x += Attn_causal(RMSNorm x) (RoPE on q, k); x += MLP(RMSNorm x)]
//	→ RMSNorm → ranking: Linear(d→1) logit; next: scores h·e_item (tied)
type Model[T tensor.Float] struct {
	Cfg Config
	// ItemCats lists each item index's category indices (nil when the
	// data has no item features); the model's category embeddings read it.
	ItemCats [][]int32
	Params   []*tensor.Param[T]
	W, G     []T

	item, itemCat, action, absPos *tensor.Param[T]
	eventCat                      []*tensor.Param[T]
	blocks                        []block[T]
	final, headW, headB           *tensor.Param[T]
	net                           *angleNet[T]
	omega, lambda                 *tensor.Param[T] // learned angles: Θ = f·ω + λ·p·θ
	layout                        rope.Layout
}

// block is one pre-norm Transformer layer (romae's encoder block).
type block[T tensor.Float] struct {
	attnNorm, wqkv, wo, ffnNorm, w1, w2 *tensor.Param[T]
}

// New builds a model with fresh weights from seed. itemCats is the item
// index → category indices table (nil when cfg.ItemCats is 0).
func New[T tensor.Float](cfg Config, itemCats [][]int32, seed uint64) (*Model[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if (cfg.ItemCats > 0) != (itemCats != nil) || itemCats != nil && len(itemCats) != cfg.Items {
		return nil, fmt.Errorf("recsys: item category table has %d rows for %d items and %d categories", len(itemCats), cfg.Items, cfg.ItemCats)
	}
	for i, cs := range itemCats {
		for _, c := range cs {
			if c < 1 || int(c) >= cfg.ItemCats {
				return nil, fmt.Errorf("recsys: item %d has category %d outside [1, %d)", i, c, cfg.ItemCats)
			}
		}
	}
	m := &Model[T]{Cfg: cfg, ItemCats: itemCats}
	hd := cfg.headDim()
	l, err := rope.NewLayout(hd, 1, 1, cfg.RoPEBase)
	if err != nil {
		return nil, err
	}
	m.layout = l
	var ps tensor.ParamSet[T]
	d, emb := cfg.DModel, tensor.TruncNormal[T](0.02)
	// Shared by every variant, declared first: the same seed gives every
	// variant the same starting weights here.
	m.item = ps.Add("item_embedding", false, emb, cfg.Items, d)
	if cfg.ItemCats > 0 {
		m.itemCat = ps.Add("item_category_embedding", false, emb, cfg.ItemCats, d)
	}
	for i, n := range cfg.EventCats {
		m.eventCat = append(m.eventCat, ps.Add(fmt.Sprintf("event_category_embedding.%d", i), false, emb, n, d))
	}
	if cfg.Task == TaskRanking {
		m.action = ps.Add("action_embedding", false, emb, 3, d)
	}
	for i := 0; i < cfg.Depth; i++ {
		p := fmt.Sprintf("layers.%d.", i)
		m.blocks = append(m.blocks, block[T]{
			attnNorm: ps.Add(p+"attention_norm.weight", false, tensor.Constant[T](1), d),
			wqkv:     ps.Add(p+"attention.wqkv.weight", true, emb, 3*d, d),
			wo:       ps.Add(p+"attention.wo.weight", true, emb, d, d),
			ffnNorm:  ps.Add(p+"ffn_norm.weight", false, tensor.Constant[T](1), d),
			w1:       ps.Add(p+"feed_forward.w1.weight", true, emb, cfg.FFN, d),
			w2:       ps.Add(p+"feed_forward.w2.weight", true, emb, d, cfg.FFN),
		})
	}
	m.final = ps.Add("final_norm.weight", false, tensor.Constant[T](1), d)
	if cfg.Task == TaskRanking {
		m.headW = ps.Add("head.weight", true, emb, 1, d)
		m.headB = ps.Add("head.bias", false, tensor.Constant[T](0), 1)
	}
	// Variant-specific parameters last.
	switch {
	case cfg.Variant == PosAbsolute:
		m.absPos = ps.Add("position_embedding", false, emb, cfg.MaxLen, d)
	case cfg.sirenNet():
		out := l.R
		if cfg.Variant == PosSirenEmb {
			out = d
		}
		m.net = newAngleNet(&ps, cfg, out)
		if cfg.learnedAngles() {
			m.omega = ps.Add("siren.omega", false, tensor.Constant[T](math.Pi), l.R)
			m.lambda = ps.Add("siren.lambda", false, tensor.Constant[T](1), 1)
		}
	}
	m.Params = ps.Params
	m.W, m.G = ps.Allocate(rand.New(rand.NewPCG(seed, 0x7265637379))) // "recsy"
	return m, nil
}

// newAngleNet declares the branches the variant uses. SIREN
// initialisation (the reference's): the first sine layer U(−1/F, 1/F),
// later ones U(±√(6/n)/ω0); the ReLU branch N(0, 0.02²) like every other
// linear layer here, output biases 0.
func newAngleNet[T tensor.Float](ps *tensor.ParamSet[T], cfg Config, out int) *angleNet[T] {
	a := &angleNet[T]{hidden: cfg.SirenHidden, out: out, w0: cfg.Omega0}
	F, Hd := numFeatures, cfg.SirenHidden
	if cfg.Variant != PosSirenMLP {
		first, later := tensor.Uniform[T](1/float64(F)), tensor.Uniform[T](math.Sqrt(6/float64(Hd))/cfg.Omega0)
		a.sinW1 = ps.Add("siren.sin.0.weight", true, first, Hd, F)
		a.sinB1 = ps.Add("siren.sin.0.bias", false, first, Hd)
		a.sinW2 = ps.Add("siren.sin.1.weight", true, later, Hd, Hd)
		a.sinB2 = ps.Add("siren.sin.1.bias", false, later, Hd)
		a.sinW3 = ps.Add("siren.sin.2.weight", true, later, out, Hd)
		a.sinB3 = ps.Add("siren.sin.2.bias", false, tensor.Constant[T](0), out)
	}
	if cfg.Variant != PosSirenSin {
		a.mlpW1 = ps.Add("siren.mlp.0.weight", true, tensor.TruncNormal[T](0.02), Hd, F)
		a.mlpB1 = ps.Add("siren.mlp.0.bias", false, tensor.Constant[T](0), Hd)
		a.mlpW2 = ps.Add("siren.mlp.1.weight", true, tensor.TruncNormal[T](0.02), out, Hd)
		a.mlpB2 = ps.Add("siren.mlp.1.bias", false, tensor.Constant[T](0), out)
	}
	return a
}

// Param returns the named parameter, or nil.
func (m *Model[T]) Param(name string) *tensor.Param[T] {
	for _, p := range m.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// ZeroGrad clears every gradient.
func (m *Model[T]) ZeroGrad() { clear(m.G) }

// Workspace holds one batch's activations and gradients; it grows to the
// largest batch seen and is reused.
type Workspace[T tensor.Float] struct {
	B, L int
	bt   *Batch

	feat []T // [featureRows, N]: the features, then 1s (feature-major, as the angle network reads it)
	net  netActs[T]
	pos  []T // [N] rotation positions
	tab  rope.Table[T]
	// learned angles: the angles [N, R] and dLoss/dangle over all blocks
	angles, dAngles []T

	res    [][]T // residual streams [N, d]: res[0] the embeddings, res[depth] the output
	layers []layerActs[T]
	out    []T // final RMSNorm [N, d]
	rstd   []T

	lin3, dLin3, lin, dx, dNorm, dMerged, dq, dk, dPre, dAct, dOut []T

	logit, dLogit []T // ranking [N]
	rows          []int
	y, dy         []T // next: the scored rows' outputs [n, d]
	scores, dSc   []T // next: [n, candidates]
	candE, dCandE []T
	dPos          []T
	dOmega        []T // [R]
	negatives     []int32
	nScored       int
}

// layerActs are one block's saved activations ([N, ·]; q, k, v head-major
// [B,H,L,hd]; prob [B,H,L,L]).
type layerActs[T tensor.Float] struct {
	norm1, rstd1, q, k, v, prob, merged, h, norm2, rstd2, pre, act []T
}

// NewWorkspace returns an empty workspace.
func (m *Model[T]) NewWorkspace() *Workspace[T] { return &Workspace[T]{} }

func (ws *Workspace[T]) resize(m *Model[T], B, L int) {
	c := &m.Cfg
	N, d, H := B*L, c.DModel, c.Heads
	ws.B, ws.L = B, L
	if len(ws.res) != c.Depth+1 {
		ws.res, ws.layers = make([][]T, c.Depth+1), make([]layerActs[T], c.Depth)
	}
	for i := range ws.res {
		ws.res[i] = bufs.Resize(ws.res[i], N*d)
	}
	for i := range ws.layers {
		l := &ws.layers[i]
		for _, p := range []*[]T{&l.norm1, &l.q, &l.k, &l.v, &l.merged, &l.h, &l.norm2} {
			*p = bufs.Resize(*p, N*d)
		}
		l.rstd1, l.rstd2 = bufs.Resize(l.rstd1, N), bufs.Resize(l.rstd2, N)
		l.pre, l.act = bufs.Resize(l.pre, N*c.FFN), bufs.Resize(l.act, N*c.FFN)
		l.prob = bufs.Resize(l.prob, B*H*L*L)
	}
	for _, p := range []*[]T{&ws.out, &ws.lin, &ws.dx, &ws.dNorm, &ws.dMerged, &ws.dq, &ws.dk, &ws.dOut} {
		*p = bufs.Resize(*p, N*d)
	}
	ws.lin3, ws.dLin3 = bufs.Resize(ws.lin3, 3*N*d), bufs.Resize(ws.dLin3, 3*N*d)
	ws.dPre, ws.dAct = bufs.Resize(ws.dPre, N*c.FFN), bufs.Resize(ws.dAct, N*c.FFN)
	ws.rstd, ws.feat, ws.pos = bufs.Resize(ws.rstd, N), bufs.Resize(ws.feat, N*featureRows), bufs.Resize(ws.pos, N)
	ws.logit, ws.dLogit = bufs.Resize(ws.logit, N), bufs.Resize(ws.dLogit, N)
}

// forward runs the embeddings and the stack on bt, leaving the final
// normalised outputs in ws.out [B·L, d].
func (m *Model[T]) forward(ws *Workspace[T], bt *Batch) error {
	c := &m.Cfg
	if bt.L > c.MaxLen {
		return fmt.Errorf("recsys: windows of %d tokens, the model takes at most %d", bt.L, c.MaxLen)
	}
	if len(bt.Cats) != bt.B*bt.L*len(c.EventCats) {
		return fmt.Errorf("recsys: batch has %d event categories per token, the model %d", len(bt.Cats)/max(bt.B*bt.L, 1), len(c.EventCats))
	}
	ws.resize(m, bt.B, bt.L)
	ws.bt = bt
	B, L, d, N := bt.B, bt.L, c.DModel, bt.B*bt.L
	x := ws.res[0]
	// The embeddings and the positions (features, angle network, rotation
	// table) read different inputs, so on two cores they are computed side
	// by side: the angle network is one core's work (its products are too
	// thin to split) and overlaps the embedding gather.
	var embedErr error
	embed := func() { embedErr = m.embed(x, bt) }
	if c.rotates() { // every variant with the angle network rotates
		sideBySide(embed, func() { m.positionsForward(ws, bt) })
	} else {
		embed()
	}
	if embedErr != nil {
		return embedErr
	}
	if c.Variant == PosSirenEmb {
		f := ws.net.f // [d, N]
		for r := 0; r < N; r++ {
			for i := 0; i < d; i++ {
				x[r*d+i] += f[i*N+r]
			}
		}
	}
	for i := range m.blocks {
		m.blockForward(ws, i, B, L)
	}
	nn.RMSNormForward(ws.out, ws.rstd, ws.res[c.Depth], m.final.W, N, d, c.NormEps)
	return nil
}

// embed writes the token embeddings of bt into x [B·L, d].
func (m *Model[T]) embed(x []T, bt *Batch) error {
	c := &m.Cfg
	d, nc, L := c.DModel, len(c.EventCats), bt.L
	for r, it := range bt.Item {
		if it < 0 || int(it) >= c.Items {
			return fmt.Errorf("recsys: item index %d outside the model's %d items", it, c.Items)
		}
		row := x[r*d : (r+1)*d]
		copy(row, m.item.W[int(it)*d:int(it+1)*d])
		if m.itemCat != nil {
			if cs := m.ItemCats[it]; len(cs) > 0 {
				w := T(1 / float64(len(cs)))
				for _, g := range cs {
					addScaled(row, m.itemCat.W[int(g)*d:int(g+1)*d], w)
				}
			}
		}
		for j, p := range m.eventCat {
			v := bt.Cats[r*nc+j]
			if v < 0 || int(v) >= c.EventCats[j] {
				return fmt.Errorf("recsys: event category %d of column %d outside the model's %d values", v, j, c.EventCats[j])
			}
			addScaled(row, p.W[int(v)*d:int(v+1)*d], 1)
		}
		if m.action != nil {
			a := int(bt.Action[r])
			addScaled(row, m.action.W[a*d:(a+1)*d], 1)
		}
		if m.absPos != nil {
			k := r % L
			addScaled(row, m.absPos.W[k*d:(k+1)*d], 1)
		}
	}
	return nil
}

// positionsForward computes what the positions need: the angle network's
// features and output, and the rotation table.
func (m *Model[T]) positionsForward(ws *Workspace[T], bt *Batch) {
	c := &m.Cfg
	N := bt.B * bt.L
	if c.sirenNet() {
		windowFeatures(ws.feat, N, bt.L, c.MaxLen, bt.Time)
		cycleFeatures(ws.feat, N)
		fill(ws.feat[numFeatures*N:featureRows*N], 1)
	}
	if c.Variant == PosSirenEmb {
		m.net.forward(&ws.net, ws.feat, N)
	}
	if c.rotates() {
		m.positions(ws, bt)
	}
}

// positions fills the rotation table: reversed index (newest event 0),
// time elapsed since the window's first event (counting from its newest
// would make every position move, in the last bit, with the events that
// follow; only differences reach attention either way), or
// the learned angles Θ = f(x)·ω + λ·p·θ on the reversed index p.
func (m *Model[T]) positions(ws *Workspace[T], bt *Batch) {
	c := &m.Cfg
	L, N := bt.L, bt.B*bt.L
	for r := 0; r < N; r++ {
		b, k := r/L, r%L
		switch c.Variant {
		case PosTime:
			ws.pos[r] = T((bt.Time[r] - bt.Time[b*L]) / c.TimeUnit)
		default:
			ws.pos[r] = T(bt.Len[b] - 1 - k)
		}
	}
	if c.Variant == PosTime {
		// Elapsed times reach 1e5 units: rope reduces p·θ in float64.
		ws.tab.Compute(m.layout, ws.pos, N)
		return
	}
	R, th := m.layout.R, m.layout.InvTimescale
	ws.angles, ws.dAngles = bufs.Resize(ws.angles, N*R), bufs.Resize(ws.dAngles, N*R)
	var f, omega []T // [R, N], [R]
	lambda := 1.0
	if c.learnedAngles() {
		f, omega, lambda = m.net.forward(&ws.net, ws.feat, N), m.omega.W[:R], float64(m.lambda.W[0])
	}
	r0 := 0
	if f != nil {
		r0 = learnedAngles(ws.angles, f, omega, ws.pos, lambda, th, N, R)
	}
	for r := r0; r < N; r++ {
		p, row := float64(ws.pos[r]), ws.angles[r*R:(r+1)*R]
		if f == nil {
			for j := range row {
				row[j] = T(lambda * p * th[j])
			}
			continue
		}
		for j := range row {
			row[j] = T(lambda*p*th[j] + float64(f[j*N+r])*float64(omega[j]))
		}
	}
	setAngles(&ws.tab, m.layout, ws.angles, N)
}

// setAngles fills the rotation table from angles [N, R] like
// rope.Table.SetAngles, through the vector sine kernel for float32 (the
// angles of the index and SIREN variants stay within tens of radians).
// Both variants compared by the overhead benchmark fill their table here.
func setAngles[T tensor.Float](t *rope.Table[T], l rope.Layout, angles []T, n int) {
	t.Layout, t.N = l, n
	w := l.D * l.R
	t.Cos, t.Sin = bufs.Resize(t.Cos, n*w), bufs.Resize(t.Sin, n*w)
	sine(t.Sin, t.Cos, angles[:n*w], 1)
}

// blockForward runs block i on ws.res[i] into ws.res[i+1].
func (m *Model[T]) blockForward(ws *Workspace[T], i, B, L int) {
	c := &m.Cfg
	blk, l, x, out := &m.blocks[i], &ws.layers[i], ws.res[i], ws.res[i+1]
	N, d, H, hd := B*L, c.DModel, c.Heads, c.headDim()
	nn.RMSNormForward(l.norm1, l.rstd1, x, blk.attnNorm.W, N, d, c.NormEps)
	nn.LinearForward(ws.lin3, l.norm1, blk.wqkv.W, nil, N, d, 3*d)
	if c.rotates() {
		ws.tab.RotateSplit(l.q, ws.lin3, 3*d, B, L, H)
		ws.tab.RotateSplit(l.k, ws.lin3[d:], 3*d, B, L, H)
	} else {
		nn.SplitHeadsLD(l.q, ws.lin3, 3*d, B, L, H, hd)
		nn.SplitHeadsLD(l.k, ws.lin3[d:], 3*d, B, L, H, hd)
	}
	nn.SplitHeadsLD(l.v, ws.lin3[2*d:], 3*d, B, L, H, hd)
	nn.CausalAttentionForward(nn.TokenMajor(l.merged, d, L, hd), nn.HeadMajor(l.q, H, L, hd), nn.HeadMajor(l.k, H, L, hd),
		nn.HeadMajor(l.v, H, L, hd), l.prob, nil, B, H, L, hd)
	nn.LinearForward(ws.lin, l.merged, blk.wo.W, nil, N, d, d)
	nn.ResidualAdd(l.h, x, ws.lin, nil, B, L, d)
	nn.RMSNormForward(l.norm2, l.rstd2, l.h, blk.ffnNorm.W, N, d, c.NormEps)
	nn.LinearForward(l.pre, l.norm2, blk.w1.W, nil, N, d, c.FFN)
	nn.SiLUForward(l.act, l.pre, N*c.FFN)
	nn.LinearForward(ws.lin, l.act, blk.w2.W, nil, N, c.FFN, d)
	nn.ResidualAdd(out, l.h, ws.lin, nil, B, L, d)
}

// backward takes ws.dOut = dLoss/d(final normalised output) and
// accumulates every parameter gradient.
func (m *Model[T]) backward(ws *Workspace[T]) {
	c := &m.Cfg
	B, L, d := ws.B, ws.L, c.DModel
	N := B * L
	bt := ws.bt
	nn.RMSNormBackward(ws.dx, m.final.G, ws.dOut, ws.res[c.Depth], m.final.W, ws.rstd, N, d, false)
	if c.learnedAngles() {
		clear(ws.dAngles)
	}
	for i := len(m.blocks) - 1; i > 0; i-- {
		m.blockBackward(ws, i, B, L)
	}
	// The angles' gradient is complete once block 0's attention is
	// differentiated; the angle network's backward writes only its own
	// gradients, so on two cores it runs beside the rest of block 0 and
	// the embeddings' scatter (or, where the network's output is added to
	// the embeddings, beside the scatter alone).
	m.attentionBackward(ws, 0, B, L)
	rest := func() {
		m.inputBackward(ws, 0, B, L)
		m.embedBackward(ws.dx, bt)
	}
	switch {
	case c.learnedAngles():
		sideBySide(rest, func() { m.anglesBackward(ws, N) })
	case c.Variant == PosSirenEmb:
		m.inputBackward(ws, 0, B, L)
		sideBySide(func() { m.embedBackward(ws.dx, bt) }, func() { m.embeddedNetBackward(ws, ws.dx, N) })
	default:
		rest()
	}
}

// sideBySide runs a and b at once where there is a second core (else one
// after the other): they must write different memory.
func sideBySide(a, b func()) {
	tensor.ParallelFor(2, 1, func(lo, hi int) {
		for part := lo; part < hi; part++ {
			if part == 0 {
				a()
			} else {
				b()
			}
		}
	})
}

// embeddedNetBackward sends dx = dLoss/d(embeddings) into the angle
// network whose output is added to the embeddings.
func (m *Model[T]) embeddedNetBackward(ws *Workspace[T], dx []T, N int) {
	d := m.Cfg.DModel
	dF := bufs.Resize(ws.net.dF, d*N)
	ws.net.dF = dF
	for r := 0; r < N; r++ {
		for i := 0; i < d; i++ {
			dF[i*N+r] = dx[r*d+i]
		}
	}
	m.net.backward(&ws.net, ws.feat, dF)
}

// embedBackward accumulates the embedding tables' gradients from dx =
// dLoss/d(embeddings) [B·L, d].
func (m *Model[T]) embedBackward(dx []T, bt *Batch) {
	c := &m.Cfg
	d, L, nc := c.DModel, bt.L, len(c.EventCats)
	for r, it := range bt.Item {
		g := dx[r*d : (r+1)*d]
		addScaled(m.item.G[int(it)*d:int(it+1)*d], g, 1)
		if m.itemCat != nil {
			if cs := m.ItemCats[it]; len(cs) > 0 {
				w := T(1 / float64(len(cs)))
				for _, k := range cs {
					addScaled(m.itemCat.G[int(k)*d:int(k+1)*d], g, w)
				}
			}
		}
		for j, p := range m.eventCat {
			v := int(bt.Cats[r*nc+j])
			addScaled(p.G[v*d:(v+1)*d], g, 1)
		}
		if m.action != nil {
			a := int(bt.Action[r])
			addScaled(m.action.G[a*d:(a+1)*d], g, 1)
		}
		if m.absPos != nil {
			k := r % L
			addScaled(m.absPos.G[k*d:(k+1)*d], g, 1)
		}
	}
}

// anglesBackward sends dLoss/dΘ into ω, λ and the angle network.
func (m *Model[T]) anglesBackward(ws *Workspace[T], N int) {
	R, th := m.layout.R, m.layout.InvTimescale
	f, omega := ws.net.f, m.omega.W[:R] // [R, N], [R]
	ws.net.dF = bufs.Resize(ws.net.dF, R*N)
	dF := ws.net.dF
	// Local sums: accumulating into the parameters' gradients in memory
	// chains every term through a store and a load.
	ws.dOmega = bufs.Resize(ws.dOmega, R)
	dOmega := ws.dOmega
	clear(dOmega)
	dLambda, r0 := anglesBackwardFast(dF, dOmega, ws.dAngles, f, omega, ws.pos, th, N, R)
	for r := r0; r < N; r++ {
		p, g := float64(ws.pos[r]), ws.dAngles[r*R:(r+1)*R]
		var dl T
		for j, gj := range g {
			dF[j*N+r] = gj * omega[j]
			dOmega[j] += gj * f[j*N+r]
			dl += gj * T(p*th[j])
		}
		dLambda += dl
	}
	addScaled(m.omega.G[:R], dOmega, 1)
	m.lambda.G[0] += dLambda
	m.net.backward(&ws.net, ws.feat, dF)
}

// blockBackward: ws.dx holds dLoss/d(block i output) on entry and
// dLoss/d(block i input) on return.
func (m *Model[T]) blockBackward(ws *Workspace[T], i, B, L int) {
	m.attentionBackward(ws, i, B, L)
	m.inputBackward(ws, i, B, L)
}

// attentionBackward takes block i's output gradient in ws.dx back to
// ws.dq, ws.dk and ws.dLin3's value part (and the angles' gradient),
// leaving the attention residual's gradient in ws.dx.
func (m *Model[T]) attentionBackward(ws *Workspace[T], i, B, L int) {
	c := &m.Cfg
	blk, l := &m.blocks[i], &ws.layers[i]
	N, d, H, hd, f := B*L, c.DModel, c.Heads, c.headDim(), c.FFN
	// MLP branch: out = h + W2 SiLU(W1 RMSNorm(h)).
	nn.LinearBackward(ws.dAct, blk.w2.G, nil, ws.dx, l.act, blk.w2.W, N, f, d, false)
	nn.SiLUBackward(ws.dPre, ws.dAct, l.pre, N*f)
	nn.LinearBackward(ws.dNorm, blk.w1.G, nil, ws.dPre, l.norm2, blk.w1.W, N, d, f, false)
	nn.RMSNormBackward(ws.dx, blk.ffnNorm.G, ws.dNorm, l.h, blk.ffnNorm.W, l.rstd2, N, d, true)
	// Attention branch: h = x + Wo Attn(RMSNorm(x)).
	nn.LinearBackward(ws.dMerged, blk.wo.G, nil, ws.dx, l.merged, blk.wo.W, N, d, d, false)
	// The learned angles' gradient reads q, k and their gradients: it runs
	// a few samples at a time, right after their attention backward, while
	// those are in cache (read back from memory they cost more than its
	// arithmetic), the groups spread over the cores. Samples are
	// independent: the results do not change.
	attention := func(b0, nb int) {
		hm := func(s []T) nn.Heads[T] { return nn.HeadMajor(s[b0*H*L*hd:], H, L, hd) }
		tm := func(s []T, ld int) nn.Heads[T] { return nn.TokenMajor(s[b0*L*ld:], ld, L, hd) }
		nn.CausalAttentionBackward(hm(ws.dq), hm(ws.dk), tm(ws.dLin3[2*d:], 3*d), tm(ws.dMerged, d),
			hm(l.q), hm(l.k), hm(l.v), l.prob[b0*H*L*L:], nb, H, L, hd)
	}
	if c.learnedAngles() {
		R, g := m.layout.R, angleGradSamples
		tensor.ParallelFor((B+g-1)/g, 1, func(lo, hi int) {
			for b0 := lo * g; b0 < min(hi*g, B); b0 += g {
				nb := min(g, B-b0)
				attention(b0, nb)
				o := b0 * H * L * hd
				angleGrad(&ws.tab, ws.dAngles[b0*L*R:], l.q[o:], ws.dq[o:], l.k[o:], ws.dk[o:], nb, L, H)
			}
		})
	} else {
		attention(0, B)
	}
}

// inputBackward finishes block i: through the rotation, the input
// projection and the first norm, into ws.dx = dLoss/d(block i input).
func (m *Model[T]) inputBackward(ws *Workspace[T], i, B, L int) {
	c := &m.Cfg
	blk, l, x := &m.blocks[i], &ws.layers[i], ws.res[i]
	N, d, H, hd := B*L, c.DModel, c.Heads, c.headDim()
	if c.rotates() {
		ws.tab.MergeRotateInverse(ws.dLin3, ws.dq, 3*d, B, L, H)
		ws.tab.MergeRotateInverse(ws.dLin3[d:], ws.dk, 3*d, B, L, H)
	} else {
		nn.MergeHeadsLD(ws.dLin3, ws.dq, 3*d, B, L, H, hd)
		nn.MergeHeadsLD(ws.dLin3[d:], ws.dk, 3*d, B, L, H, hd)
	}
	nn.LinearBackward(ws.dNorm, blk.wqkv.G, nil, ws.dLin3, l.norm1, blk.wqkv.W, N, d, 3*d, false)
	nn.RMSNormBackward(ws.dx, blk.attnNorm.G, ws.dNorm, x, blk.attnNorm.W, l.rstd1, N, d, true)
}

// learnedAngles is the learned angles' loop of positions for float32 where
// there is a vector kernel (learnedAnglesVec), returning how many tokens
// it did.
func learnedAngles[T tensor.Float](angles, f, omega, pos []T, lambda float64, theta []float64, N, R int) int {
	if a32, ok := any(angles).([]float32); ok {
		s := func(x []T) []float32 { return any(x).([]float32) }
		return learnedAnglesVec(a32, s(f), s(omega), s(pos), lambda, theta, N, R)
	}
	return 0
}

// anglesBackwardFast is anglesBackward's loop for float32 where there is a
// vector kernel (anglesBackwardVec): it returns λ's gradient so far and
// how many tokens it did.
func anglesBackwardFast[T tensor.Float](dF, dOmega, dAngles, f, omega, pos []T, theta []float64, N, R int) (T, int) {
	if d32, ok := any(dF).([]float32); ok {
		s := func(x []T) []float32 { return any(x).([]float32) }
		dl, n := anglesBackwardVec(d32, s(dOmega), s(dAngles), s(f), s(omega), s(pos), theta, N, R)
		return T(dl), n
	}
	return 0, 0
}

// angleGradSamples is how many samples' attention backward and angle
// gradient run together: their q, k, v, probabilities and gradients,
// about 70 kB a sample at the experiment's size, stay in cache.
const angleGradSamples = 4

// angleGrad accumulates dLoss/dangle from q and k and their gradients
// (rope.Table.AngleGrad twice, or one vector pass for float32).
func angleGrad[T tensor.Float](t *rope.Table[T], dAngles, q, dq, k, dk []T, B, L, H int) {
	if d32, ok := any(dAngles).([]float32); ok {
		f := func(x []T) []float32 { return any(x).([]float32) }
		if angleGradVec(d32, f(q), f(dq), f(k), f(dk), B, L, H, t.HeadDim, t.R) {
			return
		}
	}
	t.AngleGrad(dAngles, q, dq, B, L, H)
	t.AngleGrad(dAngles, k, dk, B, L, H)
}

// addScaled: dst += s·src.
func addScaled[T tensor.Float](dst, src []T, s T) {
	for i, v := range src {
		dst[i] += s * v
	}
}

// Data checks that d fits the model's vocabularies.
func (m *Model[T]) CheckData(d *Data) error {
	c := &m.Cfg
	v := d.Log.Vocab
	switch {
	case v.Items.Len() != c.Items:
		return fmt.Errorf("%s: %d items, the model has %d", d.Log.Path, v.Items.Len(), c.Items)
	case len(v.EventCats) != len(c.EventCats):
		return fmt.Errorf("%s: %d event categorical columns, the model has %d", d.Log.Path, len(v.EventCats), len(c.EventCats))
	case c.Task == TaskRanking && !d.Log.HasLabel:
		return fmt.Errorf("%s: ranking needs an outcome per event (a label or rating column)", d.Log.Path)
	}
	for i, ix := range v.EventCats {
		if ix.Len() != c.EventCats[i] {
			return fmt.Errorf("%s: event categorical column %q has %d values, the model %d", d.Log.Path, ix.Name, ix.Len(), c.EventCats[i])
		}
	}
	if len(d.Split) != len(d.Log.Users) {
		return fmt.Errorf("%s: split covers %d users of %d", d.Log.Path, len(d.Split), len(d.Log.Users))
	}
	return nil
}

// windowLen is the window capacity for a history of h events.
func windowLen(task string, h int) int {
	if task == TaskRanking {
		return h + 1
	}
	return h
}

// Windows are d's windows of role want for m (training: no overlap;
// evaluation: every target sees at least half a window of history).
func (m *Model[T]) Windows(d *Data, want events.Role) []events.Window {
	minCtx := 0
	if want != events.Train {
		minCtx = m.Cfg.MaxLen / 2
	}
	return events.Windows(d.Log, d.Split, want, shift(m.Cfg.Task), m.Cfg.MaxLen, minCtx)
}
