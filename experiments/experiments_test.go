package experiments

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"romae/datasets"
)

// Every experiment runs end to end at the tiny budget: results.json and
// results.md are written and well formed, each row has a finite value per
// seed, figures exist as PNG files, and learning beats the trivial baseline
// where the row states one.
func TestExperimentsTiny(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			o := Options{Budget: Tiny, Out: t.TempDir()}
			if name == "uea" {
				o.Data = "../../shared/data/uea/BasicMotions_TRAIN.ts"
			}
			if name == "recsys" {
				o.Data = "../../shared/data/movielens-small"
			}
			if name == "images" {
				if _, err := os.Stat(datasets.FashionMNISTDir()); err != nil {
					t.Skipf("images needs Debian's dataset-fashion-mnist package: %v", err)
				}
			}
			res, err := Run(context.Background(), name, o)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			raw, err := os.ReadFile(filepath.Join(o.Out, resultsDirName(name, o.Data), "results.json"))
			if err != nil || json.Unmarshal(raw, &back) != nil || len(back.Rows) == 0 {
				t.Fatalf("results.json unreadable or empty: %v", err)
			}
			md, err := os.ReadFile(filepath.Join(o.Out, resultsDirName(name, o.Data), "results.md"))
			if err != nil || !strings.Contains(string(md), "| "+res.Rows[0].Experiment+" |") {
				t.Errorf("results.md: %v", err)
			}
			for _, row := range res.Rows {
				if len(row.Values) != res.Seeds {
					t.Errorf("%s: %d values for %d seeds", row.Setting, len(row.Values), res.Seeds)
				}
				for _, v := range row.Values {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Errorf("%s: value %v", row.Setting, v)
					}
				}
				if row.BaselineIs == "" || skipBaseline[row.Setting] {
					continue
				}
				better := row.Mean < row.Baseline
				if strings.HasPrefix(row.Metric, "accuracy") {
					better = row.Mean > row.Baseline
				}
				if !better {
					t.Errorf("%s: %s %.4g does not beat the baseline (%s) %.4g", row.Setting, row.Metric, row.Mean, row.BaselineIs, row.Baseline)
				}
			}
			for _, f := range res.Figures {
				b, err := os.ReadFile(f)
				if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
					t.Errorf("figure %s missing or not a PNG: %v", f, err)
				}
			}
		})
	}
}

// Rows whose baseline is the best possible result: without [CLS] RoPE can
// only learn the mean, so "beating" the variance is not expected.
var skipBaseline = map[string]bool{"RoMAE-tiny, no [CLS]": true}

// The paired test against a value worked out independently (t = 3.7199 on
// 4 degrees of freedom; the tail of Student's density integrated
// numerically), and the Holm step-down adjustment by hand.
func TestPairedStatistics(t *testing.T) {
	if p := pairedP([]float64{1, 2, 3, 4, 6}); math.Abs(p-0.0204758) > 1e-6 {
		t.Errorf("pairedP = %v, want 0.0204758", p)
	}
	if p := pairedP([]float64{0, 0, 0}); p != 1 {
		t.Errorf("pairedP of zeros = %v, want 1", p)
	}
	// Holm: sorted 0.01, 0.02, 0.04 → 3·0.01, max(0.03, 2·0.02), max(0.04, 0.04).
	got := holm([]float64{0.04, 0.01, 0.02})
	for i, want := range []float64{0.04, 0.03, 0.04} {
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("holm = %v, want [0.04 0.03 0.04]", got)
			break
		}
	}
}

// patchFrames keeps every pixel once, in its patch at (time, row, column),
// and frameMSE scores the mean of a frame's tokens.
func TestPatchFrames(t *testing.T) {
	ds := datasets.Pendulum(2, 1)
	const side, P = datasets.PendulumSize, 12
	pt := patchFrames(ds, P)
	if err := pt.Validate(); err != nil {
		t.Fatal(err)
	}
	for si, s := range ds.Samples {
		ps := pt.Samples[si]
		if got, want := len(ps.Positions), 3*4*len(s.Positions); got != want {
			t.Fatalf("sample %d: %d position values, want %d", si, got, want)
		}
		for f, tm := range s.Positions {
			for y := 0; y < side; y++ {
				for x := 0; x < side; x++ {
					tok := f*4 + (y/P)*2 + x/P
					if ps.Positions[3*tok] != tm || ps.Positions[3*tok+1] != float32(y/P) || ps.Positions[3*tok+2] != float32(x/P) {
						t.Fatalf("token %d at %v", tok, ps.Positions[3*tok:3*tok+3])
					}
					if got, want := ps.Values[tok*P*P+(y%P)*P+x%P], s.Values[f*side*side+y*side+x]; got != want {
						t.Fatalf("sample %d frame %d pixel (%d,%d): %v, want %v", si, f, y, x, got, want)
					}
				}
			}
			for j := 0; j < 4; j++ {
				if ps.Target[2*(f*4+j)] != s.Target[2*f] || ps.Target[2*(f*4+j)+1] != s.Target[2*f+1] {
					t.Fatalf("frame %d token %d: target %v, want %v", f, j, ps.Target[2*(f*4+j):2*(f*4+j)+2], s.Target[2*f:2*f+2])
				}
			}
		}
	}
	// Tokens of a frame predicting target ± e average to the target.
	pred := make([][]float64, len(pt.Samples))
	for si, s := range pt.Samples {
		for i, v := range s.Target {
			e := 0.1
			if (i/2)%2 == 1 {
				e = -0.1
			}
			pred[si] = append(pred[si], float64(v)+e)
		}
	}
	if got := frameMSE(pred, pt, 4); got > 1e-12 {
		t.Errorf("frameMSE of predictions averaging to the truth = %v, want 0", got)
	}
	if got := frameMSE(pred, pt, 1); math.Abs(got-0.01) > 1e-9 {
		t.Errorf("frameMSE per token = %v, want 0.01", got)
	}
}
