package model

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"romae/ckpt"
	"romae/data"
	"romae/tensor"
)

// An ensemble is K task models of one configuration, but for the pooling
// of their heads (model.pool mixed: fold models alternate mean and
// meanmax), whose outputs are averaged: logits for a classifier (the
// normalised geometric mean of the members' class probabilities),
// predictions for a regressor. On a few
// dozen training series the accuracy of one trained Transformer varies by
// several points with its seed; the average of K of them varies less and is
// better on average (data.folds, docs/defaults.md). It is one *Model: the
// first member's weights are the model's own, and everything that applies a
// trained model — evaluate, predict, serve — calls ForwardTask, which runs
// every member. Embed and Interpolate use the first member. An ensemble is
// for inference: it is not trained as one.
const (
	metaEnsemble  = "romae.ensemble"       // number of members, when more than one
	metaPools     = "romae.ensemble.pools" // each member's Pool, comma-separated, when they differ
	maxEnsemble   = 64
	memberTensors = "ensemble.member%d." // prefix of member k's tensors (k ≥ 1)
)

// NewEnsemble combines trained task models of the same configuration
// (their heads may pool differently) into one whose outputs are their
// average. The members' weights are shared, not copied.
func NewEnsemble[T tensor.Float](members []*Model[T]) (*Model[T], error) {
	if len(members) == 0 || len(members) > maxEnsemble {
		return nil, fmt.Errorf("an ensemble needs 1 to %d members, not %d", maxEnsemble, len(members))
	}
	first := members[0]
	if first.Cfg.Task == TaskPretrain {
		return nil, fmt.Errorf("an ensemble averages task outputs; a pre-training model cannot be a member")
	}
	for k, m := range members[1:] {
		c := m.Cfg
		c.Pool = first.Cfg.Pool
		if !reflect.DeepEqual(c, first.Cfg) || len(m.others) > 0 {
			return nil, fmt.Errorf("ensemble member %d differs from member 0 in its configuration (or is an ensemble itself)", k+1)
		}
		if (m.Cfg.Pool == PoolToken) != (first.Cfg.Pool == PoolToken) {
			return nil, fmt.Errorf("ensemble member %d pools %s and member 0 %s: per-token and per-series outputs cannot be averaged", k+1, m.Cfg.Pool, first.Cfg.Pool)
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

// pools is each member's Pool when they differ (metaPools), "" when
// they do not: metadata for Save.
func (m *Model[T]) pools() string {
	ps, differ := []string{m.Cfg.Pool}, false
	for _, o := range m.others {
		ps = append(ps, o.Cfg.Pool)
		differ = differ || o.Cfg.Pool != m.Cfg.Pool
	}
	if !differ {
		return ""
	}
	return strings.Join(ps, ",")
}

// memberPools reads metaPools for an ensemble of k members whose first
// pools first (nil when absent: every member pools as the first).
func memberPools(meta map[string]string, path string, k int, first string) ([]string, error) {
	s, ok := meta[metaPools]
	if !ok {
		return nil, nil
	}
	ps := strings.Split(s, ",")
	if len(ps) != k || ps[0] != first {
		return nil, fmt.Errorf("%s: metadata %s = %q: want %d comma-separated pools, the first %q (the configuration's)", path, metaPools, s, k, first)
	}
	return ps, nil
}

// loadEnsemble reads the other members of an ensemble checkpoint into
// models built like first, each with its own pool when pools is set.
func (first *Model[T]) loadEnsemble(f *ckpt.File, path string, k int, pools []string) error {
	for j := 1; j < k; j++ {
		cfg := first.Cfg
		if pools != nil {
			cfg.Pool = pools[j]
		}
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("%s: ensemble member %d: %w", path, j, err)
		}
		o, err := New[T](cfg, 0)
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
