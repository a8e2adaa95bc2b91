package rope

import (
	"fmt"
	"math"

	"romae/tensor"
)

// CheckAbsolute reports whether the absolute embedding fits: each of the D
// axes gets d/D dimensions of interleaved sin/cos pairs.
func CheckAbsolute(dModel, d int) error {
	if dModel%(2*d) != 0 {
		return fmt.Errorf("absolute position embedding: d_model %d is not divisible by 2·axes = %d", dModel, 2*d)
	}
	return nil
}

// AddAbsolute adds the Transformer's sin/cos embedding of each token's
// position to x[N, dModel]: axis a owns dims [a·m, (a+1)·m), m = dModel/D,
// with pe[2j] = sin(pos·ω_j), pe[2j+1] = cos(pos·ω_j), ω_j = 10000^(−2j/m).
// It is keyed by the token's real position, not its index in the sequence,
// which avoids the public code's encoder/decoder off-by-one.
func AddAbsolute[T tensor.Float](x, positions []T, n, dModel, d int) {
	m := dModel / d
	tensor.ParallelFor(n, 32, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := x[i*dModel : (i+1)*dModel]
			for ax := 0; ax < d; ax++ {
				p := float64(positions[i*d+ax])
				for j := 0; j < m/2; j++ {
					s, c := math.Sincos(p * math.Pow(10000, -2*float64(j)/float64(m)))
					row[ax*m+2*j] += T(s)
					row[ax*m+2*j+1] += T(c)
				}
			}
		}
	})
}
