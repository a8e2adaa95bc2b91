package data

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ueaDir is the shared UEA data, outside this module's tree.
const ueaDir = "../../shared/data/uea"

// writeTemp writes content to a file called name in a fresh temp dir.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantErr fails unless err is non-nil and its message contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func equalF32(a, b []float32) bool { return slices.Equal(a, b) }
