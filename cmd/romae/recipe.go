package main

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"romae/data"
	"romae/model"
	"romae/train"
)

// The default recipe. Settings the user did not give — by flag or in the
// config file — are chosen from the training data, so that a first run on
// a small irregular dataset learns instead of sitting at chance:
//
//   - data.series_patch: when the median series has more than maxTokens
//     observations per channel, series are cut into patches of P
//     consecutive observations, P chosen so the series at the lower
//     quartile of length has about targetTokens tokens (a token then carries a
//     local shape, not a single number: on GunPoint one token per step
//     reached 0.69 accuracy from scratch, 8 steps per token 0.89), and
//     larger when the longest sample would otherwise have more than
//     maxSeqTokens tokens (memory and time grow with their square);
//   - train.augment_shift whenever series are patched: each step draws
//     every series with its patch grid moved by 0..P−1 observations
//     (fold ensembles: ArrowHead 0.705 → 0.819, GunPoint 0.962 → 0.982;
//     docs/defaults.md);
//   - model.size (training from scratch): the smallest preset
//     (tiny-shallow) unless the data are large, since a 4.7M-parameter
//     encoder fitted to a few hundred series memorises them;
//   - train.batch_size ≈ N/8 within [8, 64], so small sets still get
//     several steps per epoch;
//   - train.epochs: enough for about train.RecipeSteps optimiser steps
//     (train.RecipeEpochs: at least 20 passes, at most 500);
//   - train.lr 1e-3 from scratch and for pre-training, 5e-4 when
//     fine-tuning a pre-trained encoder; warm-up 10% of the steps, which
//     shortens the plateau at ln K a cold start shows with 5%;
//   - model.pool mean from scratch (every token gets gradient from the
//     start; [CLS] pooling is what a pre-trained [CLS] is for);
//   - train.augment_*: every step hides 10% of each series' tokens at
//     random, adds noise of σ 0.05 and, for classifiers, scales each series
//     by 1 + 0.1·N(0,1) (GunPoint from scratch: 0.927 without, 0.98 with,
//     one seed; a regression target may depend on the scale); the
//     time stretch train.augment_warp is not chosen (docs/defaults.md:
//     it helped single models and hurt the fold ensembles);
//   - data.val_fraction 0.2: a stratified validation split of the
//     training data (never the test set); train.select per
//     train.SelectFor: the epoch with the lowest validation loss with at
//     least 50 validation series, else the last epoch of the cosine
//     schedule (selection on a handful of series picks noise; measured in
//     SelectFor's comment).
const (
	maxTokens    = 48
	targetTokens = 24
	maxSeqTokens = 512 // tokens of the longest sample (seriesPatchFor)
	maxFolds     = 20  // data.folds
	evalPoints   = 50  // validation points per run when they only draw curves
)

// explicitSettings is the set of dotted setting names ("train.lr") the user
// gave: by flag (an alias counts as the setting it stands for) or in the
// config file (fromFile).
func explicitSettings(fs *flag.FlagSet, fromFile map[string]bool) map[string]bool {
	set := maps.Clone(fromFile)
	if set == nil {
		set = map[string]bool{}
	}
	fs.Visit(func(f *flag.Flag) { set[canonical(f.Name)] = true })
	return set
}

// recipe records the choices made for the settings the user left open.
type recipe struct {
	set    map[string]bool
	chosen []string
}

// choose sets *dst to v unless the user gave key, and records the choice.
func choose[T any](r *recipe, key string, dst *T, v T) {
	if r.set[key] {
		return
	}
	*dst = v
	r.chosen = append(r.chosen, fmt.Sprintf("%s=%v", key, v))
}

// summary is the one line printed before training.
func (r *recipe) summary() string {
	if len(r.chosen) == 0 {
		return "romae: recipe: every setting given"
	}
	return "romae: recipe chosen from the data (flags override): " + strings.Join(r.chosen, " ")
}

// seriesPatchFor is P for raw series data: 1 when the median series has
// at most maxTokens observations per channel, else P so that the series at
// the lower quartile of length gets about targetTokens tokens (P ≥ 2, at
// most 32 observations each), and in any case at least what cuts the
// longest sample into about maxSeqTokens tokens (past 16 384 observations
// of all its channels). For equal lengths that is the median series;
// when lengths vary it keeps the short series from being cut into a handful
// of tokens (PickupGestureWiimoteZ, 29–361 steps: P 6 from the median, 4
// from the quartile; fold ensembles 0.800 → 0.82, docs/defaults.md).
// Images and patched data are left alone.
func seriesPatchFor(ds *data.Dataset) int {
	if len(ds.Samples) == 0 {
		return 1
	}
	lens := make([]int, len(ds.Samples))
	longest := 0 // observations of the longest sample, all channels
	for i := range ds.Samples {
		s := &ds.Samples[i]
		longest = max(longest, s.Len(ds.C))
		channels := map[string]bool{}
		for t := 0; t < s.Len(ds.C); t++ {
			key := make([]float32, 0, ds.D-1)
			for k := 0; k < ds.D; k++ {
				if k != ds.TimeAxis {
					key = append(key, s.Positions[t*ds.D+k])
				}
			}
			channels[fmt.Sprint(key)] = true
		}
		lens[i] = s.Len(ds.C) / max(len(channels), 1)
	}
	sort.Ints(lens)
	P := 1
	if lens[len(lens)/2] > maxTokens {
		quartile := lens[len(lens)/4]
		P = min(max(int(math.Round(float64(quartile)/targetTokens)), 2), 32)
	}
	// However long the series, the longest sample keeps about maxSeqTokens
	// tokens (all its channels together): a step's memory and time grow
	// with the square of a sample's tokens (batches of 8 series of
	// 200 000 steps at P 32 needed over 23 GiB; at P 391 the run peaked at
	// 1.4 GiB: docs/defaults.md).
	return max(P, (longest+maxSeqTokens-1)/maxSeqTokens)
}

// applyLabelRecipe has fine-tuning read a long CSV's column named "label"
// as the class labels when no labels or targets are named (as a column
// named "channel" is the channel), or else its column named "target" as a
// regression target (unless model.task classify says otherwise): a file
// with its labels or targets in place fine-tunes with no flag.
func (r *recipe) applyLabelRecipe(cfg *runConfig) {
	src := cfg.Data.Source
	if src.LabelColumn != "" || src.LabelsFile != "" || len(src.TargetColumns) > 0 || r.set["data.label_column"] || r.set["data.target_columns"] {
		return
	}
	if f, err := src.FormatOf(cfg.Data.Train); err != nil || f != "csv" {
		return
	}
	cols, err := data.CSVColumns(cfg.Data.Train)
	switch {
	case err != nil:
	case slices.Contains(cols, "label"):
		choose(r, "data.label_column", &cfg.Data.LabelColumn, "label")
	case slices.Contains(cols, "target") && cfg.Model.Task != model.TaskClassify:
		choose(r, "data.target_columns", &cfg.Data.TargetColumns, []string{"target"})
	}
}

// applyBaseTime keeps the pre-trained model's time axis when fine-tuning
// one: its encoder learnt positions in those units.
func (r *recipe) applyBaseTime(cfg *runConfig, base *data.Spec) {
	if base == nil {
		return
	}
	if base.Source.TimeOrigin != "" {
		choose(r, "data.time_origin", &cfg.Data.TimeOrigin, base.Source.TimeOrigin)
	}
	if base.Source.TimeUnit != 0 {
		choose(r, "data.time_unit", &cfg.Data.TimeUnit, base.Source.TimeUnit)
	}
	// Its channel axis too: a band keeps the index the encoder learnt it at.
	if len(base.Source.Channels) > 0 && !r.set["data.channels"] {
		cfg.Data.Channels = base.Source.Channels
	}
}

// applyTimeRecipe puts the time stamps of a file that has them (CSV, .ts
// with @timeStamps) on the scale of step indices: each series' time axis
// starts at 0 at its first time stamp (data.time_origin series; raw was
// read that way) and one position unit is the median spacing of
// consecutive time stamps (data.time_unit, applied to raw here). The same
// series in milliseconds, in Unix seconds or in MJD days then reach the
// model as they would as step indices: GunPoint as a CSV with one step per
// minute in MJD scored 0.70 with the times as read, 0.987 as steps
// (docs/defaults.md, "Time stamps"). Files of step indices are left alone.
func (r *recipe) applyTimeRecipe(cfg *runConfig, raw *data.Dataset, base *data.Spec) {
	if base != nil || !raw.TimeStamps {
		return
	}
	choose(r, "data.time_origin", &cfg.Data.TimeOrigin, data.TimeOriginSeries)
	if r.set["data.time_unit"] || cfg.Data.TimeOrigin != data.TimeOriginSeries {
		return // the user's unit (applied by the loader), or times as the user asked
	}
	// Six digits: a unit the recipe line prints as the spec stores it.
	u, _ := strconv.ParseFloat(strconv.FormatFloat(data.MedianSpacing(raw), 'g', 6, 64), 64)
	if u == 1 || u < 0x1p-126 {
		return // nothing to do, or no spacing (0) or one below float32's normal range: as read
	}
	choose(r, "data.time_unit", &cfg.Data.TimeUnit, u)
	data.Rescale(raw, cfg.Data.TimeUnit)
}

// maxScaleRatio is how far apart (90th over 10th percentile) the series'
// own stds may be before one mean and std per value is judged unable to
// serve them all: on generated light curves whose brightness spans 3
// decades (a ratio of 188) every fold model stayed at chance (test 0.375),
// and the same curves standardised series by series in the file scored
// 0.900; BasicMotions by sensor axis (a ratio of 57: the activities move
// the sensors by different amounts) scores 1.0 as it is
// (docs/defaults.md, "Series on scales orders of magnitude apart").
const maxScaleRatio = 100

// applyScaleRecipe standardises each series on its own
// (data.normalize_series) when fine-tuning from scratch on series whose
// own stds are over maxScaleRatio apart, or keeps the fine-tuned base
// model's choice; for such data it cannot or may not change (pre-training,
// a base model without it, the user's no) it warns, saying what to do.
func (r *recipe) applyScaleRecipe(cfg *runConfig, raw *data.Dataset, base *data.Spec, pretrain bool) {
	if base != nil && base.Source.NormalizeSeries {
		choose(r, "data.normalize_series", &cfg.Data.NormalizeSeries, true)
	}
	if !cfg.Data.Normalize || cfg.Data.NormalizeSeries {
		return
	}
	sp, ok := data.SeriesScaleSpread(raw)
	if !ok || !(sp.Ratio() > maxScaleRatio) {
		return
	}
	if !pretrain && base == nil && !r.set["data.normalize_series"] {
		choose(r, "data.normalize_series", &cfg.Data.NormalizeSeries, true)
		return
	}
	where := "value slot " + strconv.Itoa(sp.Slot)
	if sp.Slot < len(raw.ValueNames) {
		where = raw.ValueNames[sp.Slot]
	}
	if sp.Channel >= 0 {
		ch := strconv.Itoa(sp.Channel)
		if sp.Channel < len(raw.Channels) {
			ch = raw.Channels[sp.Channel]
		}
		where += " in channel " + ch
	}
	fmt.Fprintf(os.Stderr, "romae: warning: %s: its series' spreads of %s are %.1f decades apart (std %.3g at the 10th percentile, %.3g at the 90th, over %d series): "+
		"standardised with one mean and std, the series at the low end reach the model as near-constants. Unless their levels matter, "+
		"fine-tune from scratch with --data.normalize_series (each series standardised on its own), or standardise each series in the file first; docs/defaults.md, \"Series on scales orders of magnitude apart\"\n",
		cfg.Data.Train, where, math.Log10(sp.Ratio()), sp.Low, sp.High, sp.Series)
}

// applyDataRecipe chooses data.series_patch and data.val_fraction from the
// raw training data (before patching); base is the pre-trained model's spec
// when fine-tuning, whose patching must be kept. Pre-training keeps one
// token per observation unless told otherwise: its decoder answers
// interpolation queries at single times.
func (r *recipe) applyDataRecipe(cfg *runConfig, raw *data.Dataset, base *data.Spec, pretrain bool) {
	switch {
	case base != nil:
		choose(r, "data.series_patch", &cfg.Data.SeriesPatch, max(base.Source.SeriesPatch, 1))
	case !pretrain && cfg.Data.Patch == [2]int{} && !raw.TargetPerToken:
		// (Per-token targets cannot be grouped into patches.)
		choose(r, "data.series_patch", &cfg.Data.SeriesPatch, seriesPatchFor(raw))
	}
	if !pretrain && raw.TargetPerToken {
		choose(r, "model.pool", &cfg.Model.Pool, model.PoolToken)
	}
	if !pretrain && cfg.Data.SeriesPatch > 1 {
		choose(r, "train.augment_shift", &cfg.Train.AugmentShift, true)
	}
	if k := train.RecipeFolds(len(raw.Samples)); k > 1 && cfg.Data.Val == "" && !pretrain && !r.set["data.val_fraction"] && !r.set["data.refit"] {
		choose(r, "data.folds", &cfg.Data.Folds, k)
	}
	if cfg.Data.Val == "" && cfg.Data.Folds <= 1 {
		choose(r, "data.val_fraction", &cfg.Data.ValFraction, 0.2)
	}
}

// applyRefitRecipe turns on data.refit when fine-tuning holds out a split
// of the training file that is too small to select an epoch on (fewer than
// train.MinSelectVal series): the last epoch is kept anyway, so the held-out
// series are better spent on training once they have given their estimate.
func (r *recipe) applyRefitRecipe(cfg *runConfig, nVal int) {
	if cfg.Data.Val == "" && nVal > 0 && nVal < train.MinSelectVal && cfg.Train.Select == "last" {
		choose(r, "data.refit", &cfg.Data.Refit, true)
	}
}

// applyTrainRecipe chooses the model and optimisation settings for n
// training samples. task is the model's task; fromScratch is false when a
// pre-trained encoder is fine-tuned.
func (r *recipe) applyTrainRecipe(cfg *runConfig, n, nVal int, task string, fromScratch bool) {
	if fromScratch {
		size := "tiny-shallow"
		if n > 20000 {
			size = "tiny"
		}
		choose(r, "model.size", &cfg.Model.Size, size)
	}
	if task != model.TaskPretrain && fromScratch && cfg.Model.Pool != model.PoolToken {
		// A classifier's fold models alternate mean and meanmax pooling
		// (foldConfig): the ensemble keeps most of the mean's accuracy
		// where it is the better pool and does not sit at chance where
		// the class is one brief event (docs/defaults.md, "Fold models
		// that alternate the pool").
		pool := model.PoolMean
		if task == model.TaskClassify && cfg.Data.Folds > 1 {
			pool = poolMixed
		}
		choose(r, "model.pool", &cfg.Model.Pool, pool)
	}
	bs := train.RecipeBatch(n)
	choose(r, "train.batch_size", &cfg.Train.BatchSize, bs)
	if r.set["train.batch_size"] {
		bs = max(cfg.Train.BatchSize, 1) // a bad value is reported by validation
	}
	choose(r, "train.epochs", &cfg.Train.Epochs, train.RecipeEpochs(n, bs, train.RecipeSteps))
	lr := 1e-3
	if !fromScratch {
		lr = 5e-4
	}
	choose(r, "train.optimizer", &cfg.Train.Optimizer, "adamw")
	choose(r, "train.lr", &cfg.Train.LR, lr)
	choose(r, "train.warmup_frac", &cfg.Train.WarmupFrac, 0.1)
	if nVal > 0 {
		choose(r, "train.select", &cfg.Train.Select, train.SelectFor(nVal))
		if cfg.Train.Select == "last" && cfg.Train.Epochs > evalPoints {
			// Validation then only draws the curves (the last epoch is kept
			// and always evaluated): evalPoints points are enough, and
			// evaluating after every epoch of a few steps cost a quarter of
			// the run.
			choose(r, "train.eval_every", &cfg.Train.EvalEvery, cfg.Train.Epochs/evalPoints)
		}
	}
	if task == model.TaskClassify {
		choose(r, "train.label_smoothing", &cfg.Train.LabelSmoothing, 0.1)
	}
	if task != model.TaskPretrain {
		choose(r, "train.ema", &cfg.Train.EMA, 0.99)
	}
	if task != model.TaskPretrain && cfg.Model.Pool != model.PoolToken {
		choose(r, "train.augment_drop", &cfg.Train.AugmentDrop, 0.1)
		choose(r, "train.augment_jitter", &cfg.Train.AugmentJitter, 0.05)
		if task == model.TaskClassify {
			// Rescaling a series keeps its class (a shape) but not a
			// regression target that depends on its size: an amplitude, a
			// trend, a level (docs/defaults.md, "Regression").
			choose(r, "train.augment_scale", &cfg.Train.AugmentScale, 0.1)
		}
	}
	if task != model.TaskPretrain {
		for _, d := range []struct {
			key string
			dst *float64
		}{{"model.attn_dropout", &cfg.Model.AttnDropout}, {"model.hidden_dropout", &cfg.Model.HiddenDropout}, {"model.head_dropout", &cfg.Model.HeadDropout}} {
			choose(r, d.key, d.dst, 0.1)
		}
	}
}
