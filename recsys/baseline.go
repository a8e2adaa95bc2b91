package recsys

import (
	"fmt"
	"math"

	"romae/events"
)

// Baselines without a sequence model, scored on the same targets as the
// models, to anchor their numbers.

// UserRateBaseline predicts each ranking target's outcome as the user's
// positive rate over every earlier event (of any role: they happened
// before it), shrunk towards the training base rate with the weight of
// `prior` events. Every model sees at least this information.
func UserRateBaseline(d *Data, role events.Role, prior float64) (Metrics, error) {
	if !d.Log.HasLabel {
		return Metrics{}, fmt.Errorf("%s: no outcomes to rank", d.Log.Path)
	}
	var trainPos, trainN float64
	for u, usr := range d.Log.Users {
		for i, e := range usr.Events {
			if d.Split[u][i] == events.Train {
				trainPos += float64(e.Label)
				trainN++
			}
		}
	}
	rate := trainPos / math.Max(trainN, 1)
	var p []float64
	var y []int
	for u, usr := range d.Log.Users {
		pos, n := 0.0, 0.0
		for i, e := range usr.Events {
			if d.Split[u][i] == role {
				p, y = append(p, (pos+prior*rate)/(n+prior)), append(y, int(e.Label))
			}
			pos += float64(e.Label)
			n++
		}
	}
	if len(p) == 0 {
		return Metrics{}, fmt.Errorf("%s: no %s targets", d.Log.Path, roleName(role))
	}
	return rankingMetrics(p, y)
}

// PopularityBaseline ranks, for each next-item target, every item the
// user has not interacted with before it by its count among the training
// events; its NLL is that of the add-one smoothed popularity distribution.
func PopularityBaseline(d *Data, role events.Role) (Metrics, error) {
	V := d.Log.Vocab.Items.Len()
	count := make([]float64, V)
	total := 0.0
	for u, usr := range d.Log.Users {
		for i, e := range usr.Events {
			if d.Split[u][i] == events.Train && e.Item > 0 {
				count[e.Item]++
				total++
			}
		}
	}
	met := Metrics{Task: TaskNext}
	var ranks []int
	var nll float64
	seen := newHistory(V)
	for u, usr := range d.Log.Users {
		for j, e := range usr.Events {
			if d.Split[u][j] != role || j == 0 {
				continue
			}
			if e.Item == 0 {
				met.Unscored++
				continue
			}
			seen.set(usr.Events[:j])
			ranks = append(ranks, RankOf(count, int(e.Item), seen.has))
			nll -= math.Log((count[e.Item] + 1) / (total + float64(V-1)))
		}
	}
	if len(ranks) == 0 {
		return met, fmt.Errorf("%s: no %s targets", d.Log.Path, roleName(role))
	}
	met.N = len(ranks)
	met.HR10, met.NDCG10, met.NLL = HitRate(ranks, 10), NDCG(ranks, 10), nll/float64(len(ranks))
	return met, nil
}
