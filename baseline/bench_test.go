package baseline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"romae/datasets"
)

// BenchmarkNearestNeighbor: 1000 Cylinder-Bell-Funnel test series of
// length 128 against 100 training series. Run with -benchtime 1x; the accuracy is reported so a
// fast but wrong search shows.
func BenchmarkNearestNeighbor(b *testing.B) {
	train, test := datasets.CBF(100, 7), datasets.CBF(1000, 8)
	for _, d := range []Distance{ED(), DTW(1), DTW(0.1)} {
		b.Run(d.Name(), func(b *testing.B) {
			var acc float64
			for b.Loop() {
				r, err := NearestNeighbor(train, test, d)
				if err != nil {
					b.Fatal(err)
				}
				acc = r.Accuracy
			}
			b.ReportMetric(acc, "accuracy")
		})
	}
}

// BenchmarkDTWPair is one unconstrained, unpruned DTW of two length-500
// series: the cost per DP cell.
func BenchmarkDTWPair(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{1, 3} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			x, y := randSeries(rng, 500, m), randSeries(rng, 500, m)
			buf := make([]float64, 2*(500+2))
			for b.Loop() {
				dtwSq(x, y, 500, 500, m, -1, math.Inf(1), buf)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(500*500), "ns/cell")
		})
	}
}
