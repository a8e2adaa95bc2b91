// Package eval runs trained models over datasets — evaluation, prediction,
// embedding and interpolation — and computes the metrics romae reports.
package eval

import "math"

// Metrics are the numbers reported for one pass over a dataset. Fields that
// do not apply to the task are zero and omitted from JSON.
type Metrics struct {
	N    int     `json:"n"`
	Loss float64 `json:"loss"` // cross-entropy, MSE or reconstruction MSE, as evaluate reports it
	// Objective is the training loss's own form on this data when it is
	// not Loss (a classifier trained with label smoothing or class
	// weights): what best-epoch selection minimises, so the epoch kept does
	// not depend on whether the numbers are reported plainly.
	Objective float64 `json:"objective,omitempty"`
	Accuracy  float64 `json:"accuracy,omitempty"`
	MacroF1   float64 `json:"macro_f1,omitempty"`
	MSE       float64 `json:"mse,omitempty"`
	RMSE      float64 `json:"rmse,omitempty"`
	Confusion [][]int `json:"confusion,omitempty"` // [true][predicted]
}

// Confusion counts predictions per (true, predicted) class.
func Confusion(truth, pred []int, classes int) [][]int {
	c := make([][]int, classes)
	for i := range c {
		c[i] = make([]int, classes)
	}
	for i, t := range truth {
		if t >= 0 && t < classes && pred[i] >= 0 && pred[i] < classes {
			c[t][pred[i]]++
		}
	}
	return c
}

// Accuracy is the fraction on the confusion matrix's diagonal.
func Accuracy(conf [][]int) float64 {
	var right, all int
	for i, row := range conf {
		for j, n := range row {
			all += n
			if i == j {
				right += n
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(right) / float64(all)
}

// MacroF1 averages per-class F1 over the classes present in the truth or
// the predictions (sklearn's f1_score(average="macro") with absent classes
// dropped, so a class nobody has does not count as F1 = 0).
func MacroF1(conf [][]int) float64 {
	var sum float64
	n := 0
	for k := range conf {
		tp, fn, fp := conf[k][k], 0, 0
		for j := range conf {
			if j != k {
				fn += conf[k][j]
				fp += conf[j][k]
			}
		}
		if tp+fn+fp == 0 {
			continue
		}
		n++
		sum += 2 * float64(tp) / float64(2*tp+fn+fp)
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Softmax writes the probabilities of one row of logits.
func Softmax(dst []float64, logits []float32) {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for i, v := range logits {
		dst[i] = math.Exp(float64(v) - mx)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
}

// Argmax returns the index of the largest value.
func Argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
