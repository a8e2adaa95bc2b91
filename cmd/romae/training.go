package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"romae/ckpt"
	"romae/model"
	"romae/train"
)

// trainingRun is a pretrain or finetune command line, parsed and checked:
// every setting is validated, every file it names exists and the run
// directory may be written, all before any data is read.
type trainingRun struct {
	cmd       string // pretrain or finetune
	cfg       runConfig
	r         *recipe
	from      string   // finetune: the pre-trained checkpoint (--model), empty from scratch
	overwrite bool     // --overwrite
	stale     []string // files of an earlier run in train.out, deleted before training starts
}

// Settings that apply to one of the two training commands only, and the
// architecture settings a fine-tuned pre-trained encoder keeps. On the
// command line where they cannot apply they are errors; in a config file
// (one file may serve both commands) they are ignored, except
// architecture settings that contradict the pre-trained model.
var (
	pretrainOnly = []string{"model.decoder_size", "model.query_attention", "model.normalize_targets", "train.mask_ratio"}
	finetuneOnly = []string{"model.task", "model.pool", "model.head_dropout", "train.label_smoothing", "train.class_weights",
		"train.augment_drop", "train.augment_jitter", "train.augment_scale", "train.augment_warp", "train.augment_shift", "data.folds", "data.refit"}
	architecture = []string{"model.size", "model.pos_encoding", "model.p_rope", "model.rope_base", "model.use_cls", "model.rmsnorm_eps"}
)

// runFiles are the files a training run writes into its directory (the
// report command adds report.html).
var runFiles = []string{train.LastFile, train.BestFile, train.MetricsFile, "result.json", "curves.png", "report.html"}

func parseTraining(cmd, synopsis string, args []string) (*trainingRun, error) {
	t := &trainingRun{cmd: cmd, cfg: defaultRunConfig()}
	fs := newFlagSet(cmd, synopsis)
	if cmd == "finetune" {
		fs.StringVar(&t.from, "model", "", "pre-trained checkpoint to start from: a romae run directory or .safetensors file, or an authors' checkpoint directory (empty: train from scratch)")
		deprecate(fs, "from", "model")
	}
	fs.BoolVar(&t.overwrite, "overwrite", false, "replace the run already in train.out (its checkpoints, metrics and plots are deleted when training starts); without it or train.resume such a directory is refused")
	fromFile, err := parseRunConfig(fs, &t.cfg, args)
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the data file is --data FILE)", fs.Arg(0))
	}
	t.r = &recipe{set: explicitSettings(fs, fromFile)}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[canonical(f.Name)] = true })
	if err := t.checkApplicable(given); err != nil {
		return nil, err
	}
	if err := t.checkSettings(); err != nil {
		return nil, err
	}
	if err := t.checkRunDir(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkApplicable refuses command-line settings that cannot apply to this
// command.
func (t *trainingRun) checkApplicable(given map[string]bool) error {
	other, forbidden := "finetune", finetuneOnly
	if t.cmd == "finetune" {
		other, forbidden = "pretrain", pretrainOnly
	}
	for _, k := range forbidden {
		if given[k] {
			return fmt.Errorf("--%s applies to %s, not %s", k, other, t.cmd)
		}
	}
	if t.from == "" {
		return nil
	}
	for k := range given {
		if slices.Contains(architecture, k) || strings.HasPrefix(k, "model.siren.") {
			return fmt.Errorf("--%s cannot apply with --model %s: fine-tuning keeps the pre-trained encoder's architecture; drop --%s, or leave out --model to train from scratch", k, t.from, k)
		}
	}
	return nil
}

// checkSettings validates every setting and checks that the files named
// exist, without reading them.
func (t *trainingRun) checkSettings() error {
	c := &t.cfg
	if err := c.Train.Validate(); err != nil {
		return err
	}
	if err := c.Model.check(); err != nil {
		return err
	}
	if !(c.Data.ValFraction >= 0 && c.Data.ValFraction < 1) {
		return fmt.Errorf("data.val_fraction = %v: want 0 ≤ f < 1", c.Data.ValFraction)
	}
	if c.Data.FoldJobs < 0 {
		return fmt.Errorf("data.fold_jobs = %d: want 0 (as many as the cores allow) or more", c.Data.FoldJobs)
	}
	switch f := c.Data.Folds; {
	case f < 0 || f > maxFolds:
		return fmt.Errorf("data.folds = %d: want 0 or 1 (none) or 2 to %d", f, maxFolds)
	case f > 1 && c.Data.Val != "":
		return fmt.Errorf("data.folds %d and data.val %s: folds are held out of the training file; give one or the other", f, c.Data.Val)
	case f > 1 && c.Data.ValFraction > 0:
		return fmt.Errorf("data.folds %d and data.val_fraction %v: each fold is a validation split already; give one or the other", f, c.Data.ValFraction)
	case f > 1 && c.Data.Refit:
		return fmt.Errorf("data.folds %d and data.refit: the fold models are the model (an ensemble); give one or the other", f)
	}
	if c.Data.Train == "" {
		return fmt.Errorf("data.train is required (e.g. --data BasicMotions_TRAIN.ts)")
	}
	if err := c.Data.Source.Check(c.Data.Train); err != nil {
		return err
	}
	for _, f := range []struct{ setting, path string }{{"data.train", c.Data.Train}, {"data.val", c.Data.Val},
		{"data.labels_file", c.Data.LabelsFile}, {"model", t.from}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("--%s: %w", f.setting, err)
		}
	}
	return nil
}

// check validates the model settings that do not depend on the data
// (position axes and values per token are checked once it is read).
func (s *modelSection) check() error {
	probe := *s
	probe.Siren.Axes, probe.Siren.TimeAxis = nil, -1 // chosen from the data's position axes
	if _, err := probe.modelConfig(model.TaskPretrain, 2, 1, 0); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if !slices.Contains([]string{"auto", model.TaskClassify, model.TaskRegress}, s.Task) {
		return fmt.Errorf("model.task %q: want auto, classify or regress", s.Task)
	}
	if !slices.Contains([]string{"auto", model.PoolCLS, model.PoolMean, model.PoolMax, model.PoolMeanMax, poolMixed, model.PoolToken}, s.Pool) {
		return fmt.Errorf("model.pool %q: want auto, cls, mean, max, meanmax, mixed or token", s.Pool)
	}
	return nil
}

// checkRunDir refuses a run directory that holds a run, unless the run is
// resumed or --overwrite replaces it.
func (t *trainingRun) checkRunDir() error {
	out := t.cfg.Train.Out
	if t.cfg.Train.Resume {
		if t.overwrite {
			return fmt.Errorf("--overwrite and --train.resume contradict each other: resume the run in %s, or replace it", out)
		}
		return nil
	}
	var found []string
	for _, f := range runFiles {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			found = append(found, f)
		}
	}
	// The sub-runs of data.refit and data.folds.
	for _, d := range subRunDirs(out) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			found = append(found, filepath.Base(d)+"/")
		}
	}
	if len(found) == 0 {
		return nil
	}
	if !t.overwrite {
		return fmt.Errorf("train.out %s already holds a run (%s): give --train.resume to continue it, --overwrite to replace it, or another --out",
			out, strings.Join(found, ", "))
	}
	t.stale = found
	return nil
}

// subRunDirs are the directories data.folds and data.refit may have
// written their runs into under out (which need not exist).
func subRunDirs(out string) []string {
	folds, _ := filepath.Glob(filepath.Join(out, "fold-*"))
	return append(folds, filepath.Join(out, holdoutDir))
}

// removeStaleRun deletes the files of the run --overwrite replaces, so that
// none of them (a best.safetensors of another run) is mistaken for this
// run's.
// It also deletes the temporary files of checkpoint writes that a killed
// run left, in the run directory and its sub-runs' (resumed or not).
func (t *trainingRun) removeStaleRun() error {
	out := t.cfg.Train.Out
	for _, f := range t.stale {
		if err := os.RemoveAll(filepath.Join(out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--overwrite: %w", err)
		}
	}
	for _, d := range append(subRunDirs(out), out) {
		if err := ckpt.RemoveTemps(d); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// sameArchitecture checks the config file's architecture settings against
// the pre-trained model's, which fine-tuning keeps: one that differs is an
// error rather than silently ignored.
func (t *trainingRun) sameArchitecture(pc model.Config) error {
	m := &t.cfg.Model
	size, err := model.ParseSize(m.Size)
	if err != nil {
		return fmt.Errorf("model.size: %w", err)
	}
	for _, d := range []struct {
		key       string
		same      bool
		set, have any
	}{
		{"model.size", size == pc.Encoder, m.Size, fmt.Sprintf("%d,%d,%d,%d", pc.Encoder.DModel, pc.Encoder.Heads, pc.Encoder.Depth, pc.Encoder.FFN)},
		{"model.pos_encoding", m.PosEncoding == pc.PosEncoding, m.PosEncoding, pc.PosEncoding},
		{"model.p_rope", m.P == pc.P, m.P, pc.P},
		{"model.rope_base", m.RoPEBase == pc.RoPEBase, m.RoPEBase, pc.RoPEBase},
		{"model.use_cls", m.UseCLS == pc.UseCLS, m.UseCLS, pc.UseCLS},
		{"model.rmsnorm_eps", m.NormEps == pc.NormEps, m.NormEps, pc.NormEps},
	} {
		if t.r.set[d.key] && !d.same {
			return fmt.Errorf("%s %v in the config file differs from the pre-trained model's %v (%s): fine-tuning keeps the pre-trained encoder; remove it, or leave out --model to train from scratch",
				d.key, d.set, d.have, t.from)
		}
	}
	return nil
}
