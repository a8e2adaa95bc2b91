package train

import (
	"fmt"
	"math/rand/v2"

	"romae/data"
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
