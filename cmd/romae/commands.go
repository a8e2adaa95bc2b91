package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"romae/ckpt"
	"romae/data"
	"romae/dist"
	"romae/eval"
	"romae/model"
	"romae/tensor"
	"romae/train"
)

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(v)
}

// ─── training ─────────────────────────────────────────────────────────────

func cmdPretrain(ctx context.Context, args []string) error {
	t, err := parseTraining("pretrain", "pretrain --data FILE [--config run.yaml] [--out DIR] [--section.field value ...]", args)
	if err != nil {
		return err
	}
	cfg := &t.cfg
	tr, val, spec, err := loadTraining(cfg, nil, t.r, true)
	if err != nil {
		return err
	}
	t.r.applyTrainRecipe(cfg, len(tr.Samples), lenSamples(val), model.TaskPretrain, true)
	mc, err := cfg.Model.modelConfig(model.TaskPretrain, tr.C, tr.D, 0)
	if err != nil {
		return err
	}
	m, err := model.New[float32](mc, cfg.Train.Seed)
	if err != nil {
		return err
	}
	return t.run(ctx, m, tr, val, spec, nil)
}

func cmdFinetune(ctx context.Context, args []string) error {
	t, err := parseTraining("finetune", "finetune --data FILE [--model PRETRAINED] [--config run.yaml] [--out DIR] [...]", args)
	if err != nil {
		return err
	}
	cfg := &t.cfg
	var pm *model.Model[float32]
	var base *data.Spec
	if t.from != "" {
		var ck *model.Checkpoint
		if pm, ck, err = model.Load[float32](t.from); err != nil {
			return err
		}
		if err := t.sameArchitecture(pm.Cfg); err != nil {
			return err
		}
		// Read and scale inputs exactly as during pre-training.
		if base, _, err = data.SpecFromMeta(ck.Meta); err != nil {
			return fmt.Errorf("%s: %w", t.from, err)
		}
	}
	t.r.applyLabelRecipe(cfg)
	tr, val, spec, err := loadTraining(cfg, base, t.r, false)
	if err != nil {
		return err
	}
	task, outputs := cfg.Model.Task, 0
	if task == "auto" {
		switch {
		case len(tr.Classes) > 0:
			task = model.TaskClassify
		case tr.TargetDim > 0:
			task = model.TaskRegress
		default:
			return fmt.Errorf("%s has neither labels nor regression targets: %s", cfg.Data.Train, whereLabels(cfg))
		}
	}
	if task == model.TaskClassify {
		outputs = len(tr.Classes)
	} else {
		outputs = tr.TargetDim
	}
	switch {
	case task == model.TaskClassify && len(tr.Classes) == 0:
		return fmt.Errorf("%s has no class labels for model.task classify: %s", cfg.Data.Train, whereLabels(cfg))
	case task == model.TaskClassify && len(tr.Classes) < 2:
		return fmt.Errorf("%s: every series has the label %q; classification needs at least 2 classes", cfg.Data.Train, tr.Classes[0])
	case task == model.TaskRegress && tr.TargetDim == 0:
		return fmt.Errorf("%s has no regression targets for model.task regress: %s", cfg.Data.Train, whereLabels(cfg))
	}
	nTrain, nVal := len(tr.Samples), lenSamples(val)
	if k := cfg.Data.Folds; k > 1 { // each fold model trains on the other folds
		nVal = nTrain / k
		nTrain -= nVal
	}
	t.r.applyTrainRecipe(cfg, nTrain, nVal, task, pm == nil)
	t.r.applyRefitRecipe(cfg, lenSamples(val))
	var mc model.Config
	if pm == nil {
		if mc, err = cfg.Model.modelConfig(task, tr.C, tr.D, outputs); err != nil {
			return err
		}
	} else {
		mc = pm.Cfg
		mc.Task, mc.Outputs, mc.Decoder = task, outputs, model.Size{}
		mc.AttnDropout, mc.HiddenDropout, mc.HeadDropout, mc.DropPath = cfg.Model.AttnDropout, cfg.Model.HiddenDropout, cfg.Model.HeadDropout, cfg.Model.DropPath
	}
	switch {
	case cfg.Model.Pool == poolMixed:
		mc.Pool = model.PoolMean // fold 1's; foldConfig gives every second fold meanmax
	case cfg.Model.Pool != "auto":
		mc.Pool = cfg.Model.Pool
	case tr.TargetPerToken:
		mc.Pool = model.PoolToken
	case mc.UseCLS:
		mc.Pool = model.PoolCLS
	default:
		mc.Pool = model.PoolMean
	}
	if tr.C != mc.Values || tr.D != mc.PosDims {
		return fmt.Errorf("%s has %d values and %d position axes per token; the pre-trained model expects %d and %d",
			cfg.Data.Train, tr.C, tr.D, mc.Values, mc.PosDims)
	}
	m, err := model.New[float32](mc, cfg.Train.Seed)
	if err != nil {
		return err
	}
	var meta map[string]string
	if pm != nil {
		if err := m.TransferEncoder(pm); err != nil {
			return err
		}
		meta = map[string]string{"romae.pretrained_from": t.from}
	}
	if cfg.Data.Refit && val != nil {
		return t.runHoldoutThenRefit(ctx, m, pm, tr, val, spec, meta)
	}
	if cfg.Data.Folds > 1 {
		return t.runFolds(ctx, m, pm, tr, spec, meta)
	}
	return t.run(ctx, m, tr, val, spec, meta)
}

// sayMissing is the line on stderr that says what data.nan (policy) did
// with the missing values of ds, read from path.
func sayMissing(path string, ds *data.Dataset, policy string) {
	fmt.Fprintf(os.Stderr, "romae: %s: %d missing values (data.nan %s): %d series left out\n",
		path, ds.MissingValues, cmp.Or(policy, data.NaNMissing), ds.DroppedSamples)
}

// whereLabels says how to give a training file its labels or targets, in
// its format, naming a CSV's columns.
func whereLabels(cfg *runConfig) string {
	switch f, _ := cfg.Data.FormatOf(cfg.Data.Train); f {
	case "csv":
		cols, _ := data.CSVColumns(cfg.Data.Train)
		return fmt.Sprintf("name its label column (--data.label_column COLUMN, or --data.labels_file FILE of id,label) or its target columns (--data.target_columns COLUMN,...); its columns are %s",
			strings.Join(cols, ", "))
	case "ts":
		return "a .ts file's labels are each series' last field, with @classLabel true (classes) or @targetLabel true (regression targets) in its header"
	case "npz":
		return "a .npz file's labels are its integer array y (--data.label_key)"
	}
	return "pre-train on it (romae pretrain), or give a file with labels"
}

// loadTraining reads the training (and validation) data, scales it with
// base's statistics (a pre-trained model's, when fine-tuning one that has
// them) or the training set's own (data.normalize), holds out
// data.val_fraction of the training data for validation when no
// data.val file is given, and returns the data spec the checkpoints carry.
func loadTraining(cfg *runConfig, base *data.Spec, r *recipe, pretrain bool) (tr, val *data.Dataset, spec *data.Spec, err error) {
	r.applyBaseTime(cfg, base)
	src := cfg.Data.Source
	src.SeriesPatch = 0         // patched below, once the recipe has chosen P and whether to shift
	src.NormalizeSeries = false // standardised below, once the recipe has chosen whether to
	if base == nil && !r.set["data.time_origin"] {
		src.TimeOrigin = data.TimeOriginSeries // kept below if the file has time stamps; a no-op on step indices
	}
	if tr, err = src.Load(cfg.Data.Train); err != nil {
		return nil, nil, nil, err
	}
	if len(cfg.Data.Channels) == 0 && tr.Channels != nil {
		// Recorded in the spec, so every file read for the model later
		// gives each band the index it was trained with.
		cfg.Data.Channels = tr.Channels
	}
	r.applyTimeRecipe(cfg, tr, base)
	r.applyScaleRecipe(cfg, tr, base, pretrain)
	if cfg.Data.NormalizeSeries {
		switch {
		case pretrain:
			return nil, nil, nil, errors.New("data.normalize_series: pre-training reconstructs each series' values, and standardising each series on its own would take away the scale they are reconstructed in; use it when fine-tuning from scratch")
		case base != nil && !base.Source.NormalizeSeries:
			// Its statistics and encoder are those of unstandardised series.
			return nil, nil, nil, errors.New("data.normalize_series: the model fine-tuned from read its series as they are, not standardised each on its own; fine-tune from scratch to use it")
		}
		data.StandardiseSeries(tr)
	}
	if tr.MissingValues > 0 {
		sayMissing(cfg.Data.Train, tr, cfg.Data.NaN)
	}
	r.applyDataRecipe(cfg, tr, base, pretrain)
	patch := data.PatchSeries
	if cfg.Train.AugmentShift && !pretrain {
		patch = data.PatchSeriesShifted
	}
	if tr, err = patch(tr, max(cfg.Data.SeriesPatch, 1)); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", cfg.Data.Train, err)
	}
	spec = &data.Spec{Source: cfg.Data.Source, Train: cfg.Data.Train}
	if !pretrain {
		spec.Classes = tr.Classes
	}
	switch {
	case base != nil && base.Stats != nil:
		spec.Stats = base.Stats
	case cfg.Data.Normalize:
		s := data.ComputeStats(tr)
		if !cfg.Data.NormalizeChannels {
			s.ChannelAxis, s.ChannelMean, s.ChannelStd = 0, nil, nil
		}
		spec.Stats = &s
	}
	if !pretrain && tr.TargetDim > 0 {
		// Regression targets are standardised for training whatever their
		// units (a flux of 1e5, a period of 1e-3 days): the head starts at
		// the right scale and the loss does not scale with the units.
		// Predictions are mapped back with these (spec.TargetStats), and
		// every reported MSE is in the targets' own units.
		ts := data.ComputeTargetStats(tr)
		spec.TargetStats = &ts
	}
	if err := spec.Prepare(tr, cfg.Data.Train); err != nil {
		return nil, nil, nil, err
	}
	if cfg.Data.Val != "" {
		if val, err = spec.Read(cfg.Data.Val); err != nil {
			return nil, nil, nil, err
		}
	} else if f := cfg.Data.ValFraction; f > 0 && int(f*float64(len(tr.Samples))) >= 2 {
		parts := data.Split(tr, []float64{1 - f, f}, rand.New(rand.NewPCG(cfg.Train.Seed, 0x5911)))
		if len(parts[0].Samples) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: data.val_fraction %v leaves none of its %d series for training", cfg.Data.Train, f, len(tr.Samples))
		}
		tr, val = parts[0], parts[1]
	}
	return tr, val, spec, nil
}

// run trains m — one rank of a data-parallel job when mpirun or srun
// started this process (dist.Open) — and, on rank 0, writes result.json and
// the training curves into the run directory and prints the result.
func (t *trainingRun) run(ctx context.Context, m *model.Model[float32], tr, val *data.Dataset, spec *data.Spec, meta map[string]string) error {
	cfg := &t.cfg
	comm, err := dist.Open()
	if err != nil {
		return err
	}
	if comm.Rank() == 0 {
		fmt.Fprintln(os.Stderr, t.r.summary())
		fmt.Fprintf(os.Stderr, "romae: %s model, %d parameters; %d training samples, %d validation; run directory %s\n",
			m.Cfg.Task, m.NumParams(), len(tr.Samples), lenSamples(val), cfg.Train.Out)
		if err := t.removeStaleRun(); err != nil {
			return endRank(comm, err)
		}
	}
	_, out, err := trainRun(ctx, comm, cfg.Train, m, tr, val, spec, meta, nil, nil)
	if err != nil {
		return endRank(comm, err)
	}
	comm.Close()
	if comm.Rank() != 0 {
		return nil
	}
	return printJSON(out)
}

// trainRun trains m with comm's ranks and, on rank 0, writes the run
// directory's result.json (res, with extra's fields beside it: out) and
// curves. The trainer's lines go to logw (nil: stderr).
func trainRun(ctx context.Context, comm dist.Comm, tc train.Config, m *model.Model[float32], tr, val *data.Dataset, spec *data.Spec, meta map[string]string, extra map[string]any, logw io.Writer) (res *train.Result, out any, err error) {
	t := &train.Trainer{Cfg: tc, Model: m, Train: tr, Val: val, Data: spec, Meta: meta, Comm: comm, Log: logw}
	if res, err = t.Run(ctx); err != nil || comm.Rank() != 0 {
		return res, nil, err
	}
	out = res
	if m.Cfg.Task == model.TaskPretrain {
		b, err := storeBlend(filepath.Join(tc.Out, train.BestFile), tr, val, spec, tc.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("training finished, but fitting its blend with linear and spline interpolation failed: %w", err)
		}
		if b != nil {
			extra = maps.Clone(extra)
			if extra == nil {
				extra = map[string]any{}
			}
			extra["interp_blend"] = b
		}
	}
	if extra != nil {
		var fields map[string]any
		if err := json.Unmarshal(mustJSON(res), &fields); err != nil {
			return nil, nil, err
		}
		for k, v := range extra {
			fields[k] = v
		}
		out = fields
	}
	if err := writeFileAtomic(filepath.Join(tc.Out, "result.json"), mustJSON(out)); err != nil {
		return nil, nil, err
	}
	if _, err := writeCurves(tc.Out); err != nil {
		return nil, nil, fmt.Errorf("training finished, but drawing its curves failed: %w", err)
	}
	return res, out, nil
}

// storeBlend fits, on the validation series val, the blend of the
// pre-trained model in path (best.safetensors) with linear and spline
// interpolation that interpolate, evaluate --hidden and serve then use, and
// stores it in the checkpoint's metadata (rewritten atomically) beside the
// fingerprints of every series of tr and val, by which interpolate later
// tells a file's unseen series (--blend auto). A model whose tokens are
// patches of observations (no interpolation) and a run stopped before its
// first validation (no best.safetensors) get neither; validation data too
// small to fit on (or none) get the fingerprints only. It returns the
// blend, nil when there is none, saying why on stderr.
func storeBlend(path string, tr, val *data.Dataset, spec *data.Spec, seed uint64) (*eval.Blend, error) {
	if spec.Source.SeriesPatch > 1 {
		return nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "romae: no %s (the run stopped before validating): no blend with linear and spline interpolation is stored\n", filepath.Base(path))
		return nil, nil
	}
	m, ck, err := model.Load[float32](path)
	if err != nil {
		return nil, err
	}
	meta := maps.Clone(ck.Meta)
	meta[eval.MetaPretrainSeries] = eval.EncodeFingerprints(eval.Fingerprints(tr, val))
	var b *eval.Blend
	if val != nil {
		b, err = eval.FitBlend(m, val, spec.Stats, eval.BlendOptions{Seed: seed})
	}
	switch {
	case val == nil || errors.Is(err, eval.ErrBlendTooFew):
		fmt.Fprintf(os.Stderr, "romae: %d validation series are too few to fit the blend with linear and spline interpolation; interpolate will fit it on the series of its file that pre-training did not see, or use the model alone\n", lenSamples(val))
		b = nil
	case err != nil:
		return nil, err
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		meta[eval.MetaBlend] = string(raw)
	}
	if err := m.Save(path, meta, nil); err != nil {
		return nil, err
	}
	if b != nil {
		fmt.Fprintf(os.Stderr, "romae: interpolation blend with linear and spline interpolation: %s\n", b.Describe())
	}
	return b, nil
}

func lenSamples(ds *data.Dataset) int {
	if ds == nil {
		return 0
	}
	return len(ds.Samples)
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// ─── using a trained model ────────────────────────────────────────────────

// loaded is a checkpoint plus a data file read the way it was trained.
type loaded struct {
	m    *model.Model[float32]
	ck   *model.Checkpoint
	ds   *data.Dataset
	spec *data.Spec
}

// using is what every command that applies a trained model reads: the
// checkpoint, the data file, and how to read the file when the checkpoint
// does not say.
type using struct {
	model, data, format, dataSpec, labelsFile string
	raw                                       bool
	batchSize                                 int
	// timeFrom, when set, places the series of --data that it also holds
	// on its time axes (data.Source.WithOrigins): evaluate --hidden reads
	// held-out points against the observed series' origins.
	timeFrom *data.Dataset
}

func usingFlags(name, synopsis string) (*flag.FlagSet, *using) {
	fs := newFlagSet(name, synopsis)
	u := &using{}
	fs.StringVar(&u.model, "model", "", "checkpoint: romae run directory or .safetensors file, or an authors' checkpoint directory")
	fs.StringVar(&u.data, "data", "", "data file (.ts, .csv, .npy, .npz, .safetensors dataset), read as the model's training data was")
	fs.StringVar(&u.format, "format", "", "override the data format (ts, csv, npy, npz, dataset)")
	fs.StringVar(&u.labelsFile, "labels-file", "", "CSV data: the id,label file of --data (the checkpoint names its training data's)")
	fs.StringVar(&u.dataSpec, "data-spec", "", "JSON file with the data spec (source, stats, classes) for a checkpoint that lacks one; `romae inspect --data-spec CHECKPOINT` prints one")
	fs.BoolVar(&u.raw, "raw", false, "for a checkpoint without a data spec: read the file with default options, no scaling, class names in the file's order (what romae did before checkpoints carried their spec)")
	fs.IntVar(&u.batchSize, "batch-size", 32, "samples per forward pass")
	return fs, u
}

// checkpointSpec is the data spec a checkpoint's data must be read with
// (eval.CheckpointSpec, shared with serve): its own, or --data-spec, or the
// raw defaults with --raw.
func (u *using) checkpointSpec(ck *model.Checkpoint) (*data.Spec, error) {
	return eval.CheckpointSpec(u.model, ck, eval.SpecChoice{File: u.dataSpec, Raw: u.raw, RawSource: defaultRunConfig().Data.Source})
}

// source is how --data is read: the checkpoint's source with the
// --format and --labels-file overrides.
func (u *using) source(s data.Source) data.Source {
	if u.format != "" {
		s.Format = u.format
	}
	if u.labelsFile != "" {
		s.LabelsFile = u.labelsFile
	}
	return s
}

// modelColumnError says, for a file read for a trained model, that a
// column it lacks is one the model's data spec names, as its training
// file had it. Not Load's "set data.…": the user set nothing, and no flag
// of these commands sets it.
func modelColumnError(err error, model string) error {
	var ce *data.ColumnError
	if !errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%v: %s reads it as its data spec's data.%s (from its training file); give the file that column, or another spec with --data-spec",
		ce, model, ce.Option)
}

// load reads the checkpoint and the data file with the checkpoint's data
// spec (format overridable). With labels false the file's labels and
// targets are not needed (predict, embed, interpolate): they are ignored.
func (u *using) load(labels bool) (*loaded, error) {
	if u.model == "" || u.data == "" {
		return nil, fmt.Errorf("--model and --data are required")
	}
	if u.batchSize < 1 {
		return nil, fmt.Errorf("--batch-size %d: must be ≥ 1", u.batchSize)
	}
	m, ck, err := model.Load[float32](u.model)
	if err != nil {
		return nil, err
	}
	spec, err := u.checkpointSpec(ck)
	if err != nil {
		return nil, err
	}
	classes, targets := 0, 0
	switch m.Cfg.Task {
	case model.TaskClassify:
		classes = m.Cfg.Outputs
	case model.TaskRegress:
		targets = m.Cfg.Outputs
	}
	if classes > 0 && len(spec.Classes) == 0 {
		switch {
		case ck.File == nil: // the authors' classifiers have no class names: index them
			for k := range classes {
				spec.Classes = append(spec.Classes, strconv.Itoa(k))
			}
		case u.raw: // names from the file, in its order
			ds, err := u.source(spec.Source).Load(u.data)
			if err != nil {
				return nil, modelColumnError(err, u.model)
			}
			spec.Classes = ds.Classes
		}
	}
	if err := spec.CheckModel(m.Cfg.Values, classes, targets); err != nil {
		return nil, fmt.Errorf("%s: %w", u.model, err)
	}
	m.PackWeights() // these commands only run inference
	read := *spec
	if classes == 0 {
		read.Classes = nil // labels mean nothing to this model
	}
	read.Source = u.source(read.Source)
	if u.timeFrom != nil {
		read.Source = read.Source.WithOrigins(u.timeFrom)
	}
	if !labels {
		read.Source = read.Source.Unlabelled()
		read.Classes, read.TargetStats = nil, nil
	}
	if f, err := read.Source.FormatOf(u.data); err == nil && f != "csv" && len(read.Source.Channels) > 0 {
		// Not Load's data.channels message: the user set no channels, the
		// model's training file had them.
		return nil, fmt.Errorf("%s was trained on a long CSV whose channel column holds %s; %s is %s data: give it a long CSV with that channel column",
			u.model, strings.Join(read.Source.Channels, ", "), u.data, f)
	}
	ds, err := read.Source.Load(u.data)
	if err != nil {
		return nil, modelColumnError(err, u.model)
	}
	if ds.DroppedSamples > 0 {
		sayMissing(u.data, ds, read.Source.NaN)
	}
	if !labels {
		ds.Classes, ds.TargetDim, ds.TargetPerToken = nil, 0, false
		for i := range ds.Samples {
			ds.Samples[i].Label, ds.Samples[i].Target = -1, nil
		}
	}
	if ds.C != m.Cfg.Values || ds.D != m.Cfg.PosDims {
		return nil, fmt.Errorf("%s has %d values and %d position axes per token; the model expects %d and %d", u.data, ds.C, ds.D, m.Cfg.Values, m.Cfg.PosDims)
	}
	if err := read.Prepare(ds, u.data); err != nil {
		return nil, err
	}
	return &loaded{m: m, ck: ck, ds: ds, spec: spec}, nil
}

func cmdEvaluate(_ context.Context, args []string) error {
	fs, u := usingFlags("evaluate", "evaluate --model CHECKPOINT --data FILE [--hidden FILE] [--baselines]")
	ratio := fs.Float64("mask-ratio", 0.75, "pre-training models: fraction of tokens masked and reconstructed")
	seed := fs.Uint64("seed", 1, "pre-training models: seed of the evaluation masks")
	hidden := fs.String("hidden", "", "pre-training models: evaluate interpolation instead: predict this file's tokens from --data's tokens of the same series (matched by id, in any order; each must be in --data); reports interp_mse in data units")
	blend := blendFlag(fs)
	baselines := fs.Bool("baselines", false, "also report the baselines on the same data: majority class, 1-NN Euclidean and 1-NN DTW (classifiers), training mean, 1-NN ED and 1-NN DTW as MSE (regressors; both need --train-data or the training file the checkpoint names), linear and spline interpolation and the per-channel mean (--hidden)")
	trainData := fs.String("train-data", "", "training data for --baselines (default: the file the checkpoint was trained on, if it still exists)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !(*ratio > 0 && *ratio < 1) {
		return fmt.Errorf("--mask-ratio %v: want 0 < r < 1", *ratio)
	}
	if *hidden != "" {
		return evaluateInterpolation(u, *hidden, *blend, *baselines)
	}
	l, err := u.load(true)
	if err != nil {
		return err
	}
	for i, s := range l.ds.Samples {
		switch {
		case l.m.Cfg.Task == model.TaskClassify && s.Label < 0:
			return fmt.Errorf("%s: sample %d (%s) has no label to evaluate against", u.data, i, s.ID)
		case l.m.Cfg.Task == model.TaskRegress && s.Target == nil:
			return fmt.Errorf("%s: sample %d (%s) has no regression target to evaluate against", u.data, i, s.ID)
		}
	}
	if note := train.EvaluationNote(l.ck.Meta, tensor.CurrentNumerics(), l.m.Cfg.Task == model.TaskPretrain, *seed, *ratio); note != "" {
		fmt.Fprintf(os.Stderr, "romae evaluate: %s: %s\n", u.model, note)
	}
	met, err := eval.Evaluate(l.m, l.m.NewWorkspace(), l.ds, eval.Options{BatchSize: u.batchSize, MaskRatio: *ratio, Seed: *seed, TargetStats: l.spec.TargetStats})
	if err != nil {
		return err
	}
	if math.IsNaN(met.Loss) || math.IsInf(met.Loss, 0) {
		return fmt.Errorf("%s on %s: the loss is %v: the model's outputs overflow (a diverged run or a damaged checkpoint?)", u.model, u.data, met.Loss)
	}
	if !*baselines {
		return printJSON(met)
	}
	rows, err := taskBaselines(u, l, *trainData)
	if err != nil {
		return err
	}
	return printJSON(struct {
		eval.Metrics
		Baselines map[string]float64 `json:"baselines"`
	}{met, rows})
}

// loadHidden reads evaluate --hidden's file of held-out points of the
// series l holds, on their time axes: a series' origin is its observed
// points' (data.time_origin series), not the held-out points' own.
func (u *using) loadHidden(l *loaded, path string) (*loaded, error) {
	hu := *u
	hu.data, hu.timeFrom = path, l.ds
	return hu.load(false)
}

// evaluateInterpolation is evaluate --hidden: the interpolation MSE of a
// pre-training model (and, with baselines, of linear and spline
// interpolation and the per-channel mean) in data units.
func evaluateInterpolation(u *using, hiddenPath, blendMode string, baselines bool) error {
	l, err := u.load(false)
	if err != nil {
		return err
	}
	if err := decoderModel(u.model, l.m, "evaluate --hidden"); err != nil {
		return err
	}
	if err := pointModel(u.model, l.spec); err != nil {
		return err
	}
	h, err := u.loadHidden(l, hiddenPath)
	if err != nil {
		return err
	}
	observed, err := observedFor(l.ds, h.ds, u.data, hiddenPath)
	if err != nil {
		return err
	}
	b, err := u.blend(l, blendMode, "evaluate")
	if err != nil {
		return err
	}
	mse, pred, err := eval.InterpolationMSE(l.m, observed, h.ds, l.spec.Stats, u.batchSize)
	if err != nil {
		return err
	}
	out := map[string]any{}
	if b != nil {
		out["model_alone_mse"], out["blend"] = mse, b
		if mse, err = b.MixedMSE(observed, h.ds, l.spec.Stats, pred); err != nil {
			return err
		}
	}
	out["n"], out["interp_mse"], out["interp_rmse"] = len(h.ds.Samples), mse, math.Sqrt(mse)
	if baselines {
		b, err := interpolationBaselines(observed, h.ds, l.spec.Stats)
		if err != nil {
			return err
		}
		out["baselines"] = b
	}
	return printJSON(out)
}

// observedFor is observed's series matched to hidden's by id, in hidden's
// order: a series with held-out points must have observed ones (an error
// naming both files and the id otherwise); observed series without
// held-out points have nothing to score and are left out.
func observedFor(observed, hidden *data.Dataset, obsPath, hidPath string) (*data.Dataset, error) {
	index := make(map[string]int, len(observed.Samples))
	for i, s := range observed.Samples {
		index[s.ID] = i
	}
	out := *observed
	out.Samples = make([]data.Sample, len(hidden.Samples))
	for i, s := range hidden.Samples {
		j, ok := index[s.ID]
		if !ok {
			dropped := ""
			if n := observed.DroppedSamples; n > 0 {
				dropped = fmt.Sprintf("; %d of its series were left out for missing values (data.nan %s)", n, data.NaNDrop)
			}
			return nil, fmt.Errorf("%s: series %q has held-out points but no observed ones in %s (series are matched by id%s)", hidPath, s.ID, obsPath, dropped)
		}
		out.Samples[i] = observed.Samples[j]
	}
	return &out, nil
}

func cmdPredict(_ context.Context, args []string) error {
	fs, u := usingFlags("predict", "predict --model CHECKPOINT --data FILE [--out preds.csv|preds.json]")
	out := fs.String("out", "-", "output file, .csv or .json (- : CSV on stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOutput(*out, ".csv", ".json"); err != nil {
		return err
	}
	l, err := u.load(false)
	if err != nil {
		return err
	}
	preds, err := eval.Predict(l.m, l.m.NewWorkspace(), l.ds, u.batchSize)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", u.model, u.data, err)
	}
	if ts := l.spec.TargetStats; ts != nil {
		for _, p := range preds {
			for j := range p {
				p[j] = p[j]*ts.Std[j%len(ts.Std)] + ts.Mean[j%len(ts.Std)]
			}
		}
	}
	classes := l.spec.Classes // as many as the head has outputs (checked on load)
	if l.m.Cfg.Task == model.TaskClassify && len(classes) != l.m.Cfg.Outputs {
		// Never index past the class names, whatever the checkpoint says.
		return fmt.Errorf("%s: %d class names for a head with %d outputs", u.model, len(classes), l.m.Cfg.Outputs)
	}
	type row struct {
		ID            string             `json:"id"`
		Label         string             `json:"label,omitempty"`
		Probabilities map[string]float64 `json:"probabilities,omitempty"`
		Prediction    []float64          `json:"prediction,omitempty"`
	}
	rows := make([]row, len(preds))
	for i, p := range preds {
		rows[i].ID = l.ds.Samples[i].ID
		if l.m.Cfg.Task == model.TaskClassify {
			best := 0
			rows[i].Probabilities = map[string]float64{}
			for k, v := range p {
				rows[i].Probabilities[classes[k]] = v
				if v > p[best] {
					best = k
				}
			}
			rows[i].Label = classes[best]
		} else {
			rows[i].Prediction = p
		}
	}
	if strings.EqualFold(filepath.Ext(*out), ".json") {
		return writeFileAtomic(*out, mustJSON(rows))
	}
	return writeCSV(*out, func(w *csv.Writer) error {
		header := []string{"id"}
		if l.m.Cfg.Task == model.TaskClassify {
			header = append(header, "label")
			for _, c := range classes {
				header = append(header, "p_"+c)
			}
		} else {
			names := l.spec.Source.TargetColumns // a CSV's: the columns' own names
			for k := range preds[0] {
				if len(names) == len(preds[0]) {
					header = append(header, names[k])
				} else {
					header = append(header, fmt.Sprintf("y%d", k))
				}
			}
		}
		if err := w.Write(header); err != nil {
			return err
		}
		for i, r := range rows {
			rec := []string{r.ID}
			if r.Label != "" {
				rec = append(rec, r.Label)
			}
			for _, v := range preds[i] {
				rec = append(rec, strconv.FormatFloat(v, 'g', 7, 64))
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeCSV writes CSV records to stdout ("-" or "") or, atomically
// (ckpt.WriteFileAtomic), to a file: a failed command leaves any earlier
// file in place rather than a truncated one.
func writeCSV(path string, fill func(*csv.Writer) error) error {
	if path == "-" || path == "" {
		w := csv.NewWriter(os.Stdout)
		if err := fill(w); err != nil {
			return err
		}
		w.Flush()
		return w.Error()
	}
	return ckpt.WriteFileAtomic(path, func(f io.Writer) error {
		w := csv.NewWriter(f)
		if err := fill(w); err != nil {
			return err
		}
		w.Flush()
		return w.Error()
	})
}

func cmdInterpolate(_ context.Context, args []string) error {
	fs, u := usingFlags("interpolate", "interpolate --model PRETRAINED --data FILE (--at START:STOP:STEP | --queries FILE) [--out values.csv]")
	at := fs.String("at", "", "grid on the time axis, START:STOP:STEP; with several axes, queried for every combination of the other axes' values seen in the series (e.g. every band)")
	blend := blendFlag(fs)
	queries := fs.String("queries", "", "CSV of the positions to predict per series, with the header interpolate writes: id and the position axes (id,time or id,channel,time; a channel by name or index)")
	out := fs.String("out", "-", "output CSV (- : stdout): id, the position axes, then one column per value, named as in the data (CSV value columns, .ts dim0, dim1, ...)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*at == "") == (*queries == "") {
		return fmt.Errorf("give exactly one of --at and --queries")
	}
	if err := checkOutput(*out, ".csv"); err != nil {
		return err
	}
	if *at != "" {
		if _, err := parseAt(*at); err != nil {
			return err
		}
	}
	l, err := u.load(false)
	if err != nil {
		return err
	}
	if err := decoderModel(u.model, l.m, "interpolate"); err != nil {
		return err
	}
	if err := pointModel(u.model, l.spec); err != nil {
		return err
	}
	D, C := l.m.Cfg.PosDims, l.m.Cfg.Values
	cols := dataColumns(l.ds, l.spec)
	var q [][]float32
	var qt [][]float64 // each query's time as asked, in the file's units
	if *at != "" {
		q, qt, err = gridQueries(l.ds, *at)
	} else {
		q, qt, err = fileQueries(l.ds, cols, *queries)
	}
	if err != nil {
		return err
	}
	tm, ta := l.spec.Source.TimeMap(), l.ds.TimeAxis
	for i, s := range l.ds.Samples {
		for j, t := range qt[i] {
			q[i][j*D+ta] = tm.Position(t, s.TimeOrigin)
		}
	}
	if note := extrapolationNote(l.ds, q); note != "" {
		fmt.Fprintln(os.Stderr, "romae interpolate: "+note)
	}
	b, err := u.blend(l, *blend, "interpolate")
	if err != nil {
		return err
	}
	vals, err := eval.Interpolate(l.m, l.m.NewWorkspace(), l.ds, q, u.batchSize)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", u.model, u.data, err)
	}
	if b != nil {
		if err := b.Mix(l.ds, q, vals); err != nil {
			return err
		}
	}
	return writeCSV(*out, func(w *csv.Writer) error {
		header := append(append([]string{"id"}, cols.axes...), cols.values...)
		if err := w.Write(header); err != nil {
			return err
		}
		for i, s := range l.ds.Samples {
			v := vals[i]
			if l.spec.Stats != nil {
				if err := l.spec.Stats.Invert(v, q[i], D); err != nil {
					return err
				}
			}
			for j := 0; j < len(q[i])/D; j++ {
				rec := []string{s.ID}
				for a := 0; a < D; a++ {
					if a == ta {
						rec = append(rec, strconv.FormatFloat(qt[i][j], 'g', 15, 64))
					} else {
						rec = append(rec, cols.position(a, q[i][j*D+a]))
					}
				}
				for c := 0; c < C; c++ {
					rec = append(rec, strconv.FormatFloat(float64(v[j*C+c]), 'g', 7, 32))
				}
				if err := w.Write(rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// columns names a dataset's position axes and value slots for interpolate's
// query and output files: the time axis "time", a channel axis "channel"
// (its values written by name when the file names its channels), image
// axes "row" and "col", others pos0, pos1, ...; values by the file's names
// (CSV value columns, .ts dim0, dim1, ...) or value0, value1, ...
type columns struct {
	axes, values []string
	channelAxis  int      // -1: none
	channels     []string // names of the channel axis' indices
}

func dataColumns(ds *data.Dataset, spec *data.Spec) columns {
	c := columns{channelAxis: -1}
	for a := range ds.D {
		name := fmt.Sprintf("pos%d", a)
		switch {
		case spec.Source.Patch != [2]int{} && ds.D == 2:
			name = []string{"row", "col"}[a]
		case a == ds.TimeAxis:
			name = "time"
		case ds.D == 2:
			name, c.channelAxis, c.channels = "channel", a, ds.Channels
		}
		c.axes = append(c.axes, name)
	}
	c.values = ds.ValueNames
	if len(c.values) != ds.C {
		c.values = nil
		for k := range ds.C {
			c.values = append(c.values, fmt.Sprintf("value%d", k))
		}
	}
	return c
}

// position formats coordinate v of axis a: a channel by name when it has one.
func (c columns) position(a int, v float32) string {
	if a == c.channelAxis {
		if k := int(v); float32(k) == v && k >= 0 && k < len(c.channels) {
			return c.channels[k]
		}
	}
	return strconv.FormatFloat(float64(v), 'g', 8, 32)
}

// parsePosition reads coordinate s of axis a: a channel name or a number.
func (c columns) parsePosition(a int, s string) (float32, error) {
	if a == c.channelAxis {
		if k := slices.Index(c.channels, s); k >= 0 {
			return float32(k), nil
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
	named := a == c.channelAxis && len(c.channels) > 0
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if named {
			return 0, fmt.Errorf("channel %q is neither one of %s nor a finite number", s, strings.Join(c.channels, ", "))
		}
		return 0, fmt.Errorf("position %q is not a finite number", s)
	}
	if named && !data.IsChannelIndex(v, len(c.channels)) { // as serve refuses it
		return 0, fmt.Errorf("channel %s is not one of the model's channels: %s (or their indices 0 to %d)", s, strings.Join(c.channels, ", "), len(c.channels)-1)
	}
	return float32(v), nil
}

// Blend modes of interpolate and evaluate --hidden (--blend).
const (
	blendAuto   = "auto"
	blendStored = "stored"
	blendFit    = "fit"
	blendOff    = "off"
)

func blendFlag(fs *flag.FlagSet) *string {
	return fs.String("blend", blendAuto, "mix the model's values with linear and spline interpolation in time, per value and by how far the spline strays from the line there, by weights fitted on tokens hidden from data the model did not train on: "+
		"auto (hide 10% of the tokens of --data's series that pre-training did not see, no two neighbours in time, 6 times, and fit on them pooled with the validation tokens pretrain fitted on; the stored weights when pre-training saw every series), "+
		"stored (the weights pretrain fitted on its validation series and stored in the checkpoint; the model alone when it has none), "+
		"fit (fit them now on all of --data's series), off (the model alone)")
}

// blend is the Blend the --blend mode asks for (nil: the model alone),
// said on stderr.
func (u *using) blend(l *loaded, mode, cmd string) (*eval.Blend, error) {
	if mode == blendOff {
		return nil, nil
	}
	if mode != blendAuto && mode != blendStored && mode != blendFit {
		return nil, fmt.Errorf("--blend %q: want auto, stored, fit or off", mode)
	}
	stored, err := eval.BlendFromMeta(l.ck.Meta, l.m.Cfg.Values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.model, err)
	}
	seen, recorded, err := eval.FingerprintsFromMeta(l.ck.Meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.model, err)
	}
	if mode == blendAuto && !recorded {
		fmt.Fprintf(os.Stderr, "romae %s: %s does not record which series pre-training saw (%s: written before romae did), so --blend auto is --blend stored\n", cmd, u.model, eval.MetaPretrainSeries)
		mode = blendStored
	}
	opt := eval.BlendOptions{Seed: 1, BatchSize: u.batchSize}
	switch mode {
	case blendAuto:
		opt.Exclude, opt.Prior = seen, stored
		unseen := len(eval.BlendSeries(l.ds, seen, math.MaxInt).Samples)
		if unseen == 0 && stored != nil {
			fmt.Fprintf(os.Stderr, "romae %s: pre-training saw every series of %s: blending with linear and spline interpolation as pretrain fitted on its validation series: %s; --blend off for the model alone\n", cmd, u.data, stored.Describe())
			return stored, nil
		}
		b, err := eval.FitBlend(l.m, l.ds, l.spec.Stats, opt)
		if errors.Is(err, eval.ErrBlendTooFew) {
			if stored != nil {
				fmt.Fprintf(os.Stderr, "romae %s: %d series of %s that pre-training did not see: too few tokens to fit the blend with linear and spline interpolation; as pretrain fitted on its validation series: %s; --blend off for the model alone\n", cmd, unseen, u.data, stored.Describe())
				return stored, nil
			}
			fmt.Fprintf(os.Stderr, "romae %s: %d series of %s that pre-training did not see and no stored blend: too few tokens to fit the blend with linear and spline interpolation; the model alone\n", cmd, unseen, u.data)
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("--blend auto on %s: %w", u.data, err)
		}
		pooled := ""
		switch {
		case stored.Poolable():
			pooled = fmt.Sprintf(" pooled with pre-training's %d validation series", stored.Series)
		case stored != nil && stored.Sums != nil:
			pooled = " (the stored blend hid its tokens as romae did before, in runs: not pooled)"
		}
		fmt.Fprintf(os.Stderr, "romae %s: blending with linear and spline interpolation, fitted on the %d series of %s that pre-training did not see%s: %s; --blend off for the model alone\n", cmd, unseen, u.data, pooled, b.Describe())
		return b, nil
	case blendStored:
		if stored == nil {
			fmt.Fprintf(os.Stderr, "romae %s: %s carries no blend with linear and spline interpolation (%s: pre-trained without validation data, or before romae stored one): the model alone; --blend fit fits one on --data\n", cmd, u.model, eval.MetaBlend)
			return nil, nil
		}
		fmt.Fprintf(os.Stderr, "romae %s: blending with linear and spline interpolation as pretrain fitted: %s; --blend off for the model alone\n", cmd, stored.Describe())
		return stored, nil
	}
	b, err := eval.FitBlend(l.m, l.ds, l.spec.Stats, opt)
	if err != nil {
		return nil, fmt.Errorf("--blend fit on %s: %w", u.data, err)
	}
	fmt.Fprintf(os.Stderr, "romae %s: blending with linear and spline interpolation, fitted on %s: %s; --blend off for the model alone\n", cmd, u.data, b.Describe())
	return b, nil
}

// extrapolationNote says how many query positions lie outside their
// series' observed time span ("" when none): values there are
// extrapolations, and a grid in the wrong units (--at 0:100:10 on MJD
// times) lies entirely outside.
func extrapolationNote(ds *data.Dataset, q [][]float32) string {
	D, ta := ds.D, ds.TimeAxis
	outside, total := 0, 0
	for i, s := range ds.Samples {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for k := ta; k < len(s.Positions); k += D {
			lo, hi = min(lo, s.Positions[k]), max(hi, s.Positions[k])
		}
		for k := ta; k < len(q[i]); k += D {
			total++
			if q[i][k] < lo || q[i][k] > hi {
				outside++
			}
		}
	}
	switch {
	case outside == 0:
		return ""
	case outside == total:
		return fmt.Sprintf("every one of the %d query times lies outside its series' observed times: the values are extrapolations (are the times in the file's units?)", total)
	}
	return fmt.Sprintf("%d of %d query times lie outside their series' observed times: the values there are extrapolations", outside, total)
}

// decoderModel refuses interpolation with a model that has no decoder (a
// fine-tuned one) before anything else is said about it.
func decoderModel(path string, m *model.Model[float32], cmd string) error {
	if m.Cfg.Task != model.TaskPretrain {
		return fmt.Errorf("%s needs a pre-training model (it has the decoder); %s is a %s model", cmd, path, m.Cfg.Task)
	}
	return nil
}

// pointModel refuses interpolation with a model whose tokens are patches of
// several observations: its queries would be patches, not times.
func pointModel(path string, spec *data.Spec) error {
	if spec.Source.SeriesPatch > 1 {
		return fmt.Errorf("%s was trained on patches of %d observations per token (data.series_patch); interpolation needs one token per observation", path, spec.Source.SeriesPatch)
	}
	return nil
}

// gridQueries builds START:STOP:STEP on the time axis for every
// combination of the other axes' values present in each series, and gives
// each query's time as asked (times). The total number of query positions
// is bounded by maxQueries, checked before any is built.
func gridQueries(ds *data.Dataset, spec string) (q [][]float32, times [][]float64, err error) {
	g, err := parseAt(spec)
	if err != nil {
		return nil, nil, err
	}
	D, ta := ds.D, ds.TimeAxis
	keys := make([][]string, len(ds.Samples))
	seen := make([]map[string][]float32, len(ds.Samples)) // a token's position, by its other axes
	total := 0
	for i, s := range ds.Samples {
		seen[i] = map[string][]float32{}
		for t := 0; t < len(s.Positions)/D; t++ {
			pos := slices.Clone(s.Positions[t*D : (t+1)*D])
			pos[ta] = 0
			k := fmt.Sprint(pos)
			if _, ok := seen[i][k]; !ok {
				seen[i][k] = pos
				keys[i] = append(keys[i], k)
			}
		}
		sort.Strings(keys[i])
		if total += len(keys[i]) * g.n; total > maxQueries {
			return nil, nil, fmt.Errorf("--at %q: %d points for each of the series' position combinations come to more than the limit of %d query positions; use a coarser STEP", spec, g.n, maxQueries)
		}
	}
	q, times = make([][]float32, len(ds.Samples)), make([][]float64, len(ds.Samples))
	for i := range ds.Samples {
		q[i] = make([]float32, 0, len(keys[i])*g.n*D)
		for _, k := range keys[i] {
			for j := range g.n {
				q[i] = append(q[i], seen[i][k]...)
				q[i][len(q[i])-D+ta] = float32(g.at(j))
				times[i] = append(times[i], g.at(j))
			}
		}
	}
	return q, times, nil
}

// fileQueries reads the query CSV: a header naming id and the position
// axes as interpolate writes them, in any order, other columns ignored (so
// interpolate's own output, values and all, can be read back; the older
// id,pos1,pos2,... is accepted for one release, with a note), then one row
// per query position.
func fileQueries(ds *data.Dataset, cols columns, path string) (q [][]float32, times [][]float64, err error) {
	f, r, header, byName, err := data.OpenCSV(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	want := append([]string{"id"}, cols.axes...)
	at, err := queryColumns(header, byName, want)
	if err != nil {
		return nil, nil, fmt.Errorf("%s:1: %w", path, err)
	}
	if at == nil { // the legacy header: the columns in order
		fmt.Fprintf(os.Stderr, "romae interpolate: %s: the header %s is deprecated and will be refused in the next release; write %s\n",
			path, strings.Join(header, ","), strings.Join(want, ","))
		at = make([]int, len(want))
		for k := range at {
			at[k] = k
		}
	}
	index := map[string]int{}
	for i, s := range ds.Samples {
		index[s.ID] = i
	}
	q, times = make([][]float32, len(ds.Samples)), make([][]float64, len(ds.Samples))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, data.CSVError(path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, nil, fmt.Errorf("%s:%d: %d fields, the header has %d", path, line, len(rec), len(header))
		}
		i, ok := index[rec[at[0]]]
		if !ok {
			return nil, nil, fmt.Errorf("%s:%d: series %q is not in the data", path, line, rec[at[0]])
		}
		for a := 0; a < ds.D; a++ {
			cell := rec[at[1+a]]
			v, err := cols.parsePosition(a, cell)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %s: %w", path, line, want[1+a], err)
			}
			if a == ds.TimeAxis { // as asked, unrounded: the time map needs it
				t, _ := strconv.ParseFloat(strings.TrimSpace(cell), 64)
				times[i] = append(times[i], t)
			}
			q[i] = append(q[i], v)
		}
	}
	return q, times, nil
}

// queryColumns is where each of want's columns is in header (byName:
// data.CSVHeader's index of it), or nil for the legacy header
// id,pos1,pos2,... whose columns are in order.
func queryColumns(header []string, byName map[string]int, want []string) ([]int, error) {
	at := make([]int, len(want))
	for k, name := range want {
		i, ok := byName[name]
		if !ok {
			if len(header) == len(want) && legacyQueryHeader(header) {
				return nil, nil
			}
			return nil, fmt.Errorf("header %s has no column %q: want %s, the columns interpolate writes (in any order; others, such as its value columns, are ignored)",
				strings.Join(header, ","), name, strings.Join(want, ","))
		}
		at[k] = i
	}
	return at, nil
}

// legacyQueryHeader is the header of earlier versions: id,pos1,pos2,...
// (or pos0, ...).
func legacyQueryHeader(rec []string) bool {
	if rec[0] != "id" {
		return false
	}
	for _, h := range rec[1:] {
		if n, ok := strings.CutPrefix(h, "pos"); !ok || n == "" || strings.Trim(n, "0123456789") != "" {
			return false
		}
	}
	return true
}

func cmdEmbed(_ context.Context, args []string) error {
	fs, u := usingFlags("embed", "embed --model CHECKPOINT --data FILE --out emb.npy [--pool cls|mean]")
	out := fs.String("out", "", "output .npy file, [N, d_model] float32; the sample ids go to the same name with .ids.txt, line i for row i (an id with a line break, or starting with \", double-quoted with Go's escapes)")
	pool := fs.String("pool", "auto", "cls, mean, or auto ([CLS] when the model has it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if err := checkOutput(*out, ".npy"); err != nil {
		return err
	}
	if !slices.Contains([]string{"auto", model.PoolCLS, model.PoolMean}, *pool) {
		return fmt.Errorf("--pool %q: want auto, cls or mean", *pool)
	}
	l, err := u.load(false)
	if err != nil {
		return err
	}
	if *pool == "auto" {
		*pool = model.PoolMean
		if l.m.Cfg.UseCLS {
			*pool = model.PoolCLS
		}
	}
	emb, err := eval.Embed(l.m, l.m.NewWorkspace(), l.ds, *pool, u.batchSize)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", u.model, u.data, err)
	}
	if err := data.SaveNPY(*out, []int{len(l.ds.Samples), l.m.Cfg.Encoder.DModel}, emb); err != nil { // atomic
		return err
	}
	ids := make([]string, len(l.ds.Samples))
	for i, s := range l.ds.Samples {
		ids[i] = idLine(s.ID)
	}
	return writeFileAtomic(strings.TrimSuffix(*out, ".npy")+".ids.txt", []byte(strings.Join(ids, "\n")+"\n"))
}

// idLine is how embed's .ids.txt writes an id, one per line so that line i
// is row i of the .npy: as it is, or, when it holds a line break (a quoted
// CSV field may) or starts with a double quote, as a double-quoted string
// with Go's (and JSON's) escapes, so that it stays on one line.
func idLine(id string) string {
	if strings.ContainsAny(id, "\n\r") || strings.HasPrefix(id, `"`) {
		return strconv.Quote(id)
	}
	return id
}

func cmdInspect(_ context.Context, args []string) error {
	fs := newFlagSet("inspect", "inspect [--data-spec] CHECKPOINT")
	specOnly := fs.Bool("data-spec", false, "print only the data spec (JSON), e.g. to give another checkpoint with --data-spec")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want one checkpoint path")
	}
	m, ck, err := model.Load[float32](fs.Arg(0))
	if err != nil {
		return err
	}
	spec, found, err := data.SpecFromMeta(ck.Meta)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if *specOnly {
		if !found {
			return fmt.Errorf("%s has no data spec (metadata %s)", fs.Arg(0), data.MetaSpec)
		}
		return enc.Encode(spec)
	}
	info := map[string]any{"path": ck.Path, "config": m.Cfg, "parameters": m.NumParams(),
		"encoder_parameters": m.Cfg.Encoder.Params()}
	if k := m.Members(); k > 1 {
		info["ensemble_members"] = k // parameters are per member
	}
	if found {
		info["data"] = spec
	} else {
		info["data"] = "none: this checkpoint does not record how its data was read and scaled; evaluate/predict need --data-spec or --raw"
	}
	meta := map[string]any{}
	for k, v := range ck.Meta {
		if k == data.MetaSpec {
			continue // shown parsed under "data"
		}
		var j any
		if json.Unmarshal([]byte(v), &j) == nil {
			meta[k] = j
		} else {
			meta[k] = v
		}
	}
	info["metadata"] = meta
	return enc.Encode(info)
}

func cmdSizes(_ context.Context, args []string) error {
	fs := newFlagSet("sizes", "sizes [--json]")
	asJSON := fs.Bool("json", false, "one JSON object per size")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range model.SizeNames() {
		s := model.Sizes[name]
		if *asJSON {
			if err := printJSON(map[string]any{"size": name, "d_model": s.DModel, "heads": s.Heads, "depth": s.Depth,
				"ffn": s.FFN, "encoder_params": s.Params()}); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("%-13s d_model %4d  heads %2d  depth %2d  ffn %4d  encoder %.3gM parameters\n", name, s.DModel, s.Heads, s.Depth, s.FFN, float64(s.Params())/1e6)
	}
	return nil
}

func cmdVerifyOfficial(_ context.Context, args []string) error {
	fs := newFlagSet("verify-official", "verify-official --fixture DIR")
	dir := fs.String("fixture", "", "directory with fixture.json, classifier.safetensors and pretrain.safetensors")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--fixture is required")
	}
	rep, err := model.VerifyOfficial[float32](*dir)
	if err != nil {
		return err
	}
	if err := printJSON(rep); err != nil {
		return err
	}
	if rep.ClassifierMaxRelErr > 1e-4 || rep.PretrainMaxRelErr > 1e-4 || rep.LossAbsErr > 1e-4 {
		return fmt.Errorf("outputs differ from the authors' by more than 1e-4")
	}
	return nil
}
