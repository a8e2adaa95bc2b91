package baseline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"romae/data"
)

// cbf draws n series of length l from the Cylinder-Bell-Funnel generator
// (Saito 1994), the classic synthetic 1-NN benchmark: a plateau, a rising
// or a falling ramp on a random interval, plus unit Gaussian noise.
func cbf(rng *rand.Rand, n, l int) *data.Dataset {
	ds := &data.Dataset{C: 1, D: 1, Classes: []string{"cylinder", "bell", "funnel"}}
	for range n {
		class := rng.IntN(3)
		a := l/8 + rng.IntN(l/8)
		b := a + l/4 + rng.IntN(l/2)
		b = min(b, l-1)
		eta := 6 + rng.NormFloat64()
		s := data.Sample{Label: class, Values: make([]float32, l), Positions: make([]float32, l)}
		for t := range l {
			v := rng.NormFloat64()
			if t >= a && t <= b {
				switch class {
				case 0:
					v += eta
				case 1:
					v += eta * float64(t-a) / float64(b-a)
				case 2:
					v += eta * float64(b-t) / float64(b-a)
				}
			}
			s.Values[t] = float32(v)
			s.Positions[t] = float32(t)
		}
		ds.Samples = append(ds.Samples, s)
	}
	return ds
}

// BenchmarkNearestNeighbor: 1000 test series of length 500 against 100
// training series. Run with -benchtime 1x; the accuracy is reported so a
// fast but wrong search shows.
func BenchmarkNearestNeighbor(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	train, test := cbf(rng, 100, 500), cbf(rng, 1000, 500)
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
