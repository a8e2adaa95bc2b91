package recsys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"romae/ckpt"
	"romae/events"
	"romae/optim"
	"romae/train"
)

// Files a run directory receives.
const (
	LastFile    = "last.safetensors" // weights, optimiser and training state (resume)
	BestFile    = "best.safetensors" // weights of the best validation epoch
	MetricsFile = "metrics.jsonl"    // one JSON object per logged step and per epoch
	ResultFile  = "result.json"      // the run's summary
)

// TrainConfig is the optimisation recipe: AdamW, linear warm-up then
// cosine decay, gradient clipping.
type TrainConfig struct {
	Epochs      int     `json:"epochs"`
	BatchSize   int     `json:"batch_size"` // windows per step
	LR          float64 `json:"lr"`
	WarmupFrac  float64 `json:"warmup_frac"`
	WeightDecay float64 `json:"weight_decay"`
	ClipNorm    float64 `json:"clip_norm"` // 0: off
	// Negatives is the number of items sampled as next-item negatives,
	// shared by the step's batch, in proportion to their training count
	// plus one, with the logQ correction (Negatives); 0 or ≥ items−1:
	// the full softmax.
	Negatives       int    `json:"negatives"`
	Seed            uint64 `json:"seed"`
	EvalBatch       int    `json:"eval_batch"`
	Out             string `json:"out"`
	Resume          bool   `json:"resume"`
	Progress        string `json:"progress"` // lines or none
	CheckpointEvery int    `json:"checkpoint_every"`
	MaxSteps        int    `json:"max_steps"` // stop after this many steps in all (0: all epochs)
}

// DefaultTrainConfig is the reference's optimiser (Adam, lr 1e-3) with a
// short warm-up and cosine decay.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Epochs: 10, BatchSize: 64, LR: 1e-3, WarmupFrac: 0.05, WeightDecay: 0.01, ClipNorm: 1,
		Negatives: 256, Seed: 1, EvalBatch: 128, Out: "runs/recsys", Progress: "lines"}
}

// Validate reports a recipe the trainer cannot follow.
func (c *TrainConfig) Validate() error {
	switch {
	case c.Epochs < 1 || c.BatchSize < 1 || c.EvalBatch < 1:
		return fmt.Errorf("recsys: epochs %d, batch_size %d and eval_batch %d must be positive", c.Epochs, c.BatchSize, c.EvalBatch)
	case !(c.LR > 0) || c.WeightDecay < 0 || c.ClipNorm < 0 || c.Negatives < 0 || c.CheckpointEvery < 0 || c.MaxSteps < 0:
		return fmt.Errorf("recsys: lr %v must be positive; weight_decay, clip_norm, negatives, checkpoint_every, max_steps non-negative", c.LR)
	case c.Progress != "lines" && c.Progress != "none":
		return fmt.Errorf("recsys: progress %q, want lines or none", c.Progress)
	case c.Out == "":
		return fmt.Errorf("recsys: out (the run directory) is required")
	}
	return nil
}

// recipe is what a resumed run must share with the run it continues: the
// fields that change the weights (not where they go, how progress shows,
// or where a run stops).
func (c TrainConfig) recipe() TrainConfig {
	c.Out, c.Resume, c.Progress, c.CheckpointEvery, c.MaxSteps = "", false, "", 0, 0
	return c
}

// TrainResult summarises a run.
type TrainResult struct {
	Steps     int      `json:"steps"`
	Epochs    int      `json:"epochs"`
	BestEpoch int      `json:"best_epoch"`
	Best      *Metrics `json:"best,omitempty"` // validation metrics of the best epoch
	TrainLoss float64  `json:"train_loss"`     // mean over the last epoch
	Seconds   float64  `json:"seconds"`
}

// trainState is what resuming needs besides weights and optimiser state;
// shuffles and negatives derive from (seed, epoch) and (seed, step).
type trainState struct {
	Step      int      `json:"step"`
	Epoch     int      `json:"epoch"` // epochs completed
	LossSum   float64  `json:"loss_sum"`
	LossN     int      `json:"loss_n"`
	BestScore float64  `json:"best_score"`
	BestEpoch int      `json:"best_epoch"`
	Best      *Metrics `json:"best,omitempty"`
}

// Trainer fits Model on Data's training events, selecting the epoch by
// its validation events: lowest NE (ranking) or full-softmax NLL (next;
// with one validation target per user, HR@10 and NDCG@10 move by whole
// hits between epochs, too coarse to pick one).
type Trainer struct {
	Cfg   TrainConfig
	Model *Model[float32]
	Data  *Data
	Spec  *DataSpec
	Log   io.Writer // progress; nil: discard
}

// score orders validation results, lower is better.
func score(m *Metrics) float64 {
	if m.Task == TaskRanking {
		return m.NE
	}
	return m.NLL
}

// Run trains, writing checkpoints, metrics.jsonl and result.json into
// Cfg.Out. On cancellation it writes last.safetensors first, so the run
// can resume; a resumed run ends with the same weights as an
// uninterrupted one.
func (t *Trainer) Run(ctx context.Context) (*TrainResult, error) {
	cfg, m := t.Cfg, t.Model
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := m.CheckData(t.Data); err != nil {
		return nil, err
	}
	logw := t.Log
	if logw == nil || cfg.Progress == "none" {
		logw = io.Discard
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	wins := m.Windows(t.Data, events.Train)
	if len(wins) == 0 {
		return nil, fmt.Errorf("%s: no training targets", t.Data.Log.Path)
	}
	hasVal := t.Data.Split.Count(events.Val) > 0
	opt := optim.NewAdamW()
	opt.WeightDecay = cfg.WeightDecay
	perEpoch := (len(wins) + cfg.BatchSize - 1) / cfg.BatchSize
	total := perEpoch * cfg.Epochs
	sched := optim.Schedule{Kind: optim.Cosine, PeakLR: cfg.LR, TotalSteps: total, WarmupSteps: optim.WarmupFromFraction(cfg.WarmupFrac, total)}
	st := trainState{BestScore: math.MaxFloat64}
	resumed := false
	if cfg.Resume {
		var err error
		if resumed, err = t.resume(opt, &st); err != nil {
			return nil, err
		}
		if resumed && (st.Epoch >= cfg.Epochs || cfg.MaxSteps > 0 && st.Step >= cfg.MaxSteps) {
			if prev, err := readResult(filepath.Join(cfg.Out, ResultFile)); err == nil {
				return prev, nil // finished: nothing to do
			}
		}
		if resumed {
			fmt.Fprintf(logw, "resuming %s at step %d (epoch %d)\n", filepath.Join(cfg.Out, LastFile), st.Step, st.Epoch+1)
		}
	}
	metrics, err := openMetrics(filepath.Join(cfg.Out, MetricsFile), resumed, st.Step, st.Epoch)
	if err != nil {
		return nil, err
	}
	defer metrics.Close()
	enc := json.NewEncoder(metrics)
	ws, evalWS := m.NewWorkspace(), m.NewWorkspace()
	var bt *Batch
	var neg *Negatives
	var sampler *sampler
	if m.Cfg.Task == TaskNext && cfg.Negatives > 0 && cfg.Negatives < m.Cfg.Items-1 {
		sampler = newSampler(t.Data, m.Cfg.Items, cfg.Negatives)
	}
	start, lastLine := time.Now(), time.Now()
	res := &TrainResult{}
	logEvery := max(1, perEpoch/5)
	for epoch := st.Epoch; epoch < cfg.Epochs; epoch++ {
		perm := rand.New(rand.NewPCG(cfg.Seed, uint64(epoch))).Perm(len(wins))
		batchWins := make([]events.Window, 0, cfg.BatchSize)
		for s := st.Step - epoch*perEpoch; s < perEpoch; s++ {
			if err := ctx.Err(); err != nil {
				return nil, errors.Join(err, t.save(LastFile, opt, st))
			}
			if cfg.MaxSteps > 0 && st.Step >= cfg.MaxSteps {
				return t.finish(res, st, start, opt)
			}
			batchWins = batchWins[:0]
			for _, i := range perm[s*cfg.BatchSize : min((s+1)*cfg.BatchSize, len(wins))] {
				batchWins = append(batchWins, wins[i])
			}
			if bt, err = t.Data.Collate(bt, batchWins, m.Cfg.Task); err != nil {
				return nil, err
			}
			if sampler != nil {
				neg = sampler.draw(rand.New(rand.NewPCG(cfg.Seed, 1<<40+uint64(st.Step))))
			}
			m.ZeroGrad()
			loss, n, err := m.Loss(ws, bt, neg)
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", st.Step, err)
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, fmt.Errorf("step %d (epoch %d): loss is %v; lower lr or set clip_norm", st.Step, epoch+1, loss)
			}
			if n > 0 {
				m.Backward(ws)
			}
			gnorm := math.Inf(1)
			if cfg.ClipNorm > 0 {
				if gnorm = optim.ClipGradNorm(m.Params, cfg.ClipNorm); math.IsNaN(gnorm) || math.IsInf(gnorm, 0) {
					return nil, fmt.Errorf("step %d (epoch %d): gradient norm is %v", st.Step, epoch+1, gnorm)
				}
			}
			lr := sched.LR(st.Step)
			opt.Step(m.Params, lr)
			st.Step++
			st.LossSum += loss
			st.LossN++
			if st.Step%logEvery == 0 {
				rec := map[string]any{"step": st.Step, "epoch": epoch + 1, "loss": loss, "lr": lr}
				if !math.IsInf(gnorm, 1) {
					rec["grad_norm"] = gnorm
				}
				if err := enc.Encode(rec); err != nil {
					return nil, err
				}
			}
			if now := time.Now(); now.Sub(lastLine) > 10*time.Second {
				lastLine = now
				el := now.Sub(start).Seconds()
				eta := time.Duration(float64(total-st.Step) * el / float64(max(st.Step, 1)) * float64(time.Second)).Round(time.Second)
				fmt.Fprintf(logw, "step %d/%d epoch %d/%d loss %.4g ETA %v\n", st.Step, total, epoch+1, cfg.Epochs, st.LossSum/float64(st.LossN), eta)
			}
			if cfg.CheckpointEvery > 0 && st.Step%cfg.CheckpointEvery == 0 {
				if err := t.save(LastFile, opt, st); err != nil {
					return nil, err
				}
			}
		}
		res.TrainLoss = st.LossSum / float64(max(st.LossN, 1))
		st.Epoch, st.LossSum, st.LossN = epoch+1, 0, 0
		rec := map[string]any{"epoch": epoch + 1, "step": st.Step, "train_loss": res.TrainLoss, "seconds": time.Since(start).Seconds()}
		line := fmt.Sprintf("epoch %d/%d  train loss %.4g", epoch+1, cfg.Epochs, res.TrainLoss)
		improved := !hasVal
		if hasVal {
			met, err := Evaluate(m, evalWS, t.Data, events.Val, cfg.EvalBatch)
			if err != nil {
				return nil, fmt.Errorf("epoch %d validation: %w", epoch+1, err)
			}
			rec["val"] = met
			line += "  val " + met.Summary()
			if sc := score(&met); sc < st.BestScore {
				st.BestScore, st.BestEpoch, st.Best = sc, epoch+1, &met
				improved = true
			}
		} else {
			st.BestEpoch = epoch + 1
		}
		fmt.Fprintln(logw, line)
		if err := enc.Encode(rec); err != nil {
			return nil, err
		}
		if improved {
			if err := t.save(BestFile, nil, st); err != nil {
				return nil, err
			}
		}
		if err := t.save(LastFile, opt, st); err != nil {
			return nil, err
		}
	}
	return t.finish(res, st, start, opt)
}

// sampler draws next-item negatives with probability q_i ∝ (training
// count of item i as a target) + 1: popular items, the ones a full
// ranking must get right, are the hard negatives.
type sampler struct {
	cum []float64 // cumulative q over items 1 … V−1
	neg Negatives
}

func newSampler(d *Data, V, n int) *sampler {
	count := make([]float64, V)
	for u, usr := range d.Log.Users {
		for i, e := range usr.Events {
			if d.Split[u][i] == events.Train && i > 0 {
				count[e.Item]++
			}
		}
	}
	s := &sampler{cum: make([]float64, V), neg: Negatives{Items: make([]int32, n), LogQ: make([]float64, V)}}
	total := 0.0
	for i := 1; i < V; i++ {
		total += count[i] + 1
		s.cum[i] = total
	}
	for i := 1; i < V; i++ {
		s.neg.LogQ[i] = math.Log(float64(n) * (count[i] + 1) / total)
	}
	return s
}

// draw fills and returns the sampler's negatives (reused between draws).
func (s *sampler) draw(rng *rand.Rand) *Negatives {
	total := s.cum[len(s.cum)-1]
	for k := range s.neg.Items {
		x := rng.Float64() * total
		s.neg.Items[k] = int32(sort.SearchFloat64s(s.cum[1:], x) + 1)
		if s.neg.Items[k] >= int32(len(s.cum)) { // x == total, to rounding
			s.neg.Items[k] = int32(len(s.cum) - 1)
		}
	}
	return &s.neg
}

// Summary is a one-line rendering of the metrics.
func (m Metrics) Summary() string {
	if m.Task == TaskRanking {
		return fmt.Sprintf("NE %.4f  AUC %.4f  log loss %.4f  (n %d)", m.NE, m.AUC, m.LogLoss, m.N)
	}
	return fmt.Sprintf("HR@10 %.4f  NDCG@10 %.4f  NLL %.4f  (n %d)", m.HR10, m.NDCG10, m.NLL, m.N)
}

func (t *Trainer) finish(res *TrainResult, st trainState, start time.Time, opt *optim.AdamW) (*TrainResult, error) {
	if err := t.save(LastFile, opt, st); err != nil {
		return nil, err
	}
	if st.BestEpoch == 0 { // stopped before the first epoch's end
		if err := t.save(BestFile, nil, st); err != nil {
			return nil, err
		}
	}
	res.Steps, res.Epochs, res.BestEpoch, res.Best = st.Step, st.Epoch, st.BestEpoch, st.Best
	res.Seconds = time.Since(start).Seconds()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return res, ckpt.WriteFileAtomic(filepath.Join(t.Cfg.Out, ResultFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

func readResult(path string) (*TrainResult, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	res := &TrainResult{}
	return res, json.Unmarshal(raw, res)
}

// save writes a checkpoint: weights, data spec, training state, and (for
// last.safetensors) the optimiser state.
func (t *Trainer) save(name string, opt *optim.AdamW, st trainState) error {
	sj, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cj, err := json.Marshal(t.Cfg)
	if err != nil {
		return err
	}
	meta := map[string]string{metaState: string(sj), metaTrain: string(cj)}
	var extra []*ckpt.Tensor
	if opt != nil {
		meta[metaOptimizer] = opt.Name()
		extra = train.OptimizerTensors(opt)
	}
	return t.Model.Save(filepath.Join(t.Cfg.Out, name), t.Spec, meta, extra)
}

// resume loads out/last.safetensors into the model, optimiser and state.
func (t *Trainer) resume(opt *optim.AdamW, st *trainState) (bool, error) {
	path := filepath.Join(t.Cfg.Out, LastFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	ld, err := Load(path)
	if err != nil {
		return false, err
	}
	if !reflect.DeepEqual(ld.Model.Cfg, t.Model.Cfg) {
		return false, fmt.Errorf("%s: the checkpoint's model config differs from this run's; use another out directory or drop resume", path)
	}
	var saved TrainConfig
	if err := json.Unmarshal([]byte(ld.File.Metadata[metaTrain]), &saved); err != nil {
		return false, fmt.Errorf("%s: %s: %w", path, metaTrain, err)
	}
	if saved.recipe() != t.Cfg.recipe() {
		return false, fmt.Errorf("%s: saved with the training recipe %+v, this run asks for %+v; use another out directory or drop resume", path, saved.recipe(), t.Cfg.recipe())
	}
	if name := ld.File.Metadata[metaOptimizer]; name != opt.Name() {
		return false, fmt.Errorf("%s: saved with optimizer %q, this run uses %q", path, name, opt.Name())
	}
	copy(t.Model.W, ld.Model.W)
	if err := train.LoadOptimizerState(ld.File, opt); err != nil {
		return false, fmt.Errorf("%s: optimizer state: %w", path, err)
	}
	if err := json.Unmarshal([]byte(ld.File.Metadata[metaState]), st); err != nil {
		return false, fmt.Errorf("%s: %s: %w", path, metaState, err)
	}
	return true, nil
}

// openMetrics opens metrics.jsonl: truncated for a fresh run; for a
// resumed one, rewritten (atomically) without the records logged after
// step and epochs, which are about to be logged again, then appended to.
func openMetrics(path string, resumed bool, step, epochs int) (*os.File, error) {
	if !resumed {
		return os.Create(path)
	}
	if err := train.TrimMetrics(path, step, epochs); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}
