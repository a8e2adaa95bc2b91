package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"romae/ckpt"
)

// writeFileAtomic replaces path with b through ckpt.WriteFileAtomic, so that
// an interrupted or failed command never leaves a half-written output
// (predictions, embeddings, ids, results) in place of a good one.
func writeFileAtomic(path string, b []byte) error {
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// checkOutput runs before a command reads or computes anything: an --out
// path (not "-", stdout) must end in one of exts, the formats the command
// writes, so that embeddings never land in a ".csv" nor a CSV in a
// ".json"; its directory is made if missing, as a run directory is,
// rather than the command failing there after all its work.
func checkOutput(path string, exts ...string) error {
	if path == "-" || path == "" {
		return nil
	}
	if ext := strings.ToLower(filepath.Ext(path)); !slices.Contains(exts, ext) {
		return fmt.Errorf("--out %s: this command writes %s files (name it so)", path, strings.Join(exts, " or "))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// Limits on what --at may ask for (documented in docs/reliability.md).
const (
	// maxGridPoints bounds START:STOP:STEP's points on one series.
	maxGridPoints = 1_000_000
	// maxQueries bounds the query positions of one interpolate run: grid
	// points × combinations of the other axes × series.
	maxQueries = 10_000_000
)

// atGrid is a parsed --at START:STOP:STEP: n points start + j·step.
type atGrid struct {
	spec        string
	start, step float64
	n           int
}

// parseAt parses --at. The point count is computed up front and bounded,
// and the points are start + j·step for j < n rather than a running sum,
// so the loop ends whatever the values (with START = 1e17 and STEP = 1 a
// running sum t += STEP never moves, and a loop on t ≤ STOP never ends).
func parseAt(spec string) (atGrid, error) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return atGrid{}, fmt.Errorf("--at %q: want START:STOP:STEP", spec)
	}
	var g [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
			return atGrid{}, fmt.Errorf("--at %q: %q is not a finite float32 number", spec, p)
		}
		g[i] = v
	}
	start, stop, step := g[0], g[1], g[2]
	if !(step > 0) || stop < start {
		return atGrid{}, fmt.Errorf("--at %q: want START ≤ STOP and 0 < STEP", spec)
	}
	// The 1e-9 tolerance keeps STOP itself when rounding puts it a hair
	// past the last step, as the earlier loop did.
	n := math.Floor((stop-start)/step+1e-9) + 1
	if !(n <= maxGridPoints) {
		return atGrid{}, fmt.Errorf("--at %q: %.0f points, more than the limit of %d", spec, n, maxGridPoints)
	}
	return atGrid{spec: spec, start: start, step: step, n: int(n)}, nil
}

// at is the j-th point.
func (g atGrid) at(j int) float64 { return g.start + float64(j)*g.step }
