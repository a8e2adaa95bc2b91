package baseline

import (
	"errors"
	"fmt"

	"romae/data"
)

// TrainingMean is the mean squared error per target value on test of the
// constant predictor that outputs the training mean of each target
// dimension. For TargetPerToken datasets the mean is over every training
// token and every test token is scored; otherwise it is over training
// samples. It is the regression counterpart of Majority: an R² of zero,
// which any model must beat to have learnt anything.
func TrainingMean(train, test *data.Dataset) (float64, error) {
	td := train.TargetDim
	if td == 0 {
		return 0, errors.New("baseline: TrainingMean: training set has no regression targets")
	}
	if test.TargetDim != td || test.TargetPerToken != train.TargetPerToken {
		return 0, fmt.Errorf("baseline: TrainingMean: train targets (dim %d, per token %v) and test targets (dim %d, per token %v) differ",
			td, train.TargetPerToken, test.TargetDim, test.TargetPerToken)
	}
	mean := make([]float64, td)
	rows := 0
	for i := range train.Samples {
		t := train.Samples[i].Target
		for r := 0; r+td <= len(t); r += td {
			for k := range td {
				mean[k] += float64(t[r+k])
			}
			rows++
		}
	}
	if rows == 0 {
		return 0, errors.New("baseline: TrainingMean: no training targets")
	}
	for k := range mean {
		mean[k] /= float64(rows)
	}
	sum, n := 0.0, 0
	for i := range test.Samples {
		for j, v := range test.Samples[i].Target {
			e := float64(v) - mean[j%td]
			sum += e * e
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("baseline: TrainingMean: no test targets")
	}
	return sum / float64(n), nil
}

// NearestNeighborRegression is the mean squared error per target value on
// test of predicting each test sample's targets by those of its nearest
// training sample under dist (the 1-NN regressors of the TSER archive's
// benchmark, Tan et al. 2021), and the index in train.Samples of each
// neighbour. It needs one target vector per sample (not TargetPerToken):
// series of different lengths have no token-wise correspondence.
func NearestNeighborRegression(train, test *data.Dataset, dist Distance) (float64, []int, error) {
	td := train.TargetDim
	switch {
	case td == 0:
		return 0, nil, errors.New("baseline: NearestNeighborRegression: training set has no regression targets")
	case train.TargetPerToken || test.TargetPerToken:
		return 0, nil, errors.New("baseline: NearestNeighborRegression: targets per token have no nearest-series counterpart")
	case test.TargetDim != td:
		return 0, nil, fmt.Errorf("baseline: NearestNeighborRegression: train targets have %d values, test %d", td, test.TargetDim)
	case len(test.Samples) == 0:
		return 0, nil, errors.New("baseline: empty test set")
	}
	for i := range test.Samples {
		if len(test.Samples[i].Target) != td {
			return 0, nil, fmt.Errorf("baseline: test sample %d (id %q) has no target", i, test.Samples[i].ID)
		}
	}
	nb, err := nearestNeighbors(train, test, dist, "NearestNeighborRegression: no training sample with a target",
		func(s *data.Sample) bool { return len(s.Target) == td })
	if err != nil {
		return 0, nil, err
	}
	sum := 0.0
	for q, i := range nb {
		for k, v := range test.Samples[q].Target {
			e := float64(v) - float64(train.Samples[i].Target[k])
			sum += e * e
		}
	}
	return sum / float64(len(nb)*td), nb, nil
}

// RegressionTable runs the regression baselines results tables show beside
// RoMAE, as name → test MSE per target value: the training mean, and for
// per-sample targets 1-NN ED and 1-NN DTW with the full window
// ("training_mean_mse", "1nn_ed_mse", "1nn_dtw_mse"; DTW only when
// FullDTWCost is within MaxFullDTW). timeAxis
// is the position axis holding time (0 for LoadTS data).
func RegressionTable(train, test *data.Dataset, timeAxis int) (map[string]float64, error) {
	mse, err := TrainingMean(train, test)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{"training_mean_mse": mse}
	if train.TargetPerToken {
		return out, nil
	}
	for key, d := range map[string]Distance{"1nn_ed_mse": ED(), "1nn_dtw_mse": DTW(1)} {
		if d.DTW && FullDTWCost(train, test) > MaxFullDTW {
			continue
		}
		d.TimeAxis = timeAxis
		mse, _, err := NearestNeighborRegression(train, test, d)
		if err != nil {
			return nil, err
		}
		out[key] = mse
	}
	return out, nil
}
