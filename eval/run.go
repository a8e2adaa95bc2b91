package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/data"
	"romae/model"
)

// Options control a pass over a dataset.
type Options struct {
	BatchSize int
	MaskRatio float64 // pre-training models: fraction of tokens reconstructed
	Seed      uint64  // fixes the evaluation masks, so numbers are comparable across epochs
	Loss      model.LossOptions
}

// Evaluate computes the task's metrics on ds in evaluation mode (no
// dropout): masked-reconstruction MSE for pre-training models (with masks
// drawn from Seed), loss/accuracy/macro-F1 for classifiers, loss/MSE/RMSE
// for regressors. The loss is averaged per sample (per token for
// reconstruction and per-token regression), so batch size does not change it.
func Evaluate(m *model.Model[float32], ws *model.Workspace[float32], ds *data.Dataset, opt Options) (Metrics, error) {
	if len(ds.Samples) == 0 {
		return Metrics{}, fmt.Errorf("evaluate: dataset %q is empty", ds.Name)
	}
	bs := max(opt.BatchSize, 1)
	var bt *data.Batch
	var mask []bool
	rng := rand.New(rand.NewPCG(opt.Seed, 0xe7a1))
	var sum, weight float64
	var truth, pred []int
	K := m.Cfg.Outputs
	for lo := 0; lo < len(ds.Samples); lo += bs {
		idx := seq(lo, min(lo+bs, len(ds.Samples)))
		bt = data.Collate(bt, ds, idx)
		switch m.Cfg.Task {
		case model.TaskPretrain:
			mask = data.RandomMask(mask, bt, opt.MaskRatio, rng)
			loss, err := m.ForwardPretrain(ws, bt, mask, false, nil)
			if err != nil {
				return Metrics{}, err
			}
			n := float64(countValid(ws.QueryPad()))
			sum += loss * n
			weight += n
		default:
			loss, err := m.ForwardTask(ws, bt, opt.Loss, false, nil)
			if err != nil {
				return Metrics{}, err
			}
			n := float64(bt.B)
			if m.Cfg.Pool == model.PoolToken {
				n = float64(countValid(bt.Pad[:bt.B*bt.L]))
			}
			sum += loss * n
			weight += n
			if m.Cfg.Task == model.TaskClassify {
				out := ws.Output()
				for b := 0; b < bt.B; b++ {
					truth = append(truth, bt.Labels[b])
					pred = append(pred, Argmax(out[b*K:(b+1)*K]))
				}
			}
		}
	}
	met := Metrics{N: len(ds.Samples), Loss: sum / math.Max(weight, 1)}
	switch m.Cfg.Task {
	case model.TaskClassify:
		met.Confusion = Confusion(truth, pred, K)
		met.Accuracy, met.MacroF1 = Accuracy(met.Confusion), MacroF1(met.Confusion)
	default:
		met.MSE, met.RMSE = met.Loss, math.Sqrt(met.Loss)
	}
	return met, nil
}

// Predict returns each sample's head output: class probabilities for a
// classifier, predicted targets for a regressor ([N][outputs], or
// [N][tokens·outputs] for per-token regression).
func Predict(m *model.Model[float32], ws *model.Workspace[float32], ds *data.Dataset, batchSize int) ([][]float64, error) {
	if m.Cfg.Task == model.TaskPretrain {
		return nil, fmt.Errorf("predict needs a fine-tuned model; this is a pre-training model (use interpolate or embed)")
	}
	var out [][]float64
	var bt *data.Batch
	K := m.Cfg.Outputs
	for lo := 0; lo < len(ds.Samples); lo += max(batchSize, 1) {
		idx := seq(lo, min(lo+max(batchSize, 1), len(ds.Samples)))
		bt = data.Collate(bt, ds, idx)
		if _, err := m.ForwardTask(ws, bt, model.LossOptions{}, false, nil); err != nil {
			return nil, err
		}
		y := ws.Output()
		for b := 0; b < bt.B; b++ {
			switch {
			case m.Cfg.Task == model.TaskClassify:
				p := make([]float64, K)
				Softmax(p, y[b*K:(b+1)*K])
				out = append(out, p)
			case m.Cfg.Pool == model.PoolToken:
				n := bt.Lengths[b]
				out = append(out, widen(y[b*bt.L*K:(b*bt.L+n)*K]))
			default:
				out = append(out, widen(y[b*K:(b+1)*K]))
			}
		}
	}
	return out, nil
}

// Embed returns one pooled encoder embedding per sample, [N·d_model].
func Embed(m *model.Model[float32], ws *model.Workspace[float32], ds *data.Dataset, pool string, batchSize int) ([]float32, error) {
	var out, buf []float32
	var bt *data.Batch
	var err error
	for lo := 0; lo < len(ds.Samples); lo += max(batchSize, 1) {
		idx := seq(lo, min(lo+max(batchSize, 1), len(ds.Samples)))
		bt = data.Collate(bt, ds, idx)
		if buf, err = m.Embed(ws, bt, pool, buf); err != nil {
			return nil, err
		}
		out = append(out, buf...)
	}
	return out, nil
}

// Interpolate predicts values at queries[i] (positions [n_i·D]) for every
// sample i of ds, using all of that sample's tokens as context. Returns
// [N][n_i·values].
func Interpolate(m *model.Model[float32], ws *model.Workspace[float32], ds *data.Dataset, queries [][]float32, batchSize int) ([][]float32, error) {
	if len(queries) != len(ds.Samples) {
		return nil, fmt.Errorf("interpolate: %d query lists for %d samples", len(queries), len(ds.Samples))
	}
	D, C := m.Cfg.PosDims, m.Cfg.Values
	out := make([][]float32, len(ds.Samples))
	var bt *data.Batch
	var qPos []float32
	var qPad []bool
	for lo := 0; lo < len(ds.Samples); lo += max(batchSize, 1) {
		hi := min(lo+max(batchSize, 1), len(ds.Samples))
		bt = data.Collate(bt, ds, seq(lo, hi))
		Lq := 0
		for i := lo; i < hi; i++ {
			if len(queries[i])%D != 0 {
				return nil, fmt.Errorf("interpolate: sample %s: %d query coordinates is not a multiple of %d axes", ds.Samples[i].ID, len(queries[i]), D)
			}
			Lq = max(Lq, len(queries[i])/D)
		}
		if Lq == 0 {
			continue
		}
		qPos, qPad = resize(qPos, bt.B*Lq*D), resizeBool(qPad, bt.B*Lq)
		clear(qPos)
		for b := 0; b < bt.B; b++ {
			q := queries[lo+b]
			copy(qPos[b*Lq*D:], q)
			for j := 0; j < Lq; j++ {
				qPad[b*Lq+j] = j >= len(q)/D
			}
		}
		y, err := m.Interpolate(ws, bt, qPos, qPad, Lq)
		if err != nil {
			return nil, err
		}
		for b := 0; b < bt.B; b++ {
			n := len(queries[lo+b]) / D
			out[lo+b] = append([]float32(nil), y[b*Lq*C:(b*Lq+n)*C]...)
		}
	}
	return out, nil
}

func seq(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

func countValid(pad []bool) int {
	n := 0
	for _, p := range pad {
		if !p {
			n++
		}
	}
	return n
}

func widen(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func resize(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func resizeBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}
