// Package recsys is a causal Transformer over event sequences — the setting
// SIREN-RoPE (arXiv 2604.24717) was proposed for — built from romae's
// engine blocks (pre-norm RMSNorm, fused q|k|v, SiLU MLP) with a causal
// mask, and two tasks:
//
//   - ranking (pointwise, as in the SIREN-RoPE reference): for a candidate
//     item at its time, predict a binary outcome from the user's earlier
//     events. Token k carries event k's item (and categories) and event
//     k−1's outcome, so the causal output at k sees every earlier outcome
//     but not its own. Reported: NE, AUC, log loss.
//   - next (next-item prediction, leave-one-out): the output at token k
//     scores every item as event k+1. Reported: HR@10 and NDCG@10 over all
//     items the user has not interacted with, and the full-softmax NLL.
//
// Positional variants (Variants) share every other weight and the seed, so
// they can be compared pair by pair.
package recsys

import (
	"fmt"
	"math"
	"slices"
)

// Tasks.
const (
	TaskRanking = "ranking"
	TaskNext    = "next"
)

// Positional variants.
const (
	PosNone     = "none"       // the causal mask is the only order signal
	PosAbsolute = "absolute"   // a learned embedding per window slot
	PosIndex    = "rope-index" // RoPE on the reversed index (newest event 0)
	PosTime     = "rope-time"  // RoPE on time elapsed since the window's first event, in TimeUnit
	PosSiren    = "siren"      // SIREN-RoPE: Θ = f(x)·ω + λ·p·θ, f = sine branch + ReLU branch
	PosSirenSin = "siren-sin"  // ablation: sine branch only
	PosSirenMLP = "siren-relu" // ablation: ReLU branch only
	PosSirenEmb = "siren-emb"  // ablation: f(x) (both branches, width d) added to the token embedding, RoPE on the index
)

// Variants lists the positional variants in report order.
func Variants() []string {
	return []string{PosNone, PosAbsolute, PosIndex, PosTime, PosSiren, PosSirenSin, PosSirenMLP, PosSirenEmb}
}

// Config is a model's architecture and vocabulary sizes.
type Config struct {
	Task    string `json:"task"`
	Variant string `json:"variant"`
	DModel  int    `json:"d_model"`
	Heads   int    `json:"heads"`
	Depth   int    `json:"depth"`
	FFN     int    `json:"ffn"`
	// MaxLen is the window capacity in tokens: the maximum history plus
	// the candidate for ranking, the maximum history for next.
	MaxLen int `json:"max_len"`
	// Vocabulary sizes, the unknown/pad index 0 included.
	Items     int   `json:"items"`
	ItemCats  int   `json:"item_cats"`  // item-side categories (0: none)
	EventCats []int `json:"event_cats"` // per event-side categorical column
	// RoPEBase is the frequency base, θ_j = base^(−2j/head_dim); the
	// reference uses 100000.
	RoPEBase float64 `json:"rope_base"`
	TimeUnit float64 `json:"time_unit"` // seconds per unit of rope-time's position
	// SIREN-RoPE's angle network: hidden width and sine frequency ω0.
	SirenHidden int     `json:"siren_hidden"`
	Omega0      float64 `json:"omega0"`
	NormEps     float64 `json:"rmsnorm_eps"`
}

// DefaultConfig is a small model for variant and task; vocabulary sizes and
// MaxLen come from the data.
func DefaultConfig(task, variant string) Config {
	return Config{Task: task, Variant: variant, DModel: 64, Heads: 2, Depth: 2, FFN: 128, MaxLen: 51,
		RoPEBase: 100000, TimeUnit: 3600, SirenHidden: 16, Omega0: 10, NormEps: 1e-6}
}

// Validate reports a configuration the model cannot be built from.
func (c *Config) Validate() error {
	switch {
	case c.Task != TaskRanking && c.Task != TaskNext:
		return fmt.Errorf("recsys: task %q, want %s or %s", c.Task, TaskRanking, TaskNext)
	case !slices.Contains(Variants(), c.Variant):
		return fmt.Errorf("recsys: positional variant %q, want one of %v", c.Variant, Variants())
	case c.DModel < 1 || c.Heads < 1 || c.Depth < 1 || c.FFN < 1:
		return fmt.Errorf("recsys: d_model %d, heads %d, depth %d, ffn %d must be positive", c.DModel, c.Heads, c.Depth, c.FFN)
	case c.DModel%c.Heads != 0 || (c.DModel/c.Heads)%2 != 0:
		return fmt.Errorf("recsys: d_model %d must split into %d heads of even width", c.DModel, c.Heads)
	case c.MaxLen < 2:
		return fmt.Errorf("recsys: max_len %d, want ≥ 2", c.MaxLen)
	case c.Items < 2:
		return fmt.Errorf("recsys: %d items (with the unknown slot), want ≥ 2", c.Items)
	case c.ItemCats < 0:
		return fmt.Errorf("recsys: item_cats %d", c.ItemCats)
	case !(c.RoPEBase > 1) || !(c.TimeUnit > 0) || math.IsInf(c.TimeUnit, 0):
		return fmt.Errorf("recsys: rope_base %v must exceed 1 and time_unit %v be positive", c.RoPEBase, c.TimeUnit)
	case c.sirenNet() && (c.SirenHidden < 1 || !(c.Omega0 > 0)):
		return fmt.Errorf("recsys: siren_hidden %d and omega0 %v must be positive", c.SirenHidden, c.Omega0)
	case !(c.NormEps > 0):
		return fmt.Errorf("recsys: rmsnorm_eps %v must be positive", c.NormEps)
	}
	for i, n := range c.EventCats {
		if n < 1 {
			return fmt.Errorf("recsys: event categorical column %d has %d values", i, n)
		}
	}
	return nil
}

// headDim is the width of one attention head.
func (c *Config) headDim() int { return c.DModel / c.Heads }

// rotates reports whether attention rotates q and k.
func (c *Config) rotates() bool { return c.Variant != PosNone && c.Variant != PosAbsolute }

// learnedAngles reports whether the angles come from the network.
func (c *Config) learnedAngles() bool {
	return c.Variant == PosSiren || c.Variant == PosSirenSin || c.Variant == PosSirenMLP
}

// sirenNet reports whether the model has the angle network.
func (c *Config) sirenNet() bool { return c.learnedAngles() || c.Variant == PosSirenEmb }
