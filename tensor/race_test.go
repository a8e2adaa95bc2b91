//go:build race

package tensor

// The race detector makes the product checks ~10× slower.
const raceEnabled = true
