package nn

import (
	"math"

	"romae/tensor"
)

// CrossEntropy returns the mean softmax cross-entropy of logits[n,K] against
// labels[n] and writes its gradient into dLogits[n,K]. PyTorch semantics:
// class weights w (nil: all 1) weight each sample by w[label] and the mean
// divides by Σ w[label]; label smoothing ε mixes in ε/K · Σ_k w_k·(−log p_k).
// Samples labelled −1 are ignored. Returns 0 when no sample has a label.
func CrossEntropy[T tensor.Float](dLogits, logits []T, labels []int, weights []float64, smoothing float64, n, K int) float64 {
	w := func(k int) float64 {
		if weights == nil {
			return 1
		}
		return weights[k]
	}
	var denom float64
	for _, y := range labels[:n] {
		if y >= 0 {
			denom += w(y)
		}
	}
	clear(dLogits[:n*K])
	if denom == 0 {
		return 0
	}
	var total float64
	for i := 0; i < n; i++ {
		y := labels[i]
		if y < 0 {
			continue
		}
		z := logits[i*K : (i+1)*K]
		lse := LogSumExp(z)
		var smooth, wsum float64
		for k, v := range z {
			smooth += w(k) * (lse - float64(v))
			wsum += w(k)
		}
		total += (1-smoothing)*w(y)*(lse-float64(z[y])) + smoothing/float64(K)*smooth
		// d/dz_k of the sample's loss, then divided by the mean's denominator.
		g := dLogits[i*K : (i+1)*K]
		for k, v := range z {
			p := math.Exp(float64(v) - lse)
			d := (1-smoothing)*w(y)*p + smoothing/float64(K)*(wsum*p-w(k))
			if k == y {
				d -= (1 - smoothing) * w(y)
			}
			g[k] = T(d / denom)
		}
	}
	return total / denom
}

// MaskedMSE returns mean((pred−target)²) over the rows where valid[r] is
// true (valid nil: all rows) of pred, target [n,c], and writes the gradient
// of that mean into dPred (zero on excluded rows). Padding is excluded from
// the denominator, unlike the authors' code.
func MaskedMSE[T tensor.Float](dPred, pred, target []T, valid []bool, n, c int) float64 {
	count := 0
	for r := 0; r < n; r++ {
		if valid == nil || valid[r] {
			count++
		}
	}
	clear(dPred[:n*c])
	if count == 0 {
		return 0
	}
	inv := 1 / float64(count*c)
	var sum float64
	for r := 0; r < n; r++ {
		if valid != nil && !valid[r] {
			continue
		}
		for j := r * c; j < (r+1)*c; j++ {
			e := float64(pred[j]) - float64(target[j])
			sum += e * e
			dPred[j] = T(2 * e * inv)
		}
	}
	return sum * inv
}

// NormalizePatches rewrites each row of x[n,c] as (x−mean)/sqrt(var+1e-6),
// MAE's per-patch target normalisation (unbiased variance, as torch.var).
// Meaningless for c = 1, which callers refuse.
func NormalizePatches[T tensor.Float](x []T, n, c int) {
	for r := 0; r < n; r++ {
		row := x[r*c : (r+1)*c]
		var m float64
		for _, v := range row {
			m += float64(v)
		}
		m /= float64(c)
		var v2 float64
		for _, v := range row {
			v2 += (float64(v) - m) * (float64(v) - m)
		}
		s := math.Sqrt(v2/float64(c-1) + 1e-6)
		for j, v := range row {
			row[j] = T((float64(v) - m) / s)
		}
	}
}

// LogSumExp is log Σ exp(z), in float64, shifted by max(z) so it does not
// overflow: −log softmax(z)[k] is LogSumExp(z) − z[k].
func LogSumExp[T tensor.Float](z []T) float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, float64(v))
	}
	var se float64
	for _, v := range z {
		se += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(se)
}
