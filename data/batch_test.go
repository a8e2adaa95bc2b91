package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// toyDataset has samples of the given lengths with C = 2, D = 1; value
// (token i, slot k) of sample s is 100s + 10i + k + 1, position i + 0.5.
func toyDataset(lengths ...int) *Dataset {
	ds := &Dataset{Name: "toy", C: 2, D: 1, Classes: []string{"a", "b"}, TargetDim: 1, TargetPerToken: true}
	for s, n := range lengths {
		smp := Sample{ID: string(rune('A' + s)), Label: s % 2}
		for i := range n {
			smp.Values = append(smp.Values, float32(100*s+10*i+1), float32(100*s+10*i+2))
			smp.Positions = append(smp.Positions, float32(i)+0.5)
			smp.Target = append(smp.Target, float32(-i))
		}
		ds.Samples = append(ds.Samples, smp)
	}
	return ds
}

func TestCollate(t *testing.T) {
	ds := toyDataset(2, 3, 1)
	b := Collate(nil, ds, []int{2, 0})
	if b.B != 2 || b.L != 2 || b.C != 2 || b.D != 1 || !b.TargetPerToken || b.TargetDim != 1 {
		t.Fatalf("dims %+v", b)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"Values", b.Values, []float32{201, 202, 0, 0, 1, 2, 11, 12}},
		{"Positions", b.Positions, []float32{0.5, 0, 0.5, 1.5}},
		{"Pad", b.Pad, []bool{false, true, false, false}},
		{"Lengths", b.Lengths, []int{1, 2}},
		{"Labels", b.Labels, []int{0, 0}},
		{"Targets", b.Targets, []float32{0, 0, 0, -1}},
	} {
		if !equalAny(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	// Reuse with a smaller batch must clear stale padding.
	dirty := Collate(nil, ds, []int{1, 1})
	b = Collate(dirty, ds, []int{2, 2})
	if b != dirty || !slices.Equal(b.Values, []float32{201, 202, 201, 202}) || b.L != 1 {
		t.Errorf("reused batch = %+v", b)
	}

	// Per-sample targets and no targets.
	ds.TargetPerToken = false
	for i := range ds.Samples {
		ds.Samples[i].Target = []float32{float32(i)}
	}
	if b = Collate(b, ds, []int{1, 0}); !slices.Equal(b.Targets, []float32{1, 0}) {
		t.Errorf("per-sample targets %v", b.Targets)
	}
	ds.TargetDim = 0
	if b = Collate(b, ds, []int{1}); b.Targets != nil {
		t.Errorf("targets %v, want nil", b.Targets)
	}
}

func equalAny(a, b any) bool {
	switch a := a.(type) {
	case []float32:
		return slices.Equal(a, b.([]float32))
	case []bool:
		return slices.Equal(a, b.([]bool))
	case []int:
		return slices.Equal(a, b.([]int))
	}
	return false
}

func TestCollateNoAllocOnReuse(t *testing.T) {
	ds := toyDataset(5, 9, 3, 7)
	idx := []int{0, 1, 2, 3}
	b := Collate(nil, ds, idx)
	mask := RandomMask(nil, b, 0.75, rand.New(rand.NewPCG(1, 1)))
	rng := rand.New(rand.NewPCG(2, 2))
	allocs := testing.AllocsPerRun(100, func() {
		b = Collate(b, ds, idx[:1+rng.IntN(4)])
		mask = RandomMask(mask, b, 0.75, rng)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Collate+RandomMask on reuse, want 0", allocs)
	}
}

func TestRandomMask(t *testing.T) {
	ds := toyDataset(1, 2, 3, 4, 10, 0+7)
	b := Collate(nil, ds, []int{0, 1, 2, 3, 4, 5})
	// Move sample 5's padding to the front to check Pad, not Lengths, is obeyed.
	for i := range b.L {
		b.Pad[5*b.L+i] = i < b.L-7
	}
	for _, tc := range []struct {
		ratio float64
		want  []int // masked count per sample (nValid 1, 2, 3, 4, 10, 7)
	}{
		{0, []int{0, 1, 1, 1, 1, 1}},
		{0.25, []int{0, 1, 1, 1, 3, 2}},
		{0.5, []int{1, 1, 2, 2, 5, 4}},
		{0.75, []int{1, 1, 2, 3, 8, 5}},
		{1, []int{1, 1, 2, 3, 9, 6}},
	} {
		rng := rand.New(rand.NewPCG(7, 7))
		m := RandomMask(nil, b, tc.ratio, rng)
		m2 := RandomMask(nil, b, tc.ratio, rand.New(rand.NewPCG(7, 7)))
		if !slices.Equal(m, m2) {
			t.Errorf("ratio %v: same seed, different masks", tc.ratio)
		}
		for s := range b.B {
			count := 0
			for i := range b.L {
				j := s*b.L + i
				if m[j] && b.Pad[j] {
					t.Fatalf("ratio %v: sample %d pad slot %d masked", tc.ratio, s, i)
				}
				if m[j] {
					count++
				}
			}
			if count != tc.want[s] {
				t.Errorf("ratio %v: sample %d has %d masked, want %d", tc.ratio, s, count, tc.want[s])
			}
		}
	}
}

// TestRandomMaskUniform checks that every token of a 6-token sample is
// masked about equally often (3 of 6 each time → 1/2).
func TestRandomMaskUniform(t *testing.T) {
	b := Collate(nil, toyDataset(6), []int{0})
	rng := rand.New(rand.NewPCG(3, 4))
	hits := make([]int, 6)
	const trials = 20000
	var m []bool
	for range trials {
		m = RandomMask(m, b, 0.5, rng)
		for i, x := range m {
			if x {
				hits[i]++
			}
		}
	}
	for i, h := range hits {
		if p := float64(h) / trials; math.Abs(p-0.5) > 0.02 {
			t.Errorf("token %d masked with frequency %.3f, want 0.5", i, p)
		}
	}
}

func TestRandomMaskBadRatio(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ratio 1.5 did not panic")
		}
	}()
	RandomMask(nil, Collate(nil, toyDataset(2), []int{0}), 1.5, rand.New(rand.NewPCG(1, 1)))
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(ds *Dataset)
		want   string
	}{
		{"ok", func(*Dataset) {}, ""},
		{"C", func(ds *Dataset) { ds.C = 0 }, "C = 0"},
		{"D", func(ds *Dataset) { ds.D = 0 }, "D = 0"},
		{"no samples", func(ds *Dataset) { ds.Samples = nil }, "no samples"},
		{"per-token without dim", func(ds *Dataset) { ds.TargetDim = 0 }, "TargetPerToken"},
		{"empty", func(ds *Dataset) { ds.Samples[1].Values = nil }, `sample 1 (id "B"): no tokens`},
		{"ragged values", func(ds *Dataset) { ds.Samples[0].Values = ds.Samples[0].Values[:3] }, "not a multiple of C"},
		{"positions", func(ds *Dataset) { ds.Samples[1].Positions = ds.Samples[1].Positions[:1] }, `sample 1 (id "B"): len(Positions) = 1`},
		{"label", func(ds *Dataset) { ds.Samples[0].Label = 2 }, "Label = 2 out of range"},
		{"target length", func(ds *Dataset) { ds.Samples[0].Target = nil }, "len(Target) = 0, want 2"},
		{"NaN value", func(ds *Dataset) { ds.Samples[1].Values[3] = float32(math.NaN()) }, "Values[3] = NaN"},
		{"Inf position", func(ds *Dataset) { ds.Samples[0].Positions[1] = float32(math.Inf(-1)) }, "Positions[1] = -Inf"},
		{"NaN target", func(ds *Dataset) { ds.Samples[0].Target[0] = float32(math.NaN()) }, "Target[0] = NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := toyDataset(2, 3)
			tc.mutate(ds)
			err := ds.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, `dataset "toy"`, tc.want)
		})
	}
}
