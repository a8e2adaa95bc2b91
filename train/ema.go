package train

import (
	"fmt"

	"romae/ckpt"
	"romae/tensor"
)

// emaTensor is the checkpoint tensor that holds the moving average of the
// weights in last.safetensors (best.safetensors holds the average as the
// model's own weights).
const emaTensor = "ema.weights"

// weightEMA is an exponential moving average of the weights. On a few
// dozen series the weights at any single step are one draw from a noisy
// walk; their average over the last few hundred steps generalises better
// and varies less between seeds (measured in the README's default-recipe
// table). The decay ramps up as (1+t)/(10+t) so that early averages are
// not dominated by the initialisation; being a function of the step only,
// a resumed run averages exactly as an uninterrupted one.
type weightEMA struct {
	decay float64
	avg   []float32
}

func newWeightEMA(w []float32, decay float64) *weightEMA {
	return &weightEMA{decay: decay, avg: append([]float32(nil), w...)}
}

// update folds w, the weights after optimiser step `step` (1-based), in.
func (e *weightEMA) update(w []float32, step int) {
	d := float32(min(e.decay, float64(1+step)/float64(10+step)))
	tensor.MovingAverage32(e.avg, w, d)
}

// swap exchanges the averaged and the live weights, so evaluation and
// best.safetensors see the average; calling it again restores them.
func (e *weightEMA) swap(w []float32) {
	for i := range w {
		w[i], e.avg[i] = e.avg[i], w[i]
	}
}

func (e *weightEMA) tensor() *ckpt.Tensor {
	return ckpt.F32Tensor(emaTensor, []int{len(e.avg)}, e.avg)
}

// load restores the average from a checkpoint's tensor.
func (e *weightEMA) load(v []float32) error {
	if len(v) != len(e.avg) {
		return fmt.Errorf("%s has %d values, the model %d", emaTensor, len(v), len(e.avg))
	}
	copy(e.avg, v)
	return nil
}
