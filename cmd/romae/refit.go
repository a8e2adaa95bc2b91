package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"romae/data"
	"romae/dist"
	"romae/model"
	"romae/train"
)

// holdoutDir is where data.refit's first run (validation split held out)
// goes inside the run directory.
const holdoutDir = "holdout"

// runHoldoutThenRefit is fine-tuning with data.refit: m is trained on tr
// with val held out, in OUT/holdout, whose validation metrics are the honest
// estimate of how the recipe does on unseen series of this file; then a
// model built as m was (same config and seed, the same pre-trained encoder
// pm if any) is trained with the same settings on tr and val together, in
// OUT, and is the run's model (best.safetensors = its last epoch). Both runs
// resume with train.resume.
func (t *trainingRun) runHoldoutThenRefit(ctx context.Context, m, pm *model.Model[float32], tr, val *data.Dataset, spec *data.Spec, meta map[string]string) error {
	cfg := &t.cfg
	comm, logf, err := t.startRuns()
	if err != nil {
		return err
	}
	// The refit's model and data first: a last.safetensors in OUT that the
	// refit could not continue is refused now, not after the hold-out run.
	refit, err := model.New[float32](m.Cfg, cfg.Train.Seed)
	if err == nil && pm != nil {
		err = refit.TransferEncoder(pm)
	}
	all := data.Concat(tr, val)
	if err == nil && cfg.Train.Resume {
		err = (&train.Trainer{Cfg: cfg.Train, Model: refit, Train: all, Data: spec}).CheckResume()
	}
	if err != nil {
		return endRank(comm, err)
	}
	hold := cfg.Train
	hold.Out = filepath.Join(cfg.Train.Out, holdoutDir)
	logf("romae: run 1/2 (hold-out estimate): %s model, %d parameters; %d training samples, %d held out; %s\n",
		m.Cfg.Task, m.NumParams(), len(tr.Samples), len(val.Samples), hold.Out)
	hres, _, err := trainRun(ctx, comm, hold, m, tr, val, spec, meta, nil, nil)
	if err != nil {
		return endRank(comm, fmt.Errorf("hold-out run: %w", err))
	}
	logf("romae: run 2/2 (refit): the same settings on all %d training samples; %s\n", len(all.Samples), cfg.Train.Out)
	holdout := map[string]any{"dir": hold.Out, "validation": hres.Best, "train_samples": len(tr.Samples), "held_out": len(val.Samples)}
	_, out, err := trainRun(ctx, comm, cfg.Train, refit, all, nil, spec, meta, map[string]any{"holdout": holdout}, nil)
	if err != nil {
		return endRank(comm, fmt.Errorf("refit run: %w", err))
	}
	comm.Close()
	if comm.Rank() != 0 {
		return nil
	}
	return printJSON(out)
}

// startRuns begins a command that trains several runs in one directory
// (data.refit, data.folds): it joins the data-parallel job, prints the
// recipe and, on rank 0, clears what --overwrite replaces. logf prints on
// rank 0 only.
func (t *trainingRun) startRuns() (comm dist.Comm, logf func(format string, a ...any), err error) {
	if comm, err = dist.Open(); err != nil {
		return nil, nil, err
	}
	logf = func(format string, a ...any) {
		if comm.Rank() == 0 {
			fmt.Fprintf(os.Stderr, format, a...)
		}
	}
	logf("%s\n", t.r.summary())
	if comm.Rank() == 0 {
		if err := t.removeStaleRun(); err != nil {
			return nil, nil, endRank(comm, err)
		}
	}
	return comm, logf, nil
}
