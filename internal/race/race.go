//go:build race

// Package race says whether the binary was built with the race detector,
// for tests whose cost or measurements it changes: it makes the product
// checks ~10× slower, and sync.Pool drops items at random under it, so
// allocation counts are meaningless there.
package race

const Enabled = true
