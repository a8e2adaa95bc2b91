package recsys

import (
	"fmt"
	"math"

	"romae/events"
	"romae/tensor"
)

// Evaluate scores every target of role in d (events.Val or events.Test)
// and returns the task's metrics. Ranking: log loss, NE and AUC of the
// outcomes. Next: the rank of the true next item among every item the
// user has not interacted with before it (the target itself excepted),
// HR@10 and NDCG@10, and the full-softmax NLL over all items.
func Evaluate[T tensor.Float](m *Model[T], ws *Workspace[T], d *Data, role events.Role, batch int) (Metrics, error) {
	if err := m.CheckData(d); err != nil {
		return Metrics{}, err
	}
	wins := m.Windows(d, role)
	if len(wins) == 0 {
		return Metrics{}, fmt.Errorf("%s: no %s targets to evaluate", d.Log.Path, roleName(role))
	}
	if m.Cfg.Task == TaskRanking {
		p, y, _, err := rankingPredictions(m, ws, d, wins, batch)
		if err != nil {
			return Metrics{}, err
		}
		return rankingMetrics(p, y)
	}
	return nextMetrics(m, ws, d, wins, batch)
}

func roleName(r events.Role) string {
	return [...]string{"training", "validation", "test"}[r]
}

// rankingPredictions returns the predicted probability, the outcome and
// the (user, event) of every target of wins.
func rankingPredictions[T tensor.Float](m *Model[T], ws *Workspace[T], d *Data, wins []events.Window, batch int) (p []float64, y []int, at [][2]int, err error) {
	var bt *Batch
	for lo := 0; lo < len(wins); lo += batch {
		if bt, err = d.Collate(bt, wins[lo:min(lo+batch, len(wins))], TaskRanking); err != nil {
			return nil, nil, nil, err
		}
		z, err := m.Logits(ws, bt)
		if err != nil {
			return nil, nil, nil, err
		}
		for r, t := range bt.Target {
			if t >= 0 {
				p, y = append(p, sigmoid(float64(z[r]))), append(y, int(t))
				at = append(at, [2]int{bt.User[r/bt.L], bt.Event[r]})
			}
		}
	}
	return p, y, at, nil
}

func rankingMetrics(p []float64, y []int) (Metrics, error) {
	met := Metrics{Task: TaskRanking, N: len(p), BaseRate: baseRate(y), LogLoss: LogLoss(p, y)}
	var err error
	if met.NE, err = NE(met.LogLoss, y); err != nil {
		return met, err
	}
	met.AUC, err = AUC(p, y)
	return met, err
}

// nextMetrics ranks every target against the full catalogue.
func nextMetrics[T tensor.Float](m *Model[T], ws *Workspace[T], d *Data, wins []events.Window, batch int) (Metrics, error) {
	met := Metrics{Task: TaskNext}
	var ranks []int
	var nll float64
	var bt *Batch
	var err error
	seen := newHistory(m.Cfg.Items)
	score := make([]float64, m.Cfg.Items)
	for lo := 0; lo < len(wins); lo += batch {
		ws0 := wins[lo:min(lo+batch, len(wins))]
		if bt, err = d.Collate(bt, ws0, TaskNext); err != nil {
			return met, err
		}
		for _, w := range ws0 {
			for _, j := range w.Targets {
				if d.Log.Users[w.User].Events[j].Item == 0 {
					met.Unscored++
				}
			}
		}
		rows, sc, err := m.ItemScores(ws, bt)
		if err != nil {
			return met, err
		}
		V := m.Cfg.Items
		for k, r := range rows {
			u, j, t := bt.User[r/bt.L], bt.Event[r], int(bt.Target[r])
			for i := range score {
				score[i] = float64(sc[k*V+i])
			}
			seen.set(d.Log.Users[u].Events[:j])
			ranks = append(ranks, RankOf(score, t, seen.has))
			nll += logSumExp(score[1:]) - score[t]
		}
	}
	if len(ranks) == 0 {
		return met, fmt.Errorf("%s: every target's item is unknown to the model", d.Log.Path)
	}
	met.N = len(ranks)
	met.HR10, met.NDCG10, met.NLL = HitRate(ranks, 10), NDCG(ranks, 10), nll/float64(len(ranks))
	return met, nil
}

func logSumExp(x []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

// history marks the items of a user's earlier events, reset per target in
// time proportional to the history rather than the catalogue.
type history struct {
	mark  []bool
	items []int32
}

func newHistory(items int) *history { return &history{mark: make([]bool, items)} }

func (h *history) set(evs []events.Event) {
	for _, it := range h.items {
		h.mark[it] = false
	}
	h.items = h.items[:0]
	for _, e := range evs {
		if !h.mark[e.Item] {
			h.mark[e.Item] = true
			h.items = append(h.items, e.Item)
		}
	}
}

func (h *history) has(item int) bool { return h.mark[item] }
