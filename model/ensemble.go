package model

import (
	"fmt"
	"reflect"
	"strconv"

	"romae/ckpt"
	"romae/data"
	"romae/tensor"
)

// An ensemble is K task models of one configuration whose outputs are
// averaged: logits for a classifier (the normalised geometric mean of the
// members' class probabilities), predictions for a regressor. On a few
// dozen training series the accuracy of one trained Transformer varies by
// several points with its seed; the average of K of them varies less and is
// better on average (data.folds, docs/defaults.md). It is one *Model: the
// first member's weights are the model's own, and everything that applies a
// trained model — evaluate, predict, serve — calls ForwardTask, which runs
// every member. Embed and Interpolate use the first member. An ensemble is
// for inference: it is not trained as one.
const (
	metaEnsemble  = "romae.ensemble" // number of members, when more than one
	maxEnsemble   = 64
	memberTensors = "ensemble.member%d." // prefix of member k's tensors (k ≥ 1)
)

// NewEnsemble combines trained task models of the same configuration into
// one whose outputs are their average. The members' weights are shared,
// not copied.
func NewEnsemble[T tensor.Float](members []*Model[T]) (*Model[T], error) {
	if len(members) == 0 || len(members) > maxEnsemble {
		return nil, fmt.Errorf("an ensemble needs 1 to %d members, not %d", maxEnsemble, len(members))
	}
	first := members[0]
	if first.Cfg.Task == TaskPretrain {
		return nil, fmt.Errorf("an ensemble averages task outputs; a pre-training model cannot be a member")
	}
	for k, m := range members[1:] {
		if !reflect.DeepEqual(m.Cfg, first.Cfg) || len(m.others) > 0 {
			return nil, fmt.Errorf("ensemble member %d differs from member 0 in its configuration (or is an ensemble itself)", k+1)
		}
	}
	e := *first
	e.others = members[1:]
	return &e, nil
}

// Members is the number of models whose outputs m averages (1 for a
// single model).
func (m *Model[T]) Members() int { return 1 + len(m.others) }

// ensembleForward adds the other members' outputs for bt to the first
// member's in ws and divides by the number of members, then recomputes the
// loss on the average.
func (m *Model[T]) ensembleForward(ws *Workspace[T], bt *data.Batch, opt LossOptions) (float64, error) {
	for len(ws.others) < len(m.others) {
		ws.others = append(ws.others, &Workspace[T]{})
	}
	y := ws.head.y
	for k, o := range m.others {
		if _, err := o.ForwardTask(ws.others[k], bt, opt, false, nil); err != nil {
			return 0, err
		}
		for i, v := range ws.others[k].head.y {
			y[i] += v
		}
	}
	inv := 1 / T(m.Members())
	for i := range y {
		y[i] *= inv
	}
	return m.taskLoss(ws, bt, opt)
}

// ensembleSize reads the member count of a checkpoint's metadata (1 when
// absent).
func ensembleSize(meta map[string]string, path string) (int, error) {
	s, ok := meta[metaEnsemble]
	if !ok {
		return 1, nil
	}
	k, err := strconv.Atoi(s)
	if err != nil || k < 2 || k > maxEnsemble {
		return 0, fmt.Errorf("%s: metadata %s = %q: want a member count from 2 to %d", path, metaEnsemble, s, maxEnsemble)
	}
	return k, nil
}

// loadEnsemble reads the other members of an ensemble checkpoint into
// models built like first.
func (first *Model[T]) loadEnsemble(f *ckpt.File, path string, k int) error {
	for j := 1; j < k; j++ {
		o, err := New[T](first.Cfg, 0)
		if err != nil {
			return err
		}
		prefix := fmt.Sprintf(memberTensors, j)
		if err := o.loadTensorsPrefixed(f, path, prefix); err != nil {
			return err
		}
		first.others = append(first.others, o)
	}
	return nil
}
