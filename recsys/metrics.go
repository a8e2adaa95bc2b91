package recsys

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Metrics are one evaluation's numbers; fields that do not apply to the
// task are zero and left out of JSON (MarshalJSON).
type Metrics struct {
	Task string `json:"task"`
	N    int    `json:"n"` // targets scored
	// ranking
	BaseRate float64 `json:"base_rate"` // fraction of positive outcomes
	LogLoss  float64 `json:"log_loss"`
	NE       float64 `json:"ne"` // log loss / entropy of the base rate
	AUC      float64 `json:"auc"`
	// next
	HR10   float64 `json:"hr@10"`
	NDCG10 float64 `json:"ndcg@10"`
	NLL    float64 `json:"nll"` // full-softmax negative log-likelihood of the next item
	// Unscored counts next-item targets left out because their item is
	// unknown to the model's vocabulary.
	Unscored int `json:"unscored"`
}

// MarshalJSON writes the task's own fields, zeros included (an NDCG of 0
// is a result, not a missing field).
func (m Metrics) MarshalJSON() ([]byte, error) {
	if m.Task == TaskRanking {
		return json.Marshal(struct {
			Task     string  `json:"task"`
			N        int     `json:"n"`
			BaseRate float64 `json:"base_rate"`
			LogLoss  float64 `json:"log_loss"`
			NE       float64 `json:"ne"`
			AUC      float64 `json:"auc"`
		}{m.Task, m.N, m.BaseRate, m.LogLoss, m.NE, m.AUC})
	}
	return json.Marshal(struct {
		Task     string  `json:"task"`
		N        int     `json:"n"`
		HR10     float64 `json:"hr@10"`
		NDCG10   float64 `json:"ndcg@10"`
		NLL      float64 `json:"nll"`
		Unscored int     `json:"unscored"`
	}{m.Task, m.N, m.HR10, m.NDCG10, m.NLL, m.Unscored})
}

// probEps bounds probabilities away from 0 and 1 in LogLoss, as
// scikit-learn's log_loss does, so one confident mistake is a large finite
// loss rather than +Inf.
const probEps = 1e-15

// LogLoss is the mean binary cross-entropy −[y log p + (1−y) log(1−p)] in
// nats, p clipped to [1e-15, 1−1e-15].
func LogLoss(p []float64, y []int) float64 {
	var s float64
	for i, pi := range p {
		pi = math.Min(math.Max(pi, probEps), 1-probEps)
		if y[i] == 1 {
			s -= math.Log(pi)
		} else {
			s -= math.Log(1 - pi)
		}
	}
	return s / float64(len(p))
}

// BinaryEntropy is −[r log r + (1−r) log(1−r)] in nats: the log loss of
// always predicting the base rate r.
func BinaryEntropy(r float64) float64 {
	if r <= 0 || r >= 1 {
		return 0
	}
	return -(r*math.Log(r) + (1-r)*math.Log(1-r))
}

// NE is the normalized entropy: the log loss divided by the entropy of the
// evaluated labels' base rate, so 1 is "no better than the base rate" and
// lower is better. It is undefined when every label is the same.
func NE(logLoss float64, y []int) (float64, error) {
	h := BinaryEntropy(baseRate(y))
	if h == 0 {
		return 0, fmt.Errorf("normalized entropy: all %d labels are equal", len(y))
	}
	return logLoss / h, nil
}

func baseRate(y []int) float64 {
	pos := 0
	for _, v := range y {
		pos += v
	}
	return float64(pos) / float64(max(len(y), 1))
}

// AUC is the area under the ROC curve, the probability that a random
// positive scores above a random negative (ties count one half): the
// Mann–Whitney statistic from average ranks.
func AUC(score []float64, y []int) (float64, error) {
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return score[idx[a]] < score[idx[b]] })
	var rankSum float64
	pos := 0
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && score[idx[j]] == score[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1 … j share their mean
		for k := i; k < j; k++ {
			if y[idx[k]] == 1 {
				rankSum += avg
				pos++
			}
		}
		i = j
	}
	neg := len(score) - pos
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("AUC: %d positives and %d negatives, need both", pos, neg)
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg)), nil
}

// RankOf is the 0-based rank of item target among the candidates 1 …
// len(score)−1 that exclude does not remove: the number of other
// candidates scoring at least as high. Ties count against the target, so
// a model that scores everything alike ranks it last, not first.
func RankOf(score []float64, target int, exclude func(item int) bool) int {
	st, rank := score[target], 0
	for i := 1; i < len(score); i++ {
		if i != target && score[i] >= st && (exclude == nil || !exclude(i)) {
			rank++
		}
	}
	return rank
}

// HitRate is the fraction of 0-based ranks below k.
func HitRate(ranks []int, k int) float64 {
	hit := 0
	for _, r := range ranks {
		if r < k {
			hit++
		}
	}
	return float64(hit) / float64(len(ranks))
}

// NDCG is the mean of 1/log2(rank+2) over ranks below k (0 otherwise):
// one relevant item per target, so the ideal DCG is 1.
func NDCG(ranks []int, k int) float64 {
	var s float64
	for _, r := range ranks {
		if r < k {
			s += 1 / math.Log2(float64(r)+2)
		}
	}
	return s / float64(len(ranks))
}
