package linelog

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestPrefixed: lines written in pieces from several goroutines come out
// whole, each once, each behind its writer's prefix.
func TestPrefixed(t *testing.T) {
	var buf bytes.Buffer
	sink := NewSink(&buf)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := sink.Prefixed(fmt.Sprintf("fold %d: ", g))
			for i := range 50 {
				fmt.Fprintf(w, "epoch %d", i)
				fmt.Fprintf(w, " loss %d\nnext ", i)
			}
			fmt.Fprint(w, "end\n")
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4*51 {
		t.Fatalf("%d lines, want %d", len(lines), 4*51)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i, j int
		whole := strings.HasSuffix(l, ": next end")
		if n, _ := fmt.Sscanf(l, "fold %d: epoch %d loss %d", &g, &i, &j); n == 3 && i == j {
			whole = true
		}
		if n, _ := fmt.Sscanf(l, "fold %d: next epoch %d loss %d", &g, &i, &j); n == 3 && i == j {
			whole = true
		}
		if !whole || seen[l] {
			t.Fatalf("line %q: not one whole line behind its prefix, or seen twice", l)
		}
		seen[l] = true
	}
}
