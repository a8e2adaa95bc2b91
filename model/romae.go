package model

import (
	"fmt"
	"math/rand/v2"

	"romae/data"
	"romae/internal/bufs"
	"romae/nn"
	"romae/rope"
	"romae/tensor"
)

// Model is RoMAE. The pre-training model has an encoder, a decoder and a
// reconstruction head; the task model has the same encoder and a
// classification or regression head. Both read as the paper's figure:
//
//	tokens ─ Linear(values→d) ─ [CLS] ─ encoder (p-RoPE in every attention)
//	  pre-training: ─ Linear(d→d_dec) ─ + [MASK] at masked positions ─ decoder ─ head → values
//	  task:         ─ pool ([CLS], mean, max or both) ─ head → logits / targets
type Model[T tensor.Float] struct {
	Cfg    Config
	Params []*tensor.Param[T] // every parameter, in a fixed order
	W, G   []T                // all weights and all gradients, contiguous

	proj linear[T]        // "projection": values → d_model, with bias
	cls  *tensor.Param[T] // "cls" [d_model], present when UseCLS
	enc  stack[T]         // "encoder.layers.*"

	encDec    linear[T]        // "encoder_decoder_proj" (pre-training)
	maskToken *tensor.Param[T] // "mask_token" [d_dec], zero-initialised
	dec       stack[T]         // "decoder.layers.*"

	head head[T] // "head.head.1" (RMSNorm), "head.head.2" (Linear)

	encSiren, decSiren *rope.Siren[T] // "encoder_siren.*", "decoder_siren.*" (pos_encoding siren)

	others []*Model[T] // an ensemble's members after the first (ensemble.go)
}

// New builds a model with freshly initialised weights: Linear weights
// truncated N(0, 0.02²), biases 0, RMSNorm gains 1, [CLS] N(0, 0.02²),
// [MASK] 0 — the authors' initialisation.
func New[T tensor.Float](cfg Config, seed uint64) (*Model[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model[T]{Cfg: cfg}
	var ps paramSet[T]
	d := cfg.Encoder.DModel
	m.proj = ps.linear("projection", cfg.Values, d, true)
	if cfg.UseCLS {
		m.cls = ps.Add("cls", false, tensor.TruncNormal[T](0.02), d)
	}
	m.enc = newStack(&ps, "encoder", cfg.Encoder, &cfg)
	var binds []func()
	if cfg.PosEncoding == PosSiren {
		var bind func()
		m.encSiren, bind = newSiren(&ps, "encoder_siren", cfg.Siren, m.enc.rope)
		binds = append(binds, bind)
	}
	out := cfg.Outputs
	headIn := d
	if cfg.Pool == PoolMeanMax && cfg.Task != TaskPretrain {
		headIn = 2 * d // [mean | max]
	}
	if cfg.Task == TaskPretrain {
		dd := cfg.Decoder.DModel
		m.encDec = ps.linear("encoder_decoder_proj", d, dd, true)
		m.maskToken = ps.Add("mask_token", false, tensor.Constant[T](0), dd)
		m.dec = newStack(&ps, "decoder", cfg.Decoder, &cfg)
		out, headIn = cfg.Values, dd
		if cfg.PosEncoding == PosSiren {
			var bind func()
			m.decSiren, bind = newSiren(&ps, "decoder_siren", cfg.Siren, m.dec.rope)
			binds = append(binds, bind)
		}
	}
	m.head = head[T]{
		norm: ps.norm("head.head.1", headIn),
		out:  ps.linear("head.head.2", headIn, out, true),
		drop: cfg.HeadDropout,
		eps:  cfg.NormEps,
	}
	m.Params = ps.Params
	m.W, m.G = ps.allocate(seed)
	for _, bind := range binds {
		bind()
	}
	return m, nil
}

func newStack[T tensor.Float](ps *paramSet[T], prefix string, s Size, cfg *Config) stack[T] {
	st := stack[T]{Size: s, hd: s.DModel / s.Heads, eps: cfg.NormEps, rope: cfg.ropeLayout(s),
		attnDrop: cfg.AttnDropout, hiddenDrop: cfg.HiddenDropout, dropPath: cfg.DropPath}
	for i := 0; i < s.Depth; i++ {
		st.blocks = append(st.blocks, ps.block(fmt.Sprintf("%s.layers.%d", prefix, i), s))
	}
	return st
}

// Workspace holds one batch's activations and gradients. It grows to the
// largest batch it has seen and is then reused, so steady-state training
// allocates nothing. A workspace serves one model at a time.
type Workspace[T tensor.Float] struct {
	train bool
	B     int
	Le    int // encoder tokens per sample, [CLS] included
	Lq    int // queried ([MASK]) tokens per sample (pre-training, interpolation)

	encVals []T    // [B·Le, values]; the [CLS] slot holds zeros
	encPos  []T    // [B·Le, D]
	encPad  []bool // [B·Le]
	enc     stackActs[T]
	encPosn posState[T]

	qPos    []T    // [B·Lq, D]
	qPad    []bool // [B·Lq]
	qTarget []T    // [B·Lq, values]
	decPos  []T    // [B·(Le+Lq), D]
	decPad  []bool // [B·(Le+Lq)]
	encDec  []T    // [B·Le, d_dec] encoder output projected to the decoder
	dEncDec []T
	dec     stackActs[T]
	decPosn posState[T]

	head    headActs[T]
	others  []*Workspace[T] // an ensemble's other members'
	rows    []int           // encoder rows pooled by the task head (PoolCLS/PoolToken); PoolMax, PoolMeanMax: [B, d_model], the row each maximum came from (-1: none)
	valid   []bool
	labels  []int
	targets []T
}

// posState is how one stack's tokens get their positions: the rotation
// table, the integer-position cache, and for SIREN-RoPE the angle network's
// activations and the angle gradient collected from every block.
type posState[T tensor.Float] struct {
	tab     rope.Table[T]
	cache   rope.IntCache[T]
	siren   rope.SirenActs[T]
	skip    []bool // rows with the identity rotation ([CLS])
	dAngles []T
	pos     []T
}

// NewWorkspace returns an empty workspace for m.
func (m *Model[T]) NewWorkspace() *Workspace[T] { return &Workspace[T]{} }

// LossOptions are the task loss's training-time knobs.
type LossOptions struct {
	ClassWeights   []float64 // per class, nil = uniform
	LabelSmoothing float64
}

// ─── Encoder ──────────────────────────────────────────────────────────────

// setEncoderRows sizes the encoder input for B samples of Le tokens.
func (m *Model[T]) setEncoderRows(ws *Workspace[T], B, Le int, train bool) {
	c, D := m.Cfg.Values, m.Cfg.PosDims
	ws.train, ws.B, ws.Le = train, B, Le
	ws.encVals, ws.encPos = bufs.Resize(ws.encVals, B*Le*c), bufs.Resize(ws.encPos, B*Le*D)
	ws.encPad = bufs.Resize(ws.encPad, B*Le)
	clear(ws.encVals)
	clear(ws.encPos)
	for i := range ws.encPad {
		ws.encPad[i] = true
	}
	if m.cls != nil {
		for b := 0; b < B; b++ {
			ws.encPad[b*Le] = false // [CLS] at position 0 on every axis
		}
	}
	ws.enc.resize(&m.enc, B, Le, -1, train)
	ws.enc.outRows = rowRange{} // callers that read only [CLS] rows say so
}

// setEncoderToken copies token i of batch sample b into encoder slot r.
func (m *Model[T]) setEncoderToken(ws *Workspace[T], bt *data.Batch, b, i, r int) {
	c, D := m.Cfg.Values, m.Cfg.PosDims
	row := b*ws.Le + r
	for j := 0; j < c; j++ {
		ws.encVals[row*c+j] = T(bt.Values[(b*bt.L+i)*c+j])
	}
	for j := 0; j < D; j++ {
		ws.encPos[row*D+j] = T(bt.Positions[(b*bt.L+i)*D+j])
	}
	ws.encPad[row] = false
}

// encode: x = Linear(values) (+ [CLS] in slot 0) (+ sin/cos when absolute),
// then the encoder stack with its rotation table.
func (m *Model[T]) encode(ws *Workspace[T], rng rand.Source) error {
	B, Le, d := ws.B, ws.Le, m.Cfg.Encoder.DModel
	x := ws.enc.res[0]
	nn.LinearForward(x, ws.encVals, m.proj.w.W, m.proj.b.W, B*Le, m.Cfg.Values, d)
	if m.cls != nil {
		for b := 0; b < B; b++ {
			copy(x[b*Le*d:(b*Le+1)*d], m.cls.W)
		}
	}
	if err := m.positions(ws, &ws.enc, &ws.encPosn, m.encSiren, ws.encPos, Le, x, d, m.enc.rope); err != nil {
		return fmt.Errorf("encoder: %w", err)
	}
	m.enc.forward(&ws.enc, ws.encPad, rng)
	return nil
}

// positions prepares how the B·L tokens of a stack at pos[B·L·D] meet it:
// a rotation table (fixed p-RoPE, cached integer RoPE, or SIREN-RoPE's
// learned angles) or sin/cos added to x[B·L, d] for absolute embeddings.
// Tables are computed once here and shared by every block.
func (m *Model[T]) positions(ws *Workspace[T], a *stackActs[T], ps *posState[T], siren *rope.Siren[T], pos []T, L int, x []T, d int, l rope.Layout) error {
	n := a.B * L
	a.rot, a.dAngles = &ps.tab, nil
	switch m.Cfg.PosEncoding {
	case PosAbsolute:
		rope.AddAbsolute(x, pos, n, d, m.Cfg.PosDims)
		a.rot = nil
	case PosRoPEInt:
		return ps.cache.Fill(&ps.tab, l, pos, n)
	case PosSiren:
		ps.skip = bufs.Resize(ps.skip, n)
		for r := range ps.skip {
			ps.skip[r] = m.cls != nil && r%L == 0
		}
		ps.pos = pos
		ps.tab.SetAngles(l, siren.Forward(&ps.siren, pos, n, ps.skip), n)
		if ws.train {
			ps.dAngles = bufs.Resize(ps.dAngles, n*l.D*l.R)
			clear(ps.dAngles)
			a.dAngles = ps.dAngles
		}
	default:
		ps.tab.Compute(l, pos, n)
	}
	return nil
}

// positionsBackward sends the angle gradient into the SIREN-RoPE network.
func positionsBackward[T tensor.Float](ps *posState[T], siren *rope.Siren[T], a *stackActs[T]) {
	if siren != nil && a.dAngles != nil {
		siren.Backward(&ps.siren, ps.pos, a.dAngles)
	}
}

// encodeBackward takes ws.enc.dx = dLoss/dEncoderOutput.
func (m *Model[T]) encodeBackward(ws *Workspace[T]) {
	B, Le, d := ws.B, ws.Le, m.Cfg.Encoder.DModel
	m.enc.backward(&ws.enc)
	positionsBackward(&ws.encPosn, m.encSiren, &ws.enc)
	dx := ws.enc.dx
	if m.cls != nil {
		for b := 0; b < B; b++ {
			row := dx[b*Le*d : (b*Le+1)*d]
			for j, g := range row {
				m.cls.G[j] += g
			}
			clear(row) // [CLS] replaced the projection's output there
		}
	}
	nn.LinearBackward(nil, m.proj.w.G, m.proj.b.G, dx, ws.encVals, m.proj.w.W, B*Le, m.Cfg.Values, d, false)
}

// ─── Pre-training: masked reconstruction ──────────────────────────────────

// ForwardPretrain runs the masked autoencoder on a batch: masked[B·L] marks
// the tokens hidden from the encoder and reconstructed by the decoder. The
// encoder sees only visible tokens (+[CLS]); each sample keeps its own
// visible and masked counts, padded to the batch's largest. A masked pad
// slot (the authors' masks include trailing padding so every sample masks
// the same count) becomes a padded query: computed, never attended to, and
// excluded from the loss. Reconstruction rows follow each sample's masked
// slots in index order. Returns the MSE over the masked non-pad tokens'
// values (per-patch normalised when normalize_targets). rng: as ForwardTask's.
func (m *Model[T]) ForwardPretrain(ws *Workspace[T], bt *data.Batch, masked []bool, train bool, rng rand.Source) (float64, error) {
	if m.Cfg.Task != TaskPretrain {
		return 0, fmt.Errorf("ForwardPretrain on a %s model", m.Cfg.Task)
	}
	if err := m.checkBatch(bt); err != nil {
		return 0, err
	}
	if len(masked) != bt.B*bt.L {
		return 0, fmt.Errorf("mask has %d entries, batch has %d×%d tokens", len(masked), bt.B, bt.L)
	}
	if train {
		m.dropPacked()
	}
	cls := m.clsSlots()
	maxVis, maxMask := 0, 0
	for b := 0; b < bt.B; b++ {
		nv, nm := 0, 0
		for i := 0; i < bt.L; i++ {
			k := b*bt.L + i
			switch {
			case masked[k]:
				nm++
			case bt.Pad[k]:
			default:
				nv++
			}
		}
		maxVis, maxMask = max(maxVis, nv), max(maxMask, nm)
	}
	m.setEncoderRows(ws, bt.B, cls+maxVis, train)
	m.setQueryRows(ws, maxMask)
	c, D := m.Cfg.Values, m.Cfg.PosDims
	for b := 0; b < bt.B; b++ {
		r, q := cls, 0
		for i := 0; i < bt.L; i++ {
			k := b*bt.L + i
			if !masked[k] {
				if !bt.Pad[k] {
					m.setEncoderToken(ws, bt, b, i, r)
					r++
				}
				continue
			}
			row := b*ws.Lq + q
			for j := 0; j < D; j++ {
				ws.qPos[row*D+j] = T(bt.Positions[k*D+j])
			}
			for j := 0; j < c; j++ {
				ws.qTarget[row*c+j] = T(bt.Values[k*c+j])
			}
			ws.qPad[row] = bt.Pad[k]
			q++
		}
	}
	if m.Cfg.NormTargets {
		nn.NormalizePatches(ws.qTarget, bt.B*ws.Lq, c)
	}
	if err := m.encode(ws, rng); err != nil {
		return 0, err
	}
	if err := m.decode(ws, rng); err != nil {
		return 0, err
	}
	for i, p := range ws.qPad {
		ws.valid[i] = !p
	}
	return nn.MaskedMSE(ws.head.dy, ws.head.y, ws.qTarget, ws.valid, bt.B*ws.Lq, c), nil
}

// setQueryRows sizes the [MASK] side for Lq queries per sample, all padding.
func (m *Model[T]) setQueryRows(ws *Workspace[T], Lq int) {
	B, c, D := ws.B, m.Cfg.Values, m.Cfg.PosDims
	ws.Lq = Lq
	ws.qPos, ws.qTarget = bufs.Resize(ws.qPos, B*Lq*D), bufs.Resize(ws.qTarget, B*Lq*c)
	ws.qPad, ws.valid = bufs.Resize(ws.qPad, B*Lq), bufs.Resize(ws.valid, B*Lq)
	clear(ws.qPos)
	clear(ws.qTarget)
	for i := range ws.qPad {
		ws.qPad[i] = true
	}
}

// decode: encoder output → Linear(d→d_dec); append one [MASK] per query
// carrying the query's position; decoder stack; head on the [MASK] outputs.
// No un-shuffling is needed because RoPE carries every token's position.
// With QueryIndependent the decoder's attention keeps queries apart (see
// nn.PrefixAttentionForward), so each prediction depends on the visible
// tokens and its own position only; training uses the same pattern.
func (m *Model[T]) decode(ws *Workspace[T], rng rand.Source) error {
	B, Le, Lq, D := ws.B, ws.Le, ws.Lq, m.Cfg.PosDims
	d, dd := m.Cfg.Encoder.DModel, m.Cfg.Decoder.DModel
	Ld := Le + Lq
	ws.encDec, ws.dEncDec = bufs.Resize(ws.encDec, B*Le*dd), bufs.Resize(ws.dEncDec, B*Le*dd)
	ws.decPos, ws.decPad = bufs.Resize(ws.decPos, B*Ld*D), bufs.Resize(ws.decPad, B*Ld)
	prefix := -1 // QueryAll: the authors' decoder, every token sees every token
	if m.Cfg.independentQueries() {
		prefix = Le // queries see the Le visible tokens and themselves
	}
	ws.dec.resize(&m.dec, B, Ld, prefix, ws.train)
	nn.LinearForward(ws.encDec, ws.enc.output(), m.encDec.w.W, m.encDec.b.W, B*Le, d, dd)
	x := ws.dec.res[0]
	for b := 0; b < B; b++ {
		copy(x[b*Ld*dd:(b*Ld+Le)*dd], ws.encDec[b*Le*dd:(b+1)*Le*dd])
		for q := 0; q < Lq; q++ {
			copy(x[(b*Ld+Le+q)*dd:][:dd], m.maskToken.W)
		}
		copy(ws.decPos[b*Ld*D:(b*Ld+Le)*D], ws.encPos[b*Le*D:(b+1)*Le*D])
		copy(ws.decPos[(b*Ld+Le)*D:(b+1)*Ld*D], ws.qPos[b*Lq*D:(b+1)*Lq*D])
		copy(ws.decPad[b*Ld:b*Ld+Le], ws.encPad[b*Le:(b+1)*Le])
		copy(ws.decPad[b*Ld+Le:(b+1)*Ld], ws.qPad[b*Lq:(b+1)*Lq])
	}
	if m.Cfg.PosEncoding == PosAbsolute {
		// Visible tokens carry their embedding from the encoder input;
		// only the [MASK] tokens need theirs.
		for b := 0; b < B; b++ {
			rope.AddAbsolute(x[(b*Ld+Le)*dd:(b+1)*Ld*dd], ws.qPos[b*Lq*D:(b+1)*Lq*D], Lq, dd, D)
		}
		ws.dec.rot = nil
	} else if err := m.positions(ws, &ws.dec, &ws.decPosn, m.decSiren, ws.decPos, Ld, x, dd, m.dec.rope); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	ws.dec.outRows = rowRange{Le, Ld} // the head reads the [MASK] rows only
	m.dec.forward(&ws.dec, ws.decPad, rng)
	ws.head.resize(&m.head, B*Lq, ws.train)
	out := ws.dec.output()
	for b := 0; b < B; b++ {
		copy(ws.head.in[b*Lq*dd:(b+1)*Lq*dd], out[(b*Ld+Le)*dd:(b+1)*Ld*dd])
	}
	m.head.forward(&ws.head, rng)
	return nil
}

// BackwardPretrain back-propagates the loss of the last ForwardPretrain,
// accumulating into m.G.
func (m *Model[T]) BackwardPretrain(ws *Workspace[T]) {
	B, Le, Lq := ws.B, ws.Le, ws.Lq
	d, dd := m.Cfg.Encoder.DModel, m.Cfg.Decoder.DModel
	Ld := Le + Lq
	m.head.backward(&ws.head)
	dx := ws.dec.dx
	clear(dx)
	for b := 0; b < B; b++ {
		copy(dx[(b*Ld+Le)*dd:(b+1)*Ld*dd], ws.head.dIn[b*Lq*dd:(b+1)*Lq*dd])
	}
	m.dec.backward(&ws.dec)
	positionsBackward(&ws.decPosn, m.decSiren, &ws.dec)
	for b := 0; b < B; b++ {
		copy(ws.dEncDec[b*Le*dd:(b+1)*Le*dd], dx[b*Ld*dd:(b*Ld+Le)*dd])
		for q := 0; q < Lq; q++ {
			row := dx[(b*Ld+Le+q)*dd:][:dd]
			for j, g := range row {
				m.maskToken.G[j] += g
			}
		}
	}
	nn.LinearBackward(ws.enc.dx, m.encDec.w.G, m.encDec.b.G, ws.dEncDec, ws.enc.output(), m.encDec.w.W, B*Le, d, dd, false)
	m.encodeBackward(ws)
}

// Reconstruction is the last pre-training/interpolation output:
// [B·Lq, values], row b·Lq+q for query q of sample b (pad rows undefined).
func (ws *Workspace[T]) Reconstruction() []T { return ws.head.y }

// QueryPad marks which Reconstruction rows are padding.
func (ws *Workspace[T]) QueryPad() []bool { return ws.qPad }

// Lq is the number of query rows per sample in Reconstruction.
func (ws *Workspace[T]) QueriesPerSample() int { return ws.Lq }

// Interpolate predicts values at query positions qPos[B·Lq·D] (qPad[B·Lq]
// marks unused slots) from every non-pad token of bt: the [MASK] path of
// pre-training asked about positions that have no observation. Returns
// [B·Lq, values], a view into ws.
func (m *Model[T]) Interpolate(ws *Workspace[T], bt *data.Batch, qPos []float32, qPad []bool, Lq int) ([]T, error) {
	if m.Cfg.Task != TaskPretrain {
		return nil, fmt.Errorf("interpolation needs a pre-training model (it has the decoder); this one is %s", m.Cfg.Task)
	}
	if err := m.checkBatch(bt); err != nil {
		return nil, err
	}
	D := m.Cfg.PosDims
	if len(qPos) != bt.B*Lq*D || len(qPad) != bt.B*Lq {
		return nil, fmt.Errorf("queries: %d positions and %d pad flags for %d samples × %d queries × %d axes", len(qPos), len(qPad), bt.B, Lq, D)
	}
	m.fillAllTokens(ws, bt, false)
	m.setQueryRows(ws, Lq)
	for i, p := range qPos {
		ws.qPos[i] = T(p)
	}
	copy(ws.qPad, qPad)
	if err := m.encode(ws, nil); err != nil {
		return nil, err
	}
	if err := m.decode(ws, nil); err != nil {
		return nil, err
	}
	return ws.head.y, nil
}

// ─── Task head: classification and regression ─────────────────────────────

// fillAllTokens puts every token of bt into the encoder after the [CLS].
func (m *Model[T]) fillAllTokens(ws *Workspace[T], bt *data.Batch, train bool) {
	cls := m.clsSlots()
	m.setEncoderRows(ws, bt.B, cls+bt.L, train)
	for b := 0; b < bt.B; b++ {
		for i := 0; i < bt.L; i++ {
			if !bt.Pad[b*bt.L+i] {
				m.setEncoderToken(ws, bt, b, i, cls+i)
			}
		}
	}
}

// ForwardTask encodes every token, pools, and applies the head. With labels
// (classification) or targets (regression) in bt it returns the loss, else 0.
// When train, rng draws dropout and stochastic depth: a *rand.PCG draws the
// same values as a *rand.Rand over it, on several cores (nn.DropoutMask).
func (m *Model[T]) ForwardTask(ws *Workspace[T], bt *data.Batch, opt LossOptions, train bool, rng rand.Source) (float64, error) {
	if m.Cfg.Task == TaskPretrain {
		return 0, fmt.Errorf("ForwardTask on a pre-training model")
	}
	if train && len(m.others) > 0 {
		return 0, fmt.Errorf("an ensemble of %d models is for inference; its members are trained one by one", m.Members())
	}
	if err := m.checkBatch(bt); err != nil {
		return 0, err
	}
	if train {
		m.dropPacked()
	}
	m.fillAllTokens(ws, bt, train)
	if m.Cfg.Pool == PoolCLS && m.cls != nil {
		ws.enc.outRows = rowRange{0, 1}
	}
	if err := m.encode(ws, rng); err != nil {
		return 0, err
	}
	m.pool(ws, bt)
	m.head.forward(&ws.head, rng)
	if len(m.others) > 0 {
		return m.ensembleForward(ws, bt, opt)
	}
	return m.taskLoss(ws, bt, opt)
}

// pool gathers the head's input rows: the [CLS] row, the mean or the
// per-feature maximum of the non-pad token rows, or every token row.
func (m *Model[T]) pool(ws *Workspace[T], bt *data.Batch) {
	B, Le, d, cls := ws.B, ws.Le, m.Cfg.Encoder.DModel, m.clsSlots()
	out := ws.enc.output()
	switch m.Cfg.Pool {
	case PoolCLS, PoolToken:
		ws.rows = ws.rows[:0]
		for b := 0; b < B; b++ {
			if m.Cfg.Pool == PoolCLS {
				ws.rows = append(ws.rows, b*Le)
				continue
			}
			for i := 0; i < bt.L; i++ {
				ws.rows = append(ws.rows, b*Le+cls+i)
			}
		}
		ws.head.resize(&m.head, len(ws.rows), ws.train)
		for k, r := range ws.rows {
			copy(ws.head.in[k*d:(k+1)*d], out[r*d:(r+1)*d])
		}
	case PoolMean, PoolMax, PoolMeanMax:
		// The head reads [B, w]: the mean in the first d columns and/or
		// the maximum in the last d (w = 2d for mean+max).
		w := m.headWidth()
		ws.head.resize(&m.head, B, ws.train)
		clear(ws.head.in)
		if m.Cfg.Pool != PoolMax {
			for b := 0; b < B; b++ {
				dst, n := ws.head.in[b*w:b*w+d], 0
				for i := cls; i < Le; i++ {
					if ws.encPad[b*Le+i] {
						continue
					}
					n++
					for j, v := range out[(b*Le+i)*d : (b*Le+i+1)*d] {
						dst[j] += v
					}
				}
				for j := range dst {
					dst[j] /= T(max(n, 1))
				}
			}
		}
		if m.Cfg.Pool == PoolMean {
			return
		}
		ws.rows = bufs.Resize(ws.rows, B*d)
		for b := 0; b < B; b++ {
			dst, arg := ws.head.in[(b+1)*w-d:(b+1)*w], ws.rows[b*d:(b+1)*d]
			first := true
			for i := cls; i < Le; i++ {
				if ws.encPad[b*Le+i] {
					continue
				}
				r := b*Le + i
				for j, v := range out[r*d : (r+1)*d] {
					if first || v > dst[j] {
						dst[j], arg[j] = v, r
					}
				}
				first = false
			}
			if first {
				clear(dst)
				for j := range arg {
					arg[j] = -1
				}
			}
		}
	}
}

// headWidth is the task head's input width: d_model, or 2·d_model for
// mean+max pooling.
func (m *Model[T]) headWidth() int {
	if m.Cfg.Pool == PoolMeanMax && m.Cfg.Task != TaskPretrain {
		return 2 * m.Cfg.Encoder.DModel
	}
	return m.Cfg.Encoder.DModel
}

// taskLoss computes the loss and its gradient ws.head.dy.
func (m *Model[T]) taskLoss(ws *Workspace[T], bt *data.Batch, opt LossOptions) (float64, error) {
	n, K := ws.head.n, m.Cfg.Outputs
	if m.Cfg.Task == TaskClassify {
		ws.labels = bufs.Resize(ws.labels, n)
		for b := range ws.labels {
			ws.labels[b] = -1
			if bt.Labels != nil {
				ws.labels[b] = bt.Labels[b]
			}
			if ws.labels[b] >= K {
				return 0, fmt.Errorf("sample %d has label %d, the model has %d classes", b, ws.labels[b], K)
			}
		}
		if opt.ClassWeights != nil && len(opt.ClassWeights) != K {
			return 0, fmt.Errorf("%d class weights for %d classes", len(opt.ClassWeights), K)
		}
		return nn.CrossEntropy(ws.head.dy, ws.head.y, ws.labels, opt.ClassWeights, opt.LabelSmoothing, n, K), nil
	}
	clear(ws.head.dy)
	if bt.Targets == nil {
		return 0, nil
	}
	if bt.TargetDim != K || bt.TargetPerToken != (m.Cfg.Pool == PoolToken) {
		return 0, fmt.Errorf("batch has %d targets (per token: %v); model predicts %d (per token: %v)",
			bt.TargetDim, bt.TargetPerToken, K, m.Cfg.Pool == PoolToken)
	}
	ws.targets, ws.valid = bufs.Resize(ws.targets, n*K), bufs.Resize(ws.valid, n)
	for i, v := range bt.Targets[:n*K] {
		ws.targets[i] = T(v)
	}
	for i := range ws.valid {
		ws.valid[i] = m.Cfg.Pool != PoolToken || !bt.Pad[i]
	}
	return nn.MaskedMSE(ws.head.dy, ws.head.y, ws.targets, ws.valid, n, K), nil
}

// BackwardTask back-propagates the loss of the last ForwardTask.
func (m *Model[T]) BackwardTask(ws *Workspace[T]) {
	B, Le, d, cls := ws.B, ws.Le, m.Cfg.Encoder.DModel, m.clsSlots()
	m.head.backward(&ws.head)
	dx := ws.enc.dx
	clear(dx)
	switch m.Cfg.Pool {
	case PoolCLS, PoolToken:
		for k, r := range ws.rows {
			copy(dx[r*d:(r+1)*d], ws.head.dIn[k*d:(k+1)*d])
		}
	case PoolMean, PoolMax, PoolMeanMax:
		w := m.headWidth()
		if m.Cfg.Pool != PoolMax {
			for b := 0; b < B; b++ {
				n := 0
				for i := cls; i < Le; i++ {
					if !ws.encPad[b*Le+i] {
						n++
					}
				}
				g := ws.head.dIn[b*w : b*w+d]
				for i := cls; i < Le; i++ {
					if ws.encPad[b*Le+i] {
						continue
					}
					row := dx[(b*Le+i)*d : (b*Le+i+1)*d]
					for j := range row {
						row[j] = g[j] / T(n)
					}
				}
			}
		}
		if m.Cfg.Pool != PoolMean {
			// Added to the mean's share: a row holding a maximum gets both.
			for k, r := range ws.rows[:B*d] {
				if r >= 0 {
					dx[r*d+k%d] += ws.head.dIn[(k/d+1)*w-d+k%d]
				}
			}
		}
	}
	m.encodeBackward(ws)
}

// Output is the head's last output: logits or predictions, [B, outputs]
// (or [B·L, outputs] for per-token regression).
func (ws *Workspace[T]) Output() []T { return ws.head.y }

// Embed returns pooled encoder outputs [B, d_model] for bt in evaluation
// mode: the [CLS] output (pool "cls") or the mean of the token outputs
// (pool "mean"). Works for pre-training and task models alike.
func (m *Model[T]) Embed(ws *Workspace[T], bt *data.Batch, pool string, dst []T) ([]T, error) {
	if err := m.checkBatch(bt); err != nil {
		return nil, err
	}
	if pool == PoolCLS && m.cls == nil {
		return nil, fmt.Errorf("embed: pool cls needs a model with [CLS]; use mean")
	}
	if pool != PoolCLS && pool != PoolMean {
		return nil, fmt.Errorf("embed: pool %q, want cls or mean", pool)
	}
	m.fillAllTokens(ws, bt, false)
	if pool == PoolCLS {
		ws.enc.outRows = rowRange{0, 1}
	}
	if err := m.encode(ws, nil); err != nil {
		return nil, err
	}
	B, Le, d, cls := ws.B, ws.Le, m.Cfg.Encoder.DModel, m.clsSlots()
	dst = bufs.Resize(dst, B*d)
	clear(dst)
	out := ws.enc.output()
	for b := 0; b < B; b++ {
		e := dst[b*d : (b+1)*d]
		if pool == PoolCLS {
			copy(e, out[b*Le*d:(b*Le+1)*d])
			continue
		}
		n := 0
		for i := cls; i < Le; i++ {
			if !ws.encPad[b*Le+i] {
				n++
				for j, v := range out[(b*Le+i)*d : (b*Le+i+1)*d] {
					e[j] += v
				}
			}
		}
		for j := range e {
			e[j] /= T(max(n, 1))
		}
	}
	return dst, nil
}

func (m *Model[T]) clsSlots() int {
	if m.cls != nil {
		return 1
	}
	return 0
}

// checkBatch refuses batches whose shape does not fit the model.
func (m *Model[T]) checkBatch(bt *data.Batch) error {
	switch {
	case bt.C != m.Cfg.Values:
		return fmt.Errorf("batch has %d values per token, model expects %d", bt.C, m.Cfg.Values)
	case bt.D != m.Cfg.PosDims:
		return fmt.Errorf("batch has %d position axes, model expects %d", bt.D, m.Cfg.PosDims)
	case bt.B < 1 || bt.L < 1:
		return fmt.Errorf("empty batch (%d samples × %d tokens)", bt.B, bt.L)
	case len(bt.Values) < bt.B*bt.L*bt.C || len(bt.Positions) < bt.B*bt.L*bt.D || len(bt.Pad) < bt.B*bt.L:
		return fmt.Errorf("batch buffers shorter than %d×%d tokens", bt.B, bt.L)
	}
	return nil
}
