package baseline

import (
	"math"
	"slices"

	"romae/data"
)

// series is one sample as an ordinary multivariate time series: n time
// points t (ascending, distinct) with m values each, x[i*m+k].
type series struct {
	t []float64
	x []float64
	n int
}

// channelKeys returns the sorted distinct non-time coordinate tuples of
// every token of the given datasets: the channels of a channel-axis layout,
// in one order shared by train and test so that value k of a formed series
// means the same thing in both. With D == 1 it is the single empty key.
func channelKeys(timeAxis, d int, sets ...*data.Dataset) [][]float32 {
	seen := map[string]bool{}
	var keys [][]float32
	var buf []byte
	for _, ds := range sets {
		for i := range ds.Samples {
			pos := ds.Samples[i].Positions
			for j := 0; j+d <= len(pos); j += d {
				p := pos[j : j+d]
				buf = keyOf(buf, p, timeAxis)
				if seen[string(buf)] {
					continue
				}
				seen[string(buf)] = true
				key := make([]float32, 0, d-1)
				for a, x := range p {
					if a != timeAxis {
						key = append(key, x+0)
					}
				}
				keys = append(keys, key)
			}
		}
	}
	slices.SortFunc(keys, slices.Compare)
	return keys
}

// formSeries turns every sample of ds into a series with m = len(keys)*C
// values per time point. The time points are the sample's distinct observed
// times; channel key k's slot c at a time where that channel was not
// observed is linearly interpolated from the channel's own observations (end
// values held), and a channel never observed in the sample takes the
// sample's mean over all tokens. For D == 1 (one key) this is just the
// tokens in time order, tokens at a repeated time averaged; for a complete
// channel-axis series it reproduces the one-token-per-step layout exactly.
func formSeries(ds *data.Dataset, timeAxis int, keys [][]float32) []series {
	c, d := ds.C, ds.D
	m := len(keys) * c
	out := make([]series, len(ds.Samples))
	var buf []byte
	for i := range ds.Samples {
		s := &ds.Samples[i]
		g := newGrouping(s.Values, s.Positions, c, d, timeAxis)
		var ts []float64
		for _, gr := range g.groups {
			ts = append(ts, gr.t...)
		}
		slices.Sort(ts)
		ts = slices.Compact(ts)
		grs := make([]*group, len(keys))
		for k, key := range keys {
			buf = buf[:0]
			for _, x := range key {
				buf = appendKey(buf, x)
			}
			if gi, ok := g.index[string(buf)]; ok {
				grs[k] = &g.groups[gi]
			}
		}
		x := make([]float64, len(ts)*m)
		for j, t := range ts {
			for k, gr := range grs {
				for sl := range c {
					v := g.fallback[sl]
					if gr != nil {
						v = gr.linearAt(t, c, sl)
					}
					x[j*m+k*c+sl] = v
				}
			}
		}
		out[i] = series{t: ts, x: x, n: len(ts)}
	}
	return out
}

func appendKey(buf []byte, x float32) []byte {
	b := math.Float32bits(x + 0)
	return append(buf, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
}

// resample writes the series' linear interpolation (end values held) at the
// ascending grid times into dst [len(grid)*m].
func resample(dst []float64, s *series, m int, grid []float64) {
	j := 0
	last := s.n - 1
	for g, t := range grid {
		row := dst[g*m : (g+1)*m]
		switch {
		case t <= s.t[0]:
			copy(row, s.x[:m])
		case t >= s.t[last]:
			copy(row, s.x[last*m:])
		default:
			for j+1 < s.n && s.t[j+1] <= t {
				j++
			}
			// s.t[j] <= t < s.t[j+1]
			f := (t - s.t[j]) / (s.t[j+1] - s.t[j])
			a, b := s.x[j*m:(j+1)*m], s.x[(j+1)*m:(j+2)*m]
			for k := range row {
				row[k] = a[k] + (b[k]-a[k])*f
			}
		}
	}
}

// linspace fills grid with len(grid) evenly spaced times from t0 to t1.
func linspace(grid []float64, t0, t1 float64) {
	n := len(grid)
	if n == 1 {
		grid[0] = t0
		return
	}
	for i := range grid {
		grid[i] = t0 + (t1-t0)*float64(i)/float64(n-1)
	}
	grid[n-1] = t1
}
