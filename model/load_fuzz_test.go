package model

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"romae/ckpt"
	"romae/internal/fuzzcheck"
)

// fuzzModel is a model small enough that its checkpoint is a good seed.
func fuzzModel(t testing.TB, task string) *Model[float32] {
	c := DefaultConfig()
	c.Encoder = Size{DModel: 4, Heads: 1, Depth: 1, FFN: 4}
	c.Decoder = Size{DModel: 4, Heads: 1, Depth: 1, FFN: 4}
	c.Values, c.Task, c.Outputs = 2, task, 3
	if task == TaskPretrain {
		c.Outputs = 0
	}
	m, err := New[float32](c, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fileWithConfig is a romae checkpoint whose tensors are m's but whose
// romae.config metadata is cfg (any JSON), as a hostile file would be.
func fileWithConfig(t testing.TB, m *Model[float32], cfg string) []byte {
	var ts []*ckpt.Tensor
	for _, p := range m.Params {
		ts = append(ts, ckpt.F32Tensor(p.Name, p.Shape, p.W))
	}
	var b bytes.Buffer
	if err := ckpt.Write(&b, ts, map[string]string{metaFormat: formatV1, metaConfig: cfg}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzLoadCheckpoint feeds arbitrary bytes to model.Load as a romae
// checkpoint file. Seeds: real checkpoints of a tiny classifier and
// pre-training model, and the same tensors under configurations that
// declare enormous models.
func FuzzLoadCheckpoint(f *testing.F) {
	for _, task := range []string{TaskClassify, TaskPretrain} {
		m := fuzzModel(f, task)
		dir := f.TempDir()
		if err := m.Save(filepath.Join(dir, "m.safetensors"), map[string]string{"romae.classes": `["a","b","c"]`}, nil); err != nil {
			f.Fatal(err)
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "m.safetensors"))
		f.Add(raw)
	}
	m := fuzzModel(f, TaskClassify)
	for _, cfg := range []string{
		`{"encoder":{"d_model":65536,"heads":1,"depth":1,"ffn":4},"values":2,"pos_dims":1,"pos_encoding":"rope","p_rope":0.75,"rope_base":10000,"use_cls":true,"task":"classify","outputs":3,"pool":"cls","rmsnorm_eps":1e-12}`,
		`{"encoder":{"d_model":4,"heads":1,"depth":1000000000,"ffn":4},"values":2,"pos_dims":1,"pos_encoding":"rope","p_rope":0.75,"rope_base":10000,"use_cls":true,"task":"classify","outputs":3,"pool":"cls","rmsnorm_eps":1e-12}`,
		`{"encoder":{"d_model":4096,"heads":1,"depth":4,"ffn":16384},"values":2,"pos_dims":1,"pos_encoding":"rope","p_rope":0.75,"rope_base":10000,"use_cls":true,"task":"classify","outputs":3,"pool":"cls","rmsnorm_eps":1e-12}`,
		`{"encoder":{"d_model":4,"heads":1,"depth":1,"ffn":4},"values":65536,"pos_dims":1,"pos_encoding":"rope","p_rope":0.75,"rope_base":10000,"use_cls":true,"task":"classify","outputs":65536,"pool":"cls","rmsnorm_eps":1e-12}`,
		`{"encoder":{"d_model":4,"heads":1,"depth":1,"ffn":4},"values":2,"pos_dims":1,"pos_encoding":"siren","siren":{"axes":[0],"time_axis":0,"time_scale":1,"hidden":100000,"omega0":10,"cat_axes":[0],"cat_sizes":[1000000000],"cat_dim":4},"p_rope":0.75,"rope_base":10000,"use_cls":true,"task":"classify","outputs":3,"pool":"cls","rmsnorm_eps":1e-12}`,
	} {
		f.Add(fileWithConfig(f, m, cfg))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := fuzzcheck.WriteInput(t, dir, "in.safetensors", in)
		fuzzcheck.Check(t, len(in), func() {
			m, ck, err := Load[float32](path)
			if err != nil {
				return
			}
			if err := m.Cfg.Validate(); err != nil || ck.File == nil {
				t.Fatalf("loaded an invalid model: %v", err)
			}
		})
	})
}

// FuzzLoadOfficialDir feeds arbitrary bytes to model.Load as the
// model_config.json of an authors' checkpoint directory, next to the
// weights of a tiny classifier.
func FuzzLoadOfficialDir(f *testing.F) {
	m := fuzzModel(f, TaskClassify)
	var ts []*ckpt.Tensor
	for _, p := range m.Params {
		ts = append(ts, ckpt.F32Tensor(p.Name, p.Shape, p.W))
	}
	dir := f.TempDir()
	if err := ckpt.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"encoder_config":{"d_model":4,"nhead":1,"depth":1,"dim_feedforward":4},"use_cls":true,"tubelet_size":[1,1,2],"n_channels":1,"n_pos_dims":1,"dim_output":3}`,
		`{"encoder_config":{"d_model":65536,"nhead":1,"depth":1},"tubelet_size":[1,1,2],"n_pos_dims":1,"dim_output":3}`,
		`{"encoder_config":{"d_model":4,"nhead":1,"depth":1000000000},"tubelet_size":[1,1,2],"n_pos_dims":1,"dim_output":3}`,
		`{"encoder_config":{"d_model":4,"nhead":1,"depth":1,"mlp_ratio":1e300},"tubelet_size":[1,1,2],"n_pos_dims":1,"dim_output":3}`,
		`{"encoder_config":{"d_model":4,"nhead":1,"depth":1},"tubelet_size":[4294967296,4294967296,2],"n_pos_dims":1,"dim_output":3}`,
		`{"encoder_config":{},"decoder_config":{},"use_cls":true}`,
	} {
		f.Add([]byte(s))
	}
	if raw, err := os.ReadFile(filepath.Join(parityDir, "fixture.json")); err == nil {
		f.Add(raw) // not an authors' config: a JSON document of the same family
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.WriteInput(t, dir, "model_config.json", in)
		fuzzcheck.Check(t, len(in), func() {
			if m, _, err := Load[float32](dir); err == nil {
				if err := m.Cfg.Validate(); err != nil {
					t.Fatalf("loaded an invalid model: %v", err)
				}
			}
		})
	})
}
