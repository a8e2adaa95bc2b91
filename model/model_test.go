package model

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"romae/data"
	"romae/internal/gradcheck"
	"romae/tensor"
)

// testBatch makes B samples of up to L tokens with C values and D position
// axes; sample b has L−b tokens so padding is always exercised.
func testBatch(B, L, C, D int, intPos bool, seed uint64) *data.Batch {
	rng := rand.New(rand.NewPCG(seed, 1))
	bt := &data.Batch{B: B, L: L, C: C, D: D,
		Values: make([]float32, B*L*C), Positions: make([]float32, B*L*D),
		Pad: make([]bool, B*L), Lengths: make([]int, B), Labels: make([]int, B)}
	for b := 0; b < B; b++ {
		bt.Lengths[b] = L - b
		bt.Labels[b] = b % 3
		for i := 0; i < L; i++ {
			k := b*L + i
			if i >= L-b {
				bt.Pad[k] = true
				continue
			}
			for j := 0; j < C; j++ {
				bt.Values[k*C+j] = float32(rng.NormFloat64())
			}
			for j := 0; j < D; j++ {
				p := rng.Float64() * 20
				if intPos {
					p = math.Floor(p)
				}
				bt.Positions[k*D+j] = float32(p)
			}
		}
	}
	return bt
}

// testMask hides about half of each sample's tokens.
func testMask(bt *data.Batch, seed uint64) []bool {
	rng := rand.New(rand.NewPCG(seed, 2))
	m := make([]bool, bt.B*bt.L)
	for i := range m {
		m[i] = !bt.Pad[i] && rng.Float64() < 0.5
	}
	return m
}

func smallConfig(task string, posDims int) Config {
	c := DefaultConfig()
	c.Encoder = Size{DModel: 24, Heads: 2, Depth: 2, FFN: 20}
	c.Decoder = Size{DModel: 12, Heads: 1, Depth: 2, FFN: 16}
	c.PosDims = posDims
	c.Values = 2
	c.Task = task
	c.Outputs = 3
	return c
}

// TestModelGradients checks every parameter tensor of whole models —
// encoder, decoder and heads together — against finite differences.
func TestModelGradients(t *testing.T) {
	cases := []struct {
		name   string
		cfg    func() Config
		intPos bool
		opt    LossOptions
	}{
		{"pretrain/rope2d/cls/dropout/all", func() Config {
			c := smallConfig(TaskPretrain, 2)
			c.AttnDropout, c.HiddenDropout, c.HeadDropout, c.DropPath = 0.2, 0.2, 0.2, 0.3
			c.QueryAttention = QueryAll
			return c
		}, false, LossOptions{}},
		{"pretrain/rope2d/cls/dropout/independent", func() Config {
			c := smallConfig(TaskPretrain, 2)
			c.AttnDropout, c.HiddenDropout, c.HeadDropout, c.DropPath = 0.2, 0.2, 0.2, 0.3
			c.QueryAttention = QueryIndependent
			return c
		}, false, LossOptions{}},
		{"pretrain/absolute1d/nocls/normtargets/independent", func() Config {
			c := smallConfig(TaskPretrain, 1)
			c.PosEncoding, c.UseCLS, c.Values, c.NormTargets = PosAbsolute, false, 3, true
			c.QueryAttention = QueryIndependent
			return c
		}, false, LossOptions{}},
		{"pretrain/rope3d/p1/all", func() Config {
			c := smallConfig(TaskPretrain, 3)
			c.P = 1
			c.QueryAttention = QueryAll
			return c
		}, false, LossOptions{}},
		{"pretrain/rope1d/nocls/independent/3 blocks", func() Config {
			// No [CLS]: the prefix is the visible tokens alone, some
			// samples with padded visible slots.
			c := smallConfig(TaskPretrain, 1)
			c.UseCLS, c.Decoder.Depth, c.AttnDropout = false, 3, 0.1
			c.QueryAttention = QueryIndependent
			return c
		}, false, LossOptions{}},
		{"classify/ropeint/cls/weights+smoothing", func() Config {
			c := smallConfig(TaskClassify, 1)
			c.PosEncoding = PosRoPEInt
			return c
		}, true, LossOptions{ClassWeights: []float64{1, 2, 0.5}, LabelSmoothing: 0.1}},
		{"classify/rope2d/cls/dropout+droppath", func() Config {
			// [CLS] pooling: the last block runs its MLP on [CLS] rows only.
			c := smallConfig(TaskClassify, 2)
			c.Encoder.Depth = 3
			c.AttnDropout, c.HiddenDropout, c.HeadDropout, c.DropPath = 0.2, 0.2, 0.2, 0.3
			return c
		}, false, LossOptions{}},
		{"regress/siren/cls", func() Config {
			c := smallConfig(TaskRegress, 2)
			c.PosEncoding = PosSiren
			c.Siren = DefaultSiren(2)
			c.Siren.Hidden = 6
			return c
		}, false, LossOptions{}},
		{"classify/mean/nocls/3d", func() Config {
			c := smallConfig(TaskClassify, 3)
			c.UseCLS, c.Pool = false, PoolMean
			return c
		}, false, LossOptions{}},
		{"classify/max/nocls", func() Config {
			c := smallConfig(TaskClassify, 1)
			c.UseCLS, c.Pool = false, PoolMax
			return c
		}, false, LossOptions{}},
		{"classify/meanmax/nocls/2d", func() Config {
			c := smallConfig(TaskClassify, 2)
			c.UseCLS, c.Pool = false, PoolMeanMax
			return c
		}, false, LossOptions{LabelSmoothing: 0.1}},
		{"regress/meanmax/cls", func() Config {
			c := smallConfig(TaskRegress, 1)
			c.Pool = PoolMeanMax
			return c
		}, false, LossOptions{}},
		{"pretrain/siren/time+cycles+band/independent", func() Config {
			c := smallConfig(TaskPretrain, 2)
			c.QueryAttention = QueryIndependent
			c.PosEncoding = PosSiren
			c.Siren = DefaultSiren(2)
			c.Siren.Periods, c.Siren.CatAxes, c.Siren.CatSizes, c.Siren.Hidden = []float64{7, 3.5}, []int{0}, []int{20}, 8
			c.AttnDropout = 0.1
			return c
		}, true, LossOptions{}},
		{"classify/siren/both-axes/nocls", func() Config {
			c := smallConfig(TaskClassify, 2)
			c.PosEncoding, c.UseCLS, c.Pool = PosSiren, false, PoolMean
			c.Siren = DefaultSiren(2)
			c.Siren.Axes, c.Siren.Hidden, c.Siren.TimeScale = []int{0, 1}, 6, 10
			return c
		}, false, LossOptions{}},
		{"regress/token/absolute2d", func() Config {
			c := smallConfig(TaskRegress, 2)
			c.PosEncoding, c.Pool, c.Outputs = PosAbsolute, PoolToken, 2
			return c
		}, false, LossOptions{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			m, err := New[float64](cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			// Non-trivial values everywhere, so no gradient is trivially zero
			// ([MASK] and biases start at 0, gains at 1).
			rng := rand.New(rand.NewPCG(5, 5))
			for i := range m.W {
				m.W[i] += 0.05 * rng.NormFloat64()
			}
			bt := testBatch(3, 7, cfg.Values, cfg.PosDims, tc.intPos, 3)
			if cfg.Task == TaskRegress {
				perToken := cfg.Pool == PoolToken
				bt.TargetDim, bt.TargetPerToken = cfg.Outputs, perToken
				n := bt.B
				if perToken {
					n *= bt.L
				}
				bt.Targets = make([]float32, n*cfg.Outputs)
				for i := range bt.Targets {
					bt.Targets[i] = float32(rng.NormFloat64())
				}
			}
			mask := testMask(bt, 4)
			ws := m.NewWorkspace()
			loss := func() float64 {
				r := rand.New(rand.NewPCG(9, 9)) // same dropout masks every call
				var l float64
				var err error
				if cfg.Task == TaskPretrain {
					l, err = m.ForwardPretrain(ws, bt, mask, true, r)
				} else {
					l, err = m.ForwardTask(ws, bt, tc.opt, true, r)
				}
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			loss()
			m.ZeroGrad()
			if cfg.Task == TaskPretrain {
				m.BackwardPretrain(ws)
			} else {
				m.BackwardTask(ws)
			}
			grad := append([]float64(nil), m.G...)
			for _, p := range m.Params {
				off := offsetOf(m, p.W)
				if err := gradcheck.Check(p.Name, p.W, grad[off:off+len(p.W)], loss, 12); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func offsetOf(m *Model[float64], w []float64) int {
	for i := range m.W {
		if &m.W[i] == &w[0] {
			return i
		}
	}
	panic("parameter not in the model's buffer")
}

func TestSizesMatchPaperTable8(t *testing.T) {
	// Table 8 counts, to the precision the paper prints them.
	want := map[string]float64{"tiny": 4.67e6, "small": 26.9e6, "base": 74.7e6}
	for name, n := range want {
		got := float64(Sizes[name].Params())
		digits := math.Pow(10, math.Floor(math.Log10(n))-2)
		if math.Round(got/digits)*digits != n {
			t.Errorf("%s: %d parameters, paper says %.3gM", name, Sizes[name].Params(), n/1e6)
		}
	}
	// Per block 12·d² + 2·d (ffn = 4·d), as ROMAE.md states.
	for _, name := range SizeNames() {
		s := Sizes[name]
		if got, want := s.Params(), s.Depth*(12*s.DModel*s.DModel+2*s.DModel); got != want {
			t.Errorf("%s: %d parameters, want 12d²+2d per block = %d", name, got, want)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"head_dim not divisible by 2·D", func(c *Config) { c.PosDims = 3; c.Encoder.Heads = 9 }, "head_dim"},
		{"p above 1", func(c *Config) { c.P = 1.5 }, "p_rope"},
		{"p negative", func(c *Config) { c.P = -0.1 }, "p_rope"},
		{"4 axes", func(c *Config) { c.PosDims = 4 }, "pos_dims"},
		{"d_model not divisible by heads", func(c *Config) { c.Encoder.Heads = 7 }, "divisible by heads"},
		{"unknown encoding", func(c *Config) { c.PosEncoding = "alibi" }, "pos_encoding"},
		{"dropout 1", func(c *Config) { c.AttnDropout = 1 }, "attn_dropout"},
		{"classify without classes", func(c *Config) { c.Task = TaskClassify; c.Outputs = 0 }, "outputs"},
		{"cls pool without cls", func(c *Config) { c.Task = TaskClassify; c.Outputs = 3; c.UseCLS = false }, "use_cls"},
		{"norm targets of 1 value", func(c *Config) { c.NormTargets = true }, "normalize_targets"},
		{"zero eps", func(c *Config) { c.NormEps = 0 }, "rmsnorm_eps"},
		{"unknown query attention", func(c *Config) { c.QueryAttention = "causal" }, "query_attention"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(&c)
			_, err := New[float32](c, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

const parityDir = "../../shared/fixtures/official-parity"

// TestOfficialParity runs the authors' checkpoints on the authors' inputs
// and requires their outputs to 1e-4 relative, in float32 (the production
// path) and float64 (the fixture itself is float32, so float64 cannot do
// much better: both show the gap is rounding).
func TestOfficialParity(t *testing.T) {
	for _, run := range []struct {
		name string
		f    func(string) (ParityReport, error)
	}{{"float32", VerifyOfficial[float32]}, {"float64", VerifyOfficial[float64]}} {
		rep, err := run.f(parityDir)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", run.name, rep)
		if rep.ClassifierMaxRelErr > 1e-4 || rep.PretrainMaxRelErr > 1e-4 || rep.LossAbsErr > 1e-4 {
			t.Errorf("%s parity: %+v, want all ≤ 1e-4", run.name, rep)
		}
	}
}

// A checkpoint that does not match the configuration is refused with a
// message naming what is wrong, instead of silently computing something else.
func TestOfficialMismatchRefused(t *testing.T) {
	base := func() Config {
		var fx ParityFixture
		fx.Config.Encoder = paritySize{180, 3, 2, 720, 1e-12}
		fx.Config.UseCLS, fx.Config.PosDims, fx.Config.P, fx.Config.RoPEBase = true, 2, 0.75, 10000
		fx.Config.Tubelet, fx.Config.Channels = [3]int{1, 1, 1}, 2
		c := fx.config()
		c.Task, c.Outputs = TaskClassify, 5
		return c
	}
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"wrong p", func(c *Config) { c.P = 0.5 }, "p_rope"},
		{"wrong axes", func(c *Config) { c.PosDims = 1 }, "entries"},
		{"wrong classes", func(c *Config) { c.Outputs = 4 }, "head.head.2"},
		{"wrong width", func(c *Config) { c.Encoder.FFN = 360 }, "feed_forward"},
		{"classifier weights as pre-training model", func(c *Config) { c.Task, c.Decoder = TaskPretrain, Sizes["tiny-shallow"] }, "encoder_decoder_proj"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(&c)
			_, err := LoadOfficialWeights[float32](c, parityDir+"/classifier.safetensors")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	cfg := smallConfig(TaskPretrain, 2)
	m, err := New[float32](cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/m.safetensors"
	if err := m.Save(path, map[string]string{"note": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	got, ck, err := Load[float32](path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Cfg, m.Cfg) || ck.Meta["note"] != "x" {
		t.Errorf("config or metadata changed: %+v %v", got.Cfg, ck.Meta)
	}
	for i := range m.W {
		if got.W[i] != m.W[i] {
			t.Fatalf("weight %d: %v, saved %v", i, got.W[i], m.W[i])
		}
	}
	// Fine-tuning starts from the pre-trained encoder, not from the head.
	cc := cfg
	cc.Task = TaskClassify
	ft, err := New[float32](cc, 99)
	if err != nil {
		t.Fatal(err)
	}
	if err := ft.TransferEncoder(got); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cls", "projection.weight", "encoder.layers.1.feed_forward.w2.weight"} {
		a, _ := ft.Param(name)
		b, _ := got.Param(name)
		if a.W[0] != b.W[0] || a.W[len(a.W)-1] != b.W[len(b.W)-1] {
			t.Errorf("%s not transferred", name)
		}
	}
}

// With every learned scale s = 0 (and the gate at its initial 1),
// SIREN-RoPE's angles are exactly p-RoPE's: the model computes the same
// function as the plain continuous-RoPE model with the same weights.
func TestSirenZeroScaleIsPRoPE(t *testing.T) {
	for _, task := range []string{TaskPretrain, TaskClassify} {
		cfg := smallConfig(task, 2)
		cfg.PosEncoding, cfg.Siren = PosSiren, DefaultSiren(2)
		cfg.Siren.Periods, cfg.Siren.CatAxes, cfg.Siren.CatSizes = []float64{5}, []int{0}, []int{20}
		sm, err := New[float64](cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		plain := cfg
		plain.PosEncoding = PosRoPE
		pm, _ := New[float64](plain, 4)
		for _, p := range pm.Params {
			q, err := sm.Param(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			copy(p.W, q.W)
		}
		bt, mask := testBatch(3, 7, 2, 2, true, 5), []bool(nil)
		bt.Labels = []int{0, 1, 2}
		mask = testMask(bt, 6)
		run := func(m *Model[float64]) []float64 {
			ws := m.NewWorkspace()
			var err error
			if task == TaskPretrain {
				_, err = m.ForwardPretrain(ws, bt, mask, false, nil)
			} else {
				_, err = m.ForwardTask(ws, bt, LossOptions{}, false, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			return append([]float64(nil), ws.Output()...)
		}
		differs := func(a, b []float64) bool {
			for i := range a {
				if a[i] != b[i] {
					return true
				}
			}
			return false
		}
		want := run(pm)
		if !differs(run(sm), want) {
			t.Fatalf("%s: SIREN with s = π computes the plain model's outputs; the learned angles are inert", task)
		}
		for _, name := range []string{"encoder_siren.scale", "decoder_siren.scale"} {
			if p, err := sm.Param(name); err == nil {
				clear(p.W)
			}
		}
		if got := run(sm); differs(got, want) {
			t.Errorf("%s: with s = 0, SIREN-RoPE differs from p-RoPE: %v vs %v", task, got[:3], want[:3])
		}
	}
}

func TestSirenSaveLoad(t *testing.T) {
	cfg := smallConfig(TaskPretrain, 2)
	cfg.PosEncoding, cfg.Siren = PosSiren, DefaultSiren(2)
	cfg.Siren.Periods = []float64{1, 7}
	m, err := New[float32](cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/s.safetensors"
	if err := m.Save(path, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := Load[float32](path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Cfg, m.Cfg) {
		t.Errorf("config %+v, saved %+v", got.Cfg.Siren, m.Cfg.Siren)
	}
	p, _ := got.Param("decoder_siren.gate")
	if p == nil || p.W[0] != 1 {
		t.Errorf("decoder_siren.gate not restored")
	}
	bad := cfg
	bad.Siren.Axes = []int{5}
	if _, err := New[float32](bad, 1); err == nil || !strings.Contains(err.Error(), "siren.axes") {
		t.Errorf("invalid siren axes accepted: %v", err)
	}
}

// An authors' checkpoint directory (model_config.json + model.safetensors,
// as their trainer writes it) loads wherever romae takes a checkpoint and
// reproduces their logits.
func TestLoadOfficialDirectory(t *testing.T) {
	dir := t.TempDir()
	cfgJSON := `{"encoder_config": {"d_model": 180, "nhead": 3, "layer_norm_eps": 1e-12, "depth": 2, "dim_feedforward": 720,
	  "mlp_ratio": 4.0, "drop_path_rate": 0.0, "hidden_drop_rate": 0.0, "attn_proj_drop_rate": 0.0, "attn_drop_rate": 0.0, "pos_drop_rate": 0.0},
	  "use_cls": true, "pos_encoding": "ropend", "max_len": 1500, "tubelet_size": [1, 1, 1], "n_channels": 2,
	  "head_drop_rate": 0.0, "n_pos_dims": 2, "p_rope_val": 0.75, "dim_output": 5}`
	if err := os.WriteFile(dir+"/model_config.json", []byte(cfgJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(parityDir + "/classifier.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/model.safetensors", raw, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _, err := Load[float32](dir)
	if err != nil {
		t.Fatal(err)
	}
	var fx ParityFixture
	b, _ := os.ReadFile(parityDir + "/fixture.json")
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	bt, err := fx.batch()
	if err != nil {
		t.Fatal(err)
	}
	ws := m.NewWorkspace()
	if _, err := m.ForwardTask(ws, bt, LossOptions{}, false, nil); err != nil {
		t.Fatal(err)
	}
	if e := relErr(ws.Output(), fx.Classifier.Logits, nil); e > 1e-4 {
		t.Errorf("logits from the authors' checkpoint directory: relative error %v", e)
	}
	// The absolute-embedding variant is refused (it cannot be reproduced).
	os.WriteFile(dir+"/model_config.json", []byte(strings.Replace(cfgJSON, `"ropend"`, `"absolute"`, 1)), 0o644)
	if _, _, err := Load[float32](dir); err == nil || !strings.Contains(err.Error(), "pos_encoding") {
		t.Errorf("absolute checkpoint: %v", err)
	}
}

// TestEvalModeSharesBuffers: an evaluation-mode forward pass reuses one
// block's activations for every block (see stackActs). Its outputs must be
// bit-identical to a training-mode pass without dropout, for depths that
// update the residual stream in place, on a workspace that alternates modes.
func TestEvalModeSharesBuffers(t *testing.T) {
	for _, task := range []string{TaskPretrain, TaskClassify} {
		for _, depth := range []int{1, 2, 3, 4, 5} {
			cfg := smallConfig(task, 2)
			cfg.Encoder.Depth, cfg.Decoder.Depth = depth, depth
			m, err := New[float32](cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			bt := testBatch(3, 7, 2, 2, false, 11)
			mask := testMask(bt, 4)
			ws := m.NewWorkspace()
			run := func(train bool) []float32 {
				if task == TaskPretrain {
					_, err = m.ForwardPretrain(ws, bt, mask, train, nil)
				} else {
					_, err = m.ForwardTask(ws, bt, LossOptions{}, train, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), ws.Output()...)
			}
			eval1, trained, eval2 := run(false), run(true), run(false)
			for i := range trained {
				if eval1[i] != trained[i] || eval2[i] != trained[i] {
					t.Fatalf("%s depth %d: output %d: eval %v, %v, train %v", task, depth, i, eval1[i], eval2[i], trained[i])
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s depth %d: backward after an evaluation-mode forward did not panic", task, depth)
					}
				}()
				if task == TaskPretrain {
					m.BackwardPretrain(ws)
				} else {
					m.BackwardTask(ws)
				}
			}()
		}
	}
}

// queryBatch is one sample of n observations (values C, D axes) and its
// query positions: target alone, or target among `others` more.
func queryProblem(C, D, n, others int, seed uint64) (bt *data.Batch, target []float32, many []float32) {
	rng := rand.New(rand.NewPCG(seed, 3))
	bt = &data.Batch{B: 1, L: n, C: C, D: D, Values: make([]float32, n*C), Positions: make([]float32, n*D),
		Pad: make([]bool, n), Lengths: []int{n}, Labels: []int{0}}
	for i := range bt.Values {
		bt.Values[i] = float32(rng.NormFloat64())
	}
	for i := range bt.Positions {
		bt.Positions[i] = float32(rng.Float64() * 30)
	}
	target = make([]float32, D)
	for j := range target {
		target[j] = float32(rng.Float64() * 30)
	}
	// The target sits in the middle of the others.
	for q := 0; q < others; q++ {
		if q == others/2 {
			many = append(many, target...)
		}
		for j := 0; j < D; j++ {
			many = append(many, float32(rng.Float64()*30))
		}
	}
	return bt, target, many
}

// TestIndependentQueries: with QueryAttention "independent" the prediction
// at a query position is the same whether it is asked alone or among 50
// other queries (issue 11); with "all" (the authors' decoder) it is not,
// which is what makes the test meaningful.
func TestIndependentQueries(t *testing.T) {
	for _, mode := range []string{QueryIndependent, QueryAll} {
		for _, cls := range []bool{true, false} {
			cfg := smallConfig(TaskPretrain, 2)
			cfg.Values, cfg.UseCLS, cfg.QueryAttention = 3, cls, mode
			m, err := New[float32](cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(6, 6))
			for i := range m.W {
				m.W[i] += 0.3 * float32(rng.NormFloat64()) // [MASK] and biases away from 0
			}
			bt, target, many := queryProblem(3, 2, 23, 50, 8)
			ws := m.NewWorkspace()
			y, err := m.Interpolate(ws, bt, target, []bool{false}, 1)
			if err != nil {
				t.Fatal(err)
			}
			alone := append([]float32(nil), y[:3]...)
			pad := make([]bool, 51)
			y, err = m.Interpolate(ws, bt, many, pad, 51)
			if err != nil {
				t.Fatal(err)
			}
			among := y[25*3 : 26*3]
			var diff float64
			for j := range alone {
				diff = math.Max(diff, math.Abs(float64(alone[j]-among[j])))
			}
			t.Logf("%s, cls %v: alone %v, among 50 others %v (max diff %.3g)", mode, cls, alone, among, diff)
			switch {
			case mode == QueryIndependent && diff > 1e-6:
				t.Errorf("independent, cls %v: prediction alone %v, among 50 queries %v", cls, alone, among)
			case mode == QueryAll && diff < 1e-4:
				t.Errorf("all, cls %v: prediction did not change with the other queries (%v): the test cannot tell the modes apart", cls, alone)
			}
		}
	}
}

// Pre-training under "independent": the loss of one masked token is not
// changed by what the other masked tokens hold or where they sit, and the
// padded query slots do not matter either.
func TestIndependentPretrainQueriesDoNotInteract(t *testing.T) {
	cfg := smallConfig(TaskPretrain, 1)
	cfg.QueryAttention = QueryIndependent
	m, err := New[float64](cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range m.W {
		m.W[i] += 0.2 * rng.NormFloat64()
	}
	bt := testBatch(2, 9, 2, 1, false, 4)
	mask := testMask(bt, 5)
	ws := m.NewWorkspace()
	if _, err := m.ForwardPretrain(ws, bt, mask, false, nil); err != nil {
		t.Fatal(err)
	}
	before := append([]float64(nil), ws.Reconstruction()...)
	Lq := ws.QueriesPerSample()
	// Move the position of the last masked token of sample 0.
	last := -1
	for i := 0; i < bt.L; i++ {
		if mask[i] {
			last = i
		}
	}
	if last < 0 || Lq < 2 {
		t.Fatalf("test batch has %d queries in sample 0", Lq)
	}
	bt.Positions[last] += 7.5
	if _, err := m.ForwardPretrain(ws, bt, mask, false, nil); err != nil {
		t.Fatal(err)
	}
	after := ws.Reconstruction()
	changed := 0
	q := -1
	for i := 0; i <= last; i++ {
		if mask[i] {
			q++
		}
	}
	for r := 0; r < len(before)/cfg.Values; r++ {
		for j := 0; j < cfg.Values; j++ {
			i := r*cfg.Values + j
			if r == q {
				if before[i] != after[i] {
					changed++
				}
				continue
			}
			if math.Abs(before[i]-after[i]) > 1e-12 {
				t.Fatalf("moving query %d changed the reconstruction of row %d: %v → %v", q, r, before[i], after[i])
			}
		}
	}
	if changed == 0 {
		t.Errorf("moving a query did not change its own reconstruction")
	}
}

// Checkpoints written before query_attention existed load as "all" (the
// decoder they were trained with); a saved "independent" survives a round
// trip; the authors' checkpoints are "all".
func TestQueryAttentionInCheckpoints(t *testing.T) {
	cfg := smallConfig(TaskPretrain, 2)
	cfg.QueryAttention = QueryIndependent
	m, err := New[float32](cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir+"/new.safetensors", nil, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := Load[float32](dir + "/new.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cfg.QueryAttention != QueryIndependent {
		t.Errorf("saved independent, loaded %q", got.Cfg.QueryAttention)
	}
	// An old checkpoint: the config JSON without the field.
	raw, _ := json.Marshal(m.Cfg)
	var fields map[string]any
	json.Unmarshal(raw, &fields)
	delete(fields, "query_attention")
	old, _ := json.Marshal(fields)
	m.Cfg.QueryAttention = QueryAll // what Save writes is replaced below
	if err := m.Save(dir+"/old.safetensors", map[string]string{metaConfig: string(old)}, nil); err != nil {
		t.Fatal(err)
	}
	got, ck, err := Load[float32](dir + "/old.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ck.Meta[metaConfig], "query_attention") {
		t.Fatalf("test checkpoint still has the field: %s", ck.Meta[metaConfig])
	}
	if got.Cfg.QueryAttention != QueryAll {
		t.Errorf("checkpoint without query_attention loaded as %q, want %q", got.Cfg.QueryAttention, QueryAll)
	}
	var fx ParityFixture
	b, err := os.ReadFile(parityDir + "/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if c := fx.config(); c.QueryAttention != QueryAll {
		t.Errorf("authors' fixture config has query_attention %q", c.QueryAttention)
	}
	var oc OfficialConfig
	oc.DecoderConfig = &officialStack{}
	if c, _ := oc.Config(); c.QueryAttention != QueryAll {
		t.Errorf("authors' model_config.json translates to query_attention %q", c.QueryAttention)
	}
}

// The authors' pre-training fixture is reproduced by "all" (the mode their
// checkpoints load with) and not by "independent": their decoder lets
// [MASK] tokens attend to each other, and the fixture sees the difference.
func TestOfficialParityNeedsQueryAll(t *testing.T) {
	var fx ParityFixture
	b, err := os.ReadFile(parityDir + "/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	bt, err := fx.batch()
	if err != nil {
		t.Fatal(err)
	}
	masked := make([]bool, bt.B*bt.L)
	for i, row := range fx.Inputs.PretrainMask {
		copy(masked[i*bt.L:], row)
	}
	errs := map[string]float64{}
	for _, mode := range []string{QueryAll, QueryIndependent} {
		cfg := fx.config()
		cfg.Task, cfg.QueryAttention = TaskPretrain, mode
		m, err := LoadOfficialWeights[float32](cfg, parityDir+"/pretrain.safetensors")
		if err != nil {
			t.Fatal(err)
		}
		ws := m.NewWorkspace()
		if _, err := m.ForwardPretrain(ws, bt, masked, false, nil); err != nil {
			t.Fatal(err)
		}
		errs[mode] = relErr(ws.Reconstruction(), flatten(fx.Pretrain.Reconstruction), nil)
	}
	t.Logf("reconstruction max relative error against the authors: %v", errs)
	if errs[QueryAll] > 1e-4 {
		t.Errorf("all: %v, want ≤ 1e-4", errs[QueryAll])
	}
	if errs[QueryIndependent] < 1e-3 {
		t.Errorf("independent reproduces the authors' decoder (%v): the fixture cannot tell the modes apart", errs[QueryIndependent])
	}
}

// TestPackWeights: a model whose weights are packed once (PackWeights)
// gives bit-identical outputs in every inference path, and the packed
// copies go away as soon as the weights may change (a training forward
// pass, loading weights, TransferEncoder), so no pass reads stale ones.
// The shapes are large enough for the products to split over the cores.
// Under bf16 too, where the weights are packed as rounded bf16 pairs.
func TestPackWeights(t *testing.T) {
	eachPrecisionTask(t, func(t *testing.T, task string) {
		cfg := smallConfig(task, 2)
		cfg.Encoder = Size{DModel: 64, Heads: 2, Depth: 2, FFN: 96}
		cfg.Decoder = Size{DModel: 32, Heads: 1, Depth: 1, FFN: 48}
		plain, err := New[float32](cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		packed, err := New[float32](cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		packed.PackWeights()
		if packed.enc.packed == nil || (len(packed.dec.blocks) > 0) != (packed.dec.packed != nil) {
			t.Fatal("PackWeights left a stack unpacked")
		}
		bt := testBatch(4, 50, 2, 2, false, 13)
		mask := testMask(bt, 6)
		run := func(m *Model[float32]) [][]float32 {
			ws := m.NewWorkspace()
			var outs [][]float32
			if task == TaskPretrain {
				if _, err := m.ForwardPretrain(ws, bt, mask, false, nil); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, append([]float32(nil), ws.Output()...))
				qPos := make([]float32, bt.B*3*bt.D)
				for i := range qPos {
					qPos[i] = float32(i%7) + 0.5
				}
				y, err := m.Interpolate(ws, bt, qPos, make([]bool, bt.B*3), 3)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, append([]float32(nil), y...))
			} else {
				if _, err := m.ForwardTask(ws, bt, LossOptions{}, false, nil); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, append([]float32(nil), ws.Output()...))
			}
			e, err := m.Embed(ws, bt, PoolMean, nil)
			if err != nil {
				t.Fatal(err)
			}
			return append(outs, append([]float32(nil), e...))
		}
		same := func(when string) {
			t.Helper()
			want, got := run(plain), run(packed)
			for o := range want {
				for i := range want[o] {
					if math.Float32bits(got[o][i]) != math.Float32bits(want[o][i]) {
						t.Fatalf("%s: output %d[%d]: packed %v, plain %v", when, o, i, got[o][i], want[o][i])
					}
				}
			}
		}
		same("packed")

		// A training step on both: the packed model must drop its copies
		// and then follow the new weights.
		for _, m := range []*Model[float32]{plain, packed} {
			ws := m.NewWorkspace()
			m.ZeroGrad()
			if task == TaskPretrain {
				_, err = m.ForwardPretrain(ws, bt, mask, true, rand.New(rand.NewPCG(1, 2)))
				m.BackwardPretrain(ws)
			} else {
				_, err = m.ForwardTask(ws, bt, LossOptions{}, true, rand.New(rand.NewPCG(1, 2)))
				m.BackwardTask(ws)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range m.G {
				m.W[i] -= 0.1 * g
			}
		}
		if packed.enc.packed != nil || packed.dec.packed != nil {
			t.Fatal("a training forward pass kept the packed weights")
		}
		same("after a training step")

		packed.PackWeights()
		if err := packed.TransferEncoder(plain); err != nil {
			t.Fatal(err)
		}
		if packed.enc.packed != nil {
			t.Fatal("TransferEncoder kept the packed weights")
		}
	})
}

// With bf16 products, RMSNorm and SiLU store their outputs in bf16 for the
// product that reads them (bf16Operand), and attention its output
// (mergeBF): outputs, losses and gradients must be the same to the bit as
// when the products round and pack those activations themselves, for
// inference (weights packed or not) and training (with and without hidden
// dropout, which turns the SiLU part off), with the row-wise part in
// chunks and layer by layer, and with the authors' decoder (full
// attention, its last block on the [MASK] rows), on every bf16 kernel.
func TestProducerRoundingBF16(t *testing.T) {
	if !tensor.BF16Supported() {
		t.Skip("no bf16 kernel on this CPU/build: producers never round")
	}
	defer func(c bool) { producerRounding, chunkTail = true, c }(chunkTail)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		if !tensor.BF16Operands() {
			return // fp32 products: nothing rounds
		}
		for _, hidDrop := range []float64{0, 0.1} {
			for _, authors := range []bool{false, true} {
				t.Run(fmt.Sprintf("hidden_dropout=%v/authors=%v", hidDrop, authors), func(t *testing.T) {
					cfg := smallConfig(task, 2)
					cfg.Encoder = Size{DModel: 64, Heads: 2, Depth: 2, FFN: 96}
					cfg.Decoder = Size{DModel: 32, Heads: 1, Depth: 1, FFN: 48}
					cfg.HiddenDropout = hidDrop
					chunkTail = !authors // the authors' decoder, and the row-wise part layer by layer
					if authors {
						cfg.QueryAttention = QueryAll
					}
					bt := testBatch(4, 50, 2, 2, false, 13)
					mask := testMask(bt, 6)
					// run gives the evaluation outputs (plain, then with packed
					// weights), the training loss and the gradients.
					run := func(rounding bool) (outs [][]float32) {
						producerRounding = rounding
						m, err := New[float32](cfg, 5)
						if err != nil {
							t.Fatal(err)
						}
						ws := m.NewWorkspace()
						forward := func(train bool) float64 {
							var loss float64
							if task == TaskPretrain {
								loss, err = m.ForwardPretrain(ws, bt, mask, train, rand.New(rand.NewPCG(1, 2)))
							} else {
								loss, err = m.ForwardTask(ws, bt, LossOptions{}, train, rand.New(rand.NewPCG(1, 2)))
							}
							if err != nil {
								t.Fatal(err)
							}
							return loss
						}
						forward(false)
						if rows, _ := ws.enc.opBF.Shape(); (rows > 0) != rounding {
							t.Fatalf("producer rounding %v, but the encoder's bf16 operand has %d rows", rounding, rows)
						}
						outs = append(outs, append([]float32(nil), ws.Output()...))
						m.ZeroGrad()
						loss := forward(true)
						if task == TaskPretrain {
							m.BackwardPretrain(ws)
						} else {
							m.BackwardTask(ws)
						}
						outs = append(outs, []float32{float32(loss)}, append([]float32(nil), m.G...))
						m.PackWeights()
						forward(false)
						return append(outs, append([]float32(nil), ws.Output()...))
					}
					want, got := run(false), run(true)
					for o, name := range []string{"evaluation output", "training loss", "gradients", "output with packed weights"} {
						if len(got[o]) != len(want[o]) {
							t.Fatalf("%s: %d values, want %d", name, len(got[o]), len(want[o]))
						}
						for i := range want[o] {
							if math.Float32bits(got[o][i]) != math.Float32bits(want[o][i]) || math.IsNaN(float64(got[o][i])) {
								t.Fatalf("%s[%d]: %v with producer rounding, %v without", name, i, got[o][i], want[o][i])
							}
						}
					}
				})
			}
		}
	})
}

// TestQKVRoPEGroups: with packed weights, the q|k|v product and RoPE run a
// few samples at a time (qkvRoPE); the outputs must equal those of the
// whole batch at once to the bit, in fp32 and bf16, with a last group
// shorter than the others.
func TestQKVRoPEGroups(t *testing.T) {
	defer func(g int, c bool) { qkvGroupRows, chunkHead = g, c }(qkvGroupRows, chunkHead)
	chunkHead = false // groups, not chunks (TestQKVRoPEChunks)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		pass := newEvalPass(t, task)
		m, bt := pass.m, pass.bt
		run := func(groupRows, wantSamples int) []float32 {
			qkvGroupRows = groupRows
			if got := qkvSamples(m.enc.packed[0].qkv, bt.B, bt.L); got != wantSamples {
				t.Fatalf("qkvGroupRows %d: groups of %d samples, want %d", groupRows, got, wantSamples)
			}
			return pass.run(t)
		}
		groups := 2 // groups of 2, 2, 1 samples
		if !m.enc.packed[0].qkv.InKernelOrder() {
			groups = bt.B // no kernel order to pack in (gonum, a portable build): no groups
		}
		want, got := run(0, bt.B), run(100, groups)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.IsNaN(float64(got[i])) {
				t.Fatalf("output[%d]: %v in groups, %v for the whole batch", i, got[i], want[i])
			}
		}
	})
}

// evalPass is an evaluation pass of a small model with packed weights on
// a batch of 5 × 50 tokens (masked for pre-training).
type evalPass struct {
	task string
	m    *Model[float32]
	ws   *Workspace[float32]
	bt   *data.Batch
	mask []bool
}

func newEvalPass(t *testing.T, task string) *evalPass {
	t.Helper()
	cfg := smallConfig(task, 2)
	cfg.Encoder = Size{DModel: 64, Heads: 2, Depth: 2, FFN: 96}
	bt := testBatch(5, 50, 2, 2, false, 17)
	m, err := New[float32](cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.PackWeights()
	return &evalPass{task: task, m: m, ws: m.NewWorkspace(), bt: bt, mask: testMask(bt, 6)}
}

// run runs the pass and returns a copy of its output.
func (p *evalPass) run(t *testing.T) []float32 {
	t.Helper()
	var err error
	if p.task == TaskPretrain {
		_, err = p.m.ForwardPretrain(p.ws, p.bt, p.mask, false, rand.New(rand.NewPCG(1, 2)))
	} else {
		_, err = p.m.ForwardTask(p.ws, p.bt, LossOptions{}, false, rand.New(rand.NewPCG(1, 2)))
	}
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), p.ws.Output()...)
}

// TestTailFits: which blocks run their row-wise part chunk by chunk, on
// the caches of the CPU classes seen: where the weights fit in L2, and on
// the AVX2 tiles also where they fit in half of L3; never without an L2
// size.
func TestTailFits(t *testing.T) {
	defer func(l2, l3v int) { coreL2, l3 = l2, l3v }(coreL2, l3)
	defer tensor.SetBackend(tensor.BackendName())
	const d, f = 180, 720 // RoMAE-tiny: 1.17 MB of fp32 weights
	for _, c := range []struct {
		name    string
		backend string
		l2, l3  int
		d, f    int
		want    bool
	}{
		// gonum stands for the AVX-512 tiles: any back end but avx2.
		{"xeon", "gonum", 2 << 20, 105 << 20, d, f, true},
		{"zen4", "gonum", 1 << 20, 32 << 20, d, f, false},
		{"zen3", "avx2", 512 << 10, 32 << 20, d, f, true},
		{"zen3 base-size", "avx2", 512 << 10, 32 << 20, 768, 3072, false}, // 21 MB > 16 MiB
		{"zen3 no L3 size", "avx2", 512 << 10, 0, d, f, false},
		{"no L2 size", "avx2", 0, 32 << 20, d, f, false},
		{"zen4 as avx2", "avx2", 1 << 20, 32 << 20, d, f, true},
	} {
		if tensor.SetBackend(c.backend) != nil {
			t.Logf("%s: no %s back end here, not checked", c.name, c.backend)
			continue
		}
		coreL2, l3 = c.l2, c.l3
		if got := tailFits(c.d, c.f); got != c.want {
			t.Errorf("%s: tailFits(%d, %d) = %v, want %v", c.name, c.d, c.f, got, c.want)
		}
	}
}

// TestRowwiseTailChunks: an evaluation pass on packed weights runs each
// block's row-wise part (output projection, residual, RMSNorm, MLP)
// chunk by chunk on one core each (rowTail), fp32 or bf16 (each bf16
// kernel). Its outputs must equal those of the layer-by-layer pass: bit
// for bit on romae's own kernels, within float32 rounding on a library's,
// which choose their blocking by shape. 250 rows leave a short last chunk
// of 26 rows, not a whole number of 8-row panels; the classifier's and
// the decoder's last blocks run on their selected rows (5 and 5×6) in
// chunks of their own size.
func TestRowwiseTailChunks(t *testing.T) {
	defer func(v bool) { chunkTail = v }(chunkTail)
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		pass := newEvalPass(t, task)
		m, ws := pass.m, pass.ws
		chunkTail = false
		want := pass.run(t)
		chunkTail = true
		got := pass.run(t)
		chunked := ws.enc.tailPacked(m.enc.packed[0], &m.enc.blocks[0], 64, 96) != nil
		if want := m.enc.packed[0].w1.InKernelOrder() && tailFits(64, 96); chunked != want {
			// Without a kernel order to pack in (gonum, OpenBLAS, a
			// portable build) or an L2 size, both passes run layer by
			// layer.
			t.Fatalf("row-wise part in chunks: %v, want %v", chunked, want)
		}
		exact := tensor.BackendName() != "openblas" && tensor.BackendName() != "gonum"
		for i := range want {
			d := math.Abs(float64(got[i] - want[i]))
			if exact && math.Float32bits(got[i]) != math.Float32bits(want[i]) || d > 1e-5*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(got[i])) {
				t.Fatalf("output[%d]: %v in chunks, %v layer by layer (%s)", i, got[i], want[i], tensor.BackendName())
			}
		}
	})
}

// TestRowwiseTailChunksTraining: a training pass runs the blocks'
// row-wise part chunk by chunk too, keeping h, RMSNorm(h), rstd, pre and
// act for the backward pass, with dropout and drop path. Loss and every
// gradient must equal the layer-by-layer pass bit for bit over two steps
// (the second repacks the weights the first changed), and the evaluation
// pass after them.
func TestRowwiseTailChunksTraining(t *testing.T) {
	defer func(v bool) { chunkTail = v }(chunkTail)
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		chunkTail = false
		wantLoss, want, _ := trainSteps(t, task, 5)
		chunkTail = true
		gotLoss, got, ws := trainSteps(t, task, 5)
		if be := tensor.BackendName(); (be == "avx512" || be == "avx2") && tailFits(64, 96) && ws.enc.tailPack.w1 == nil {
			t.Fatal("training ran no block's row-wise part in chunks")
		}
		if be := tensor.BackendName(); be == "openblas" || be == "gonum" {
			closeLossGrads(t, be, gotLoss, wantLoss, got, want)
			return
		}
		sameBits(t, "in chunks", gotLoss, wantLoss, got, want)
	})
}

// TestKeepBF16Acts: with bf16 products, a training pass keeps the
// products' inputs RMSNorm(x), RMSNorm(h) and SiLU's output in bf16 only
// and the weight gradients read them from there (keepBF), and attention
// stores its output in bf16 only (mergeBF). Losses and every gradient
// over two steps equal those of the pass that keeps them in float32 and
// lets the products round them, bit for bit, in each way a pass runs: the
// q|k|v product and the row-wise part in chunks, both in groups of
// samples and layer by layer (where the last block of a classifier runs
// on its [CLS] rows alone), with absolute positions (one q|k|v product
// over the batch), and with the authors' decoder (its last block on the
// [MASK] rows, after the visible ones); with attention dropout and drop
// path on. The float32 copies are then not allocated. Under fp32
// products, and with hidden dropout, the pass keeps float32 as before.
func TestKeepBF16Acts(t *testing.T) {
	defer func(k, c, h bool, g int) { keepBF16Acts, chunkTail, chunkHead, qkvGroupRows = k, c, h, g }(keepBF16Acts, chunkTail, chunkHead, qkvGroupRows)
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		if !tensor.BF16Operands() { // fp32 products: float32 kept, nothing to compare
			trainStepsWith(t, task, 5, 0, func(ws *Workspace[float32]) {
				if ws.enc.keepBF || ws.enc.mergeBF || len(ws.enc.layers[0].act) == 0 || len(ws.enc.layers[0].norm1) == 0 {
					t.Fatal("bf16 kept under fp32 products")
				}
			})
			return
		}
		for _, way := range []struct {
			name        string
			chunks      bool
			qkvGroupRow int
			tweak       func(*Config)
		}{
			{"chunks", true, 384, nil},
			{"groups, layer by layer", false, 100, nil}, // q|k|v in groups of 2, 2 and 1 samples
			{"absolute positions", true, 384, func(c *Config) { c.PosEncoding = PosAbsolute }},
			{"authors' decoder", true, 384, func(c *Config) { c.QueryAttention = QueryAll }},
		} {
			chunkTail, chunkHead, qkvGroupRows = way.chunks, way.chunks, way.qkvGroupRow
			keepBF16Acts = false
			wantLoss, want, _ := trainStepsCfg(t, task, way.tweak, 5, 0, nil)
			keepBF16Acts = true
			gotLoss, got, _ := trainStepsCfg(t, task, way.tweak, 5, 0, func(ws *Workspace[float32]) {
				l := &ws.enc.layers[0]
				if !ws.enc.keepBF || !ws.enc.mergeBF {
					t.Fatalf("%s: bf16 products, float32 kept", way.name)
				} else if len(l.act) != 0 || len(l.norm2) != 0 || len(l.norm1) != 0 || len(l.merged) != 0 {
					t.Fatalf("%s: float32 act, norm2, norm1, merged still kept (%d, %d, %d, %d values) beside bf16", way.name, len(l.act), len(l.norm2), len(l.norm1), len(l.merged))
				} else if task == TaskPretrain && ws.dec.mergeBF != (ws.dec.prefix < 0) {
					t.Fatalf("%s: the decoder (prefix %d) stores attention in bf16: %v", way.name, ws.dec.prefix, ws.dec.mergeBF)
				} else if r, c := l.actBF.Shape(); r == 0 || c != 96 {
					t.Fatalf("%s: bf16 act %d×%d", way.name, r, c)
				} else if r, c := l.norm1BF.Shape(); r != ws.enc.B*ws.enc.L || c != 64 {
					t.Fatalf("%s: bf16 norm1 %d×%d", way.name, r, c)
				}
			})
			if be := tensor.BackendName(); be == "openblas" || be == "gonum" {
				closeLossGrads(t, be, gotLoss, wantLoss, got, want)
				continue
			}
			sameBits(t, "bf16 kept, "+way.name, gotLoss, wantLoss, got, want)
		}
		trainStepsWith(t, task, 5, 0.1, func(ws *Workspace[float32]) {
			if ws.enc.keepBF || ws.enc.mergeBF {
				t.Fatal("bf16 kept with hidden-layer dropout")
			}
		})
	})
}

// TestQKVRoPEGroupsTraining: a training pass packs each block's q|k|v
// weight once (packQKV) and runs the q|k|v product, RoPE and the head
// split in groups of samples. Loss and every gradient must equal the
// whole-batch pass bit for bit, over two steps (the second repacks
// weights the first step changed, in the memory the first packed them
// in), with dropout on.
func TestQKVRoPEGroupsTraining(t *testing.T) {
	defer func(g int, c bool) { qkvGroupRows, chunkHead = g, c }(qkvGroupRows, chunkHead)
	chunkHead = false
	eachPrecisionTask(t, func(t *testing.T, task string) {
		qkvGroupRows = 0
		wantLoss, want, _ := trainSteps(t, task, 5)
		qkvGroupRows = 100 // groups of 2, 2, 1 samples
		gotLoss, got, ws := trainSteps(t, task, 5)
		if p := ws.enc.qkvPacked; tensor.BackendName() == "avx512" && (p == nil || !p.InKernelOrder()) {
			t.Fatal("training packed no q|k|v weight in its kernel's order")
		}
		sameBits(t, "in groups", gotLoss, wantLoss, got, want)
	})
}

// TestQKVRoPEChunks: where the q|k|v weight is packed in its kernel's
// order and fits a core's L2, a pass runs RMSNorm, the q|k|v product, RoPE
// and the head split a chunk of rows at a time on one core each
// (qkvRoPEChunks). Against the same pass in groups of samples: the
// evaluation outputs, and a training pass's losses and every gradient over
// two steps (with dropout and drop path), bit for bit. 5 samples of 50
// rows make chunks of 32 that straddle samples and a short last one.
func TestQKVRoPEChunks(t *testing.T) {
	defer func(c bool) { chunkHead = c }(chunkHead)
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		exact := tensor.BackendName() != "openblas" && tensor.BackendName() != "gonum"
		t.Run("evaluation", func(t *testing.T) {
			pass := newEvalPass(t, task)
			chunkHead = false
			want := pass.run(t)
			chunkHead = true
			got := pass.run(t)
			chunked := pass.ws.enc.headChunked(pass.m.enc.packed[0].qkv, 64)
			wantChunks := pass.m.enc.packed[0].qkv.InKernelOrder() && coreL2 >= weightBytes()*3*64*64
			if chunked != wantChunks {
				t.Fatalf("q|k|v in chunks: %v, want %v", chunked, wantChunks)
			}
			for i := range want {
				d := math.Abs(float64(got[i] - want[i]))
				if exact && math.Float32bits(got[i]) != math.Float32bits(want[i]) || d > 1e-5*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(got[i])) {
					t.Fatalf("output[%d]: %v in chunks, %v in groups (%s)", i, got[i], want[i], tensor.BackendName())
				}
			}
		})
		t.Run("training", func(t *testing.T) {
			chunkHead = false
			wantLoss, want, _ := trainSteps(t, task, 5)
			chunkHead = true
			gotLoss, got, ws := trainSteps(t, task, 5)
			if be := tensor.BackendName(); (be == "avx512" || be == "avx2") && coreL2 >= weightBytes()*3*64*64 &&
				!ws.enc.headChunked(ws.enc.qkvPacked, 64) {
				t.Fatal("training ran no q|k|v product in chunks")
			}
			if !exact {
				closeLossGrads(t, tensor.BackendName(), gotLoss, wantLoss, got, want)
				return
			}
			sameBits(t, "in chunks", gotLoss, wantLoss, got, want)
		})
	})
}

// TestAttendSelectedRows: where the last block reads only some rows
// ([CLS] under [CLS] pooling, the [MASK] rows of the pre-training
// decoder), attending those queries alone gives the loss and every
// gradient of attending all of them: bit for bit on romae's own kernels,
// which compute each output element the same way whatever the number of
// rows; within float32 rounding on a library's (OpenBLAS, gonum), which
// choose their kernels and blocking by shape.
func TestAttendSelectedRows(t *testing.T) {
	defer func(v bool) { attendSelectedRows = v }(attendSelectedRows)
	eachPrecisionTask(t, func(t *testing.T, task string) {
		attendSelectedRows = false
		wantLoss, want, _ := trainSteps(t, task, 5)
		attendSelectedRows = true
		gotLoss, got, _ := trainSteps(t, task, 5)
		if be := tensor.BackendName(); be == "openblas" || be == "gonum" {
			closeLossGrads(t, be, gotLoss, wantLoss, got, want)
			return
		}
		sameBits(t, "attending the selected rows", gotLoss, wantLoss, got, want)
	})
}

// TestInverseRoPEPerSample: the backward's inverse RoPE run per sample
// inside the attention backward gives the loss and every gradient of the
// whole-batch pass after it, bit for bit.
func TestInverseRoPEPerSample(t *testing.T) {
	defer func(v bool) { fuseInverseRoPE = v }(fuseInverseRoPE)
	defer tensor.SetThreads(0)
	tensor.SetThreads(2) // 9 samples are enough tasks for 2 workers
	eachPrecisionTask(t, func(t *testing.T, task string) {
		fuseInverseRoPE = false
		wantLoss, want, _ := trainSteps(t, task, 9)
		fuseInverseRoPE = true
		gotLoss, got, ws := trainSteps(t, task, 9)
		if !ws.enc.perSampleRoPE() {
			t.Fatal("the encoder did not run its inverse RoPE per sample")
		}
		sameBits(t, "per sample", gotLoss, wantLoss, got, want)
	})
}

// trainSteps runs a small model with dropout and drop-path on B samples
// (pre-training or classification) for two training steps, each followed
// by a plain gradient step, then one evaluation pass: the three losses and
// the two steps' gradients. The workspace is reused, so a stale buffer
// shows in the later passes.
func trainSteps(t *testing.T, task string, B int) (losses []float64, grads [][]float32, ws *Workspace[float32]) {
	t.Helper()
	return trainStepsWith(t, task, B, 0.1, nil)
}

// trainStepsWith is trainSteps with the MLP's hidden-layer dropout at
// hidden, calling inspect (when set) after each training step's backward
// pass.
func trainStepsWith(t *testing.T, task string, B int, hidden float64, inspect func(ws *Workspace[float32])) (losses []float64, grads [][]float32, ws *Workspace[float32]) {
	t.Helper()
	return trainStepsCfg(t, task, nil, B, hidden, inspect)
}

// trainStepsCfg is trainStepsWith on the configuration tweak changes
// (nil: none).
func trainStepsCfg(t *testing.T, task string, tweak func(*Config), B int, hidden float64, inspect func(ws *Workspace[float32])) (losses []float64, grads [][]float32, ws *Workspace[float32]) {
	t.Helper()
	cfg := smallConfig(task, 2)
	cfg.Encoder = Size{DModel: 64, Heads: 2, Depth: 2, FFN: 96}
	if tweak != nil {
		tweak(&cfg)
	}
	cfg.AttnDropout, cfg.HiddenDropout, cfg.DropPath = 0.1, hidden, 0.1
	bt := testBatch(B, 50, 2, 2, false, 17)
	mask := testMask(bt, 6)
	m, err := New[float32](cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	ws = m.NewWorkspace()
	for step := range 3 {
		m.ZeroGrad()
		rng := rand.New(rand.NewPCG(1, uint64(step)))
		train := step < 2
		var loss float64
		if task == TaskPretrain {
			loss, err = m.ForwardPretrain(ws, bt, mask, train, rng)
		} else {
			loss, err = m.ForwardTask(ws, bt, LossOptions{}, train, rng)
		}
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
		if !train {
			break
		}
		if task == TaskPretrain {
			m.BackwardPretrain(ws)
		} else {
			m.BackwardTask(ws)
		}
		grads = append(grads, append([]float32(nil), m.G...))
		if inspect != nil {
			inspect(ws)
		}
		for i, g := range m.G {
			m.W[i] -= 0.05 * g
		}
	}
	return losses, grads, ws
}

// closeLossGrads fails unless the losses of trainSteps agree to 1e-6
// relative and each step's gradients to 1e-4 of that step's largest one:
// float32 rounding of the same sums taken in another order.
func closeLossGrads(t *testing.T, backend string, gotLoss, wantLoss []float64, got, want [][]float32) {
	t.Helper()
	for step := range wantLoss {
		if !(math.Abs(gotLoss[step]-wantLoss[step]) <= 1e-6*math.Abs(wantLoss[step])) {
			t.Fatalf("pass %d on %s: loss %v, %v in the reference", step, backend, gotLoss[step], wantLoss[step])
		}
	}
	for step := range want {
		var scale float64
		for _, g := range want[step] {
			scale = math.Max(scale, math.Abs(float64(g)))
		}
		for i := range want[step] {
			if !(math.Abs(float64(got[step][i]-want[step][i])) <= 1e-4*scale) {
				t.Fatalf("step %d on %s: gradient %d: %v, %v in the reference (largest %v)", step, backend, i, got[step][i], want[step][i], scale)
			}
		}
	}
}

// sameBits fails unless the losses and gradients of trainSteps are
// bit-identical (and not NaN) to the reference ones.
func sameBits(t *testing.T, how string, gotLoss, wantLoss []float64, got, want [][]float32) {
	t.Helper()
	for step := range wantLoss {
		if gotLoss[step] != wantLoss[step] || math.IsNaN(gotLoss[step]) {
			t.Fatalf("pass %d: loss %v %s, %v in the reference", step, gotLoss[step], how, wantLoss[step])
		}
	}
	for step := range want {
		for i := range want[step] {
			if math.Float32bits(got[step][i]) != math.Float32bits(want[step][i]) || math.IsNaN(float64(got[step][i])) {
				t.Fatalf("step %d: gradient %d: %v %s, %v in the reference", step, i, got[step][i], how, want[step][i])
			}
		}
	}
}

// eachPrecisionTask runs fn as a subtest for pre-training and
// classification under fp32, and under bf16 where this CPU has a bf16
// kernel, with the precision set (and fp32 restored after).
func eachPrecisionTask(t *testing.T, fn func(t *testing.T, task string)) {
	type setting struct{ precision, kernel string } // kernel: the bf16 kernel ("": none to set)
	settings := []setting{{tensor.PrecisionFP32, ""}}
	kernels := tensor.BF16Kernels() // the chosen one first
	if tensor.BF16Supported() {
		for _, k := range kernels {
			if k != "fp32" {
				settings = append(settings, setting{tensor.PrecisionBF16, k})
			}
		}
		defer tensor.SetBackend(kernels[0])
	}
	defer tensor.SetPrecision(tensor.PrecisionFP32)
	for _, st := range settings {
		name := st.precision
		if st.kernel != "" && st.kernel != kernels[0] {
			name += "-" + st.kernel
		}
		for _, task := range []string{TaskPretrain, TaskClassify} {
			t.Run(name+"/"+task, func(t *testing.T) {
				if st.kernel != "" {
					if err := tensor.SetBackend(st.kernel); err != nil {
						t.Fatal(err)
					}
				}
				if err := tensor.SetPrecision(st.precision); err != nil {
					t.Fatal(err)
				}
				fn(t, task)
			})
		}
	}
}

// ParamBound, which loaders check a file's size against before building a
// model, bounds the parameters of every head, mean+max's wider one too.
func TestParamBoundCoversHeads(t *testing.T) {
	for _, tc := range []struct {
		task, pool string
		cls        bool
	}{
		{TaskPretrain, PoolCLS, true}, {TaskClassify, PoolCLS, true}, {TaskClassify, PoolMean, false},
		{TaskClassify, PoolMax, false}, {TaskClassify, PoolMeanMax, false}, {TaskRegress, PoolMeanMax, true},
		{TaskRegress, PoolToken, false},
	} {
		c := smallConfig(tc.task, 2)
		c.Pool, c.UseCLS, c.Outputs = tc.pool, tc.cls, 40
		m, err := New[float32](c, 1)
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.task, tc.pool, err)
		}
		if b, n := c.ParamBound(), m.NumParams(); b < n {
			t.Errorf("%s/%s: ParamBound %d < %d parameters", tc.task, tc.pool, b, n)
		}
	}
}
