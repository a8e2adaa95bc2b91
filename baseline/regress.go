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
