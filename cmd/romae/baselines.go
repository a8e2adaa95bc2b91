package main

import (
	"fmt"
	"os"

	"romae/baseline"
	"romae/data"
	"romae/model"
)

// taskBaselines runs the baselines of a fine-tuned model's task on the data
// it was evaluated on, trained on trainPath (default: the checkpoint's own
// training file), read with the checkpoint's data spec so they see what the
// model saw: majority class, 1-NN Euclidean and 1-NN DTW for classifiers,
// the training mean for regressors.
func taskBaselines(u *using, l *loaded, trainPath string) (map[string]float64, error) {
	if trainPath == "" {
		trainPath = l.spec.Train
	}
	if trainPath == "" {
		return nil, fmt.Errorf("--baselines: %s does not name its training file; give --train-data FILE", u.model)
	}
	if _, err := os.Stat(trainPath); err != nil {
		return nil, fmt.Errorf("--baselines: training data: %w (give --train-data FILE)", err)
	}
	tr, err := l.spec.Read(trainPath)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	switch l.m.Cfg.Task {
	case model.TaskClassify:
		rows, err := baseline.ClassificationTable(tr, l.ds, l.ds.TimeAxis)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Name] = r.Accuracy
		}
	case model.TaskRegress:
		mse, err := baseline.TrainingMean(unscaledTargets(tr, l.spec.TargetStats), unscaledTargets(l.ds, l.spec.TargetStats))
		if err != nil {
			return nil, err
		}
		out["training_mean_mse"] = mse
	default:
		return nil, fmt.Errorf("--baselines for a pre-training model needs --hidden (interpolation)")
	}
	return out, nil
}

// interpolationBaselines is the MSE, in data units, of linear and spline
// interpolation between each series' observed neighbours and of its
// per-channel mean.
func interpolationBaselines(observed, hidden *data.Dataset, stats *data.Stats) (map[string]float64, error) {
	observed, hidden = unscaledValues(observed, stats), unscaledValues(hidden, stats)
	out := map[string]float64{}
	for name, f := range map[string]baseline.Interpolator{
		"linear":       baseline.LinearOn(observed.TimeAxis),
		"spline":       baseline.SplineOn(observed.TimeAxis),
		"channel_mean": baseline.ChannelMeanOn(observed.TimeAxis),
	} {
		mse, err := baseline.InterpolationMSE(f, observed, hidden)
		if err != nil {
			return nil, err
		}
		out[name+"_mse"] = mse
	}
	return out, nil
}

// unscaledValues is a copy of ds with its values mapped back to data
// units (ds itself when stats is nil).
func unscaledValues(ds *data.Dataset, stats *data.Stats) *data.Dataset {
	if stats == nil {
		return ds
	}
	out := *ds
	out.Samples = make([]data.Sample, len(ds.Samples))
	for i, s := range ds.Samples {
		s.Values = append([]float32(nil), s.Values...)
		stats.Invert(s.Values) // stats were checked against C on load
		out.Samples[i] = s
	}
	return &out
}

// unscaledTargets is unscaledValues for regression targets.
func unscaledTargets(ds *data.Dataset, stats *data.Stats) *data.Dataset {
	if stats == nil {
		return ds
	}
	out := *ds
	out.Samples = make([]data.Sample, len(ds.Samples))
	for i, s := range ds.Samples {
		s.Target = append([]float32(nil), s.Target...)
		stats.Invert(s.Target)
		out.Samples[i] = s
	}
	return &out
}
