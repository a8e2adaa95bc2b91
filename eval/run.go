package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/data"
	"romae/internal/bufs"
	"romae/model"
	"romae/nn"
)

// Options control a pass over a dataset.
type Options struct {
	BatchSize int
	MaskRatio float64 // pre-training models: fraction of tokens reconstructed
	Seed      uint64  // fixes the evaluation masks, so numbers are comparable across epochs
	Loss      model.LossOptions
	// TargetStats, when regression targets were standardised for training,
	// maps predictions and targets back so MSE and RMSE are in the targets'
	// own units (the loss stays in training units).
	TargetStats *data.Stats
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
	var nll float64 // plain cross-entropy, when the training loss is not
	var nLabelled int
	plain := m.Cfg.Task == model.TaskClassify && (opt.Loss.LabelSmoothing > 0 || opt.Loss.ClassWeights != nil)
	var truth, pred []int
	var se float64 // squared error in target units (TargetStats)
	var nse int
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
			if m.Cfg.Task == model.TaskRegress && opt.TargetStats != nil {
				e, k := unscaledSquaredError(ws.Output(), bt, opt.TargetStats)
				se, nse = se+e, nse+k
			}
			if m.Cfg.Task == model.TaskClassify {
				out := ws.Output()
				for b := 0; b < bt.B; b++ {
					truth = append(truth, bt.Labels[b])
					pred = append(pred, Argmax(out[b*K:(b+1)*K]))
					if plain && bt.Labels[b] >= 0 {
						nll += nn.LogSumExp(out[b*K:(b+1)*K]) - float64(out[b*K+bt.Labels[b]])
						nLabelled++
					}
				}
			}
		}
	}
	met := Metrics{N: len(ds.Samples), Loss: sum / math.Max(weight, 1)}
	if plain {
		met.Objective, met.Loss = met.Loss, nll/float64(max(nLabelled, 1))
	}
	switch m.Cfg.Task {
	case model.TaskClassify:
		met.Confusion = Confusion(truth, pred, K)
		met.Accuracy, met.MacroF1 = Accuracy(met.Confusion), MacroF1(met.Confusion)
	case model.TaskRegress:
		met.MSE = met.Loss
		if opt.TargetStats != nil {
			met.MSE = se / float64(max(nse, 1))
		}
		met.RMSE = math.Sqrt(met.MSE)
	default:
		met.MSE, met.RMSE = met.Loss, math.Sqrt(met.Loss)
	}
	return met, nil
}

// unscaledSquaredError sums (prediction − target)² over bt's valid target
// values after mapping both back with st (y·std + mean per target slot),
// and counts them. out is the regression head's output for bt.
func unscaledSquaredError(out []float32, bt *data.Batch, st *data.Stats) (float64, int) {
	K := bt.TargetDim
	var se float64
	n := 0
	for b := 0; b < bt.B; b++ {
		rows, stride := 1, K
		if bt.TargetPerToken {
			rows, stride = bt.Lengths[b], bt.L*K
		}
		for r := 0; r < rows; r++ {
			for k := 0; k < K; k++ {
				i := b*stride + r*K + k
				e := (float64(out[i]) - float64(bt.Targets[i])) * st.Std[k]
				se += e * e
				n++
			}
		}
	}
	return se, n
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
	for i, p := range out {
		if err := allFinite(p, ds, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// allFinite says which sample's outputs v are not finite: finite weights
// can still overflow (a diverged run, a damaged checkpoint), and a NaN must
// not reach a prediction file as a number.
func allFinite[T float32 | float64](v []T, ds *data.Dataset, i int) error {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("sample %d (%s): the model's outputs are not finite (%v): its weights overflow on it (a diverged run or a damaged checkpoint?)", i, ds.Samples[i].ID, x)
		}
	}
	return nil
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
		for b := range bt.B {
			if err := allFinite(buf[b*len(buf)/bt.B:(b+1)*len(buf)/bt.B], ds, lo+b); err != nil {
				return nil, err
			}
		}
		out = append(out, buf...)
	}
	return out, nil
}

// Interpolate predicts values at queries[i] (positions [n_i·D]) for every
// sample i of ds, using all of that sample's tokens as context. Returns
// [N][n_i·values]. With a model whose query_attention is "independent"
// each prediction depends on the sample's tokens and its own position only,
// not on the other queries or the batching; with "all" (the paper's
// decoder, and every checkpoint written before the option) the queries of
// one sample attend to each other, so asking for a point alone or within a
// grid gives different values (docs/interpolation.md).
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
		qPos, qPad = bufs.Resize(qPos, bt.B*Lq*D), bufs.Resize(qPad, bt.B*Lq)
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
			if err := allFinite(out[lo+b], ds, lo+b); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// InterpolationMSE predicts every token of hidden from the tokens of
// observed (the same samples in the same order) and returns the MSE per
// value against hidden's values, with the per-sample predictions. With
// stats, predictions and truth are both mapped back to data units first.
// Blend.MixedMSE scores the same predictions mixed with linear and spline
// interpolation.
func InterpolationMSE(m *model.Model[float32], observed, hidden *data.Dataset, stats *data.Stats, batchSize int) (float64, [][]float32, error) {
	if len(observed.Samples) != len(hidden.Samples) {
		return 0, nil, fmt.Errorf("interpolation: %d observed series and %d hidden ones", len(observed.Samples), len(hidden.Samples))
	}
	for i, s := range hidden.Samples {
		if s.ID != observed.Samples[i].ID {
			return 0, nil, fmt.Errorf("interpolation: series %d is %q among the observed and %q among the hidden", i, observed.Samples[i].ID, s.ID)
		}
	}
	pred, err := Interpolate(m, m.NewWorkspace(), observed, hiddenQueries(hidden), batchSize)
	if err != nil {
		return 0, nil, err
	}
	return hiddenMSE(pred, hidden, stats), pred, nil
}

// hiddenQueries is the positions of each of hidden's samples.
func hiddenQueries(hidden *data.Dataset) [][]float32 {
	q := make([][]float32, len(hidden.Samples))
	for i, s := range hidden.Samples {
		q[i] = s.Positions
	}
	return q
}

// hiddenMSE is the MSE per value of pred (per sample, at its tokens)
// against hidden's values, in data units with stats.
func hiddenMSE(pred [][]float32, hidden *data.Dataset, stats *data.Stats) float64 {
	var se float64
	n := 0
	c, d := hidden.C, hidden.D
	for i, s := range hidden.Samples {
		for j, v := range s.Values {
			p, t := float64(pred[i][j]), float64(v)
			if stats != nil {
				mean, std := stats.At(j%c, s.Positions[j/c*d:(j/c+1)*d])
				p, t = p*std+mean, t*std+mean
			}
			se += (p - t) * (p - t)
			n++
		}
	}
	return se / float64(max(n, 1))
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
