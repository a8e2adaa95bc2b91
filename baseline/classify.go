package baseline

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"romae/data"
	"romae/internal/bufs"
)

// Result is a classifier's score on a test set.
type Result struct {
	Accuracy    float64 // Correct / N
	Correct     int
	N           int   // number of test samples
	Predictions []int // per test sample, an index into train.Classes
	// Neighbors is, for NearestNeighbor, the index in train.Samples of each
	// test sample's nearest neighbour (nil for Majority).
	Neighbors []int
}

// Distance selects the 1-NN distance. Build it with ED or DTW rather than by
// hand; TimeAxis may then be set for layouts whose time is not position
// axis 0.
type Distance struct {
	// DTW selects dynamic time warping; false is the Euclidean distance.
	DTW bool
	// Window is the Sakoe-Chiba half-width as a fraction of the longer
	// series' length (DTW only): floor(Window*max(la, lb)) cells, at least
	// |la - lb|; >= 1 is unconstrained.
	Window float64
	// TimeAxis is the position axis holding time: 0 for everything LoadTS,
	// DenseSeries and the PhysioNet loader produce, D-1 for LoadLongCSV's
	// channel-axis layout. The other axes name channels (see the package
	// documentation).
	TimeAxis int
	// UniformScaling makes ED compare series of different time grids by
	// stretching each over its own time span, instead of on the shared
	// absolute time span (see the package documentation).
	UniformScaling bool

	exhaustive bool // tests: no lower bounds, no early abandoning
}

// ED is the Euclidean distance as defined in the package documentation.
func ED() Distance { return Distance{} }

// DTW is dependent multivariate DTW with a Sakoe-Chiba window of the given
// fraction of the series length; DTW(1) is the unconstrained "DTW_full" of
// the UCR archive.
func DTW(window float64) Distance { return Distance{DTW: true, Window: window} }

// Name is how results tables label the 1-NN classifier using d.
func (d Distance) Name() string {
	if !d.DTW {
		if d.UniformScaling {
			return "1-NN ED (uniform scaling)"
		}
		return "1-NN ED"
	}
	if d.Window >= 1 {
		return "1-NN DTW (full window)"
	}
	return fmt.Sprintf("1-NN DTW (window %.4g%%)", 100*d.Window)
}

// labelMap returns, for each test class index, the train class index of the
// same name (-1 when train lacks it), so that predictions (train indices)
// can be scored when the two files list classes differently. Datasets built
// by hand without class names are matched by index.
func labelMap(train, test *data.Dataset) []int {
	n := len(test.Classes)
	if n == 0 || slices.Equal(train.Classes, test.Classes) || len(train.Classes) == 0 {
		return nil
	}
	m := make([]int, n)
	for i, name := range test.Classes {
		m[i] = slices.Index(train.Classes, name)
	}
	return m
}

// checkTest rejects unlabelled test samples: an accuracy over a subset would
// be silently incomparable.
func checkTest(test *data.Dataset) error {
	if len(test.Samples) == 0 {
		return errors.New("baseline: empty test set")
	}
	for i := range test.Samples {
		if test.Samples[i].Label < 0 {
			return fmt.Errorf("baseline: test sample %d (id %q) has no label", i, test.Samples[i].ID)
		}
	}
	return nil
}

// score fills Correct and Accuracy from the predictions.
func score(r *Result, train, test *data.Dataset) {
	lm := labelMap(train, test)
	r.N = len(test.Samples)
	for i, p := range r.Predictions {
		want := test.Samples[i].Label
		if lm != nil {
			want = lm[want]
		}
		if p == want {
			r.Correct++
		}
	}
	r.Accuracy = float64(r.Correct) / float64(r.N)
}

// Majority predicts the most frequent class among the labelled training
// samples for every test sample (ties: the lowest class index). Its
// accuracy is the share of that class in the test set, the floor below
// which a classifier has learnt nothing.
func Majority(train, test *data.Dataset) (Result, error) {
	if err := checkTest(test); err != nil {
		return Result{}, err
	}
	var counts []int
	for i := range train.Samples {
		l := train.Samples[i].Label
		if l < 0 {
			continue
		}
		for len(counts) <= l {
			counts = append(counts, 0)
		}
		counts[l]++
	}
	if len(counts) == 0 {
		return Result{}, errors.New("baseline: Majority: no labelled training sample")
	}
	best := 0
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	r := Result{Predictions: make([]int, len(test.Samples))}
	for i := range r.Predictions {
		r.Predictions[i] = best
	}
	score(&r, train, test)
	return r, nil
}

// NearestNeighbor classifies each test sample with the label of its nearest
// labelled training sample under dist (ties: the lowest training index,
// which is what a plain scan with a strict "<" gives and what the UCR
// archive's code does). Lower bounds and early abandoning only skip work:
// the neighbour found is the one the exhaustive scan finds. Test samples
// are shared among runtime.GOMAXPROCS(0) goroutines.
func NearestNeighbor(train, test *data.Dataset, dist Distance) (Result, error) {
	if err := checkTest(test); err != nil {
		return Result{}, err
	}
	nb, err := nearestNeighbors(train, test, dist, "NearestNeighbor: no labelled training sample",
		func(s *data.Sample) bool { return s.Label >= 0 })
	if err != nil {
		return Result{}, err
	}
	r := Result{Predictions: make([]int, len(nb)), Neighbors: nb}
	for q, i := range nb {
		r.Predictions[q] = train.Samples[i].Label
	}
	score(&r, train, test)
	return r, nil
}

// nearestNeighbors is, for each test sample, the index in train.Samples of
// its nearest training sample under dist among those candidate accepts
// (none: the error none). Test samples are shared among
// runtime.GOMAXPROCS(0) goroutines.
func nearestNeighbors(train, test *data.Dataset, dist Distance, none string, candidate func(*data.Sample) bool) ([]int, error) {
	if train.C != test.C || train.D != test.D {
		return nil, fmt.Errorf("baseline: train C, D = %d, %d but test %d, %d", train.C, train.D, test.C, test.D)
	}
	if err := checkTimeAxis(dist.TimeAxis, train.D); err != nil {
		return nil, err
	}
	if dist.DTW && !(dist.Window >= 0) {
		return nil, fmt.Errorf("baseline: DTW window %v, want >= 0", dist.Window)
	}
	keys := channelKeys(dist.TimeAxis, train.D, train, test)
	m := len(keys) * train.C
	var cands []series
	var candIdx []int
	all := formSeries(train, dist.TimeAxis, keys)
	for i := range train.Samples {
		if candidate(&train.Samples[i]) && all[i].n > 0 {
			cands = append(cands, all[i])
			candIdx = append(candIdx, i)
		}
	}
	if len(cands) == 0 {
		return nil, errors.New("baseline: " + none)
	}
	queries := formSeries(test, dist.TimeAxis, keys)
	for i := range queries {
		if queries[i].n == 0 {
			return nil, fmt.Errorf("baseline: test sample %d (id %q) has no tokens", i, test.Samples[i].ID)
		}
	}
	s := newSearch(cands, m, dist)
	nb := make([]int, len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(queries)) {
		wg.Go(func() {
			w := s.newWorker()
			for {
				q := int(next.Add(1)) - 1
				if q >= len(queries) {
					return
				}
				nb[q] = candIdx[w.nearest(&queries[q])]
			}
		})
	}
	wg.Wait()
	return nb, nil
}

// search holds the training series and what the lower bounds precompute.
type search struct {
	cands []series
	m     int
	dist  Distance
	maxN  int
	// LB_Keogh envelopes per candidate when the window is narrower than the
	// series (nil otherwise); valid for queries of the candidate's length.
	upper, lower [][]float64
}

func newSearch(cands []series, m int, dist Distance) *search {
	s := &search{cands: cands, m: m, dist: dist}
	for i := range cands {
		s.maxN = max(s.maxN, cands[i].n)
	}
	if dist.DTW && dist.Window < 1 && !dist.exhaustive {
		s.upper = make([][]float64, len(cands))
		s.lower = make([][]float64, len(cands))
		dq := make([]int, s.maxN)
		for i := range cands {
			c := &cands[i]
			w := bandWidth(dist.Window, c.n, c.n)
			if w >= c.n-1 {
				continue // the envelope is the global range: too loose to pay for itself
			}
			s.upper[i] = make([]float64, c.n*m)
			s.lower[i] = make([]float64, c.n*m)
			envelope(s.upper[i], s.lower[i], c.x, c.n, m, w, dq)
		}
	}
	return s
}

// worker is one goroutine's reusable buffers.
type worker struct {
	s      *search
	row    []float64 // DTW rows
	ra, rb []float64 // resampled series (ED)
	grid   []float64
	order  []int
	ub     []float64 // per candidate: straight-line path cost
}

func (s *search) newWorker() *worker {
	return &worker{s: s, order: make([]int, len(s.cands)), ub: make([]float64, len(s.cands))}
}

// nearest returns the index in s.cands of q's nearest neighbour.
func (w *worker) nearest(q *series) int {
	if w.s.dist.DTW {
		return w.nearestDTW(q)
	}
	best, bestIdx := math.Inf(1), -1
	for i := range w.s.cands {
		ub := best
		if w.s.dist.exhaustive {
			ub = math.Inf(1)
		}
		if d := w.ed(q, &w.s.cands[i], ub); d < best {
			best, bestIdx = d, i
		}
	}
	if bestIdx < 0 {
		return 0 // every distance is +Inf: cannot happen for finite data
	}
	return bestIdx
}

// ed is the package's Euclidean distance, squared and divided by the grid
// length (a mean squared difference, so that pairs compared on grids of
// different lengths are on one scale; for equal-length series it is the
// archive's ED²/L, which orders neighbours identically). It returns +Inf
// once the running value exceeds ub.
func (w *worker) ed(a, b *series, ub float64) float64 {
	m := w.s.m
	if a.n == b.n && slices.Equal(a.t, b.t) {
		return sqSum(a.x, b.x, m, a.n, ub*float64(a.n)) / float64(a.n)
	}
	n := max(a.n, b.n)
	w.grid = bufs.Resize(w.grid, n)
	w.ra = bufs.Resize(w.ra, n*m)
	w.rb = bufs.Resize(w.rb, n*m)
	if w.s.dist.UniformScaling {
		linspace(w.grid, a.t[0], a.t[a.n-1])
		resample(w.ra, a, m, w.grid)
		linspace(w.grid, b.t[0], b.t[b.n-1])
		resample(w.rb, b, m, w.grid)
	} else {
		linspace(w.grid, min(a.t[0], b.t[0]), max(a.t[a.n-1], b.t[b.n-1]))
		resample(w.ra, a, m, w.grid)
		resample(w.rb, b, m, w.grid)
	}
	return sqSum(w.ra, w.rb, m, n, ub*float64(n)) / float64(n)
}

// sqSum is the sum of cost over n rows (the diagonal warping path), +Inf
// once it exceeds lim.
func sqSum(a, b []float64, m, n int, lim float64) float64 {
	s := 0.0
	for i := range n {
		s += cost(a[i*m:(i+1)*m], b[i*m:(i+1)*m])
		if s > lim {
			return math.Inf(1)
		}
	}
	return s
}

// nearestDTW finds the DTW nearest neighbour: candidates in increasing
// order of their straight-line path cost, starting from the smallest such
// cost as the bound; LB_Kim and, where an envelope exists, LB_Keogh screen
// each candidate, and the DP abandons and prunes against the best so far.
// Ties go to the lowest index as in a plain scan.
func (w *worker) nearestDTW(q *series) int {
	s := w.s
	m := s.m
	inf := math.Inf(1)
	w.row = bufs.Resize(w.row, 2*(s.maxN+2))
	if s.dist.exhaustive {
		best, bestIdx := inf, -1
		for i := range s.cands {
			c := &s.cands[i]
			d := dtwSq(q.x, c.x, q.n, c.n, m, bandWidth(s.dist.Window, q.n, c.n), inf, w.row)
			if d < best {
				best, bestIdx = d, i
			}
		}
		return bestIdx
	}
	// Every candidate's straight-line warping path bounds its DTW from
	// above, and is a good guess of it: visiting candidates cheapest path
	// first finds a close neighbour at once, and the smallest path cost is
	// a valid starting bound for all of them.
	best, bestIdx := inf, -1
	for i := range s.cands {
		c := &s.cands[i]
		w.order[i] = i
		w.ub[i] = linePathCost(q.x, c.x, q.n, c.n, m)
		best = min(best, w.ub[i])
	}
	slices.SortStableFunc(w.order, func(i, j int) int { return cmp.Compare(w.ub[i], w.ub[j]) })
	// beats reports whether a candidate at distance d with index i wins.
	beats := func(d float64, i int) bool {
		return d < best || (d == best && (bestIdx < 0 || i < bestIdx))
	}
	// A lower bound can equal the distance mathematically (LB_Keogh with a
	// zero window, LB_Kim when the inner costs are zero) yet, summed in
	// another order, round a few ulps above it. Bounds are therefore
	// shrunk by a relative margin far above rounding error (sums of a
	// million terms err by < 1e-10) before they prune.
	const slack = 1 - 1e-9
	for _, i := range w.order {
		c := &s.cands[i]
		if !beats(lbKim(q.x, c.x, q.n, c.n, m)*slack, i) {
			continue
		}
		if s.upper != nil && s.upper[i] != nil && c.n == q.n {
			if lb := lbKeogh(q.x, s.upper[i], s.lower[i], best/slack); !beats(lb*slack, i) {
				continue
			}
		}
		d := dtwSq(q.x, c.x, q.n, c.n, m, bandWidth(s.dist.Window, q.n, c.n), best, w.row)
		if beats(d, i) {
			best, bestIdx = d, i
		}
	}
	if bestIdx < 0 {
		// Unreachable: some candidate's DTW is at most the ED bound. Should
		// rounding ever disagree, the exhaustive scan is still correct.
		fallbacks.Add(1)
		best = inf
		for i := range s.cands {
			c := &s.cands[i]
			if d := dtwSq(q.x, c.x, q.n, c.n, m, bandWidth(s.dist.Window, q.n, c.n), inf, w.row); d < best {
				best, bestIdx = d, i
			}
		}
	}
	return bestIdx
}

// fallbacks counts nearestDTW's exhaustive rescans, which tests require to
// stay at zero (a nonzero count means the search's bounds are wrong).
var fallbacks atomic.Int64

// Named is one row of a baseline results table.
type Named struct {
	Name     string
	Accuracy float64
	N        int // test samples
	Elapsed  time.Duration
}

// MaxFullDTW bounds the work, in FullDTWCost's units, of the full-window
// 1-NN DTW the tables run: about five minutes on the two cores of this
// project's AMD EPYC (205 × 204 series of 405 steps × 61 channels,
// 4.2·10¹¹, took about four). Past it the tables leave DTW out: EigenWorms
// (17 984 steps × 6 channels, 128 × 131 series) would need 4·10¹³, hours;
// 200 × 300 univariate series of 2000 steps 7·10¹¹, over ten minutes with
// no answer in sight, which a user took for a hang.
const MaxFullDTW = 5e11

// FullDTWCost is the dynamic-programming cells of full-window DTW between
// every test and every training sample (Σ over the pairs of their tokens'
// product) times (values per cell + 2): a cell costs about one value's
// work per channel plus twice that in overhead (BenchmarkDTWPair: 5.4 ns
// a cell for 1 channel, 13 for 3), so univariate series are not
// undercounted threefold.
func FullDTWCost(train, test *data.Dataset) float64 {
	var tr, te float64
	for i := range train.Samples {
		tr += float64(train.Samples[i].Len(train.C))
	}
	for i := range test.Samples {
		te += float64(test.Samples[i].Len(test.C))
	}
	return tr * te * float64(train.C+2)
}

// ClassificationTable runs the three classification baselines results
// tables show beside RoMAE: Majority, 1-NN ED and 1-NN DTW with the full
// window, in that order; DTW only when FullDTWCost is within MaxFullDTW.
// timeAxis is the position axis holding time (0 for LoadTS data).
func ClassificationTable(train, test *data.Dataset, timeAxis int) ([]Named, error) {
	var rows []Named
	start := time.Now()
	r, err := Majority(train, test)
	if err != nil {
		return nil, err
	}
	rows = append(rows, Named{"majority", r.Accuracy, r.N, time.Since(start)})
	for _, d := range []Distance{ED(), DTW(1)} {
		if d.DTW && FullDTWCost(train, test) > MaxFullDTW {
			continue
		}
		d.TimeAxis = timeAxis
		start := time.Now()
		r, err := NearestNeighbor(train, test, d)
		if err != nil {
			return nil, err
		}
		rows = append(rows, Named{d.Name(), r.Accuracy, r.N, time.Since(start)})
	}
	return rows, nil
}
