package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	// 3 classes of 30, 20 and 10 samples plus 10 unlabelled.
	ds := &Dataset{Name: "s", C: 1, D: 1, Classes: []string{"a", "b", "c"}}
	for i := range 70 {
		label := []int{0, 1, 2, -1}[classOf(i)]
		ds.Samples = append(ds.Samples, Sample{ID: string(rune(i)), Values: []float32{float32(i)}, Positions: []float32{0}, Label: label})
	}
	parts := Split(ds, []float64{0.6, 0.2, 0.2}, rand.New(rand.NewPCG(1, 2)))
	wantSizes := []int{42, 14, 14}
	wantPerClass := [][]int{{6, 18, 12, 6}, {2, 6, 4, 2}, {2, 6, 4, 2}} // unlabelled, a, b, c
	seen := map[float32]bool{}
	for k, p := range parts {
		if len(p.Samples) != wantSizes[k] {
			t.Errorf("part %d has %d samples, want %d", k, len(p.Samples), wantSizes[k])
		}
		counts := make([]int, 4)
		for i, s := range p.Samples {
			counts[s.Label+1]++
			if seen[s.Values[0]] {
				t.Errorf("sample %v in two parts", s.Values[0])
			}
			seen[s.Values[0]] = true
			if i > 0 && p.Samples[i-1].Values[0] > s.Values[0] {
				t.Errorf("part %d not in dataset order", k)
			}
		}
		if !slices.Equal(counts, wantPerClass[k]) {
			t.Errorf("part %d class counts %v, want %v", k, counts, wantPerClass[k])
		}
		if !slices.Equal(p.Classes, ds.Classes) {
			t.Errorf("part %d classes %v", k, p.Classes)
		}
	}
	again := Split(ds, []float64{0.6, 0.2, 0.2}, rand.New(rand.NewPCG(1, 2)))
	for k := range parts {
		if !slices.EqualFunc(parts[k].Samples, again[k].Samples, func(a, b Sample) bool { return a.ID == b.ID }) {
			t.Errorf("part %d differs with the same seed", k)
		}
	}
	other := Split(ds, []float64{0.6, 0.2, 0.2}, rand.New(rand.NewPCG(9, 9)))
	if slices.EqualFunc(parts[1].Samples, other[1].Samples, func(a, b Sample) bool { return a.ID == b.ID }) {
		t.Error("different seeds gave the same validation part")
	}
}

// classOf gives 30 samples of class a, 20 of b, 10 of c and 10 unlabelled.
func classOf(i int) int {
	switch {
	case i < 30:
		return 0
	case i < 50:
		return 1
	case i < 60:
		return 2
	}
	return 3
}

func TestSplitSmallClasses(t *testing.T) {
	// 5 classes of 3: part sizes must still match the fractions overall.
	ds := &Dataset{C: 1, D: 1, Classes: []string{"0", "1", "2", "3", "4"}}
	for i := range 15 {
		ds.Samples = append(ds.Samples, Sample{Values: []float32{1}, Positions: []float32{0}, Label: i % 5})
	}
	parts := Split(ds, []float64{0.8, 0.2}, rand.New(rand.NewPCG(1, 1)))
	if len(parts[0].Samples) != 12 || len(parts[1].Samples) != 3 {
		t.Errorf("sizes %d, %d; want 12, 3", len(parts[0].Samples), len(parts[1].Samples))
	}
}

func TestSplitBadFractions(t *testing.T) {
	for _, f := range [][]float64{{0.5, 0.4}, {1.2, -0.2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("fractions %v did not panic", f)
				}
			}()
			Split(toyDataset(3), f, rand.New(rand.NewPCG(1, 1)))
		}()
	}
}

func TestSubset(t *testing.T) {
	ds := toyDataset(1, 2, 3)
	sub := Subset(ds, []int{2, 0})
	if len(sub.Samples) != 2 || sub.Samples[0].ID != "C" || sub.Samples[1].ID != "A" || sub.C != 2 || len(ds.Samples) != 3 {
		t.Errorf("subset %+v", sub)
	}
}
