package datasets

import (
	"fmt"
	"testing"

	"romae/data"
)

// ObserveIsolated hides the asked fraction with no two hidden tokens
// neighbours in time within a channel, whatever the token order, and only
// in channels of 3 tokens or more; the same seed gives the same split.
func TestObserveIsolated(t *testing.T) {
	// Series 0: 30 steps on one axis, shuffled. Series 1: the long CSV
	// layout (channel, time): channel 0 of 12 steps, channel 1 of 2 (never
	// hidden), channel 2 of 1. Series 2: 2 tokens (nothing qualifies).
	shuffled := &data.Dataset{C: 1, D: 1}
	var s0 data.Sample
	for j := range 30 {
		tm := float32((j * 7) % 30) // every time once, out of order
		s0.Values = append(s0.Values, tm*tm)
		s0.Positions = append(s0.Positions, tm)
	}
	shuffled.Samples = []data.Sample{s0}
	long := &data.Dataset{C: 1, D: 2, TimeAxis: 1}
	var s1 data.Sample
	add := func(ch, tm float32) {
		s1.Values = append(s1.Values, ch*100+tm)
		s1.Positions = append(s1.Positions, ch, tm)
	}
	for j := range 12 {
		add(0, float32(11-j))
		if j < 2 {
			add(1, float32(j))
		}
	}
	add(2, 5)
	long.Samples = []data.Sample{s1, {Values: []float32{1, 2}, Positions: []float32{0, 0, 0, 1}}}

	tests := []struct {
		name      string
		ds        *data.Dataset
		frac      float64
		wantTotal int // hidden tokens over all samples
	}{
		{"one axis, 10%", shuffled, 0.1, 3},
		{"one axis, a third", shuffled, 1.0 / 3, 10},
		{"long CSV layout", long, 0.2, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				obs, hid := ObserveIsolated(tc.ds, tc.frac, tc.ds.TimeAxis, seed)
				total := 0
				for i := range tc.ds.Samples {
					o, h := obs.Samples[i], hid.Samples[i]
					total += len(h.Values)
					if len(o.Values)+len(h.Values) != len(tc.ds.Samples[i].Values) {
						t.Fatalf("seed %d series %d: %d observed + %d hidden of %d", seed, i, len(o.Values), len(h.Values), len(tc.ds.Samples[i].Values))
					}
					checkIsolated(t, fmt.Sprintf("seed %d series %d", seed, i), tc.ds, &tc.ds.Samples[i], &h)
				}
				// Each token the greedy choice hides rules out at most
				// itself and its 2 neighbours, so a third always fits.
				if total != tc.wantTotal {
					t.Errorf("seed %d: %d hidden, want %d", seed, total, tc.wantTotal)
				}
				again, hid2 := ObserveIsolated(tc.ds, tc.frac, tc.ds.TimeAxis, seed)
				for i := range hid.Samples {
					if fmt.Sprint(hid.Samples[i].Positions) != fmt.Sprint(hid2.Samples[i].Positions) || len(again.Samples[i].Values) != len(obs.Samples[i].Values) {
						t.Fatalf("seed %d: two splits differ", seed)
					}
				}
			}
		})
	}
	for _, bad := range []struct {
		frac float64
		axis int
	}{{0, 0}, {0.34, 0}, {0.1, 1}, {0.1, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("fraction %v, time axis %d: no panic", bad.frac, bad.axis)
				}
			}()
			ObserveIsolated(shuffled, bad.frac, bad.axis, 1)
		}()
	}
}

// checkIsolated fails unless every hidden token of h (from s) lies in a
// channel of 3 tokens or more of s with both its neighbours in time
// observed.
func checkIsolated(t *testing.T, what string, ds *data.Dataset, s, h *data.Sample) {
	t.Helper()
	D, ta := ds.D, ds.TimeAxis
	hidden := map[string]bool{}
	key := func(p []float32) string { return fmt.Sprint(p) }
	for j := 0; j < len(h.Positions); j += D {
		hidden[key(h.Positions[j:j+D])] = true
	}
	for j := 0; j < len(h.Positions); j += D {
		p := h.Positions[j : j+D]
		var before, after []float32
		n := 0
		for k := 0; k < len(s.Positions); k += D {
			q := s.Positions[k : k+D]
			same := true
			for ax := range D {
				same = same && (ax == ta || q[ax] == p[ax])
			}
			if !same {
				continue
			}
			n++
			switch {
			case q[ta] < p[ta] && (before == nil || q[ta] > before[ta]):
				before = q
			case q[ta] > p[ta] && (after == nil || q[ta] < after[ta]):
				after = q
			}
		}
		if n < 3 {
			t.Errorf("%s: token %v hidden in a channel of %d tokens", what, p, n)
		}
		for _, nb := range [][]float32{before, after} {
			if nb != nil && hidden[key(nb)] {
				t.Errorf("%s: tokens %v and %v, neighbours in time, both hidden", what, p, nb)
			}
		}
	}
}
