package recsys

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"romae/ckpt"
)

// Checkpoint metadata keys.
const (
	metaConfig     = "romae.recsys.config"
	metaData       = "romae.recsys.data"
	metaState      = "romae.recsys.train_state"
	metaTrain      = "romae.recsys.train_config"
	metaOptimizer  = "romae.recsys.optimizer"
	metaFormatKey  = "format"
	metaFormatName = "pt" // what safetensors readers expect to find
)

// Save writes m (with its data spec and any extra metadata and tensors,
// such as optimiser state) to path atomically.
func (m *Model[T]) Save(path string, spec *DataSpec, meta map[string]string, extra []*ckpt.Tensor) error {
	cj, err := json.Marshal(m.Cfg)
	if err != nil {
		return err
	}
	sj, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	md := map[string]string{metaFormatKey: metaFormatName, metaConfig: string(cj), metaData: string(sj)}
	for k, v := range meta {
		md[k] = v
	}
	tensors := make([]*ckpt.Tensor, 0, len(m.Params)+len(extra))
	for _, p := range m.Params {
		w := make([]float32, len(p.W))
		for i, v := range p.W {
			w[i] = float32(v)
		}
		tensors = append(tensors, ckpt.F32Tensor(p.Name, p.Shape, w))
	}
	tensors = append(tensors, extra...)
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error { return ckpt.Write(w, tensors, md) })
}

// Loaded is a checkpoint read back: the model, its data spec, and the
// file (metadata, optimiser tensors).
type Loaded struct {
	Model *Model[float32]
	Spec  *DataSpec
	File  *ckpt.File
}

// Load reads a checkpoint written by Save: a .safetensors file, or a run
// directory (its best.safetensors). Every weight must be present with its
// shape; errors name the file and the tensor.
func Load(path string) (*Loaded, error) {
	if !strings.HasSuffix(path, ".safetensors") {
		path = filepath.Join(path, BestFile)
	}
	f, err := ckpt.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg Config
	if err := json.Unmarshal([]byte(f.Metadata[metaConfig]), &cfg); err != nil {
		return nil, fmt.Errorf("%s: %s: %v (is this a recsys checkpoint?)", path, metaConfig, err)
	}
	spec := &DataSpec{}
	if err := json.Unmarshal([]byte(f.Metadata[metaData]), spec); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", path, metaData, err)
	}
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if spec.ModelConfig(cfg).Items != cfg.Items {
		return nil, fmt.Errorf("%s: config has %d items, the vocabulary %d", path, cfg.Items, spec.Vocab.Items.Len())
	}
	var of [][]int32
	if spec.ItemCats != nil {
		of = spec.ItemOf
	}
	m, err := New[float32](cfg, of, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range m.Params {
		w, shape, err := f.Float32(p.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !slices.Equal(shape, p.Shape) {
			return nil, fmt.Errorf("%s: tensor %q has shape %v, the config implies %v", path, p.Name, shape, p.Shape)
		}
		copy(p.W, w)
	}
	return &Loaded{Model: m, Spec: spec, File: f}, nil
}
