package tensor

// Param is one named weight tensor and its gradient. W and G are views into
// the model's contiguous parameter and gradient buffers, so optimisers and
// checkpoints can work either tensor by tensor or on the whole buffer.
type Param[T Float] struct {
	Name  string
	Shape []int
	W, G  []T
	// Decay marks tensors subject to weight decay: weight matrices yes;
	// norm gains, biases and the learned [CLS]/[MASK] vectors no.
	Decay bool
}

// Numel is the number of elements of a shape.
func Numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}
