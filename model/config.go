// Package model is RoMAE itself: a plain pre-norm Transformer encoder whose
// only positional machinery is continuous axial p-RoPE, a small decoder that
// reconstructs masked tokens during pre-training, and a classification or
// regression head for fine-tuning. Forward and backward passes are written
// out by hand over the ops of package nn.
package model

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"romae/rope"
)

// Size is a Transformer stack's shape.
type Size struct {
	DModel int `json:"d_model" yaml:"d_model"`
	Heads  int `json:"heads" yaml:"heads"`
	Depth  int `json:"depth" yaml:"depth"`
	FFN    int `json:"ffn" yaml:"ffn"`
}

// Sizes are the paper's Table 8 (large exists only in the authors' code).
var Sizes = map[string]Size{
	"tiny-shallow": {180, 3, 2, 720},
	"tiny":         {180, 3, 12, 720},
	"small":        {432, 6, 12, 1728},
	"base":         {720, 12, 12, 2880},
	"large":        {960, 16, 24, 3840},
}

// SizeNames lists Sizes from smallest to largest.
func SizeNames() []string {
	names := make([]string, 0, len(Sizes))
	for n := range Sizes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return Sizes[names[i]].Params() < Sizes[names[j]].Params()
	})
	return names
}

// ParseSize accepts a Table 8 name or "d_model,heads,depth,ffn".
func ParseSize(s string) (Size, error) {
	if sz, ok := Sizes[s]; ok {
		return sz, nil
	}
	var sz Size
	if _, err := fmt.Sscanf(s, "%d,%d,%d,%d", &sz.DModel, &sz.Heads, &sz.Depth, &sz.FFN); err != nil {
		return Size{}, fmt.Errorf("size %q: want one of %s, or d_model,heads,depth,ffn", s, strings.Join(SizeNames(), ", "))
	}
	return sz, nil
}

// Params counts the stack's parameters: per block 4·d² attention, 2·d·ffn
// MLP and two RMSNorm gains (12·d² + 2·d when ffn = 4·d).
func (s Size) Params() int {
	return s.Depth * (4*s.DModel*s.DModel + 2*s.DModel*s.FFN + 2*s.DModel)
}

// Limits on model sizes. They apply to every Config, whether it comes from
// flags, a config file or a checkpoint's metadata, and are checked by
// Validate before anything is allocated, so a file that declares an absurd
// model (d_model 65536, depth 10⁹) is refused with an error naming the
// field instead of asking for terabytes. Each is far above anything the
// paper trains (its largest model, "large", is d_model 960, depth 24, ffn
// 3840: 265 M encoder parameters).
const (
	MaxDModel     = 8192    // d_model of a stack
	MaxHeads      = 256     // attention heads of a stack
	MaxDepth      = 256     // layers of a stack
	MaxFFN        = 65536   // MLP hidden width of a stack
	MaxValues     = 1 << 16 // values per token
	MaxOutputs    = 1 << 16 // classes, or regression targets
	MaxParams     = 1 << 30 // parameters in all (4 GiB of float32 weights)
	MaxSirenWidth = 4096    // siren.hidden and siren.cat_dim
	MaxSirenCats  = 1 << 16 // categories of one siren categorical axis
	MaxSirenFeats = 64      // siren.periods and siren.cat_axes entries
)

func (s Size) validate(field string, posDims int, rope bool) error {
	switch {
	case s.DModel <= 0 || s.Heads <= 0 || s.Depth <= 0 || s.FFN <= 0:
		return fmt.Errorf("%s: d_model, heads, depth and ffn must be positive (got %+v)", field, s)
	case s.DModel > MaxDModel || s.Heads > MaxHeads || s.Depth > MaxDepth || s.FFN > MaxFFN:
		return fmt.Errorf("%s: %+v exceeds the limits d_model ≤ %d, heads ≤ %d, depth ≤ %d, ffn ≤ %d", field, s, MaxDModel, MaxHeads, MaxDepth, MaxFFN)
	case s.DModel%s.Heads != 0:
		return fmt.Errorf("%s: d_model %d is not divisible by heads %d", field, s.DModel, s.Heads)
	case rope && (s.DModel/s.Heads)%(2*posDims) != 0:
		return fmt.Errorf("%s: head_dim %d (d_model %d / heads %d) is not divisible by 2·pos_dims = %d, as axial RoPE requires",
			field, s.DModel/s.Heads, s.DModel, s.Heads, 2*posDims)
	}
	return nil
}

// Positional encodings.
const (
	PosRoPE     = "rope"     // continuous axial p-RoPE, sin/cos per batch
	PosRoPEInt  = "rope-int" // integer positions, sin/cos cached across batches
	PosAbsolute = "absolute" // sin/cos added to the input embeddings
	PosSiren    = "siren"    // SIREN-RoPE: angles learned from time features and metadata
)

// Tasks.
const (
	TaskPretrain = "pretrain" // masked reconstruction with a decoder
	TaskClassify = "classify" // cross-entropy on a pooled embedding
	TaskRegress  = "regress"  // MSE on a pooled embedding or on every token
)

// Pooling for task heads.
const (
	PoolCLS  = "cls"  // the [CLS] output
	PoolMean = "mean" // mean of the non-pad token outputs
	PoolMax  = "max"  // per-feature maximum over the non-pad token outputs
	// PoolMeanMax concatenates the mean and the per-feature maximum
	// (head input 2·d_model): the mean keeps a series' overall shape, the
	// maximum a single token's event that averaging over the series would
	// wash out (docs/defaults.md, "Pooling").
	PoolMeanMax = "meanmax"
	PoolToken   = "token" // one prediction per token (per-token regression)
)

// How the decoder's query ([MASK]) tokens attend (Config.QueryAttention).
const (
	// QueryAll is the paper's and the authors' decoder: every token, visible
	// or [MASK], attends to every other. A query's prediction then depends
	// on which other positions are queried with it.
	QueryAll = "all"
	// QueryIndependent: a query attends to the visible tokens and to itself,
	// never to another query, and the visible tokens attend to visible
	// tokens only. A prediction depends on the observations and its own
	// position alone (docs/interpolation.md).
	QueryIndependent = "independent"
)

// Config is everything that fixes a model's parameters and function.
// Training hyper-parameters live elsewhere; dropout rates are here because
// the forward pass applies them.
type Config struct {
	Encoder     Size    `json:"encoder" yaml:"encoder"`
	Decoder     Size    `json:"decoder" yaml:"decoder"` // pre-training only
	Values      int     `json:"values" yaml:"values"`   // values per token (patch size · channels)
	PosDims     int     `json:"pos_dims" yaml:"pos_dims"`
	PosEncoding string  `json:"pos_encoding" yaml:"pos_encoding"`
	P           float64 `json:"p_rope" yaml:"p_rope"`
	RoPEBase    float64 `json:"rope_base" yaml:"rope_base"`
	UseCLS      bool    `json:"use_cls" yaml:"use_cls"`
	Task        string  `json:"task" yaml:"task"`
	Outputs     int     `json:"outputs" yaml:"outputs"` // classes, or regression targets
	Pool        string  `json:"pool" yaml:"pool"`
	NormEps     float64 `json:"rmsnorm_eps" yaml:"rmsnorm_eps"`
	NormTargets bool    `json:"normalize_targets" yaml:"normalize_targets"`
	// QueryAttention is the decoder's attention pattern for query tokens:
	// QueryAll or QueryIndependent ("" reads as QueryAll, what checkpoints
	// written before the option existed used). Pre-training only.
	QueryAttention string `json:"query_attention" yaml:"query_attention"`
	// Siren configures the learned angles when PosEncoding is "siren".
	Siren rope.SirenSpec `json:"siren,omitzero" yaml:"siren"`

	AttnDropout   float64 `json:"attn_dropout" yaml:"attn_dropout"`     // on attention probabilities
	HiddenDropout float64 `json:"hidden_dropout" yaml:"hidden_dropout"` // on the MLP hidden layer
	HeadDropout   float64 `json:"head_dropout" yaml:"head_dropout"`     // before the head's RMSNorm
	DropPath      float64 `json:"drop_path" yaml:"drop_path"`           // stochastic depth of the last layer
}

// DefaultConfig is RoMAE-tiny with a tiny-shallow decoder, continuous
// 1-axis p-RoPE (p = 0.75, base 10000), [CLS], pre-training task, and
// decoder queries that do not attend to each other (QueryIndependent; the
// authors' checkpoints load as QueryAll, see docs/interpolation.md).
func DefaultConfig() Config {
	return Config{
		Encoder:     Sizes["tiny"],
		Decoder:     Sizes["tiny-shallow"],
		Values:      1,
		PosDims:     1,
		PosEncoding: PosRoPE,
		P:           0.75,
		RoPEBase:    10000,
		UseCLS:      true,
		Task:        TaskPretrain,
		Pool:        PoolCLS,
		NormEps:     1e-12,

		QueryAttention: QueryIndependent,
	}
}

// Validate refuses configurations the maths forbids, naming the field.
func (c *Config) Validate() error {
	rope := c.PosEncoding == PosRoPE || c.PosEncoding == PosRoPEInt || c.PosEncoding == PosSiren
	switch {
	case !rope && c.PosEncoding != PosAbsolute:
		return fmt.Errorf("pos_encoding %q: want rope, rope-int, siren or absolute", c.PosEncoding)
	case c.PosDims < 1 || c.PosDims > 3:
		return fmt.Errorf("pos_dims %d: want 1, 2 or 3", c.PosDims)
	case c.Values < 1:
		return fmt.Errorf("values %d: each token needs at least one value", c.Values)
	case c.Values > MaxValues:
		return fmt.Errorf("values %d: exceeds the limit of %d values per token", c.Values, MaxValues)
	case c.Outputs < 0 || c.Outputs > MaxOutputs:
		return fmt.Errorf("outputs %d: want 0..%d", c.Outputs, MaxOutputs)
	case math.IsNaN(c.P) || c.P < 0 || c.P > 1:
		return fmt.Errorf("p_rope %v: want 0 ≤ p ≤ 1", c.P)
	case rope && !(c.RoPEBase > 1):
		return fmt.Errorf("rope_base %v: want > 1", c.RoPEBase)
	case !(c.NormEps > 0):
		return fmt.Errorf("rmsnorm_eps %v: want > 0", c.NormEps)
	case c.QueryAttention != "" && c.QueryAttention != QueryAll && c.QueryAttention != QueryIndependent:
		return fmt.Errorf("query_attention %q: want %s or %s", c.QueryAttention, QueryAll, QueryIndependent)
	}
	for name, r := range map[string]float64{"attn_dropout": c.AttnDropout, "hidden_dropout": c.HiddenDropout,
		"head_dropout": c.HeadDropout, "drop_path": c.DropPath} {
		if math.IsNaN(r) || r < 0 || r >= 1 {
			return fmt.Errorf("%s %v: want 0 ≤ rate < 1", name, r)
		}
	}
	if err := c.Encoder.validate("encoder", c.PosDims, rope); err != nil {
		return err
	}
	if c.PosEncoding == PosSiren {
		if err := c.Siren.Validate(c.PosDims); err != nil {
			return err
		}
		if err := checkSirenLimits(&c.Siren); err != nil {
			return err
		}
	}
	if c.PosEncoding == PosAbsolute {
		if err := checkAbsolute("encoder", c.Encoder.DModel, c.PosDims); err != nil {
			return err
		}
	}
	switch c.Task {
	case TaskPretrain:
		if err := c.Decoder.validate("decoder", c.PosDims, rope); err != nil {
			return err
		}
		if c.PosEncoding == PosAbsolute {
			if err := checkAbsolute("decoder", c.Decoder.DModel, c.PosDims); err != nil {
				return err
			}
		}
		if c.NormTargets && c.Values < 2 {
			return fmt.Errorf("normalize_targets needs at least 2 values per token (got %d): per-patch normalisation of one value is always 0", c.Values)
		}
	case TaskClassify, TaskRegress:
		if c.Outputs < 1 {
			return fmt.Errorf("outputs %d: a %s head needs at least one output", c.Outputs, c.Task)
		}
		switch c.Pool {
		case PoolCLS:
			if !c.UseCLS {
				return fmt.Errorf("pool cls needs use_cls: true (or use pool mean)")
			}
		case PoolMean, PoolMax, PoolMeanMax:
		case PoolToken:
			if c.Task != TaskRegress {
				return fmt.Errorf("pool token is for per-token regression, not %s", c.Task)
			}
		default:
			return fmt.Errorf("pool %q: want cls, mean, max, meanmax or token", c.Pool)
		}
		if c.Task == TaskClassify && c.Outputs < 2 {
			return fmt.Errorf("outputs %d: classification needs at least 2 classes", c.Outputs)
		}
	default:
		return fmt.Errorf("task %q: want pretrain, classify or regress", c.Task)
	}
	if n := c.ParamBound(); n > MaxParams {
		return fmt.Errorf("the model would have about %d parameters, more than the limit of %d", n, MaxParams)
	}
	return nil
}

func checkSirenLimits(s *rope.SirenSpec) error {
	switch {
	case s.Hidden > MaxSirenWidth || s.CatDim > MaxSirenWidth:
		return fmt.Errorf("siren: hidden %d and cat_dim %d must be at most %d", s.Hidden, s.CatDim, MaxSirenWidth)
	case len(s.Periods) > MaxSirenFeats || len(s.CatAxes) > MaxSirenFeats:
		return fmt.Errorf("siren: %d periods and %d cat_axes, at most %d each", len(s.Periods), len(s.CatAxes), MaxSirenFeats)
	}
	for _, n := range s.CatSizes {
		if n > MaxSirenCats {
			return fmt.Errorf("siren.cat_sizes: %d categories, at most %d", n, MaxSirenCats)
		}
	}
	return nil
}

// ParamBound is an upper bound on the number of parameters of the model c
// describes (exact for the Transformer stacks, generous for the small
// projections, head and SIREN networks), computed without allocating. It
// assumes the limits on each size hold, so it cannot overflow. Loaders
// compare it with the bytes a checkpoint file holds before building the
// model.
func (c *Config) ParamBound() int {
	enc := c.Encoder.clamp()
	values, outputs := min(max(c.Values, 0), MaxValues), min(max(c.Outputs, 0), MaxOutputs)
	n := enc.Params() + (values+2+outputs+2)*enc.DModel + values + outputs
	if c.Pool == PoolMeanMax {
		n += (outputs + 1) * enc.DModel // the head's second d_model inputs
	}
	if c.Task == TaskPretrain {
		dec := c.Decoder.clamp()
		n += dec.Params() + (enc.DModel+values+3)*dec.DModel + values
	}
	if c.PosEncoding == PosSiren {
		s := &c.Siren
		h, cd := min(max(s.Hidden, 0), MaxSirenWidth), min(max(s.CatDim, 0), MaxSirenWidth)
		cats := 0
		for _, k := range s.CatSizes {
			cats += min(max(k, 0), MaxSirenCats)
		}
		in := 1 + 2*min(len(s.Periods), MaxSirenFeats) + cd*min(len(s.CatAxes), MaxSirenFeats)
		per := cats*cd + (in+2)*h*3 + h*h*4 + (enc.DModel+c.Decoder.clamp().DModel)*(h+1)
		n += 2 * per
	}
	return n
}

// clamp limits every field to [0, its maximum], for bounds that must not
// overflow on an invalid size.
func (s Size) clamp() Size {
	return Size{min(max(s.DModel, 0), MaxDModel), min(max(s.Heads, 0), MaxHeads),
		min(max(s.Depth, 0), MaxDepth), min(max(s.FFN, 0), MaxFFN)}
}

func checkAbsolute(field string, dModel, posDims int) error {
	if err := rope.CheckAbsolute(dModel, posDims); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// DefaultSiren is a SIREN-RoPE setup learning the angles of the last
// (time) axis from normalised time alone; add periods and categorical axes
// for the data at hand.
func DefaultSiren(posDims int) rope.SirenSpec {
	return rope.SirenSpec{Axes: []int{posDims - 1}, TimeAxis: posDims - 1, TimeScale: 1, Hidden: 32, Omega0: 10, CatDim: 4}
}

// independentQueries reports whether the decoder keeps queries apart
// (QueryIndependent).
func (c *Config) independentQueries() bool { return c.QueryAttention == QueryIndependent }

// ropeLayout is the stack's rotation geometry (zero Layout when absolute).
func (c *Config) ropeLayout(s Size) rope.Layout {
	if c.PosEncoding == PosAbsolute {
		return rope.Layout{}
	}
	l, err := rope.NewLayout(s.DModel/s.Heads, c.PosDims, c.P, c.RoPEBase)
	if err != nil {
		panic(err) // Validate has already refused this configuration.
	}
	return l
}
