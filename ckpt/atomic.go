// Package ckpt writes and reads romae checkpoints: safetensors files (the
// format the authors' PyTorch code and the Hugging Face ecosystem use, so
// weights move both ways) written atomically, so that a crash or a full
// disk mid-save never destroys the last good checkpoint.
package ckpt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// WriteFileAtomic replaces path with what write produces, or leaves it
// untouched: the data goes to a temporary file in the same directory (a
// rename is only atomic within one file system), is flushed and fsynced,
// and only then renamed over path; the directory is fsynced last so the
// rename itself survives a power cut. On any error — or a panic in write —
// the temporary file is removed and the old file is as it was.
//
// A new file gets mode 0644; an existing file keeps its mode. If only the
// final directory fsync fails, the new content is in place but its
// durability is not guaranteed, and the error says so.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("ckpt: %s exists and is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	tmp := f.Name()
	inFlight.Store(tmp, struct{}{})
	defer inFlight.Delete(tmp)
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ckpt: syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ckpt: replacing %s: %w", path, err)
	}
	done = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("ckpt: %s was written but syncing its directory failed, so it may not survive a crash: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable. Windows cannot open a directory
// for syncing and does not need it for NTFS metadata, so it is skipped there.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// RemoveTemps deletes the temporary files that WriteFileAtomic left in dir
// when its process was killed mid-write (a SIGKILL runs no deferred
// clean-up), so they do not pile up, each as large as a checkpoint, over a
// run's crashes. Only names of the form WriteFileAtomic creates are
// touched; a missing dir is fine. Call it only where no other process is
// writing into dir.
func RemoveTemps(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if err != nil {
		return err
	}
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("ckpt: removing a temporary file left by an interrupted write: %w", err)
			}
		}
	}
	return nil
}

// inFlight holds the temporary files WriteFileAtomic is writing now.
var inFlight sync.Map

// RemoveInFlight deletes the temporary files of the writes in progress:
// for a process about to exit on a signal, which runs no deferred clean-up
// of the goroutines it leaves. The files they were replacing are untouched.
func RemoveInFlight() {
	inFlight.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}
