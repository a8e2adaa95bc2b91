package recsys

import (
	"fmt"
	"math"

	"romae/internal/bufs"
	"romae/nn"
	"romae/tensor"
)

// Negatives are the sampled candidates of a next-item step, shared by the
// batch, with the sampled softmax's correction: LogQ[i] is the log of the
// expected count of item i in the sample, subtracted from every
// candidate's logit (the target's included), which makes the sampled loss
// estimate the full softmax's (Jean et al. 2015). LogQ nil: no correction
// (uniform sampling, where it is a constant).
type Negatives struct {
	Items []int32
	LogQ  []float64 // [items]
}

// Loss runs the model on bt and returns the mean loss over the scored
// tokens and their count, keeping what Backward needs. Ranking: binary
// cross-entropy of the outcome. Next: softmax cross-entropy of the next
// item against the sampled negatives (a token's own target among them is
// skipped), or against every item when neg is nil (the full softmax).
func (m *Model[T]) Loss(ws *Workspace[T], bt *Batch, neg *Negatives) (float64, int, error) {
	if err := m.forward(ws, bt); err != nil {
		return 0, 0, err
	}
	if m.Cfg.Task == TaskRanking {
		return m.rankingLoss(ws, bt), ws.nScored, nil
	}
	loss, err := m.nextLoss(ws, bt, neg)
	return loss, ws.nScored, err
}

// Backward back-propagates the last Loss into m.G (accumulating).
func (m *Model[T]) Backward(ws *Workspace[T]) {
	d, N := m.Cfg.DModel, ws.B*ws.L
	if m.Cfg.Task == TaskRanking {
		nn.LinearBackward(ws.dOut, m.headW.G, m.headB.G, ws.dLogit, ws.out, m.headW.W, N, d, 1, false)
	} else {
		m.nextBackward(ws)
		clear(ws.dOut)
		for k, r := range ws.rows {
			copy(ws.dOut[r*d:(r+1)*d], ws.dy[k*d:(k+1)*d])
		}
	}
	m.backward(ws)
}

// nextBackward turns the score gradients nextLoss left into ws.dy and the
// item embeddings' gradient: dy = dScores·E_cand + dPos·e_target,
// dE_cand += dScoresᵀ·y, de_target += dPos·y.
func (m *Model[T]) nextBackward(ws *Workspace[T]) {
	d, n := m.Cfg.DModel, ws.nScored
	if n == 0 {
		return
	}
	neg := ws.negatives
	candE, dCandE, S := m.item.W[d:], m.item.G[d:], m.Cfg.Items-1
	if neg != nil {
		S = len(neg)
		ws.dCandE = bufs.Resize(ws.dCandE, S*d)
		clear(ws.dCandE)
		candE, dCandE = ws.candE, ws.dCandE
	}
	nn.LinearBackward(ws.dy, dCandE, nil, ws.dSc, ws.y, candE, n, d, S, false)
	bt := ws.bt
	for k, r := range ws.rows {
		t := int(bt.Target[r])
		addScaled(ws.dy[k*d:(k+1)*d], m.item.W[t*d:(t+1)*d], ws.dPos[k])
		addScaled(m.item.G[t*d:(t+1)*d], ws.y[k*d:(k+1)*d], ws.dPos[k])
	}
	for s, it := range neg {
		addScaled(m.item.G[int(it)*d:int(it+1)*d], ws.dCandE[s*d:(s+1)*d], 1)
	}
}

// rankingLoss is the mean binary cross-entropy of the scored tokens'
// logits, with its gradient in ws.dLogit.
func (m *Model[T]) rankingLoss(ws *Workspace[T], bt *Batch) float64 {
	N, d := bt.B*bt.L, m.Cfg.DModel
	nn.LinearForward(ws.logit, ws.out, m.headW.W, m.headB.W, N, d, 1)
	n := 0
	for _, y := range bt.Target {
		if y >= 0 {
			n++
		}
	}
	ws.nScored = n
	clear(ws.dLogit)
	if n == 0 {
		return 0
	}
	var sum float64
	for r, y := range bt.Target {
		if y < 0 {
			continue
		}
		z := float64(ws.logit[r])
		sum += LogLossLogit(z, int(y))
		ws.dLogit[r] = T((sigmoid(z) - float64(y)) / float64(n))
	}
	return sum / float64(n)
}

// LogLossLogit is −log σ(z) for outcome 1, −log(1−σ(z)) for 0, computed
// without overflow: softplus(z) − y·z.
func LogLossLogit(z float64, y int) float64 {
	sp := math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
	return sp - float64(y)*z
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// gatherScored collects the scored tokens' rows of ws.out into ws.y.
func (m *Model[T]) gatherScored(ws *Workspace[T], bt *Batch) int {
	d := m.Cfg.DModel
	ws.rows = ws.rows[:0]
	for r, y := range bt.Target {
		if y >= 0 {
			ws.rows = append(ws.rows, r)
		}
	}
	n := len(ws.rows)
	ws.nScored = n
	ws.y, ws.dy = bufs.Resize(ws.y, n*d), bufs.Resize(ws.dy, n*d)
	for k, r := range ws.rows {
		copy(ws.y[k*d:(k+1)*d], ws.out[r*d:(r+1)*d])
	}
	return n
}

// nextLoss is the sampled (or full) softmax cross-entropy of the next item.
func (m *Model[T]) nextLoss(ws *Workspace[T], bt *Batch, neg *Negatives) (float64, error) {
	d, V := m.Cfg.DModel, m.Cfg.Items
	var negatives []int32
	var logQ []float64
	if neg != nil {
		negatives, logQ = neg.Items, neg.LogQ
		if len(negatives) == 0 || logQ != nil && len(logQ) != V {
			return 0, fmt.Errorf("recsys: %d negatives with %d corrections for %d items", len(negatives), len(logQ), V)
		}
	}
	n := m.gatherScored(ws, bt)
	if n == 0 {
		return 0, nil
	}
	// Candidates: the given items, or every item but the unknown slot 0,
	// whose embedding rows are then used in place.
	S := V - 1
	candE := m.item.W[d:]
	ws.negatives = negatives
	if negatives != nil {
		S = len(negatives)
		ws.candE = bufs.Resize(ws.candE, S*d)
		for s, it := range negatives {
			if it < 1 || int(it) >= V {
				return 0, fmt.Errorf("recsys: negative item %d outside [1, %d)", it, V)
			}
			copy(ws.candE[s*d:(s+1)*d], m.item.W[int(it)*d:int(it+1)*d])
		}
		candE = ws.candE
	}
	ws.scores, ws.dSc = bufs.Resize(ws.scores, n*S), bufs.Resize(ws.dSc, n*S)
	ws.dPos = bufs.Resize(ws.dPos, n)
	nn.LinearForward(ws.scores, ws.y, candE, nil, n, d, S)
	var sum float64
	inv := 1 / float64(n)
	for k, r := range ws.rows {
		t := bt.Target[r]
		y := ws.y[k*d : (k+1)*d]
		z0 := float64(dot(y, m.item.W[int(t)*d:int(t+1)*d]))
		sc, g := ws.scores[k*S:(k+1)*S], ws.dSc[k*S:(k+1)*S]
		if logQ != nil {
			z0 -= logQ[t]
			for s, it := range negatives {
				sc[s] -= T(logQ[it])
			}
		}
		// The target among the candidates (always, for the full softmax)
		// is skipped: it enters once, as z0.
		isTarget := func(s int) bool {
			if negatives == nil {
				return s == int(t)-1
			}
			return negatives[s] == t
		}
		mx := z0
		for s, v := range sc {
			if f := float64(v); f > mx && !isTarget(s) {
				mx = f
			}
		}
		e0 := math.Exp(z0 - mx)
		expShifted(g, sc, mx)
		se := e0
		for s, e := range g {
			if isTarget(s) {
				g[s] = 0
				continue
			}
			se += float64(e)
		}
		sum += mx + math.Log(se) - z0
		ws.dPos[k] = T((e0/se - 1) * inv)
		scale := T(inv / se)
		for s := range g {
			g[s] *= scale
		}
	}
	return sum * inv, nil
}

// expShifted writes dst = exp(src − shift): float32's vectorised
// exponential (relative error ~1e-7) where T is float32, math.Exp for the
// float64 gradient checks.
func expShifted[T tensor.Float](dst, src []T, shift float64) {
	if d32, ok := any(dst).([]float32); ok {
		s32, sh := any(src).([]float32), float32(shift)
		for i, v := range s32 {
			d32[i] = v - sh
		}
		tensor.Exp32Slice(d32, d32)
		return
	}
	for i, v := range src {
		dst[i] = T(math.Exp(float64(v) - shift))
	}
}

// dot is Σ a·b (float32 through the vector kernel).
func dot[T tensor.Float](a, b []T) T {
	if a32, ok := any(a).([]float32); ok {
		return T(tensor.Dot32(a32, any(b).([]float32)))
	}
	var s T
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Logits runs bt without keeping gradients and returns the ranking logit
// of every token [B·L] (read those whose bt.Target ≥ 0).
func (m *Model[T]) Logits(ws *Workspace[T], bt *Batch) ([]T, error) {
	if m.Cfg.Task != TaskRanking {
		return nil, fmt.Errorf("recsys: Logits on a %s model", m.Cfg.Task)
	}
	if err := m.forward(ws, bt); err != nil {
		return nil, err
	}
	nn.LinearForward(ws.logit, ws.out, m.headW.W, m.headB.W, bt.B*bt.L, m.Cfg.DModel, 1)
	return ws.logit, nil
}

// ItemScores runs bt and returns its scored tokens (the rows of bt whose
// Target ≥ 0) and their scores for every item, [len(rows), Items]; column
// 0, the unknown item, is not a candidate.
func (m *Model[T]) ItemScores(ws *Workspace[T], bt *Batch) ([]int, []T, error) {
	if m.Cfg.Task != TaskNext {
		return nil, nil, fmt.Errorf("recsys: ItemScores on a %s model", m.Cfg.Task)
	}
	if err := m.forward(ws, bt); err != nil {
		return nil, nil, err
	}
	d, V := m.Cfg.DModel, m.Cfg.Items
	n := m.gatherScored(ws, bt)
	ws.scores = bufs.Resize(ws.scores, n*V)
	nn.LinearForward(ws.scores, ws.y, m.item.W, nil, n, d, V)
	return ws.rows, ws.scores, nil
}
