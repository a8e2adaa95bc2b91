package baseline

import (
	"errors"
	"fmt"

	"romae/data"
)

// Interpolator predicts the values of one series at query positions from its
// observed tokens: obsValues [No*C], obsPos [No*D], qPos [Nq*D]; it returns
// [Nq*C]. It is the shape of RoMAE's own interpolation task (reconstruct the
// hidden tokens from the visible ones), so InterpolationMSE scores a
// baseline and the model on exactly the same tokens.
type Interpolator func(obsValues, obsPos []float32, C, D int, qPos []float32) []float32

// Linear interpolates with time on position axis 0, the axis LoadTS
// (channel-axis layout), PhysioNet and DenseSeries use; see LinearOn.
func Linear(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
	return interpolate(obsValues, obsPos, C, D, 0, qPos, (*group).linearAt)
}

// Spline is the natural cubic spline with time on position axis 0; see
// SplineOn.
func Spline(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
	return interpolate(obsValues, obsPos, C, D, 0, qPos, (*group).splineAt)
}

// ChannelMean is the per-channel mean with time on position axis 0; see
// ChannelMeanOn. (With D == 1 the time axis plays no part.)
func ChannelMean(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
	return interpolate(obsValues, obsPos, C, D, 0, qPos, meanAt)
}

// LinearOn returns the linear interpolator for a layout whose time is
// position axis timeAxis (D-1 for LoadLongCSV's channel-axis layout). A
// query is answered from the observed tokens that share every other
// position coordinate (the same channel or band; all tokens when D == 1):
// straight-line interpolation in time between the nearest observed tokens
// before and after it, the nearest end value beyond the observed range, each
// value slot separately. Tokens observed at the same time are averaged
// first. A query whose channel has no observed token gets the mean of all
// observed tokens of the series (0 when nothing is observed). The returned
// function panics if timeAxis is outside [0, D).
func LinearOn(timeAxis int) Interpolator {
	return func(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
		return interpolate(obsValues, obsPos, C, D, timeAxis, qPos, (*group).linearAt)
	}
}

// SplineOn returns the natural cubic spline interpolator (second derivative
// zero at both ends) through each channel's observed (time, value) points,
// with the grouping, duplicate-time averaging and fallbacks of LinearOn.
// Channels with two distinct observed times get the straight line, with one
// the constant. Beyond the observed range the end value is held rather than
// the spline extrapolated: a cubic's extrapolation grows without bound and
// would make the baseline look worse than any sensible practitioner's.
func SplineOn(timeAxis int) Interpolator {
	return func(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
		return interpolate(obsValues, obsPos, C, D, timeAxis, qPos, (*group).splineAt)
	}
}

// ChannelMeanOn returns the interpolator that answers every query with the
// mean of its channel's observed tokens (per value slot), ignoring time:
// the floor any time-aware method must beat.
func ChannelMeanOn(timeAxis int) Interpolator {
	return func(obsValues, obsPos []float32, C, D int, qPos []float32) []float32 {
		return interpolate(obsValues, obsPos, C, D, timeAxis, qPos, meanAt)
	}
}

func meanAt(gr *group, _ float64, _, k int) float64 { return gr.mean[k] }

// interpolate groups the observations once and answers every query with at.
func interpolate(obsValues, obsPos []float32, c, d, timeAxis int, qPos []float32,
	at func(gr *group, t float64, c, k int) float64) []float32 {
	if err := checkTimeAxis(timeAxis, d); err != nil {
		panic(err)
	}
	if c < 1 || len(obsValues)%c != 0 || len(obsPos) != len(obsValues)/c*d || len(qPos)%d != 0 {
		panic(fmt.Sprintf("baseline: interpolate: inconsistent shapes: %d values, %d positions, %d query positions for C=%d, D=%d",
			len(obsValues), len(obsPos), len(qPos), c, d))
	}
	g := newGrouping(obsValues, obsPos, c, d, timeAxis)
	nq := len(qPos) / d
	out := make([]float32, nq*c)
	for q := range nq {
		p := qPos[q*d : (q+1)*d]
		gr := g.lookup(p)
		for k := range c {
			if gr == nil {
				out[q*c+k] = float32(g.fallback[k])
			} else {
				out[q*c+k] = float32(at(gr, float64(p[timeAxis]), c, k))
			}
		}
	}
	return out
}

// InterpolationMSE is the mean squared error per value of f over every token
// of hidden, each sample's prediction made from the same-index sample of
// observed alone. observed and hidden must hold the same series in the same
// order with the same C and D (the split RoMAE's interpolation evaluation
// makes); a sample without hidden tokens contributes nothing.
func InterpolationMSE(f Interpolator, observed, hidden *data.Dataset) (float64, error) {
	if len(observed.Samples) != len(hidden.Samples) {
		return 0, fmt.Errorf("baseline: InterpolationMSE: %d observed samples but %d hidden", len(observed.Samples), len(hidden.Samples))
	}
	if observed.C != hidden.C || observed.D != hidden.D {
		return 0, fmt.Errorf("baseline: InterpolationMSE: observed C, D = %d, %d but hidden %d, %d", observed.C, observed.D, hidden.C, hidden.D)
	}
	sum, n := 0.0, 0
	for i := range hidden.Samples {
		h := &hidden.Samples[i]
		if len(h.Values) == 0 {
			continue
		}
		o := &observed.Samples[i]
		pred := f(o.Values, o.Positions, observed.C, observed.D, h.Positions)
		if len(pred) != len(h.Values) {
			return 0, fmt.Errorf("baseline: InterpolationMSE: sample %d: interpolator returned %d values, want %d", i, len(pred), len(h.Values))
		}
		for j, v := range h.Values {
			e := float64(pred[j]) - float64(v)
			sum += e * e
		}
		n += len(h.Values)
	}
	if n == 0 {
		return 0, errors.New("baseline: InterpolationMSE: no hidden values")
	}
	return sum / float64(n), nil
}
