package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// splitmix64 is a bijective bit mixer used to turn (seed, stream, index)
// into well-separated PCG seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// fnv64 hashes a stream name (FNV-1a).
func fnv64(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// sampleRNG is the random stream of sample i of the generator called stream.
func sampleRNG(seed uint64, stream string, i int) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix64(seed^fnv64(stream)), splitmix64(uint64(i)^0x5851f42d4c957f2d)))
}

// sampleID is the ID of sample i: "prefix-000042".
func sampleID(prefix string, i int) string {
	return fmt.Sprintf("%s-%06d", prefix, i)
}

// parallelFor calls fn(i) for i in [0, n) on all cores. fn must only write
// to per-i state, so the result does not depend on scheduling.
func parallelFor(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// chooseSorted returns k distinct indices of [0, n), uniformly among all
// k-subsets, in increasing order (partial Fisher–Yates).
func chooseSorted(rng *rand.Rand, n, k int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := range k {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	out := perm[:k:k]
	slices.Sort(out)
	return out
}

// logUniform draws from a log-uniform distribution on [lo, hi].
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

// uniform draws from U(lo, hi).
func uniform(rng *rand.Rand, lo, hi float64) float64 {
	return lo + rng.Float64()*(hi-lo)
}

func clamp01(x float64) float64 {
	return min(max(x, 0), 1)
}

func mustPositive(fn, what string, v int) {
	if v < 1 {
		panic(fmt.Sprintf("datasets.%s: %s = %d, want >= 1", fn, what, v))
	}
}
