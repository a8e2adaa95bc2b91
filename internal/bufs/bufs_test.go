package bufs

import "testing"

func TestResize(t *testing.T) {
	base := make([]int, 3, 8)
	base[0] = 7
	for _, tc := range []struct {
		name   string
		n      int
		reused bool
	}{
		{"shorter", 2, true},
		{"up to capacity", 8, true},
		{"beyond capacity", 9, false},
		{"empty", 0, true},
	} {
		got := Resize(base, tc.n)
		if len(got) != tc.n {
			t.Errorf("%s: len %d, want %d", tc.name, len(got), tc.n)
		}
		if tc.n > 0 && (&got[0] == &base[0]) != tc.reused {
			t.Errorf("%s: reused the memory %v, want %v", tc.name, !tc.reused, tc.reused)
		}
		if !tc.reused && got[0] != 0 {
			t.Errorf("%s: new memory not zero: %v", tc.name, got[0])
		}
	}
}
