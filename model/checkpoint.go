package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"romae/ckpt"
	"romae/tensor"
)

// Checkpoints are safetensors files: every parameter under the authors'
// tensor name (float32), any extra tensors the caller adds (optimiser
// state), and string metadata, "romae.config" holding the model Config as
// JSON. Writes are atomic, so a crash never loses the previous file.
const (
	metaFormat = "romae.format"
	metaConfig = "romae.config"
	formatV1   = "romae-checkpoint-1"
)

// Save writes m, extra tensors and meta to path atomically.
func (m *Model[T]) Save(path string, meta map[string]string, extra []*ckpt.Tensor) error {
	cfg, err := json.Marshal(m.Cfg)
	if err != nil {
		return err
	}
	md := map[string]string{metaFormat: formatV1, metaConfig: string(cfg)}
	for k, v := range meta {
		md[k] = v
	}
	delete(md, metaEnsemble) // from a copied metadata: set below for this model alone
	delete(md, metaPools)
	tensors := m.paramTensors("")
	if len(m.others) > 0 {
		md[metaEnsemble] = fmt.Sprint(m.Members())
		if ps := m.pools(); ps != "" {
			md[metaPools] = ps
		}
		for k, o := range m.others {
			tensors = append(tensors, o.paramTensors(fmt.Sprintf(memberTensors, k+1))...)
		}
	}
	return ckpt.WriteFile(path, append(tensors, extra...), md)
}

// paramTensors is every parameter as a float32 tensor named prefix + its
// name.
func (m *Model[T]) paramTensors(prefix string) []*ckpt.Tensor {
	tensors := make([]*ckpt.Tensor, 0, len(m.Params))
	for _, p := range m.Params {
		w := make([]float32, len(p.W))
		for i, v := range p.W {
			w[i] = float32(v)
		}
		tensors = append(tensors, ckpt.F32Tensor(prefix+p.Name, p.Shape, w))
	}
	return tensors
}

// Checkpoint is what Load read besides the model: the file (for optimiser
// state and other extra tensors) and its metadata. File is nil for the
// authors' checkpoint directories.
type Checkpoint struct {
	Path string
	File *ckpt.File
	Meta map[string]string
}

// Load reads a model from
//   - a romae checkpoint file (.safetensors with romae metadata);
//   - a romae run directory (its best.safetensors, else last.safetensors);
//   - a checkpoint directory of the authors' code (model_config.json +
//     model.safetensors).
func Load[T tensor.Float](path string) (*Model[T], *Checkpoint, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "model_config.json")); err == nil {
			m, err := LoadOfficialDir[T](path)
			return m, &Checkpoint{Path: path, Meta: map[string]string{}}, err
		}
		for _, name := range []string{"best.safetensors", "last.safetensors"} {
			if _, err := os.Stat(filepath.Join(path, name)); err == nil {
				return Load[T](filepath.Join(path, name))
			}
		}
		return nil, nil, fmt.Errorf("%s: no best.safetensors, last.safetensors or model_config.json in this directory", path)
	}
	// The header only: tensors are read one by one once the model they
	// must fit is known, so a file cannot make Load allocate more than the
	// model it describes, and the model is checked against the file first.
	f, err := ckpt.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if f.Metadata[metaFormat] != formatV1 {
		return nil, nil, fmt.Errorf("%s: not a romae checkpoint (no %q metadata); for the authors' checkpoints pass their directory with model_config.json", path, metaFormat)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(f.Metadata[metaConfig]), &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: metadata %s: %w", path, metaConfig, err)
	}
	if cfg.QueryAttention == "" {
		cfg.QueryAttention = QueryAll // written before the option existed
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: metadata %s: %w", path, metaConfig, err)
	}
	members, err := ensembleSize(f.Metadata, path)
	if err != nil {
		return nil, nil, err
	}
	if members > 1 && cfg.Task == TaskPretrain {
		return nil, nil, fmt.Errorf("%s: a pre-training model cannot be an ensemble (%s)", path, metaEnsemble)
	}
	if err := checkFileHolds(f, &cfg, path, members); err != nil {
		return nil, nil, err
	}
	m, err := New[T](cfg, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.loadTensors(f, path); err != nil {
		return nil, nil, err
	}
	pools, err := memberPools(f.Metadata, path, members, cfg.Pool)
	if err != nil {
		return nil, nil, err
	}
	if err := m.loadEnsemble(f, path, members, pools); err != nil {
		return nil, nil, err
	}
	// The remaining tensors (optimiser state) are read now, so that the
	// Checkpoint holds no open file; they are bounded by the file's size.
	if err := f.ReadAll(); err != nil {
		return nil, nil, err
	}
	return m, &Checkpoint{Path: path, File: f, Meta: f.Metadata}, nil
}

// checkFileHolds refuses a file whose tensors cannot hold the model cfg
// describes, before the model is built: the Transformer stacks, input
// projection and output layer alone need that many values, and every one of
// them must be in a floating-point tensor of the file. Without this a few bytes of metadata
// declaring a large model would allocate it before a tensor is checked.
// A model under smallModel parameters is cheap to build, so it is left to
// the tensor-by-tensor check, whose error names the first tensor missing.
func checkFileHolds(f *ckpt.File, cfg *Config, path string, members int) error {
	const smallModel = 1 << 22
	// The stacks, the input projection and the head's output layer.
	need := cfg.Encoder.Params() + cfg.Values*cfg.Encoder.DModel
	if cfg.Task == TaskPretrain {
		need += cfg.Decoder.Params() + cfg.Values*cfg.Decoder.DModel
	} else {
		need += cfg.Outputs * cfg.Encoder.DModel
	}
	need *= members // an ensemble's members are built one after another
	if need <= smallModel {
		return nil
	}
	have := 0
	for _, t := range f.Tensors {
		switch t.DType {
		case "F32", "F64", "F16", "BF16":
			have += t.Numel()
		}
	}
	if have < need {
		return fmt.Errorf("%s: the configuration declares a model of at least %d parameters but the file's floating-point tensors hold only %d values (truncated file or wrong configuration)", path, need, have)
	}
	return nil
}

// TransferEncoder copies what fine-tuning keeps from a pre-trained model:
// the input projection, [CLS], every encoder block and the encoder's
// learned-angle network (SIREN-RoPE), by name. The
// encoders must have the same shape.
func (m *Model[T]) TransferEncoder(from *Model[T]) error {
	if m.Cfg.Encoder != from.Cfg.Encoder || m.Cfg.Values != from.Cfg.Values || m.Cfg.UseCLS != from.Cfg.UseCLS {
		return fmt.Errorf("encoder mismatch: pre-trained %+v (values %d, cls %v), new %+v (values %d, cls %v)",
			from.Cfg.Encoder, from.Cfg.Values, from.Cfg.UseCLS, m.Cfg.Encoder, m.Cfg.Values, m.Cfg.UseCLS)
	}
	src := map[string]*tensor.Param[T]{}
	for _, p := range from.Params {
		src[p.Name] = p
	}
	m.dropPacked()
	n := 0
	for _, p := range m.Params {
		if isEncoderParam(p.Name) {
			copy(p.W, src[p.Name].W)
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no encoder parameters transferred")
	}
	return nil
}

func isEncoderParam(name string) bool {
	return name == "cls" || name == "projection.weight" || name == "projection.bias" ||
		strings.HasPrefix(name, "encoder.") || strings.HasPrefix(name, "encoder_siren.")
}
