package model

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"romae/ckpt"
	"romae/tensor"
)

// officialStack mirrors the authors' EncoderConfig (pydantic defaults in
// the comments are applied when a field is absent).
type officialStack struct {
	DModel         *int     `json:"d_model"`         // 342
	NHead          *int     `json:"nhead"`           // 8
	LayerNormEps   *float64 `json:"layer_norm_eps"`  // 1e-12
	Depth          *int     `json:"depth"`           // 6
	DimFeedforward *int     `json:"dim_feedforward"` // null → round(mlp_ratio·d_model)
	MLPRatio       *float64 `json:"mlp_ratio"`       // 4
	DropPathRate   float64  `json:"drop_path_rate"`
	HiddenDropRate float64  `json:"hidden_drop_rate"`
	AttnDropRate   float64  `json:"attn_drop_rate"`
}

func (s *officialStack) size() Size {
	out := Size{DModel: 342, Heads: 8, Depth: 6}
	if s.DModel != nil {
		out.DModel = *s.DModel
	}
	if s.NHead != nil {
		out.Heads = *s.NHead
	}
	if s.Depth != nil {
		out.Depth = *s.Depth
	}
	ratio := 4.0
	if s.MLPRatio != nil {
		ratio = *s.MLPRatio
	}
	out.FFN = int(math.Round(ratio * float64(out.DModel)))
	if s.DimFeedforward != nil {
		out.FFN = *s.DimFeedforward
	}
	return out
}

// OfficialConfig is the authors' model_config.json (RoMAEForPreTrainingConfig
// or RoMAEForClassificationConfig dumped by pydantic).
type OfficialConfig struct {
	EncoderConfig    officialStack  `json:"encoder_config"`
	DecoderConfig    *officialStack `json:"decoder_config"`
	UseCLS           *bool          `json:"use_cls"`      // true
	PosEncoding      *string        `json:"pos_encoding"` // "ropend"
	TubeletSize      *[3]int        `json:"tubelet_size"` // (1,1,16)
	NChannels        *int           `json:"n_channels"`   // 1
	HeadDropRate     float64        `json:"head_drop_rate"`
	NPosDims         *int           `json:"n_pos_dims"` // 3
	PRopeVal         *float64       `json:"p_rope_val"` // 0.75
	DimOutput        *int           `json:"dim_output"`
	NormalizeTargets bool           `json:"normalize_targets"`
}

// Config translates the authors' configuration. A config with a decoder is
// a pre-training model; one with dim_output a classifier (use a regression
// task by changing Task afterwards: the weights are the same).
func (oc *OfficialConfig) Config() (Config, error) {
	c := DefaultConfig()
	c.QueryAttention = QueryAll // the authors' decoder
	c.Encoder = oc.EncoderConfig.size()
	if oc.EncoderConfig.LayerNormEps != nil {
		c.NormEps = *oc.EncoderConfig.LayerNormEps
	}
	c.AttnDropout, c.HiddenDropout, c.DropPath = oc.EncoderConfig.AttnDropRate, oc.EncoderConfig.HiddenDropRate, oc.EncoderConfig.DropPathRate
	c.HeadDropout = oc.HeadDropRate
	if oc.UseCLS != nil {
		c.UseCLS = *oc.UseCLS
	}
	if oc.PosEncoding != nil && *oc.PosEncoding != "ropend" {
		// The authors' absolute embedding is indexed by sequence slot with an
		// encoder/decoder off-by-one; romae keys it by position instead, so
		// such a checkpoint would not compute the same function.
		return Config{}, fmt.Errorf("pos_encoding %q: only the authors' \"ropend\" checkpoints can be reproduced exactly", *oc.PosEncoding)
	}
	tubelet := [3]int{1, 1, 16}
	if oc.TubeletSize != nil {
		tubelet = *oc.TubeletSize
	}
	ch := 1
	if oc.NChannels != nil {
		ch = *oc.NChannels
	}
	// Checked factor by factor so the product cannot overflow into a
	// plausible-looking value.
	c.Values = 1
	for _, k := range []int{tubelet[0], tubelet[1], tubelet[2], ch} {
		if k < 1 || k > MaxValues || c.Values*k > MaxValues {
			return Config{}, fmt.Errorf("tubelet_size %v × n_channels %d: want positive factors with a product ≤ %d values per token", tubelet, ch, MaxValues)
		}
		c.Values *= k
	}
	c.PosDims = 3
	if oc.NPosDims != nil {
		c.PosDims = *oc.NPosDims
	}
	if oc.PRopeVal != nil {
		c.P = *oc.PRopeVal
	}
	c.NormTargets = oc.NormalizeTargets
	switch {
	case oc.DecoderConfig != nil:
		c.Task = TaskPretrain
		c.Decoder = oc.DecoderConfig.size()
	case oc.DimOutput != nil:
		c.Task, c.Outputs = TaskClassify, *oc.DimOutput
		if !c.UseCLS {
			c.Pool = PoolMean
		}
	default:
		return Config{}, fmt.Errorf("model_config.json has neither decoder_config nor dim_output")
	}
	return c, c.Validate()
}

// LoadOfficialDir loads a checkpoint directory written by the authors' code:
// model_config.json and model.safetensors.
func LoadOfficialDir[T tensor.Float](dir string) (*Model[T], error) {
	raw, err := readSmallFile(filepath.Join(dir, "model_config.json"), MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	var oc OfficialConfig
	if err := json.Unmarshal(raw, &oc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "model_config.json"), err)
	}
	cfg, err := oc.Config()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "model_config.json"), err)
	}
	return LoadOfficialWeights[T](cfg, filepath.Join(dir, "model.safetensors"))
}

// LoadOfficialWeights builds a model for cfg and fills it from a
// safetensors file with the authors' tensor names. Every parameter must be
// present with the right number of elements; the only extra tensors
// allowed are the authors' buffers, and their RoPE timescales must match
// cfg (which catches a wrong p, base or axis count).
func LoadOfficialWeights[T tensor.Float](cfg Config, path string) (*Model[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := ckpt.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkFileHolds(f, &cfg, path, 1); err != nil {
		return nil, err
	}
	m, err := New[T](cfg, 0)
	if err != nil {
		return nil, err
	}
	if err := m.loadTensors(f, path); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, p := range m.Params {
		used[p.Name] = true
	}
	timescales := map[string]Size{"attn_pos_embedding.timescale": cfg.Encoder,
		"encoder_attn_pos_embedding.timescale": cfg.Encoder, "decoder_attn_pos_embedding.timescale": cfg.Decoder}
	var extra []string
	for name := range f.Tensors {
		switch {
		case used[name] || name == "zeros" || strings.HasSuffix(name, "inpt_pos_embedding.pe"):
		case timescales[name] != Size{}:
			want := cfg.ropeLayout(timescales[name]).Timescales()
			if n := f.Tensors[name].Numel(); n != len(want) {
				return nil, fmt.Errorf("%s: %s has %d entries, config gives %d (check n_pos_dims and heads)", path, name, n, len(want))
			}
			got, _, err := f.Float32(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if len(got) != len(want) {
				return nil, fmt.Errorf("%s: %s has %d entries, config gives %d (check n_pos_dims and heads)", path, name, len(got), len(want))
			}
			for j := range want {
				g, w := float64(got[j]), want[j]
				if math.IsInf(g, 1) != math.IsInf(w, 1) || !math.IsInf(w, 1) && math.Abs(g-w) > 1e-5*w {
					return nil, fmt.Errorf("%s: %s[%d] = %v, config gives %v (check p_rope and rope_base)", path, name, j, g, w)
				}
			}
		default:
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("%s: tensors the %s model does not have: %s", path, cfg.Task, strings.Join(extra, ", "))
	}
	return m, nil
}

// loadTensors copies every parameter from f by name, checking each
// tensor's declared size before its bytes are read.
func (m *Model[T]) loadTensors(f *ckpt.File, path string) error {
	return m.loadTensorsPrefixed(f, path, "")
}

// loadTensorsPrefixed reads every parameter from the tensor named prefix +
// its name.
func (m *Model[T]) loadTensorsPrefixed(f *ckpt.File, path, prefix string) error {
	m.dropPacked()
	for _, p := range m.Params {
		name := prefix + p.Name
		if t, ok := f.Tensors[name]; ok && t.Numel() != len(p.W) {
			return fmt.Errorf("%s: tensor %s has shape %v, model expects %v", path, name, t.Shape, p.Shape)
		}
		v, shape, err := f.Float32(name)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(v) != len(p.W) {
			return fmt.Errorf("%s: tensor %s has shape %v, model expects %v", path, name, shape, p.Shape)
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%s: tensor %s holds %v at %d", path, name, x, i)
			}
			p.W[i] = T(x)
		}
	}
	return nil
}

// MaxConfigBytes bounds model_config.json: the authors' files are under a
// kilobyte, and the whole file is read into memory.
const MaxConfigBytes = 1 << 20

// readSmallFile reads path, refusing one longer than limit bytes.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%s: longer than the %d-byte limit for a model configuration", path, limit)
	}
	return raw, nil
}
