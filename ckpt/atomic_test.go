package ckpt

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func assertOnly(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("directory holds %v, want %v (temp file left behind?)", got, want)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := WriteFileAtomic(path, writeString("first")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, writeString("second")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "second" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v, want \"second\" with the old mode 0600", b, fi.Mode().Perm())
	}
	assertOnly(t, dir, "model.safetensors")
}

// A writer that fails after writing part of the data (more than the buffer,
// so some of it reached the temp file) must leave the old file intact.
func TestWriteFileAtomicFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := os.WriteFile(path, []byte("good"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := WriteFileAtomic(path, func(w io.Writer) error {
		w.Write(make([]byte, 3<<20))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v should wrap the writer's and name %s", err, path)
	}
	func() {
		defer func() { recover() }()
		WriteFileAtomic(path, func(w io.Writer) error { w.Write([]byte("x")); panic("bug") })
	}()
	if b, _ := os.ReadFile(path); string(b) != "good" {
		t.Fatalf("old file now holds %q", b)
	}
	assertOnly(t, dir, "ckpt.safetensors")
}

func TestWriteFileAtomicBadDirectory(t *testing.T) {
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "missing", "f"), writeString("x")); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}
