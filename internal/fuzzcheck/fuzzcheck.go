// Package fuzzcheck is the body every romae fuzz target shares: it runs one
// parser call on one input and fails the test if the call panics, does not
// finish within a deadline (a hang), or allocates far more memory than the
// input could justify. It is used only from *_fuzz_test.go files.
//
// The allocation bound is Budget(n) = BaseBudget + PerByte·n bytes for an
// n-byte input: a parser may allocate a fixed amount (buffers, a bounded
// header) plus a constant factor of what it was actually given. A loader
// that sizes an allocation by a number read from the file rather than by the
// bytes behind it — the bug class this guards against — exceeds the bound
// for a small hostile input long before the machine runs out of memory.
// The measure is runtime/metrics' cumulative "/gc/heap/allocs:bytes", so it
// counts every heap allocation made during the call, freed or not; tests
// using it must not run in parallel with other allocating tests.
package fuzzcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const (
	// BaseBudget is the allocation any call may make whatever its input.
	BaseBudget = 128 << 20
	// PerByte is the allocation allowed per byte of input.
	PerByte = 1000
	// Timeout is how long one call may run before it counts as a hang. It
	// is generous because the fuzzing machine is shared and slow; a real
	// hang (a loop whose end depends on a value read from the input) runs
	// for minutes or forever.
	Timeout = 10 * time.Second
)

// Budget is the allocation bound for an input of n bytes.
func Budget(n int) uint64 { return BaseBudget + PerByte*uint64(n) }

var sample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

func allocated() uint64 {
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// Check runs fn and fails t on a panic, a hang or an allocation beyond
// Budget(inputLen). fn's own error results are the caller's business: a
// parser refusing a hostile input is the expected outcome.
func Check(t testing.TB, inputLen int, fn func()) {
	t.Helper()
	type result struct {
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	before := allocated()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{r, debug.Stack()}
				return
			}
			done <- result{}
		}()
		fn()
	}()
	select {
	case r := <-done:
		if r.panicked != nil {
			t.Fatalf("panic on a %d-byte input: %v\n%s", inputLen, r.panicked, r.stack)
		}
	case <-time.After(Timeout):
		t.Fatalf("hang: no result after %v on a %d-byte input", Timeout, inputLen)
	}
	if got, limit := allocated()-before, Budget(inputLen); got > limit {
		t.Fatalf("allocated %s on a %d-byte input, more than the %s bound (%d MiB + %d per input byte)",
			mib(got), inputLen, mib(limit), BaseBudget>>20, PerByte)
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// WriteInput writes b to dir/name (replacing it) and returns the path, for
// loaders that take a file name.
func WriteInput(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// AddFiles adds the contents of each existing file as a seed.
func AddFiles(f *testing.F, paths ...string) {
	for _, p := range paths {
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			if b, err := os.ReadFile(m); err == nil {
				f.Add(b)
			}
		}
	}
}
