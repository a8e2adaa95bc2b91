package train

// How many steps the default fine-tuning recipe takes, shared by the CLI's
// recipe and the experiments that follow it: a batch of about n/8
// samples, a power of two within [8, 64], so that small sets still get
// several steps per epoch, and enough epochs for about RecipeSteps
// optimiser steps, within [RecipeMinEpochs, RecipeMaxEpochs].
const (
	RecipeSteps     = 1500
	RecipeMinEpochs = 20
	RecipeMaxEpochs = 500
)

// RecipeBatch is the recipe's batch size for n training samples.
func RecipeBatch(n int) int {
	p := 1 // the largest power of two ≤ n/8
	for p*2 <= n/8 {
		p *= 2
	}
	return min(max(8, p), 64)
}

// RecipeEpochs is the number of passes over n samples in batches of batch
// that gives about steps optimiser steps, within [RecipeMinEpochs,
// RecipeMaxEpochs].
func RecipeEpochs(n, batch, steps int) int {
	perEpoch := (n + batch - 1) / batch
	return min(max(RecipeMinEpochs, (steps+perEpoch-1)/perEpoch), RecipeMaxEpochs)
}

// RecipeFolds is how many fold models the recipe fine-tunes (their
// ensemble is the model) for n training samples: 5 for 10 to 1000 samples;
// 0 (one model, a 20% split held out) otherwise, since beyond 1000 one
// split selects on enough samples and the ensemble's cost (K trainings, K
// forward passes per prediction) buys less, and below 10 folds hold too
// few.
func RecipeFolds(n int) int {
	if n >= 10 && n <= 1000 {
		return 5
	}
	return 0
}
