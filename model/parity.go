package model

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"romae/data"
	"romae/tensor"
)

// ParityFixture is the authors' model evaluated on fixed inputs
// (shared/fixtures/official-parity/fixture.json; its README gives the layout).
type ParityFixture struct {
	Config struct {
		Encoder  paritySize `json:"encoder"`
		Decoder  paritySize `json:"decoder"`
		UseCLS   bool       `json:"use_cls"`
		PosDims  int        `json:"n_pos_dims"`
		P        float64    `json:"p_rope"`
		RoPEBase float64    `json:"rope_base"`
		Tubelet  [3]int     `json:"tubelet"`
		Channels int        `json:"n_channels"`
		Classes  int        `json:"n_classes"`
	} `json:"config"`
	Inputs struct {
		Values       [][][]float32 `json:"values"`    // [B][L][C]
		Positions    [][][]float32 `json:"positions"` // [B][D][L]
		PadMask      [][]bool      `json:"pad_mask"`
		Labels       []int         `json:"labels"`
		PretrainMask [][]bool      `json:"pretrain_mask"`
	} `json:"inputs"`
	Classifier struct {
		Logits       [][]float64 `json:"logits"`
		CrossEntropy float64     `json:"cross_entropy"`
	} `json:"classifier"`
	Pretrain struct {
		Reconstruction [][][]float64 `json:"reconstruction"` // [B][masked][C]
		MSELoss        float64       `json:"mse_loss"`
	} `json:"pretrain"`
}

type paritySize struct {
	DModel int     `json:"d_model"`
	Heads  int     `json:"nhead"`
	Depth  int     `json:"depth"`
	FFN    int     `json:"dim_feedforward"`
	Eps    float64 `json:"rmsnorm_eps"`
}

// ParityReport compares romae with the authors' outputs. Relative errors are
// max|ours − theirs| / max|theirs| over each output tensor.
type ParityReport struct {
	ClassifierMaxRelErr float64 `json:"classifier_max_rel_err"`
	PretrainMaxRelErr   float64 `json:"pretrain_max_rel_err"`
	LossAbsErr          float64 `json:"loss_abs_err"`
}

// VerifyOfficial loads dir/fixture.json and dir/{classifier,pretrain}.safetensors,
// runs both models in evaluation mode and compares with the authors' outputs.
func VerifyOfficial[T tensor.Float](dir string) (ParityReport, error) {
	var fx ParityFixture
	raw, err := os.ReadFile(filepath.Join(dir, "fixture.json"))
	if err != nil {
		return ParityReport{}, err
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		return ParityReport{}, fmt.Errorf("%s: %w", filepath.Join(dir, "fixture.json"), err)
	}
	bt, err := fx.batch()
	if err != nil {
		return ParityReport{}, fmt.Errorf("%s: %w", filepath.Join(dir, "fixture.json"), err)
	}
	var rep ParityReport

	cfg := fx.config()
	cfg.Task, cfg.Outputs = TaskClassify, fx.Config.Classes
	if !cfg.UseCLS {
		cfg.Pool = PoolMean
	}
	cm, err := LoadOfficialWeights[T](cfg, filepath.Join(dir, "classifier.safetensors"))
	if err != nil {
		return rep, err
	}
	ws := cm.NewWorkspace()
	ce, err := cm.ForwardTask(ws, bt, LossOptions{}, false, nil)
	if err != nil {
		return rep, err
	}
	rep.ClassifierMaxRelErr = relErr(ws.Output(), fx.Classifier.Logits, nil)
	rep.LossAbsErr = math.Abs(ce - fx.Classifier.CrossEntropy)

	cfg = fx.config()
	cfg.Task = TaskPretrain
	pm, err := LoadOfficialWeights[T](cfg, filepath.Join(dir, "pretrain.safetensors"))
	if err != nil {
		return rep, err
	}
	masked := make([]bool, bt.B*bt.L)
	for b, row := range fx.Inputs.PretrainMask {
		copy(masked[b*bt.L:], row)
	}
	ws = pm.NewWorkspace()
	mse, err := pm.ForwardPretrain(ws, bt, masked, false, nil)
	if err != nil {
		return rep, err
	}
	// Every reconstructed slot, padded ones included, is compared: romae
	// computes padded queries exactly as the authors' decoder does.
	Lq := ws.QueriesPerSample()
	for b, rows := range fx.Pretrain.Reconstruction {
		if len(rows) != Lq {
			return rep, fmt.Errorf("fixture sample %d has %d reconstructed rows, its mask gives %d", b, len(rows), Lq)
		}
	}
	rep.PretrainMaxRelErr = relErr(ws.Reconstruction(), flatten(fx.Pretrain.Reconstruction), nil)
	// The authors divide the masked squared error by every masked slot,
	// padding included; romae's loss excludes padding. Convert to compare.
	valid := 0
	for _, p := range ws.QueryPad() {
		if !p {
			valid++
		}
	}
	authorsLoss := mse * float64(valid) / float64(bt.B*Lq)
	rep.LossAbsErr = math.Max(rep.LossAbsErr, math.Abs(authorsLoss-fx.Pretrain.MSELoss))
	return rep, nil
}

func (fx *ParityFixture) config() Config {
	c := DefaultConfig()
	c.QueryAttention = QueryAll // the authors' decoder
	e, d := fx.Config.Encoder, fx.Config.Decoder
	c.Encoder = Size{e.DModel, e.Heads, e.Depth, e.FFN}
	c.Decoder = Size{d.DModel, d.Heads, d.Depth, d.FFN}
	if e.Eps > 0 {
		c.NormEps = e.Eps
	}
	c.UseCLS, c.PosDims, c.P = fx.Config.UseCLS, fx.Config.PosDims, fx.Config.P
	if fx.Config.RoPEBase > 0 {
		c.RoPEBase = fx.Config.RoPEBase
	}
	t := fx.Config.Tubelet
	c.Values = t[0] * t[1] * t[2] * fx.Config.Channels
	return c
}

// batch converts the fixture's inputs (positions are [B][D][L] there) into
// a romae batch (token-major).
func (fx *ParityFixture) batch() (*data.Batch, error) {
	in := fx.Inputs
	B := len(in.Values)
	if B == 0 || len(in.Values[0]) == 0 {
		return nil, fmt.Errorf("inputs.values is empty")
	}
	L, C, D := len(in.Values[0]), len(in.Values[0][0]), fx.Config.PosDims
	bt := &data.Batch{B: B, L: L, C: C, D: D, Values: make([]float32, B*L*C),
		Positions: make([]float32, B*L*D), Pad: make([]bool, B*L), Labels: in.Labels}
	if len(in.Positions) != B || len(in.PadMask) != B || len(in.Labels) != B || len(in.PretrainMask) != B {
		return nil, fmt.Errorf("inputs: positions, pad_mask, labels and pretrain_mask need %d samples", B)
	}
	for b := 0; b < B; b++ {
		if len(in.Values[b]) != L || len(in.Positions[b]) != D || len(in.PadMask[b]) != L || len(in.PretrainMask[b]) != L {
			return nil, fmt.Errorf("inputs: sample %d does not have %d tokens and %d position axes", b, L, D)
		}
		for i := 0; i < L; i++ {
			if len(in.Values[b][i]) != C {
				return nil, fmt.Errorf("inputs.values[%d][%d] has %d values, want %d", b, i, len(in.Values[b][i]), C)
			}
			copy(bt.Values[(b*L+i)*C:], in.Values[b][i])
			for a := 0; a < D; a++ {
				if len(in.Positions[b][a]) != L {
					return nil, fmt.Errorf("inputs.positions[%d][%d] has %d entries, want %d", b, a, len(in.Positions[b][a]), L)
				}
				bt.Positions[(b*L+i)*D+a] = in.Positions[b][a][i]
			}
			bt.Pad[b*L+i] = in.PadMask[b][i]
		}
	}
	return bt, nil
}

func flatten(x [][][]float64) [][]float64 {
	var out [][]float64
	for _, s := range x {
		out = append(out, s...)
	}
	return out
}

// relErr is max|got − want| / max|want| over all entries of want (rows of
// got laid out contiguously); skip marks rows to ignore.
func relErr[T tensor.Float](got []T, want [][]float64, skip []bool) float64 {
	var diff, scale float64
	k := 0
	for r, row := range want {
		for _, w := range row {
			if skip == nil || !skip[r] {
				diff = math.Max(diff, math.Abs(float64(got[k])-w))
				scale = math.Max(scale, math.Abs(w))
			}
			k++
		}
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}
