package recsys

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"romae/events"
	"romae/internal/gradcheck"
)

// synthData is a small event log with structure to learn: each user likes
// one of two item halves, and watches items in a drifting order, with
// irregular gaps. One event-side categorical column, item categories.
func synthData(users, items int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 5))
	vocab := &events.Vocab{Items: events.NewIndex("item", nil), EventCats: []*events.Index{events.NewIndex("device", []string{"app", "web"})}}
	ids := make([]string, items)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	vocab.Items = events.NewIndex("item", ids)
	l := &events.Log{Path: "synth", Vocab: vocab, HasLabel: true}
	for u := 0; u < users; u++ {
		n := 6 + rng.IntN(20)
		t := 1.5e9 + rng.Float64()*1e8
		cur := rng.IntN(items)
		half := u % 2
		usr := events.User{ID: fmt.Sprint(u)}
		for i := 0; i < n; i++ {
			cur = (cur + 1 + rng.IntN(3)) % items
			t += rng.ExpFloat64() * 3600 * float64(1+rng.IntN(48))
			label := int8(0)
			if (cur < items/2) == (half == 0) && rng.Float64() < 0.8 {
				label = 1
			}
			usr.Events = append(usr.Events, events.Event{Item: int32(cur + 1), Label: label, Time: t, Cats: []int32{int32(1 + rng.IntN(2))}, Line: int32(i + 2)})
		}
		l.Users = append(l.Users, usr)
	}
	feat := &events.ItemFeatures{Values: events.NewIndex("genres", []string{"a", "b", "c"}), Of: make([][]int32, items+1)}
	for i := 1; i <= items; i++ {
		feat.Of[i] = []int32{int32(1 + i%3)}
		if i%4 == 0 {
			feat.Of[i] = append(feat.Of[i], int32(1+(i+1)%3))
		}
	}
	return &Data{Log: l, Items: feat}
}

func testConfig(task, variant string, d *Data, maxLen int) Config {
	c := DefaultConfig(task, variant)
	c.DModel, c.Heads, c.Depth, c.FFN, c.SirenHidden = 8, 2, 2, 12, 5
	c.MaxLen = maxLen
	c.Items, c.ItemCats, c.EventCats = d.Log.Vocab.Items.Len(), d.Items.Values.Len(), []int{d.Log.Vocab.EventCats[0].Len()}
	return c
}

func mustSplit(t testing.TB, d *Data, rule events.SplitRule) {
	sp, err := rule.Apply(d.Log)
	if err != nil {
		t.Fatal(err)
	}
	d.Split = sp
}

// Every parameter gradient of every variant and task agrees with central
// finite differences in float64: the embeddings' scatter, the angle
// network, ω and λ, RoPE's angle gradient, the causal blocks and both
// heads (sampled and full softmax).
func TestModelGradients(t *testing.T) {
	d := synthData(4, 9, 1)
	mustSplit(t, d, events.SplitRule{Rule: events.LastFraction, Val: 0.2, Test: 0.2})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range Variants() {
			negSets := [][]int32{nil}
			if task == TaskNext {
				negSets = append(negSets, []int32{2, 5, 7, 9, 3})
			}
			for _, neg := range negSets {
				name := fmt.Sprintf("%s/%s/negatives=%v", task, variant, neg)
				t.Run(name, func(t *testing.T) {
					cfg := testConfig(task, variant, d, 6)
					m, err := New[float64](cfg, d.Items.Of, 3)
					if err != nil {
						t.Fatal(err)
					}
					// Weights of order 1, so that every term matters.
					rng := rand.New(rand.NewPCG(9, 9))
					for i := range m.W {
						m.W[i] += 0.3 * rng.NormFloat64()
					}
					ws := m.Windows(d, events.Train)
					bt, err := d.Collate(nil, ws[:3], task)
					if err != nil {
						t.Fatal(err)
					}
					work := m.NewWorkspace()
					loss := func() float64 {
						l, _, err := m.Loss(work, bt, neg)
						if err != nil {
							t.Fatal(err)
						}
						return l
					}
					m.ZeroGrad()
					if _, n, _ := m.Loss(work, bt, neg); n == 0 {
						t.Fatal("no scored tokens")
					}
					m.Backward(work)
					for _, p := range m.Params {
						if err := gradcheck.Check(p.Name, p.W, p.G, loss, 24); err != nil {
							t.Error(err)
						}
					}
				})
			}
		}
	}
}

// SIREN-RoPE with ω = 0 is RoPE on the reversed index exactly (λ starts
// at 1): same shared weights, bit-identical outputs.
func TestSirenOmegaZeroIsRoPEIndex(t *testing.T) {
	d := synthData(6, 11, 2)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range []string{PosSiren, PosSirenSin, PosSirenMLP} {
			idx, err := New[float32](testConfig(task, PosIndex, d, 7), d.Items.Of, 4)
			if err != nil {
				t.Fatal(err)
			}
			sir, err := New[float32](testConfig(task, variant, d, 7), d.Items.Of, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range idx.Params {
				q := sir.Param(p.Name)
				if q == nil {
					t.Fatalf("%s lacks %s", variant, p.Name)
				}
				for i := range p.W {
					if p.W[i] != q.W[i] {
						t.Fatalf("%s: shared weight %s differs at init", variant, p.Name)
					}
				}
			}
			clear(sir.Param("siren.omega").W)
			bt, err := d.Collate(nil, idx.Windows(d, events.Train), task)
			if err != nil {
				t.Fatal(err)
			}
			w1, w2 := idx.NewWorkspace(), sir.NewWorkspace()
			l1, _, err1 := idx.Loss(w1, bt, nil)
			l2, _, err2 := sir.Loss(w2, bt, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if l1 != l2 {
				t.Errorf("%s/%s: loss %v, RoPE on the index %v", task, variant, l2, l1)
			}
			for i := range w1.out {
				if w1.out[i] != w2.out[i] {
					t.Fatalf("%s/%s: output %d differs: %v vs %v", task, variant, i, w2.out[i], w1.out[i])
				}
			}
			// And ω ≠ 0 does change them (the test can fail).
			sir.Param("siren.omega").W[0] = 1
			if l3, _, _ := sir.Loss(w2, bt, nil); l3 == l1 {
				t.Errorf("%s/%s: ω ≠ 0 left the loss unchanged", task, variant)
			}
		}
	}
}

// A token's output depends on earlier events only: changing the last
// event of a window (its item, time and outcome) leaves every earlier
// output unchanged, for every variant.
func TestNoFutureLeak(t *testing.T) {
	d := synthData(3, 9, 3)
	mustSplit(t, d, events.SplitRule{Rule: events.LeaveOneOut})
	for _, task := range []string{TaskRanking, TaskNext} {
		for _, variant := range Variants() {
			m, err := New[float32](testConfig(task, variant, d, 8), d.Items.Of, 5)
			if err != nil {
				t.Fatal(err)
			}
			ws := []events.Window{{User: 0, Start: 0, End: 6, Targets: []int{1}}}
			bt, err := d.Collate(nil, ws, task)
			if err != nil {
				t.Fatal(err)
			}
			work := m.NewWorkspace()
			if err := m.forward(work, bt); err != nil {
				t.Fatal(err)
			}
			before := append([]float32(nil), work.out...)
			last := bt.L - 1
			bt.Item[last], bt.Time[last], bt.Action[last] = bt.Item[last]%8+1, bt.Time[last]+12345, 2-bt.Action[last]%2
			if err := m.forward(work, bt); err != nil {
				t.Fatal(err)
			}
			dm := m.Cfg.DModel
			for i := 0; i < last*dm; i++ {
				if work.out[i] != before[i] {
					t.Fatalf("%s/%s: output of token %d changed with the last event", task, variant, i/dm)
				}
			}
			changed := false
			for i := last * dm; i < len(before); i++ {
				changed = changed || work.out[i] != before[i]
			}
			if !changed {
				t.Errorf("%s/%s: the last token's own output did not change", task, variant)
			}
		}
	}
}

// Two variants built from one seed share their common weights, so a
// comparison between them is paired from initialisation on.
func TestVariantsShareInitialWeights(t *testing.T) {
	d := synthData(2, 9, 4)
	base, _ := New[float32](testConfig(TaskNext, PosNone, d, 6), d.Items.Of, 7)
	for _, v := range Variants()[1:] {
		m, err := New[float32](testConfig(TaskNext, v, d, 6), d.Items.Of, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range base.Params {
			q := m.Param(p.Name)
			if q == nil || math.Float32bits(q.W[0]) != math.Float32bits(p.W[0]) || q.W[len(q.W)-1] != p.W[len(p.W)-1] {
				t.Errorf("%s: %s differs from the none variant's", v, p.Name)
			}
		}
	}
}
