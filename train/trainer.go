package train

import (
	"bytes"
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
	"slices"
	"strings"
	"time"

	"romae/ckpt"
	"romae/data"
	"romae/dist"
	"romae/eval"
	"romae/internal/jsondiff"
	"romae/internal/sysmem"
	"romae/model"
	"romae/optim"
	"romae/tensor"
)

// Trainer fits Model on Train, evaluating on Val (optional) every
// Cfg.EvalEvery epochs. Data — how Train was read and scaled — is required
// and stored in every checkpoint, with Meta's extra keys, so that every
// checkpoint, whoever trained it (the CLI, an experiment, a server reload),
// reproduces its own numbers on new files.
type Trainer struct {
	Cfg        Config
	Model      *model.Model[float32]
	Train, Val *data.Dataset
	Data       *data.Spec
	Meta       map[string]string // extra metadata (e.g. romae.pretrained_from)
	Log        io.Writer         // progress and summaries; nil: os.Stderr

	// Mask, when set, replaces uniform random masking at Cfg.MaskRatio
	// for pre-training (e.g. "observe 3 to 10 points, reconstruct the
	// rest" for interpolation benchmarks). It must be a function of its
	// arguments only, so resumed runs draw the same masks.
	Mask func(dst []bool, b *data.Batch, rng *rand.Rand) []bool
	// Comm, when it has several ranks, makes this one rank of a
	// data-parallel run (parallel.go): Cfg.BatchSize is then the global
	// batch, split across ranks, and only rank 0 writes files and logs.
	// nil: this process alone.
	Comm dist.Comm

	par    *parallel      // this rank's side of the run, set by Run
	ema    *weightEMA     // train.ema's average of the weights during Run
	writes map[string]int // checkpoints written by this Run, by file name
	// resumedCfg is the settings of the run a resume continues (nil:
	// not resumed, or written before checkpoints kept them).
	resumedCfg *Config
	trainFP    uint64 // Train's fingerprint (trainPrint)
}

// Result summarises a run.
type Result struct {
	Steps     int           `json:"steps"`
	Epochs    int           `json:"epochs"`
	BestEpoch int           `json:"best_epoch"`
	Best      *eval.Metrics `json:"best,omitempty"` // validation metrics of the best epoch
	TrainLoss float64       `json:"train_loss"`     // mean over the last epoch
	Seconds   float64       `json:"seconds"`
	Stopped   bool          `json:"stopped,omitempty"` // max_steps reached before the last epoch ended
	// SkippedSteps counts the steps whose update was skipped because the
	// loss or gradient was not finite.
	SkippedSteps int     `json:"skipped_steps,omitempty"`
	StepSeconds  float64 `json:"step_s,omitempty"` // median wall time of a training step (validation and checkpoints excluded)
	// Data-parallel runs: the ranks, and rank 0's median seconds per step
	// waiting for the slowest rank and in the gradient allreduce.
	Ranks            int     `json:"ranks,omitempty"`
	WaitSeconds      float64 `json:"wait_s,omitempty"`
	AllreduceSeconds float64 `json:"allreduce_s,omitempty"`
}

// state is what a checkpoint needs besides weights and optimiser state to
// continue exactly: shuffles, masks and dropout are all derived from
// (seed, epoch) and (seed, step), so no random generator state is saved.
type state struct {
	Step      int           `json:"step"`  // optimiser steps taken
	Epoch     int           `json:"epoch"` // epochs completed
	LossSum   float64       `json:"loss_sum"`
	LossN     int           `json:"loss_n"` // running mean of the current epoch
	BestScore float64       `json:"best_score"`
	BestEpoch int           `json:"best_epoch"`
	Best      *eval.Metrics `json:"best,omitempty"`
	Ranks     int           `json:"ranks,omitempty"`   // data-parallel ranks that trained it (0: one process)
	Skipped   int           `json:"skipped,omitempty"` // steps whose update was skipped (non-finite loss or gradient)
	// Numerics is what decided the products' bits on the machine that
	// wrote the checkpoint (nil in checkpoints written before it was kept).
	Numerics *tensor.Numerics `json:"numerics,omitempty"`
	// Samples and BatchSize fix what a step is: a resumed run must have
	// both the same, or its step count would point into other epochs.
	Samples   int `json:"samples,omitempty"`
	BatchSize int `json:"batch_size,omitempty"`
	// Data is the training set's data.Dataset.Fingerprint: the same
	// number of samples from another file, or read with another
	// data.normalize, would continue someone else's epochs.
	Data uint64 `json:"data,omitempty"`
	// TrainLoss and StepSeconds are the last completed epoch's, so a run
	// resumed with nothing left to do still reports them.
	TrainLoss   float64 `json:"train_loss,omitempty"`
	StepSeconds float64 `json:"step_seconds,omitempty"`
}

// maxConsecutiveSkips non-finite steps in a row end a run: it has diverged.
const maxConsecutiveSkips = 10

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

const (
	// StateMeta is the checkpoint metadata key of the training state.
	StateMeta   = "romae.train_state"
	metaConfig  = "romae.train_config"
	optimPrefix = "optim."
	// LastFile and BestFile are the checkpoint names inside Cfg.Out.
	LastFile = "last.safetensors"
	BestFile = "best.safetensors"
	// MetricsFile receives one JSON object per logged step and per evaluation.
	MetricsFile = "metrics.jsonl"
)

// Run trains until Cfg.Epochs (or Cfg.MaxSteps) and returns a summary. On
// cancellation it writes last.safetensors first, so the run can resume.
func (t *Trainer) Run(ctx context.Context) (*Result, error) {
	cfg, m := t.Cfg, t.Model
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkData(m, t.Train, "training"); err != nil {
		return nil, err
	}
	if err := t.checkSpec(); err != nil {
		return nil, err
	}
	if t.Val != nil {
		if err := checkData(m, t.Val, "validation"); err != nil {
			return nil, err
		}
	}
	logw := t.Log
	if logw == nil {
		logw = os.Stderr
	}
	par := newParallel(t.Comm)
	t.par = par
	if err := checkMemory(m, cfg, t.Train, par.size); err != nil {
		return nil, err
	}
	if par.rank != 0 {
		logw, cfg.Progress = io.Discard, "none"
	} else if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	opt, err := newOptimizer(cfg)
	if err != nil {
		return nil, err
	}
	lossOpt, err := t.lossOptions()
	if err != nil {
		return nil, err
	}
	N := len(t.Train.Samples)
	perEpoch := (N + cfg.BatchSize - 1) / cfg.BatchSize
	total := perEpoch * cfg.Epochs
	sched := optim.Schedule{Kind: cfg.Schedule, PeakLR: cfg.LR, FinalLR: cfg.FinalLR, TotalSteps: total, WarmupSteps: cfg.WarmupSteps}
	if sched.WarmupSteps == 0 {
		sched.WarmupSteps = optim.WarmupFromFraction(cfg.WarmupFrac, total)
	}
	if cfg.Schedule == "constant" {
		sched.Kind = optim.Constant
	}
	if err := sched.Validate(); err != nil {
		return nil, err
	}

	st := state{BestScore: math.MaxFloat64} // JSON has no +Inf
	if cfg.EMA > 0 {
		t.ema = newWeightEMA(m.W, cfg.EMA)
	}
	resumed := false
	if cfg.Resume && par.rank == 0 {
		resumed, err = t.resume(opt, &st)
	}
	var fp []byte
	if par.distributed() {
		fp = fingerprint(t.Train, t.Val)
	}
	if resumed, err = par.start(m, opt, &st, fp, resumed, err); err != nil {
		return nil, err
	}
	if t.ema != nil && par.distributed() { // rank 0's, as resumed
		if err := dist.BroadcastFloat32(par.comm, t.ema.avg, 0); err != nil {
			return nil, err
		}
	}
	if resumed {
		if st.Epoch < cfg.Epochs {
			fmt.Fprintf(logw, "resuming %s at step %d (epoch %d)\n", filepath.Join(cfg.Out, LastFile), st.Step, st.Epoch+1)
		} else {
			fmt.Fprintf(logw, "resuming %s at step %d: its %d epochs are done\n", filepath.Join(cfg.Out, LastFile), st.Step, st.Epoch)
		}
		if note := settingsNote(t.resumedCfg, cfg); note != "" {
			fmt.Fprintln(logw, note)
		}
		if max(st.Ranks, 1) != par.size {
			fmt.Fprintf(logw, "note: the checkpoint was written by a run on %d rank(s), this one has %d: same schedule and batches, not bit-identical to an uninterrupted run\n", max(st.Ranks, 1), par.size)
		}
		if note := numericsNote(st.Numerics, tensor.CurrentNumerics()); note != "" {
			fmt.Fprintln(logw, note)
		}
	}
	here := tensor.CurrentNumerics()
	st.Numerics = &here
	st.Ranks = 0
	if par.distributed() {
		st.Ranks = par.size
		lo, hi := dist.Split(cfg.BatchSize, 0, par.size)
		fmt.Fprintf(logw, "data parallel: %d ranks, global batch %d (%d–%d samples per rank)\n", par.size, cfg.BatchSize, cfg.BatchSize/par.size, hi-lo)
	}
	// A fresh run starts a fresh log; a resumed one keeps the records up to
	// its checkpoint's step (later ones are about to be logged again).
	metricsPath := filepath.Join(cfg.Out, MetricsFile)
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if resumed && par.rank == 0 {
		if err := TrimMetrics(metricsPath, st.Step, st.Epoch); err != nil {
			return nil, err
		}
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	enc := json.NewEncoder(io.Discard)
	if par.rank == 0 {
		metrics, err := os.OpenFile(metricsPath, flags, 0o644)
		if err != nil {
			return nil, err
		}
		defer metrics.Close()
		enc = json.NewEncoder(metrics)
	}
	var valShard *data.Dataset
	if t.Val != nil && par.distributed() {
		valShard = par.valShard(m, t.Val, cfg.BatchSize, cfg.MaskRatio)
	}

	ws := m.NewWorkspace()
	evalWS := m.NewWorkspace()
	var bt *data.Batch
	var mask []bool
	prog := newProgress(logw, cfg.Progress, total, st.Step)
	start := time.Now()
	res := &Result{}
	var stepTimes []float64
	consecutiveSkips := 0
	logEvery := max(1, perEpoch/10)
	// Checkpoints at epoch ends are paced by time: on a few dozen series an
	// epoch is a few steps, and writing (and fsyncing) last.safetensors
	// after each cost 13% of the run (ItalyPowerDemand: 374 fsyncs, 2.0 s
	// of a 15 s run). A crash loses at most cfg.CheckpointSeconds; resuming
	// from an earlier step is still exact. MPI ranks write at every epoch's
	// end, as they must agree on when.
	lastSave := time.Now()
	if cfg.MaxSteps > 0 && st.Step >= cfg.MaxSteps && st.Step < total {
		// Resumed where train.max_steps stopped it already.
		res.Stopped = true
		return t.finish(res, st, start, opt, stepTimes)
	}
	for epoch := st.Epoch; epoch < cfg.Epochs; epoch++ {
		perm := rand.New(rand.NewPCG(cfg.Seed, uint64(epoch))).Perm(N)
		for s := st.Step - epoch*perEpoch; s < perEpoch; s++ {
			stepStart := time.Now()
			stopping := ctx.Err() != nil
			if stopping && !par.distributed() {
				return nil, t.stop(ctx, prog, opt, st)
			}
			// The global batch, the same on every rank.
			idx := perm[s*cfg.BatchSize : min((s+1)*cfg.BatchSize, N)]
			if cfg.AugmentShift && m.Cfg.Task != model.TaskPretrain {
				// Its own stream of (seed, step), so resumed runs draw alike.
				bt = data.CollateShifted(bt, t.Train, idx, rand.New(rand.NewPCG(cfg.Seed, 1<<42+uint64(st.Step))))
			} else {
				bt = data.Collate(bt, t.Train, idx)
			}
			// Masks draw from rng; dropout continues src itself, which
			// draws the same values several at a time (nn.DropoutMask).
			src := rand.NewPCG(cfg.Seed, 1<<40+uint64(st.Step))
			rng := rand.New(src)
			m.ZeroGrad()
			if m.Cfg.Task == model.TaskPretrain {
				if t.Mask != nil {
					mask = t.Mask(mask, bt, rng)
				} else {
					mask = data.RandomMask(mask, bt, cfg.MaskRatio, rng)
				}
			} else if aug := cfg.Augment(); aug.Active() && !bt.TargetPerToken {
				aug.TimeAxis = t.Train.TimeAxis
				// Its own stream of (seed, step), so resumed runs augment alike.
				aug.Apply(bt, rand.New(rand.NewPCG(cfg.Seed, 1<<41+uint64(st.Step))))
			}
			loss, err := par.forwardBackward(m, ws, bt, mask, lossOpt, src, cfg.Seed, st.Step, stopping)
			if errors.Is(err, errStop) {
				return nil, t.stop(ctx, prog, opt, st)
			}
			if err != nil {
				return nil, fmt.Errorf("step %d: %w", st.Step, err)
			}
			gnorm := math.Inf(1)
			if finite(loss) && cfg.ClipNorm > 0 {
				gnorm = optim.ClipGradNorm(m.Params, cfg.ClipNorm)
			}
			skip := !finite(loss) || (cfg.ClipNorm > 0 && !finite(gnorm))
			if skip {
				// A non-finite loss or gradient from finite weights: this
				// batch's update is skipped, as mixed-precision trainers do
				// on overflow, and said so; a run that keeps producing them
				// has diverged and stops.
				st.Skipped++
				consecutiveSkips++
				fmt.Fprintf(logw, "romae: step %d (epoch %d): loss %v, gradient norm %v: update skipped (%d so far)\n", st.Step, epoch+1, loss, gnorm, st.Skipped)
				if consecutiveSkips >= maxConsecutiveSkips {
					return nil, dist.Agreed(fmt.Errorf("step %d (epoch %d): loss %v, gradient norm %v, %d steps in a row; lower train.lr or train.clip_norm", st.Step, epoch+1, loss, gnorm, consecutiveSkips))
				}
			} else {
				consecutiveSkips = 0
			}
			lr := sched.LR(st.Step)
			if !skip {
				opt.Step(m.Params, lr)
			}
			stepTimes = append(stepTimes, time.Since(stepStart).Seconds())
			st.Step++
			if t.ema != nil && !skip {
				t.ema.update(m.W, st.Step)
			}
			if !skip {
				st.LossSum += loss
				st.LossN++
			}
			prog.step(st.Step, epoch+1, cfg.Epochs, st.LossSum/float64(st.LossN), bt.B)
			if st.Step%logEvery == 0 {
				rec := map[string]any{"step": st.Step, "epoch": epoch + 1, "loss": loss, "lr": lr}
				if skip { // JSON has no NaN or Inf
					delete(rec, "loss")
					rec["skipped"] = true
				} else if !math.IsInf(gnorm, 1) {
					rec["grad_norm"] = gnorm
				}
				if err := enc.Encode(rec); err != nil {
					return nil, err
				}
			}
			if cfg.CheckpointEvery > 0 && st.Step%cfg.CheckpointEvery == 0 {
				if err := t.save(LastFile, opt, st); err != nil {
					return nil, err
				}
			}
			if cfg.MaxSteps > 0 && st.Step >= cfg.MaxSteps && st.Step < total {
				prog.done()
				res.Stopped = true
				st.TrainLoss = st.LossSum / float64(max(st.LossN, 1)) // this epoch's steps so far
				return t.finish(res, st, start, opt, stepTimes)
			}
		}
		st.TrainLoss = st.LossSum / float64(max(st.LossN, 1))
		st.Epoch, st.LossSum, st.LossN = epoch+1, 0, 0
		rec := map[string]any{"epoch": epoch + 1, "step": st.Step, "train_loss": st.TrainLoss, "seconds": time.Since(start).Seconds()}
		final := epoch+1 == cfg.Epochs // always evaluated; finish writes last.safetensors
		saveNow := par.distributed() || cfg.CheckpointSeconds == 0 || time.Since(lastSave).Seconds() >= cfg.CheckpointSeconds
		if t.Val != nil && ((epoch+1)%cfg.EvalEvery == 0 || final) {
			t.swapEMA()
			met, err := par.evaluate(m, evalWS, t.Val, valShard, eval.Options{BatchSize: cfg.BatchSize, MaskRatio: cfg.MaskRatio, Seed: cfg.Seed, Loss: lossOpt, TargetStats: t.Data.TargetStats})
			if err == nil && !finite(met.Loss) {
				// Finite training losses, clipped gradients, and still
				// weights that overflow: the steps were too large.
				err = dist.Agreed(fmt.Errorf("validation loss %v after %d steps: training diverged; lower train.lr (%g)", met.Loss, st.Step, cfg.LR)) // merged: every rank sees it
			}
			if err == nil {
				err = t.saveIfBest(epoch, &met, &st, saveNow || final)
			}
			t.swapEMA()
			if err != nil {
				return nil, fmt.Errorf("epoch %d validation: %w", epoch+1, err)
			}
			rec["val"] = met
			prog.done()
			fmt.Fprintf(logw, "epoch %d/%d  train loss %.4g  %s\n", epoch+1, cfg.Epochs, st.TrainLoss, summary(&met))
		} else if t.Val == nil {
			prog.done()
			fmt.Fprintf(logw, "epoch %d/%d  train loss %.4g\n", epoch+1, cfg.Epochs, st.TrainLoss)
		}
		if err := enc.Encode(rec); err != nil {
			return nil, err
		}
		if saveNow && !final {
			if err := t.save(LastFile, opt, st); err != nil {
				return nil, err
			}
			lastSave = time.Now()
		}
	}
	prog.done()
	if t.Val == nil {
		// Without validation data the last weights are the best we know.
		st.BestEpoch = cfg.Epochs
		t.swapEMA()
		err := t.save(BestFile, nil, st)
		t.swapEMA()
		if err != nil {
			return nil, err
		}
	}
	return t.finish(res, st, start, opt, stepTimes)
}

// saveIfBest writes best.safetensors when the model's validation metrics
// met of this epoch beat the best so far (on every rank alike: met is
// merged across ranks). Under select "last", where every epoch beats the
// ones before, only when last.safetensors is written too (saveNow).
func (t *Trainer) saveIfBest(epoch int, met *eval.Metrics, st *state, saveNow bool) error {
	if t.Cfg.Select == "last" && !saveNow {
		return nil
	}
	score := scoreOf(t.Model.Cfg.Task, t.Cfg.Select, epoch, met)
	if score >= st.BestScore {
		return nil
	}
	st.BestScore, st.BestEpoch, st.Best = score, epoch+1, met
	return t.save(BestFile, nil, *st)
}

// swapEMA exchanges the live and the averaged weights (no-op without
// train.ema).
func (t *Trainer) swapEMA() {
	if t.ema != nil {
		t.ema.swap(t.Model.W)
	}
}

func (t *Trainer) finish(res *Result, st state, start time.Time, opt optim.Optimizer, stepTimes []float64) (*Result, error) {
	if len(stepTimes) > 0 {
		st.StepSeconds = median(stepTimes)
	}
	if err := t.save(LastFile, opt, st); err != nil {
		return nil, err
	}
	res.Steps, res.Epochs, res.BestEpoch, res.Best = st.Step, st.Epoch, st.BestEpoch, st.Best
	res.TrainLoss, res.StepSeconds = st.TrainLoss, st.StepSeconds
	res.Seconds = time.Since(start).Seconds()
	if t.par.distributed() {
		res.Ranks, res.WaitSeconds, res.AllreduceSeconds = t.par.size, median(t.par.waitTimes), median(t.par.gradTimes)
	}
	res.SkippedSteps = st.Skipped
	// The model is left holding what a run without validation data keeps
	// as best: with train.ema, the averaged weights.
	t.swapEMA()
	t.ema = nil
	return res, nil
}

// scoreOf is what best-epoch selection minimises: the validation loss in
// the training objective's form (eval.Metrics.Objective when it differs
// from the reported loss); for classification with select "accuracy" the
// error rate, ties to the lower loss; with select "last" the epoch itself,
// counted down, so the last evaluated epoch is kept (validation metrics
// are still logged).
func scoreOf(task, sel string, epoch int, met *eval.Metrics) float64 {
	loss := met.Loss
	if met.Objective != 0 {
		loss = met.Objective
	}
	switch {
	case sel == "last":
		return -float64(epoch)
	case task == model.TaskClassify && sel == "accuracy":
		return -met.Accuracy + 1e-9*math.Min(loss, 1e6)
	}
	return loss
}

func summary(met *eval.Metrics) string {
	if met.Confusion != nil {
		return fmt.Sprintf("val loss %.4g  accuracy %.4f  macro-F1 %.4f", met.Loss, met.Accuracy, met.MacroF1)
	}
	return fmt.Sprintf("val MSE %.4g  RMSE %.4g", met.MSE, met.RMSE)
}

// stop writes last.safetensors when the run is interrupted, so that it
// can resume, and returns the interruption.
func (t *Trainer) stop(ctx context.Context, prog *progress, opt optim.Optimizer, st state) error {
	prog.done()
	err := stopAll(ctx)
	if serr := t.save(LastFile, opt, st); serr != nil {
		return errors.Join(err, serr)
	}
	return &Interrupted{Checkpoint: filepath.Join(t.Cfg.Out, LastFile), Step: st.Step, Err: err}
}

// save writes a checkpoint atomically: weights, optimiser state (for
// last.safetensors) and the training state. Rank 0 alone writes, once
// every rank is known to hold the same weights.
func (t *Trainer) save(name string, opt optim.Optimizer, st state) error {
	if err := t.par.inSync(t.Model.W, st.Step); err != nil || t.par.rank != 0 {
		return err
	}
	if t.writes == nil {
		t.writes = map[string]int{}
	}
	t.writes[name]++
	meta := t.Data.Meta()
	for k, v := range t.Meta {
		meta[k] = v
	}
	st.Samples, st.BatchSize, st.Data = len(t.Train.Samples), t.Cfg.BatchSize, t.trainPrint()
	sj, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cj, err := json.Marshal(t.Cfg)
	if err != nil {
		return err
	}
	meta[StateMeta], meta[metaConfig] = string(sj), string(cj)
	var extra []*ckpt.Tensor
	if opt != nil {
		meta["romae.optimizer"] = opt.Name()
		extra = OptimizerTensors(opt)
		if t.ema != nil {
			extra = append(extra, t.ema.tensor())
		}
	}
	return t.Model.Save(filepath.Join(t.Cfg.Out, name), meta, extra)
}

// CheckResume reports, before anything trains, whether Run could resume
// from Cfg.Out's last.safetensors (nil when there is none: the run starts
// afresh): the same model, steps over the same training set. A command
// that trains other runs first (data.refit's hold-out run) calls it so
// that a checkpoint it cannot continue is refused at once, not after them.
func (t *Trainer) CheckResume() error {
	_, _, err := t.readLast(new(state))
	return err
}

// readLast reads Cfg.Out's last.safetensors and its state, and checks that
// this run can continue it (ck nil: there is none).
func (t *Trainer) readLast(st *state) (*model.Model[float32], *model.Checkpoint, error) {
	path := filepath.Join(t.Cfg.Out, LastFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	m, ck, err := model.Load[float32](path)
	if err != nil {
		return nil, nil, err
	}
	if !reflect.DeepEqual(m.Cfg, t.Model.Cfg) {
		return nil, nil, fmt.Errorf("%s: checkpoint model config differs from this run's (%s); use another train.out or drop --train.resume",
			path, strings.Join(jsondiff.Fields("", m.Cfg, t.Model.Cfg), ", "))
	}
	if err := json.Unmarshal([]byte(ck.Meta[StateMeta]), st); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, StateMeta, err)
	}
	if cj, ok := ck.Meta[metaConfig]; ok {
		t.resumedCfg = new(Config)
		if err := json.Unmarshal([]byte(cj), t.resumedCfg); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, metaConfig, err)
		}
	}
	var changed []string
	if before, found, err := data.SpecFromMeta(ck.Meta); err == nil && found && t.Data != nil {
		changed = before.Differences(t.Data)
	}
	return m, ck, t.sameSteps(path, st, changed)
}

// resume loads out/last.safetensors into the model, optimiser and state.
func (t *Trainer) resume(opt optim.Optimizer, st *state) (bool, error) {
	m, ck, err := t.readLast(st)
	if ck == nil || err != nil {
		return false, err
	}
	path := filepath.Join(t.Cfg.Out, LastFile)
	copy(t.Model.W, m.W)
	if name := ck.Meta["romae.optimizer"]; name != opt.Name() {
		return false, fmt.Errorf("%s: saved with optimizer %q, this run uses %q", path, name, opt.Name())
	}
	if err := LoadOptimizerState(ck.File, opt); err != nil {
		return false, fmt.Errorf("%s: optimizer state: %w", path, err)
	}
	if t.ema != nil {
		v, _, err := ck.File.Float32(emaTensor)
		if err == nil {
			err = t.ema.load(v)
		}
		if err != nil {
			return false, fmt.Errorf("%s: train.ema is on but the checkpoint's average cannot be read: %w", path, err)
		}
	}
	return true, nil
}

// sameSteps refuses to resume a checkpoint whose steps were counted over
// another number of training samples or another batch size: its step and
// epoch would not name the same place in the schedule, or in the data.
// changed names the data settings that differ from the checkpoint's run.
func (t *Trainer) sameSteps(path string, st *state, changed []string) error {
	again := "; resume with the run's own, or start over (--overwrite)"
	why := "another data file or data setting such as data.normalize"
	if len(changed) > 0 {
		why = strings.Join(changed, ", ")
	}
	bs := st.BatchSize
	if bs == 0 && t.resumedCfg != nil { // checkpoints written before state kept it
		bs = t.resumedCfg.BatchSize
	}
	if bs != 0 && bs != t.Cfg.BatchSize {
		return fmt.Errorf("%s: written by a run with train.batch_size %d, this one has %d: its step count is in those batches%s", path, bs, t.Cfg.BatchSize, again)
	}
	if n := len(t.Train.Samples); st.Samples != 0 && st.Samples != n {
		return fmt.Errorf("%s: written by a run with %d training samples, this one has %d (%s)%s", path, st.Samples, n, why, again)
	}
	if st.Data != 0 && st.Data != t.trainPrint() {
		return fmt.Errorf("%s: written by a run on other training data: the same number of samples (%d), other series, labels or targets (%s)%s", path, st.Samples, why, again)
	}
	perEpoch := (len(t.Train.Samples) + t.Cfg.BatchSize - 1) / t.Cfg.BatchSize
	if s := st.Step - st.Epoch*perEpoch; s < 0 || s > perEpoch {
		return fmt.Errorf("%s: step %d is not in epoch %d of %d steps: written by a run over other data or batches%s", path, st.Step, st.Epoch+1, perEpoch, again)
	}
	return nil
}

// trainPrint is the training set's fingerprint, computed once.
func (t *Trainer) trainPrint() uint64 {
	if t.trainFP == 0 {
		t.trainFP = t.Train.Fingerprint()
	}
	return t.trainFP
}

// settingsNote is the note a resumed run prints when its settings differ
// from those of the run it continues ("" when the same, or not recorded)
// in anything that shapes the weights or the one kept as best: the run
// goes on under the new ones (a longer train.epochs extends it; its
// learning-rate schedule is then the new one's from here on), which is
// legitimate but is not what continuing exactly means.
func settingsNote(before *Config, now Config) string {
	if before == nil {
		return ""
	}
	var diffs []string
	bv, nv, ty := reflect.ValueOf(*before), reflect.ValueOf(now), reflect.TypeFor[Config]()
	for i := range ty.NumField() {
		f := ty.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if !f.IsExported() {
			continue
		}
		switch name {
		case "-", "resume", "out", "progress", "checkpoint_every", "checkpoint_seconds", "max_steps": // where and how it runs, not what
			continue
		}
		if b, n := bv.Field(i).Interface(), nv.Field(i).Interface(); !reflect.DeepEqual(b, n) {
			diffs = append(diffs, fmt.Sprintf("train.%s %v → %v", name, b, n))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "note: resuming with settings other than the checkpoint's run: " + strings.Join(diffs, ", ") +
		"; the run goes on under these (its learning-rate schedule too): the result is not what an uninterrupted run with either would give"
}

// numericsNote is the note a resumed run prints when the checkpoint's
// products were computed with other bits than this process's ("" when
// the same, or not recorded): the run goes on, with the same schedule and
// batches, but its numbers will not match an uninterrupted run's.
func numericsNote(before *tensor.Numerics, now tensor.Numerics) string {
	if before == nil || before.SameBits(now) {
		return ""
	}
	how := ""
	switch {
	case before.Precision != now.Precision:
		how = fmt.Sprintf("; ROMAE_PRECISION=%s", before.Precision)
	case before.Kernels != now.Kernels:
		how = fmt.Sprintf("; that needs its kernels (%s; here %s)", before.Kernels, now.Kernels)
	case before.Caches != "":
		how = fmt.Sprintf("; ROMAE_CACHES=%s gives this machine its k splits", before.Caches)
	}
	return fmt.Sprintf("note: the checkpoint's products ran on %s (%s, %s, k splits %v); here %s (%s, %s, k splits %v): "+
		"same schedule and batches, not bit-identical to an uninterrupted run%s",
		before.CPU, before.Precision, before.Kernels, before.KSplits, now.CPU, now.Precision, now.Kernels, now.KSplits, how)
}

// EvaluationNote is what `romae evaluate` says when its numbers cannot be
// the ones the checkpoint's run reported on the same file ("" when they
// can, or the checkpoint does not say): the run validated in another
// precision, or — for a pre-training model, whose loss depends on which
// tokens are masked — with other masks than seed and ratio draw.
func EvaluationNote(meta map[string]string, now tensor.Numerics, pretrain bool, seed uint64, ratio float64) string {
	var diffs []string
	var st state
	if json.Unmarshal([]byte(meta[StateMeta]), &st) == nil && st.Numerics != nil && st.Numerics.Precision != now.Precision {
		diffs = append(diffs, fmt.Sprintf("it ran in %s, this in %s (ROMAE_PRECISION=%s)", st.Numerics.Precision, now.Precision, st.Numerics.Precision))
	}
	var cfg Config
	if pretrain && json.Unmarshal([]byte(meta[metaConfig]), &cfg) == nil && (cfg.Seed != seed || cfg.MaskRatio != ratio) {
		diffs = append(diffs, fmt.Sprintf("its validation masks were drawn with train.seed %d and train.mask_ratio %v, these with --seed %d --mask-ratio %v", cfg.Seed, cfg.MaskRatio, seed, ratio))
	}
	if len(diffs) == 0 {
		return ""
	}
	return "note: not the numbers the checkpoint's training run reported for this data: " + strings.Join(diffs, "; ")
}

// OptimizerTensors is opt's state as checkpoint tensors, each named
// "optim." + its key, for a last.safetensors that resumes exactly.
func OptimizerTensors(opt optim.Optimizer) []*ckpt.Tensor {
	var out []*ckpt.Tensor
	for k, v := range opt.State() {
		out = append(out, ckpt.F32Tensor(optimPrefix+k, []int{len(v)}, v))
	}
	return out
}

// LoadOptimizerState restores opt's state from f's "optim." tensors.
func LoadOptimizerState(f *ckpt.File, opt optim.Optimizer) error {
	state := map[string][]float32{}
	for name := range f.Tensors {
		if strings.HasPrefix(name, optimPrefix) {
			v, _, err := f.Float32(name)
			if err != nil {
				return err
			}
			state[strings.TrimPrefix(name, optimPrefix)] = v
		}
	}
	return opt.LoadState(state)
}

func newOptimizer(cfg Config) (optim.Optimizer, error) {
	if cfg.Optimizer == "sgd" {
		o := &optim.SGD{Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay, Nesterov: cfg.Nesterov}
		return o, o.Validate()
	}
	o := optim.NewAdamW()
	o.Beta1, o.Beta2, o.Eps, o.WeightDecay = cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay
	return o, o.Validate()
}

func (t *Trainer) lossOptions() (model.LossOptions, error) {
	opt := model.LossOptions{LabelSmoothing: t.Cfg.LabelSmoothing}
	if t.Model.Cfg.Task != model.TaskClassify {
		return opt, nil
	}
	counts := make([]int, t.Model.Cfg.Outputs)
	for _, s := range t.Train.Samples {
		counts[s.Label]++
	}
	w, err := t.Cfg.classWeights(counts)
	opt.ClassWeights = w
	return opt, err
}

// checkSpec refuses to train without a data spec, or with one that does
// not describe this model's inputs and outputs.
func (t *Trainer) checkSpec() error {
	if t.Data == nil {
		return fmt.Errorf("train: Trainer.Data is nil: every checkpoint must record how its data was read and scaled (data.Spec)")
	}
	if err := t.Data.Check(); err != nil {
		return err
	}
	c := t.Model.Cfg
	classes, targets := 0, 0
	switch c.Task {
	case model.TaskClassify:
		classes = c.Outputs
	case model.TaskRegress:
		targets = c.Outputs
	}
	if err := t.Data.CheckModel(c.Values, classes, targets); err != nil {
		return err
	}
	if classes > 0 && !slices.Equal(t.Data.Classes, t.Train.Classes) {
		return fmt.Errorf("train: data spec classes %v differ from the training data's %v", t.Data.Classes, t.Train.Classes)
	}
	return nil
}

// availableMemory is sysmem.Available; tests replace it.
var availableMemory = sysmem.Available

// checkMemory refuses a run whose steps need more memory than the machine
// has free: a lower bound (model.Config.StepBytes for this rank's batch of
// the longest training samples, the weights and their gradients) against
// 90% of what the process can still allocate, since the data, the
// validation workspace, per-worker scratch and the runtime come on top.
// Without it such a run is killed by the kernel part-way, with no word of
// why: batches of 8 series of 200 000 steps, one token per 32
// observations, reached 23.3 GiB (22.4 by this bound) before the OOM
// killer ended the run. Where the free memory cannot be read the run goes
// ahead.
func checkMemory(m *model.Model[float32], cfg Config, ds *data.Dataset, ranks int) error {
	avail, source, ok := availableMemory()
	if !ok {
		return nil
	}
	need, B, n := StepMemory(m, cfg, ds, ranks)
	if need <= avail/10*9 {
		return nil
	}
	gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
	fits := fmt.Sprintf("more than the %s free (%s)", gib(avail), source)
	if need <= avail {
		fits = fmt.Sprintf("of the %s free (%s), too little room for the data, the validation pass and the Go runtime", gib(avail), source)
	}
	return fmt.Errorf("training data %q: a step on %d samples of up to %d tokens needs at least %s (attention keeps batch × heads × tokens² probabilities in every block), %s: lower train.batch_size, raise data.series_patch (observations per token) for long series, or shorten them",
		ds.Name, B, n, gib(need), fits)
}

// StepMemory is checkMemory's lower bound on what training m on ds
// needs: the step's activations for rank 0's share of a batch of the
// longest samples (B of up to n tokens) and the weights with their
// gradients.
func StepMemory(m *model.Model[float32], cfg Config, ds *data.Dataset, ranks int) (need int64, B, n int) {
	for i := range ds.Samples {
		n = max(n, ds.Samples[i].Len(ds.C))
	}
	lo, hi := dist.Split(cfg.BatchSize, 0, ranks) // rank 0 has the largest share
	B = min(hi-lo, len(ds.Samples))
	return m.Cfg.StepBytes(B, n, cfg.MaskRatio, true) + 2*4*int64(m.NumParams()), B, n
}

// checkData refuses a dataset the model cannot train on, naming the sample.
func checkData(m *model.Model[float32], ds *data.Dataset, role string) error {
	if ds == nil || len(ds.Samples) == 0 {
		return fmt.Errorf("%s data is empty", role)
	}
	if err := ds.Validate(); err != nil {
		return fmt.Errorf("%s data: %w", role, err)
	}
	switch {
	case ds.C != m.Cfg.Values:
		return fmt.Errorf("%s data %q has %d values per token, the model expects %d", role, ds.Name, ds.C, m.Cfg.Values)
	case ds.D != m.Cfg.PosDims:
		return fmt.Errorf("%s data %q has %d position axes, the model expects %d", role, ds.Name, ds.D, m.Cfg.PosDims)
	}
	switch m.Cfg.Task {
	case model.TaskClassify:
		if len(ds.Classes) != m.Cfg.Outputs {
			return fmt.Errorf("%s data %q has %d classes, the model %d", role, ds.Name, len(ds.Classes), m.Cfg.Outputs)
		}
		for i, s := range ds.Samples {
			if s.Label < 0 {
				return fmt.Errorf("%s data %q: sample %d (%s) has no label", role, ds.Name, i, s.ID)
			}
		}
	case model.TaskRegress:
		if ds.TargetDim != m.Cfg.Outputs || ds.TargetPerToken != (m.Cfg.Pool == model.PoolToken) {
			return fmt.Errorf("%s data %q has %d targets (per token: %v), the model predicts %d (per token: %v)",
				role, ds.Name, ds.TargetDim, ds.TargetPerToken, m.Cfg.Outputs, m.Cfg.Pool == model.PoolToken)
		}
		for i, s := range ds.Samples {
			if s.Target == nil {
				return fmt.Errorf("%s data %q: sample %d (%s) has no regression target", role, ds.Name, i, s.ID)
			}
		}
	}
	return nil
}

// TrimMetrics drops the records of path logged after step, and the
// epoch-end records (those with a train_loss) of epochs after epochs
// (those a resumed run repeats: a checkpoint written at an epoch's last
// step precedes its epoch-end record). A missing file is fine.
func TrimMetrics(path string, step, epochs int) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep []byte
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		var rec struct {
			Step      int      `json:"step"`
			Epoch     int      `json:"epoch"`
			TrainLoss *float64 `json:"train_loss"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Step > step || rec.TrainLoss != nil && rec.Epoch > epochs {
			continue // a torn last line, or a step to be redone
		}
		keep = append(keep, line...)
	}
	// Atomic: a crash while rewriting must not lose the records kept.
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(keep)
		return err
	})
}

// median of x (0 when empty); x is reordered.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	slices.Sort(x)
	return (x[(len(x)-1)/2] + x[len(x)/2]) / 2
}
