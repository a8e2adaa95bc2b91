package jsondiff

import (
	"slices"
	"testing"
)

func TestFields(t *testing.T) {
	type inner struct {
		D int `json:"d"`
	}
	type cfg struct {
		Pool  string `json:"pool"`
		Rate  float64
		Inner inner  `json:"inner"`
		Opt   string `json:"opt,omitempty"`
		Same  int    `json:"same"`
	}
	for _, c := range []struct {
		name string
		a, b cfg
		want []string
	}{
		{"equal", cfg{Pool: "mean"}, cfg{Pool: "mean"}, nil},
		{"scalars", cfg{Pool: "mean", Rate: 0.5}, cfg{Pool: "meanmax", Rate: 1}, []string{"model.Rate 0.5 → 1", "model.pool mean → meanmax"}},
		{"nested object", cfg{Inner: inner{2}}, cfg{Inner: inner{3}}, []string{`model.inner {"d":2} → {"d":3}`}},
		{"field only in a", cfg{Opt: "x"}, cfg{}, []string{"model.opt x → (none)"}},
		{"field only in b", cfg{}, cfg{Opt: "y"}, []string{"model.opt (none) → y"}},
	} {
		if got := Fields("model.", c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
