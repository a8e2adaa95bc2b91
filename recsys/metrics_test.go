package recsys

import (
	"math"
	"math/rand/v2"
	"testing"

	"romae/events"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Values worked out by hand.
func TestLogLossAndNE(t *testing.T) {
	p, y := []float64{0.9, 0.2, 0.6, 0.5}, []int{1, 0, 0, 1}
	// −(ln 0.9 + ln 0.8 + ln 0.4 + ln 0.5)/4
	want := -(math.Log(0.9) + math.Log(0.8) + math.Log(0.4) + math.Log(0.5)) / 4
	if got := LogLoss(p, y); !near(got, want) {
		t.Errorf("LogLoss = %v, want %v", got, want)
	}
	// Base rate 1/2: entropy ln 2.
	ne, err := NE(want, y)
	if err != nil || !near(ne, want/math.Ln2) {
		t.Errorf("NE = %v (%v), want %v", ne, err, want/math.Ln2)
	}
	// Predicting the base rate gives NE 1 exactly.
	y = []int{1, 0, 0, 0}
	base := []float64{0.25, 0.25, 0.25, 0.25}
	if ne, _ := NE(LogLoss(base, y), y); !near(ne, 1) {
		t.Errorf("NE of the base rate = %v, want 1", ne)
	}
	if _, err := NE(0.3, []int{1, 1}); err == nil {
		t.Error("NE of one-class labels: no error")
	}
	// A certain mistake is clipped, not infinite: −ln(1e-15).
	if got := LogLoss([]float64{0}, []int{1}); !near(got, -math.Log(1e-15)) {
		t.Errorf("LogLoss(p=0, y=1) = %v", got)
	}
	if got, want := LogLossLogit(2, 1), math.Log1p(math.Exp(-2)); !near(got, want) {
		t.Errorf("LogLossLogit(2, 1) = %v, want %v", got, want)
	}
	if got := LogLossLogit(-800, 1); !near(got, 800) {
		t.Errorf("LogLossLogit(-800, 1) = %v, want 800 (no overflow)", got)
	}
}

func TestAUC(t *testing.T) {
	cases := []struct {
		score []float64
		y     []int
		want  float64
	}{
		{[]float64{0.1, 0.4, 0.35, 0.8}, []int{0, 0, 1, 1}, 0.75},             // pairs (pos, neg): 0.35>0.1, 0.35<0.4, 0.8>both → 3/4
		{[]float64{0.5, 0.5, 0.5}, []int{1, 0, 0}, 0.5},                       // all tied
		{[]float64{0.3, 0.3, 0.9, 0.1}, []int{1, 0, 1, 0}, (1 + 0.5 + 2) / 4}, // one tie counts half
		{[]float64{3, 2, 1}, []int{0, 0, 1}, 0},
	}
	for _, c := range cases {
		got, err := AUC(c.score, c.y)
		if err != nil || !near(got, c.want) {
			t.Errorf("AUC(%v, %v) = %v (%v), want %v", c.score, c.y, got, err, c.want)
		}
	}
	if _, err := AUC([]float64{1, 2}, []int{1, 1}); err == nil {
		t.Error("AUC of one class: no error")
	}
}

func TestRankMetrics(t *testing.T) {
	// Items 1..5 (index 0 is not a candidate, whatever its score).
	score := []float64{99, 0.5, 0.9, 0.2, 0.9, 0.1}
	if r := RankOf(score, 2, nil); r != 1 { // item 4 ties at 0.9: counts against
		t.Errorf("rank of item 2 = %d, want 1", r)
	}
	if r := RankOf(score, 2, func(i int) bool { return i == 4 }); r != 0 {
		t.Errorf("rank of item 2 with item 4 excluded = %d, want 0", r)
	}
	if r := RankOf(score, 5, nil); r != 4 {
		t.Errorf("rank of item 5 = %d, want 4", r)
	}
	ranks := []int{0, 1, 9, 10, 3}
	if got := HitRate(ranks, 10); !near(got, 0.8) {
		t.Errorf("HR@10 = %v, want 0.8", got)
	}
	want := (1 + 1/math.Log2(3) + 1/math.Log2(11) + 1/math.Log2(5)) / 5
	if got := NDCG(ranks, 10); !near(got, want) {
		t.Errorf("NDCG@10 = %v, want %v", got, want)
	}
}

// The baselines on a log small enough to work out by hand.
func TestBaselines(t *testing.T) {
	items := events.NewIndex("item", []string{"a", "b", "c", "d"}) // a=1 … d=4
	ev := func(item int32, label int8) events.Event { return events.Event{Item: item, Label: label} }
	l := &events.Log{Path: "hand", Vocab: &events.Vocab{Items: items}, HasLabel: true, Users: []events.User{
		{ID: "u", Events: []events.Event{ev(1, 1), ev(2, 1), ev(1, 0), ev(3, 0)}},
		{ID: "v", Events: []events.Event{ev(2, 0), ev(4, 1), ev(2, 1), ev(4, 1)}},
	}}
	d := &Data{Log: l, Split: events.Split{{0, 0, events.Val, events.Test}, {0, 0, events.Val, events.Test}}}
	// Training base rate 3/4; prior weight 2. Test targets: u's 4th event
	// (earlier 1,1,0: (2+1.5)/(3+2) = 0.7, outcome 0) and v's (earlier
	// 0,1,1: 0.7, outcome 1): tied scores, AUC 1/2.
	met, err := UserRateBaseline(d, events.Test, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantLL := -(math.Log(0.3) + math.Log(0.7)) / 2
	if !near(met.LogLoss, wantLL) || !near(met.AUC, 0.5) || met.N != 2 {
		t.Errorf("user-rate baseline %+v, want log loss %v, AUC 0.5", met, wantLL)
	}
	// Training counts: a 1, b 2, d 1, c 0. u's test target c (history a, b):
	// candidates c, d: d (1) beats c (0): rank 1. v's target d (history b,
	// d; d is the target itself): candidates a (1, tied: counts against),
	// c (0): rank 1. NLL: add-one over 4 training events and 4 items.
	met, err = PopularityBaseline(d, events.Test)
	if err != nil {
		t.Fatal(err)
	}
	wantNLL := -(math.Log(1.0/8) + math.Log(2.0/8)) / 2
	if met.N != 2 || !near(met.HR10, 1) || !near(met.NDCG10, 1/math.Log2(3)) || !near(met.NLL, wantNLL) {
		t.Errorf("popularity baseline %+v, want NDCG %v, NLL %v", met, 1/math.Log2(3), wantNLL)
	}
}

// The sampler draws items in proportion to their training count plus one,
// and its logQ is the log of each item's expected count in a draw.
func TestSampler(t *testing.T) {
	items := events.NewIndex("item", []string{"a", "b", "c"})
	ev := func(item int32) events.Event { return events.Event{Item: item} }
	// Training targets (events after a user's first): b ×3, c ×1; a never.
	l := &events.Log{Vocab: &events.Vocab{Items: items}, Users: []events.User{
		{Events: []events.Event{ev(1), ev(2), ev(2), ev(3)}}, {Events: []events.Event{ev(3), ev(2)}},
	}}
	d := &Data{Log: l, Split: events.Split{make([]events.Role, 4), make([]events.Role, 2)}}
	s := newSampler(d, 4, 1000)
	// q = (1, 4, 2)/7 for a, b, c.
	for i, q := range []float64{1.0 / 7, 4.0 / 7, 2.0 / 7} {
		if want := math.Log(1000 * q); !near(s.neg.LogQ[i+1], want) {
			t.Errorf("logQ[%d] = %v, want %v", i+1, s.neg.LogQ[i+1], want)
		}
	}
	counts := make([]int, 4)
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		for _, it := range s.draw(rng).Items {
			counts[it]++
		}
	}
	for i, q := range []float64{1.0 / 7, 4.0 / 7, 2.0 / 7} {
		if got := float64(counts[i+1]) / 1e5; math.Abs(got-q) > 0.01 {
			t.Errorf("item %d drawn with frequency %.3f, want %.3f", i+1, got, q)
		}
	}
	if counts[0] != 0 {
		t.Errorf("the unknown item was drawn %d times", counts[0])
	}
}
