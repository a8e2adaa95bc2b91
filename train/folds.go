package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"romae/data"
	"romae/eval"
	"romae/model"
)

// Folds splits ds into k stratified folds (data.Split) drawn with seed and
// returns, for fold i, the samples of every other fold (fits[i]) and the
// fold itself (vals[i]): the k train/validation pairs of k-fold
// cross-fitting. Every sample is in exactly one vals[i].
func Folds(ds *data.Dataset, k int, seed uint64) (fits, vals []*data.Dataset) {
	shares := make([]float64, k)
	for i := range shares {
		shares[i] = 1 / float64(k)
	}
	vals = data.Split(ds, shares, rand.New(rand.NewPCG(seed, 0x5911)))
	for i := range vals {
		var rest []*data.Dataset
		for j, v := range vals {
			if j != i {
				rest = append(rest, v)
			}
		}
		fits = append(fits, data.Concat(rest...))
	}
	return fits, vals
}

// SaveEnsemble loads the model each run directory in dirs keeps, combines
// them (model.NewEnsemble: outputs averaged) and writes the ensemble to
// path with the first run's checkpoint metadata — the data spec and
// provenance every member shares — without its training state.
func SaveEnsemble(dirs []string, path string) (*model.Model[float32], error) {
	members := make([]*model.Model[float32], len(dirs))
	var first *model.Checkpoint
	for i, dir := range dirs {
		m, ck, err := model.Load[float32](dir)
		if err != nil {
			return nil, err
		}
		members[i] = m
		if i == 0 {
			first = ck
		}
	}
	ens, err := model.NewEnsemble(members)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := map[string]string{}
	for k, v := range first.Meta {
		if k != StateMeta {
			meta[k] = v
		}
	}
	return ens, ens.Save(path, meta, nil)
}

// OutOfFold pools the fold models' validation metrics (each fold's kept
// epoch) into metrics over every training series: confusion matrices
// summed, losses and squared errors weighted by fold size; nil when a fold
// has none.
func OutOfFold(results []*Result, task string) *eval.Metrics {
	var cv eval.Metrics
	var mse float64
	for _, r := range results {
		b := r.Best
		if b == nil {
			return nil
		}
		cv.N += b.N
		cv.Loss += b.Loss * float64(b.N)
		mse += b.MSE * float64(b.N)
		if b.Confusion != nil {
			if cv.Confusion == nil {
				cv.Confusion = make([][]int, len(b.Confusion))
				for i := range cv.Confusion {
					cv.Confusion[i] = make([]int, len(b.Confusion))
				}
			}
			for i, row := range b.Confusion {
				for j, c := range row {
					cv.Confusion[i][j] += c
				}
			}
		}
	}
	if cv.N == 0 {
		return nil
	}
	cv.Loss /= float64(cv.N)
	switch task {
	case model.TaskClassify:
		cv.Accuracy, cv.MacroF1 = eval.Accuracy(cv.Confusion), eval.MacroF1(cv.Confusion)
	case model.TaskRegress:
		cv.MSE = mse / float64(cv.N)
		cv.RMSE = math.Sqrt(cv.MSE)
	}
	return &cv
}
