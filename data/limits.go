package data

import "fmt"

// Limits on what a loader builds from a file. Most allocations are bounded
// by the bytes of the file itself — a value needs at least a byte or two of
// input — and need no limit; these bound the ones that are not: sizes that
// come from a number written in the file, or from the product of two such
// numbers (objects × channels, steps × dimensions). Each is far above any
// real data set the paper uses (the longest UEA series has 17 984 steps,
// ELAsTiCC has 6 bands and ~30 classes). A file that exceeds one is refused
// with an error naming the file, the field and the limit.
const (
	// MaxClasses bounds the classes of a dataset: distinct labels of a
	// CSV, @classLabel names of a .ts file, and 1 + the largest integer
	// label of a .npy/.npz label array (which becomes that many classes).
	MaxClasses = 1 << 16
	// MaxChannels bounds the values per token (channels, dimensions).
	MaxChannels = 1 << 16
	// MaxTokens bounds the tokens of one sample (series length).
	MaxTokens = 1 << 24
	// MaxSampleValues bounds the values (tokens × values per token) of one
	// sample that a loader creates rather than copies from the file, as
	// ChannelSlot mode does for its times × channels slots.
	MaxSampleValues = 1 << 24
	// MaxArrayValues bounds the elements of one .npy array (or .npz
	// member): 1 GiB as float32. A plain .npy must hold its elements
	// anyway, but a deflated .npz member can expand a thousandfold.
	MaxArrayValues = 1 << 28
)

// limitErr is the error for a violated limit; name is the constant's.
func limitErr(what string, got int, name string, limit int) error {
	return fmt.Errorf("%s: %d exceeds the limit of %d (data.%s)", what, got, limit, name)
}
