package main

import (
	"encoding"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"romae/data"
	"romae/model"
	"romae/rope"
	"romae/train"
)

// runConfig is a training run: what the model is, how it trains, and what
// it trains on. It is read from a YAML or JSON file (--config) and every
// field can be overridden by a flag named after its path, e.g.
// --train.lr 1e-4 or --model.pos_encoding absolute.
type runConfig struct {
	Model modelSection `yaml:"model"`
	Train train.Config `yaml:"train"`
	Data  dataSection  `yaml:"data"`
}

type modelSection struct {
	Size          string         `yaml:"size" help:"encoder size: tiny-shallow, tiny, small, base, large, or d_model,heads,depth,ffn"`
	DecoderSize   string         `yaml:"decoder_size" help:"decoder size (pre-training), same forms as size"`
	QueryAttn     string         `yaml:"query_attention" help:"pre-training decoder: independent (a query attends to the observed tokens and itself, so an interpolated value does not depend on the other queries) or all (the paper's decoder: queries attend to each other)"`
	PosEncoding   string         `yaml:"pos_encoding" help:"rope (continuous axial p-RoPE), rope-int (integer positions, cached tables), siren (SIREN-RoPE: angles learned from time features and metadata) or absolute (sin/cos added to the input)"`
	P             float64        `yaml:"p_rope" help:"fraction of rotary pairs that rotate (p-RoPE); the lowest frequencies stay unrotated"`
	RoPEBase      float64        `yaml:"rope_base" help:"RoPE base"`
	UseCLS        bool           `yaml:"use_cls" help:"prepend a learned [CLS] token at position 0"`
	Task          string         `yaml:"task" help:"fine-tuning task: auto (classify when the data has labels, regress when it has targets), classify or regress"`
	Pool          string         `yaml:"pool" help:"fine-tuning head input: auto, cls, mean, max (per-feature maximum over the tokens), meanmax (both, concatenated), mixed (data.folds models alternate mean and meanmax, a classifier's default from scratch; one model: mean), or token (per-token regression)"`
	NormEps       float64        `yaml:"rmsnorm_eps" help:"RMSNorm ε"`
	NormTargets   bool           `yaml:"normalize_targets" help:"pre-training: per-patch normalised reconstruction targets (needs ≥ 2 values per token)"`
	AttnDropout   float64        `yaml:"attn_dropout" help:"dropout on attention probabilities"`
	HiddenDropout float64        `yaml:"hidden_dropout" help:"dropout on the MLP hidden layer"`
	HeadDropout   float64        `yaml:"head_dropout" help:"dropout before the head"`
	DropPath      float64        `yaml:"drop_path" help:"stochastic depth rate of the last layer (layer i drops with i/(depth-1)·rate)"`
	Siren         rope.SirenSpec `yaml:"siren"`
}

type dataSection struct {
	Train       string  `yaml:"train" help:"training data file (.ts, .csv, .npy, .npz)"`
	Val         string  `yaml:"val" help:"validation data file (empty: hold out data.val_fraction of train)"`
	ValFraction float64 `yaml:"val_fraction" help:"fraction of train held out for validation when data.val is empty (0: none)"`
	Refit       bool    `yaml:"refit" help:"fine-tuning with data.val_fraction: train once with the split held out (its metrics kept in OUT/holdout), then again on all training series with the same settings, keeping that model"`
	Folds       int     `yaml:"folds" help:"fine-tuning: split the training series into this many stratified folds, train one model per fold with the fold held out (OUT/fold-K), report the out-of-fold metrics, and keep the ensemble of the fold models (0 or 1: none)"`
	FoldJobs    int     `yaml:"fold_jobs" help:"fine-tuning with data.folds: how many fold models train at once, sharing the cores (0: as many as there are cores, at most the folds, fewer where memory is short; 1: one after the other); the models and metrics are the same to the bit either way"`
	Normalize   bool    `yaml:"normalize" help:"standardise each value slot with the training set's mean and std (kept in the checkpoint)"`
	// A token's values do not say which channel they are, so bands on other
	// scales (fluxes 5000 and 8000) would reach the model as one mixed
	// distribution it cannot take apart (docs/defaults.md, "Values
	// standardised per channel").
	NormalizeChannels bool `yaml:"normalize_channels" help:"with data.normalize, when channels (bands) are a position axis (long CSV with a channel column, .ts with data.missing channel-axis): standardise each channel on its own, since a token's values do not say which channel they are (false: one mean and std per value slot for all channels)"`
	data.Source       `yaml:",inline"`
}

func defaultRunConfig() runConfig {
	d := model.DefaultConfig()
	return runConfig{
		Model: modelSection{Size: "tiny", DecoderSize: "tiny-shallow", QueryAttn: d.QueryAttention, PosEncoding: d.PosEncoding, P: d.P, RoPEBase: d.RoPEBase,
			UseCLS: true, Task: "auto", Pool: "auto", NormEps: d.NormEps,
			Siren: rope.SirenSpec{TimeAxis: -1, TimeScale: 1, CatDim: 4, Hidden: 32, Omega0: 10}},
		Train: train.DefaultConfig(),
		Data:  dataSection{ValFraction: 0, Normalize: true, NormalizeChannels: true, Source: data.Source{Format: "auto", Missing: data.MissingDropStep, NaN: data.NaNMissing}},
	}
}

// modelConfig resolves the section into a model.Config for data with
// `values` values per token and `posDims` position axes.
func (s *modelSection) modelConfig(task string, values, posDims, outputs int) (model.Config, error) {
	c := model.DefaultConfig()
	enc, err := model.ParseSize(s.Size)
	if err != nil {
		return c, fmt.Errorf("model.size: %w", err)
	}
	dec, err := model.ParseSize(s.DecoderSize)
	if err != nil {
		return c, fmt.Errorf("model.decoder_size: %w", err)
	}
	c.Encoder, c.Decoder, c.Values, c.PosDims, c.Task, c.Outputs = enc, dec, values, posDims, task, outputs
	c.PosEncoding, c.P, c.RoPEBase, c.UseCLS, c.NormEps, c.NormTargets = s.PosEncoding, s.P, s.RoPEBase, s.UseCLS, s.NormEps, s.NormTargets
	c.QueryAttention = s.QueryAttn
	c.AttnDropout, c.HiddenDropout, c.HeadDropout, c.DropPath = s.AttnDropout, s.HiddenDropout, s.HeadDropout, s.DropPath
	if c.PosEncoding == model.PosSiren {
		c.Siren = s.Siren
		if len(c.Siren.Axes) == 0 {
			c.Siren.Axes = []int{posDims - 1}
		}
		if c.Siren.TimeAxis < 0 {
			c.Siren.TimeAxis = posDims - 1
		}
	}
	return c, c.Validate()
}

// parseRunConfig reads --config (if given) and then the flags into cfg,
// and returns the dotted setting names ("train.lr") the config file gives.
// The short vocabulary every command shares stands for the settings it
// names: --data, --format, --labels-file, --batch-size and --out.
func parseRunConfig(fs *flag.FlagSet, cfg *runConfig, args []string) (fromFile map[string]bool, err error) {
	for i, a := range args {
		var path string
		switch {
		case (a == "--config" || a == "-config") && i+1 < len(args):
			path = args[i+1]
		case strings.HasPrefix(a, "--config="), strings.HasPrefix(a, "-config="):
			path = a[strings.Index(a, "=")+1:]
		}
		if path != "" {
			if fromFile, err = readConfigFile(path, cfg); err != nil {
				return nil, err
			}
		}
	}
	fs.String("config", "", "YAML or JSON file with model/train/data sections; flags override it")
	bindFlags(fs, reflect.ValueOf(cfg).Elem(), "")
	for name, target := range map[string]string{"data": "data.train", "format": "data.format", "labels-file": "data.labels_file",
		"batch-size": "train.batch_size", "out": "train.out"} {
		alias(fs, name, target)
	}
	return fromFile, fs.Parse(args)
}

// readConfigFile decodes a YAML or JSON config file into cfg, unknown
// fields being errors, and returns the dotted names of the settings it
// gives. Errors name the file and its language, on one line.
func readConfigFile(path string, cfg *runConfig) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lang := "YAML"
	if strings.EqualFold(filepath.Ext(path), ".json") || strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		lang = "JSON"
		// YAML reads JSON, but its syntax errors would speak of YAML:
		// check the syntax as JSON first.
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line := 1 + strings.Count(string(raw[:se.Offset]), "\n")
				return nil, fmt.Errorf("%s:%d: JSON config: %v", path, line, err)
			}
			return nil, fmt.Errorf("%s: JSON config: %v", path, err)
		}
	}
	configErr := func(err error) error {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
		return fmt.Errorf("%s: %s config: %s", path, lang, msg)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, configErr(err)
	}
	var tree map[string]any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return nil, configErr(err)
	}
	set := map[string]bool{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			} else {
				set[prefix+k] = true
			}
		}
	}
	walk("", tree)
	return set, nil
}

// bindFlags registers one flag per leaf field of v, named by its yaml path
// and documented by its help tag, with the current value as default.
func bindFlags(fs *flag.FlagSet, v reflect.Value, prefix string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		fv := v.Field(i)
		if len(tag) > 1 && tag[1] == "inline" {
			bindFlags(fs, fv, prefix)
			continue
		}
		if tag[0] == "" || tag[0] == "-" || !f.IsExported() {
			continue
		}
		name := prefix + tag[0]
		if fv.Kind() == reflect.Struct {
			bindFlags(fs, fv, name+".")
			continue
		}
		fs.Var(&fieldValue{fv}, name, f.Tag.Get("help"))
		running.settings[name] = true
	}
}

// fieldValue adapts a struct field to flag.Value.
type fieldValue struct{ v reflect.Value }

var _ encoding.TextUnmarshaler = (*fieldValue)(nil)

func (f *fieldValue) UnmarshalText(b []byte) error { return f.Set(string(b)) }

func (f *fieldValue) String() string {
	if !f.v.IsValid() {
		return ""
	}
	switch f.v.Kind() {
	case reflect.Slice:
		parts := make([]string, f.v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(f.v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	case reflect.Array:
		parts := make([]string, f.v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(f.v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(f.v.Interface())
}

// typeName is the placeholder the usage shows for the field's value.
func (f *fieldValue) typeName() string {
	switch f.v.Kind() {
	case reflect.Int, reflect.Uint64:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Slice, reflect.Array:
		return "list"
	}
	return "string"
}

func (f *fieldValue) IsBoolFlag() bool { return f.v.Kind() == reflect.Bool }

func (f *fieldValue) Set(s string) error {
	v := f.v
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
	case reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		v.SetFloat(x)
	case reflect.Slice: // []string, []int, []float64: comma-separated
		var parts []string
		if s != "" {
			parts = strings.Split(s, ",")
		}
		out := reflect.MakeSlice(v.Type(), len(parts), len(parts))
		for i, p := range parts {
			if err := (&fieldValue{out.Index(i)}).Set(strings.TrimSpace(p)); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.Array: // [N]int
		parts := strings.Split(s, ",")
		if len(parts) != v.Len() {
			return fmt.Errorf("want %d comma-separated integers", v.Len())
		}
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return err
			}
			v.Index(i).SetInt(int64(n))
		}
	default:
		return fmt.Errorf("unsupported flag type %s", v.Type())
	}
	return nil
}
