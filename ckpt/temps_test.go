package ckpt

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RemoveTemps deletes what a killed WriteFileAtomic leaves (its own
// temporary names), and nothing else.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	keep := []string{"last.safetensors", "notes.tmp-1", ".hidden", "x.safetensors.tmp-2"}
	gone := []string{".last.safetensors.tmp-123", ".result.json.tmp-9"}
	for _, n := range append(slices.Clone(keep), gone...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".sub.tmp-4"), 0o755); err != nil { // not a file: kept
		t.Fatal(err)
	}
	if err := RemoveTemps(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(keep, ".sub.tmp-4") {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v, want it kept", n, err)
		}
	}
	for _, n := range gone {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", n, err)
		}
	}
	if err := RemoveTemps(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing dir: %v", err)
	}
}
