package baseline

import (
	"math"
)

// cost is the squared Euclidean distance between two value vectors: the
// point cost of both ED and dependent multivariate DTW. ED's diagonal sum
// and the DTW recursion call the same function so that, in floating point
// too, DTW never exceeds ED on equal-length series (the nearest-neighbour
// search relies on it for its first upper bound).
func cost(a, b []float64) float64 {
	s := 0.0
	for k, x := range a {
		d := x - b[k]
		s += float64(d * d) // the conversion forbids fusing into an FMA, keeping ED and DTW sums identical
	}
	return s
}

// bandWidth is the Sakoe-Chiba half-width in cells for a window fraction:
// floor(window * max(la, lb)), widened to |la - lb| so that the end cell is
// always reachable (dtaidistance's rule for unequal lengths). It returns -1,
// unconstrained, for window >= 1; NearestNeighbor rejects negative windows.
func bandWidth(window float64, la, lb int) int {
	if window >= 1 {
		return -1
	}
	w := int(math.Floor(window * float64(max(la, lb))))
	return max(w, abs(la-lb))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// dtwSq is dependent multivariate DTW: the least sum of squared point costs
// over warping paths from (0,0) to (la-1,lb-1) with steps (1,0), (0,1),
// (1,1) and |i-j| <= w (w < 0: no constraint). a is [la*m], b [lb*m].
//
// ub turns on early abandoning and pruning: a cell whose cumulative cost
// exceeds ub cannot lie on a path of total cost <= ub (costs are >= 0), so
// each row is computed only from the first to the last column that the
// previous row left <= ub, extended to the right only while the running
// value stays <= ub (PrunedDTW, Silva & Batista 2016), and when a whole row
// exceeds ub the computation stops with +Inf. The result is exact whenever
// it is <= ub and +Inf otherwise; ub = +Inf computes the plain DTW.
// buf must hold at least 2*(lb+2) values; nothing is allocated.
func dtwSq(a, b []float64, la, lb, m, w int, ub float64, buf []float64) float64 {
	inf := math.Inf(1)
	prev, cur := buf[:lb+2], buf[lb+2:2*(lb+2)]
	for j := range prev {
		prev[j] = inf
	}
	prev[0] = 0
	// Columns are 1-based: prev[j] is D[i-1][j], column 0 the virtual border.
	pLo, pHi := 0, 0 // columns of prev that are <= ub; everything else reads as > ub
	for i := 1; i <= la; i++ {
		lo, hi := 1, lb
		if w >= 0 {
			lo, hi = max(1, i-w), min(lb, i+w)
		}
		start := max(lo, pLo)
		if start > hi {
			return inf
		}
		cur[start-1] = inf
		if pHi+1 <= lb {
			prev[pHi+1] = inf
		}
		ai := a[(i-1)*m : i*m]
		end := min(hi, pHi+1)
		var newLo, newHi int
		if m == 1 {
			newLo, newHi = row1(prev, cur, b, ai[0], start, end, ub)
		} else {
			newLo, newHi = rowM(prev, cur, b, ai, m, start, end, ub)
		}
		// Past the previous row's last live column only the left neighbour
		// can lead here, and the running value only grows.
		for j := max(end+1, start); j <= hi && cur[j-1] <= ub; j++ {
			v := cur[j-1] + cost(ai, b[(j-1)*m:j*m])
			cur[j] = v
			if v <= ub {
				newHi = j
			}
		}
		if newLo < 0 {
			return inf
		}
		pLo, pHi = newLo, newHi
		prev, cur = cur, prev
	}
	if pHi < lb {
		return inf
	}
	return prev[lb]
}

// row1 computes columns start..end of one DP row for univariate series and
// returns the first and last of them that are <= ub (-1, -1 if none). The
// reslicing drops bounds checks and diag/left travel in registers: the cell
// recursion is a serial min-then-add chain, so its latency is the cost.
func row1(prev, cur, b []float64, x float64, start, end int, ub float64) (int, int) {
	if start > end {
		return -1, -1
	}
	cj := cur[start : end+1]
	pj := prev[start-1 : end+1]
	pj = pj[:len(cj)+1]
	bj := b[start-1 : end]
	bj = bj[:len(cj)]
	left, diag := cur[start-1], pj[0]
	lo, hi := -1, -1
	for k := range cj {
		up := pj[k+1]
		e := x - bj[k]
		v := min(diag, up, left) + float64(e*e)
		cj[k] = v
		if v <= ub {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
		diag, left = up, v
	}
	if lo < 0 {
		return -1, -1
	}
	return lo + start, hi + start
}

// rowM is row1 for m values per point.
func rowM(prev, cur, b, x []float64, m, start, end int, ub float64) (int, int) {
	if start > end {
		return -1, -1
	}
	cj := cur[start : end+1]
	pj := prev[start-1 : end+1]
	pj = pj[:len(cj)+1]
	left, diag := cur[start-1], pj[0]
	lo, hi := -1, -1
	for k := range cj {
		up := pj[k+1]
		j := start + k - 1
		v := min(diag, up, left) + cost(x, b[j*m:(j+1)*m])
		cj[k] = v
		if v <= ub {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
		diag, left = up, v
	}
	if lo < 0 {
		return -1, -1
	}
	return lo + start, hi + start
}

// linePathCost is the cost of the warping path that follows the straight
// line from (0,0) to (la-1,lb-1), one step along the longer series at a
// time: an upper bound on dtwSq for every window dtwSq accepts (the path
// stays within |la-lb| of the diagonal). For equal lengths it is the
// diagonal, summed exactly as the DP sums it, so in floating point too the
// DP never exceeds it.
func linePathCost(a, b []float64, la, lb, m int) float64 {
	if la < lb {
		a, b, la, lb = b, a, lb, la
	}
	s := 0.0
	for i := range la {
		j := i
		if la != lb {
			j = i * (lb - 1) / (la - 1)
		}
		s += cost(a[i*m:(i+1)*m], b[j*m:(j+1)*m])
	}
	return s
}

// lbKim is the first-and-last-point lower bound of dtwSq: every warping
// path, whatever its window, contains the two corner cells.
func lbKim(a, b []float64, la, lb, m int) float64 {
	d := cost(a[:m], b[:m])
	if la > 1 || lb > 1 {
		d += cost(a[(la-1)*m:la*m], b[(lb-1)*m:lb*m])
	}
	return d
}

// envelope writes the running max (upper) and min (lower) of each value
// slot of x [n*m] over the window [i-w, i+w], for LB_Keogh. O(n*m) with
// monotone deques; dq needs n ints.
func envelope(upper, lower, x []float64, n, m, w int, dq []int) {
	for k := range m {
		for pass := range 2 {
			out := upper
			better := func(p, q float64) bool { return p >= q }
			if pass == 1 {
				out = lower
				better = func(p, q float64) bool { return p <= q }
			}
			head, tail := 0, 0
			next := 0 // next index to push
			for i := range n {
				for ; next < n && next <= i+w; next++ {
					v := x[next*m+k]
					for tail > head && better(v, x[dq[tail-1]*m+k]) {
						tail--
					}
					dq[tail] = next
					tail++
				}
				for dq[head] < i-w {
					head++
				}
				out[i*m+k] = x[dq[head]*m+k]
			}
		}
	}
}

// lbKeogh is LB_Keogh of query a against a candidate's envelope (equal
// lengths, same band): each row of a warping path has a cell within the
// band, whose cost is at least the squared distance of a's vector to the
// envelope box. It stops early once the sum exceeds ub.
func lbKeogh(a, upper, lower []float64, ub float64) float64 {
	s := 0.0
	for i, x := range a {
		if x > upper[i] {
			d := x - upper[i]
			s += d * d
		} else if x < lower[i] {
			d := lower[i] - x
			s += d * d
		}
		if s > ub {
			return math.Inf(1)
		}
	}
	return s
}
