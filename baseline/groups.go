package baseline

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// group is the observed tokens of one series that share every non-time
// position coordinate (one channel or band in a channel-axis layout; all
// tokens when D == 1), as a function of time: sorted distinct times, the
// values averaged over tokens that share a time, and the plain per-token
// mean for ChannelMean.
type group struct {
	t    []float64 // distinct times, ascending
	v    []float64 // [len(t)*c], averaged over tokens at the same time
	mean []float64 // [c], mean over the group's tokens (not over distinct times)
	m2   []float64 // natural-spline second derivatives [len(t)*c]; nil until needed
}

// grouping is one series split into groups, with the fallback used for
// groups that have no observation (the mean over every observed token, 0
// when there is none).
type grouping struct {
	c, d, timeAxis int
	index          map[string]int
	groups         []group
	keys           [][]float32 // non-time coordinates of each group
	fallback       []float64   // [c]
	keyBuf         []byte
}

// keyOf writes the non-time coordinates of one position vector as a map key.
// -0 is folded into +0 so that the two spellings of zero name one channel.
func keyOf(buf []byte, pos []float32, timeAxis int) []byte {
	buf = buf[:0]
	for a, x := range pos {
		if a == timeAxis {
			continue
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x+0))
	}
	return buf
}

// newGrouping groups the observed tokens (vals [N*c], pos [N*d]).
func newGrouping(vals, pos []float32, c, d, timeAxis int) *grouping {
	g := &grouping{c: c, d: d, timeAxis: timeAxis, index: map[string]int{}, fallback: make([]float64, c)}
	n := 0
	if c > 0 {
		n = len(vals) / c
	}
	type tok struct {
		g, i int
		t    float32
	}
	toks := make([]tok, n)
	for i := range n {
		p := pos[i*d : (i+1)*d]
		g.keyBuf = keyOf(g.keyBuf, p, timeAxis)
		gi, ok := g.index[string(g.keyBuf)]
		if !ok {
			gi = len(g.keys)
			g.index[string(g.keyBuf)] = gi
			key := make([]float32, 0, d-1)
			for a, x := range p {
				if a != timeAxis {
					key = append(key, x+0)
				}
			}
			g.keys = append(g.keys, key)
		}
		toks[i] = tok{gi, i, p[timeAxis]}
		for k := range c {
			g.fallback[k] += float64(vals[i*c+k])
		}
	}
	if n > 0 {
		for k := range c {
			g.fallback[k] /= float64(n)
		}
	}
	slices.SortStableFunc(toks, func(a, b tok) int {
		if a.g != b.g {
			return cmp.Compare(a.g, b.g)
		}
		return cmp.Compare(a.t, b.t)
	})
	g.groups = make([]group, len(g.keys))
	for s := 0; s < n; {
		e := s
		for e < n && toks[e].g == toks[s].g {
			e++
		}
		gr := &g.groups[toks[s].g]
		gr.mean = make([]float64, c)
		for r := s; r < e; {
			q := r
			for q < e && toks[q].t == toks[r].t {
				q++
			}
			gr.t = append(gr.t, float64(toks[r].t))
			for k := range c {
				sum := 0.0
				for _, tk := range toks[r:q] {
					sum += float64(vals[tk.i*c+k])
				}
				gr.v = append(gr.v, sum/float64(q-r))
				gr.mean[k] += sum
			}
			r = q
		}
		for k := range c {
			gr.mean[k] /= float64(e - s)
		}
		s = e
	}
	return g
}

// lookup returns the group of a query position, or nil when no observed
// token shares its non-time coordinates.
func (g *grouping) lookup(pos []float32) *group {
	g.keyBuf = keyOf(g.keyBuf, pos, g.timeAxis)
	if gi, ok := g.index[string(g.keyBuf)]; ok {
		return &g.groups[gi]
	}
	return nil
}

// linearAt evaluates slot k of the group at time t: linear between the
// neighbouring distinct times, the end value beyond either end.
func (gr *group) linearAt(t float64, c, k int) float64 {
	n := len(gr.t)
	if t <= gr.t[0] {
		return gr.v[k]
	}
	if t >= gr.t[n-1] {
		return gr.v[(n-1)*c+k]
	}
	i := upper(gr.t, t) - 1 // gr.t[i] <= t < gr.t[i+1]
	t0, t1 := gr.t[i], gr.t[i+1]
	v0, v1 := gr.v[i*c+k], gr.v[(i+1)*c+k]
	return v0 + (v1-v0)*(t-t0)/(t1-t0)
}

// upper returns the first index whose time is > t.
func upper(ts []float64, t float64) int {
	lo, hi := 0, len(ts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ts[m] <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// splineAt evaluates slot k of the group's natural cubic spline at time t,
// holding the end values beyond the ends. With two distinct times it is the
// straight line between them, with one it is that value.
func (gr *group) splineAt(t float64, c, k int) float64 {
	n := len(gr.t)
	if n < 3 {
		return gr.linearAt(t, c, k)
	}
	if t <= gr.t[0] {
		return gr.v[k]
	}
	if t >= gr.t[n-1] {
		return gr.v[(n-1)*c+k]
	}
	if gr.m2 == nil {
		gr.m2 = naturalSpline(gr.t, gr.v, c)
	}
	i := upper(gr.t, t) - 1
	h := gr.t[i+1] - gr.t[i]
	a := (gr.t[i+1] - t) / h
	b := (t - gr.t[i]) / h
	y0, y1 := gr.v[i*c+k], gr.v[(i+1)*c+k]
	m0, m1 := gr.m2[i*c+k], gr.m2[(i+1)*c+k]
	return a*y0 + b*y1 + ((a*a*a-a)*m0+(b*b*b-b)*m1)*h*h/6
}

// naturalSpline returns the second derivatives [n*c] of the natural cubic
// spline through (t[i], v[i*c+k]) for every slot k (Thomas algorithm on the
// standard tridiagonal system, zero second derivative at both ends).
func naturalSpline(t, v []float64, c int) []float64 {
	n := len(t)
	m := make([]float64, n*c)
	cp := make([]float64, n) // modified super-diagonal
	dp := make([]float64, n) // modified right-hand side
	for k := range c {
		// interior rows i = 1..n-2: h[i-1] m[i-1] + 2(h[i-1]+h[i]) m[i] + h[i] m[i+1] = rhs
		for i := 1; i < n-1; i++ {
			h0, h1 := t[i]-t[i-1], t[i+1]-t[i]
			rhs := 6 * ((v[(i+1)*c+k]-v[i*c+k])/h1 - (v[i*c+k]-v[(i-1)*c+k])/h0)
			diag := 2 * (h0 + h1)
			sub := h0
			if i == 1 {
				sub = 0 // m[0] = 0
			}
			den := diag - sub*cp[i-1]
			cp[i] = h1 / den
			dp[i] = (rhs - sub*dp[i-1]) / den
		}
		m[(n-1)*c+k] = 0
		for i := n - 2; i >= 1; i-- {
			next := 0.0
			if i+1 < n-1 {
				next = m[(i+1)*c+k]
			}
			m[i*c+k] = dp[i] - cp[i]*next
		}
		m[k] = 0
	}
	return m
}

// checkTimeAxis rejects a time axis outside [0, d).
func checkTimeAxis(timeAxis, d int) error {
	if timeAxis < 0 || timeAxis >= d {
		return fmt.Errorf("baseline: time axis %d outside [0, %d)", timeAxis, d)
	}
	return nil
}
