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
// training file), both read with the checkpoint's data spec but without its
// value scaling or patching — the series the model sees, unscaled as the UCR/UEA
// archive reports its 1-NN numbers: majority class, 1-NN Euclidean and 1-NN
// DTW for classifiers; the training mean, 1-NN Euclidean and 1-NN DTW for
// regressors (MSE in target units).
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
	raw := *l.spec
	raw.Stats, raw.Source.SeriesPatch = nil, 0 // series as observed: unscaled, unpatched, times as written
	raw.Source.TimeOrigin, raw.Source.TimeUnit = "", 0
	raw.TargetStats = nil
	tr, err := raw.Read(trainPath)
	if err != nil {
		return nil, err
	}
	rawTest := raw
	rawTest.Source = u.source(raw.Source)
	te, err := rawTest.Read(u.data)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	if c := baseline.FullDTWCost(tr, te); c > baseline.MaxFullDTW {
		fmt.Fprintf(os.Stderr, "romae: --baselines: 1-NN DTW left out: full-window DTW of every test series against every training series is %.2g cell updates (× values per cell + 2), past the %.0g bound (more than a few minutes on two cores); the other baselines follow\n", c, baseline.MaxFullDTW)
	} else if c > baseline.MaxFullDTW/10 {
		fmt.Fprintf(os.Stderr, "romae: --baselines: full-window 1-NN DTW of every test series against every training series (%.2g cell updates × values per cell + 2) takes a minute or more; the results follow\n", c)
	}
	switch l.m.Cfg.Task {
	case model.TaskClassify:
		rows, err := baseline.ClassificationTable(tr, te, te.TimeAxis)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Name] = r.Accuracy
		}
	case model.TaskRegress:
		if out, err = baseline.RegressionTable(tr, te, te.TimeAxis); err != nil {
			return nil, err
		}
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
		stats.Invert(s.Values, s.Positions, ds.D) // stats were checked against C on load
		out.Samples[i] = s
	}
	return &out
}
