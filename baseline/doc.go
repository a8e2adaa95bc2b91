// Package baseline holds the trivial and classical baselines that RoMAE's
// results are reported beside. A number means little without them: a
// classifier that barely beats the majority class or 1-NN DTW has not
// learnt what its accuracy suggests, and an interpolator is only as good as
// its margin over straight lines. Each baseline is defined exactly here so
// that results tables can cite it.
//
// # Layout
//
// A data.Sample is N tokens with C values and D position coordinates. One
// position axis is time (the Distance.TimeAxis / the *On constructors'
// timeAxis: 0 for LoadTS, DenseSeries and the PhysioNet loader, D-1 for
// LoadLongCSV's channel-axis layout). The remaining coordinates, if any,
// name a channel (band, sensor): tokens sharing them form one channel's
// series. With D == 1 the whole sample is one channel with C values per
// step.
//
// # Classification
//
// Majority: predict the most frequent class among the labelled training
// samples (ties: lowest class index). Its accuracy is the test share of that
// class.
//
// 1-NN: predict the label of the nearest labelled training sample (ties:
// lowest training index, as a plain scan with a strict "<" gives). Before
// any distance, each sample becomes an ordinary multivariate series: the
// time points are the sample's distinct observed times, and each time point
// carries, for every channel (all channels seen in train or test, sorted by
// coordinates) and every value slot, that channel's value, linearly
// interpolated in time from its own observations where it was not observed
// at that time (end values held; a channel absent from the sample takes the
// sample's mean over all its tokens). Tokens at a repeated time are
// averaged. For D == 1 this is just the tokens in time order, and for a
// complete channel-axis layout it is exactly the one-token-per-step series,
// so both layouts of the same data give the same distances.
//
// ED: for two series with the same time points, the sum over time points of
// the squared Euclidean distance between their value vectors, divided by the
// number of time points. Otherwise (unequal lengths, or irregular or
// dropped steps) both are first resampled by linear interpolation (end
// values held) onto a common grid of max(la, lb) evenly spaced times from
// the earlier start to the later end, i.e. compared in absolute time; with
// Distance.UniformScaling each is instead stretched over its own time span
// (the "uniform scaling" usual for gestures of different speeds). The
// division by the grid length puts pairs with different grids on one scale;
// on equal-length data it is a constant factor, so 1-NN decisions are those
// of the UCR archive's ED (whose published accuracies the tests reproduce).
//
// DTW: dependent multivariate dynamic time warping, as in the UCR archive:
// the least sum, over warping paths from the first to the last points with
// steps (1,0), (0,1), (1,1), of the squared Euclidean distances between the
// value vectors the path matches (no square root; it does not change the
// neighbour). DTW uses the order of the time points, not their times.
// DTW(1) has no window: the archive's "DTW_full" (its "DTW_R" instead uses a
// Sakoe-Chiba window learnt by leave-one-out on the training set; DTW(r)
// gives a window of floor(r*max(la, lb)) cells, widened to |la-lb| for
// unequal lengths so that the end is reachable, but no window is learnt
// here). The search is exact but fast: each candidate's straight-line
// warping path (the diagonal for equal lengths) bounds its DTW from above,
// candidates are visited cheapest path first, LB_Kim and (for narrow
// windows) LB_Keogh screen them, and the DP abandons and prunes cells above
// the best distance so far (PrunedDTW), all on reused buffers, over
// GOMAXPROCS goroutines.
//
// ClassificationTable runs the three for a results table.
//
// # Regression
//
// TrainingMean: predict every target with its training mean (per target
// dimension; over tokens for per-token targets) and report the MSE per
// value. NearestNeighborRegression predicts a series' targets by those of
// its nearest training series under ED or DTW (the same search as the
// classifier), as the TSER archive's 1-NN regressors do. RegressionTable
// runs them for a results table.
//
// # Interpolation
//
// An Interpolator reconstructs one series at query positions from its
// observed tokens; InterpolationMSE scores it per value over the hidden
// tokens. Each query is answered from the observed tokens of its own
// channel, each value slot separately, tokens at a repeated time averaged:
// Linear draws straight lines between the nearest observations before and
// after it and holds the end values beyond them; Spline is the natural
// cubic spline through them (a line with two distinct times, a constant with
// one; end values held rather than the cubic extrapolated); ChannelMean is
// the mean of the channel's observed tokens. A channel with no observation
// falls back to the mean of all observed tokens of the series, and a series
// with none to 0. Linear, Spline and ChannelMean take time on axis 0;
// LinearOn, SplineOn and ChannelMeanOn take any axis.
package baseline
