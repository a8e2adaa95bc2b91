package train

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"romae/data"
	"romae/dist"
	"romae/eval"
	"romae/model"
	"romae/optim"
)

// Data parallelism. Every rank holds the whole training set and builds
// the same global batch each step — the same shuffle, augmentation and
// masks, all functions of (seed, epoch, step) — then computes the
// forward and backward passes on its own contiguous rows of it
// (dist.Split). Each rank's gradient is scaled by its share of the global
// loss's denominator (masked values, samples or tokens; class weights
// included) so that the allreduced sum is the gradient of the global
// batch's loss, and every rank takes the same optimiser step. With no
// dropout an N-rank run follows the one-process run with the same
// train.batch_size up to float32 summation order; with dropout, ranks
// other than 0 draw their own dropout masks.

// parallel is one rank's side of a data-parallel run (size 1: a plain run).
type parallel struct {
	comm       dist.Comm
	rank, size int
	sub        data.Batch // view of this rank's rows of the global batch
	flags      [3]float64 // per-step reduction: loss, ranks failed, ranks stopping
	// Seconds per step in the flags' reduction, which waits for the
	// slowest rank, and in the gradient allreduce that follows it, when
	// the ranks are in step: the transfer itself.
	waitTimes, gradTimes []float64
	valWeight            float64 // this rank's validation shard's loss weight (see evaluate)
}

// errStop reports that some rank was interrupted: all stop together.
var errStop = errors.New("stop requested")

func newParallel(c dist.Comm) *parallel {
	if c == nil {
		c = dist.Local{}
	}
	return &parallel{comm: c, rank: c.Rank(), size: c.Size()}
}

func (p *parallel) distributed() bool { return p.size > 1 }

// goldenGamma spreads ranks' dropout seeds apart.
const goldenGamma = 0x9e3779b97f4a7c15

// forwardBackward computes the global batch bt's loss and leaves its
// gradient in m.G on every rank. mask is bt's pre-training mask; rng is
// the step's generator, already past the mask draws (rank 0 continues
// it for dropout, as a one-process run does). stopping says this rank
// was interrupted; if any rank was, every rank returns errStop before
// the gradients are exchanged.
func (p *parallel) forwardBackward(m *model.Model[float32], ws *model.Workspace[float32], bt *data.Batch, mask []bool,
	lossOpt model.LossOptions, rng rand.Source, seed uint64, step int, stopping bool) (float64, error) {
	if !p.distributed() {
		return localForwardBackward(m, ws, bt, mask, lossOpt, rng)
	}
	lo, hi := dist.Split(bt.B, p.rank, p.size)
	var total, mine float64
	for r := range p.size {
		a, b := dist.Split(bt.B, r, p.size)
		w := lossWeight(m, bt, mask, lossOpt, a, b)
		total += w
		if r == p.rank {
			mine = w
		}
	}
	var loss float64
	var err error
	if hi > lo && !stopping {
		sub := p.subBatch(bt, lo, hi)
		var subMask []bool
		if mask != nil {
			subMask = mask[lo*bt.L : hi*bt.L]
		}
		if p.rank != 0 {
			rng = rand.NewPCG(seed+uint64(p.rank)*goldenGamma, 1<<40+uint64(step))
		}
		loss, err = localForwardBackward(m, ws, sub, subMask, lossOpt, rng)
	}
	share := 0.0
	if total > 0 {
		share = mine / total
	}
	p.flags = [3]float64{loss * share, 0, 0}
	if err != nil {
		p.flags[1] = 1
	}
	if stopping {
		p.flags[2] = 1
	}
	start := time.Now()
	if rerr := p.comm.AllreduceSum64(p.flags[:]); rerr != nil {
		return 0, errors.Join(err, rerr)
	}
	p.waitTimes = append(p.waitTimes, time.Since(start).Seconds())
	switch {
	case err != nil:
		return 0, fmt.Errorf("rank %d of %d: %w", p.rank, p.size, err)
	case p.flags[1] > 0:
		return 0, dist.Agreed(fmt.Errorf("step %d: %v other rank(s) failed (their messages name the error)", step, p.flags[1]))
	case p.flags[2] > 0:
		return 0, errStop
	}
	if share != 1 {
		s := float32(share)
		for i := range m.G {
			m.G[i] *= s
		}
	}
	start = time.Now()
	if err := p.comm.AllreduceSum32(m.G); err != nil {
		return 0, err
	}
	p.gradTimes = append(p.gradTimes, time.Since(start).Seconds())
	return p.flags[0], nil
}

func localForwardBackward(m *model.Model[float32], ws *model.Workspace[float32], bt *data.Batch, mask []bool,
	lossOpt model.LossOptions, rng rand.Source) (float64, error) {
	if m.Cfg.Task == model.TaskPretrain {
		loss, err := m.ForwardPretrain(ws, bt, mask, true, rng)
		if err == nil && !isBad(loss) {
			m.BackwardPretrain(ws)
		}
		return loss, err
	}
	loss, err := m.ForwardTask(ws, bt, lossOpt, true, rng)
	if err == nil && !isBad(loss) {
		m.BackwardTask(ws)
	}
	return loss, err
}

func isBad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// lossWeight is the denominator the model's loss divides by for rows
// [lo, hi) of bt: masked non-pad values (pre-training), summed class
// weights (classification), samples or non-pad tokens (regression). The
// global loss is the weighted mean of the ranks' losses.
func lossWeight(m *model.Model[float32], bt *data.Batch, mask []bool, lossOpt model.LossOptions, lo, hi int) float64 {
	var w float64
	L := bt.L
	switch {
	case m.Cfg.Task == model.TaskPretrain:
		for k := lo * L; k < hi*L; k++ {
			if mask[k] && !bt.Pad[k] {
				w++
			}
		}
	case m.Cfg.Task == model.TaskClassify:
		for _, y := range bt.Labels[lo:hi] {
			switch {
			case y < 0:
			case lossOpt.ClassWeights != nil:
				w += lossOpt.ClassWeights[y]
			default:
				w++
			}
		}
	case m.Cfg.Pool == model.PoolToken:
		for _, p := range bt.Pad[lo*L : hi*L] {
			if !p {
				w++
			}
		}
	default:
		w = float64(hi - lo)
	}
	return w
}

// subBatch views rows [lo, hi) of bt (same padded length) without copying.
func (p *parallel) subBatch(bt *data.Batch, lo, hi int) *data.Batch {
	L, C, D, td := bt.L, bt.C, bt.D, bt.TargetDim
	p.sub = data.Batch{
		B: hi - lo, L: L, C: C, D: D,
		Values:         bt.Values[lo*L*C : hi*L*C],
		Positions:      bt.Positions[lo*L*D : hi*L*D],
		Pad:            bt.Pad[lo*L : hi*L],
		Lengths:        bt.Lengths[lo:hi],
		Labels:         bt.Labels[lo:hi],
		TargetDim:      td,
		TargetPerToken: bt.TargetPerToken,
	}
	switch {
	case bt.Targets == nil:
	case bt.TargetPerToken:
		p.sub.Targets = bt.Targets[lo*L*td : hi*L*td]
	default:
		p.sub.Targets = bt.Targets[lo*td : hi*td]
	}
	return &p.sub
}

// startHeader is what rank 0 tells the others before training starts.
type startHeader struct {
	Err     string         `json:"err,omitempty"` // rank 0 could not resume
	Resumed bool           `json:"resumed"`
	State   state          `json:"state"`
	Optim   map[string]int `json:"optim"` // optimiser state vectors' lengths
}

// start makes every rank begin where rank 0 does: its weights (initial or
// resumed), optimiser state and training state. resumed and rerr are
// rank 0's outcome of reading last.safetensors.
//
// It also checks that every rank read the same data (dataSum is its
// fingerprint), since each builds the global batches from its own copy.
func (p *parallel) start(m *model.Model[float32], opt optim.Optimizer, st *state, dataSum []byte, resumed bool, rerr error) (bool, error) {
	if !p.distributed() {
		return resumed, rerr
	}
	var blob []byte
	ost := opt.State()
	names := slices.Sorted(maps.Keys(ost))
	if p.rank == 0 {
		h := startHeader{Resumed: resumed, State: *st, Optim: map[string]int{}}
		if rerr != nil {
			h.Err = rerr.Error()
		}
		for _, k := range names {
			h.Optim[k] = len(ost[k])
		}
		var err error
		if blob, err = json.Marshal(h); err != nil {
			return false, err
		}
	}
	blob, err := dist.BroadcastBlob(p.comm, blob, 0)
	if err != nil {
		return false, err
	}
	var h startHeader
	if err := json.Unmarshal(blob, &h); err != nil {
		return false, fmt.Errorf("rank %d: start header from rank 0: %w", p.rank, err)
	}
	if h.Err != "" {
		if p.rank == 0 {
			return false, dist.Agreed(rerr)
		}
		return false, dist.Agreed(fmt.Errorf("rank 0 could not resume: %s", h.Err))
	}
	if err := p.sameAsRoot(dataSum, "training and validation data differ from rank 0's (each rank reads the files itself: are they the same everywhere?)"); err != nil {
		return false, err
	}
	if err := dist.BroadcastFloat32(p.comm, m.W, 0); err != nil {
		return false, err
	}
	if p.rank != 0 {
		names = slices.Sorted(maps.Keys(h.Optim))
		ost = map[string][]float32{}
		for _, k := range names {
			ost[k] = make([]float32, h.Optim[k])
		}
	}
	for _, k := range names {
		if err := dist.BroadcastFloat32(p.comm, ost[k], 0); err != nil {
			return false, err
		}
	}
	if p.rank != 0 {
		if err := opt.LoadState(ost); err != nil {
			return false, fmt.Errorf("rank %d: optimiser state from rank 0: %w", p.rank, err)
		}
		*st = h.State
	}
	return h.Resumed, nil
}

// inSync checks that every rank holds rank 0's weights: identical
// gradients and optimiser steps keep them so, unless ranks compute
// differently (mixed CPU models taking different kernels, say), which
// would otherwise go unnoticed.
func (p *parallel) inSync(w []float32, step int) error {
	if !p.distributed() {
		return nil
	}
	h := fnv.New64a()
	h.Write(float32Bytes(w))
	return p.sameAsRoot(h.Sum(nil), fmt.Sprintf("step %d: weights differ from rank 0's (ranks must run the same binary on the same CPU model)", step))
}

// sameAsRoot fails, on every rank, when some rank's sum differs from
// rank 0's; what says what differs.
func (p *parallel) sameAsRoot(sum []byte, what string) error {
	root := slices.Clone(sum)
	if err := p.comm.Broadcast(root, 0); err != nil {
		return err
	}
	differ := []float64{0}
	if !slices.Equal(sum, root) {
		differ[0] = 1
	}
	if err := p.comm.AllreduceSum64(differ); err != nil {
		return err
	}
	if differ[0] > 0 {
		return dist.Agreed(fmt.Errorf("on %v rank(s), %s", differ[0], what))
	}
	return nil
}

// fingerprint hashes what the ranks must agree on in datasets.
func fingerprint(sets ...*data.Dataset) []byte {
	h := fnv.New64a()
	var n [8]byte
	for _, ds := range sets {
		if ds == nil {
			h.Write([]byte{0})
			continue
		}
		for i := range ds.Samples {
			s := &ds.Samples[i]
			binary.LittleEndian.PutUint64(n[:], uint64(int64(s.Label)))
			h.Write(n[:])
			h.Write(float32Bytes(s.Values))
			h.Write(float32Bytes(s.Positions))
			h.Write(float32Bytes(s.Target))
		}
	}
	return h.Sum(nil)
}

func float32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// valShard is this rank's part of the validation set: a contiguous run of
// whole evaluation batches, so that each batch is the one a one-process
// evaluation would form. It also sets p.valWeight, the shard's weight in
// eval.Evaluate's loss average (samples, tokens for per-token regression,
// masked tokens for reconstruction), which depends on lengths only.
func (p *parallel) valShard(m *model.Model[float32], val *data.Dataset, batch int, maskRatio float64) *data.Dataset {
	nb := (len(val.Samples) + batch - 1) / batch
	blo, bhi := dist.Split(nb, p.rank, p.size)
	shard := *val
	shard.Samples = val.Samples[min(blo*batch, len(val.Samples)):min(bhi*batch, len(val.Samples))]
	p.valWeight = 0
	switch {
	case m.Cfg.Task == model.TaskPretrain:
		// RandomMask's count per sample depends on its length, not on the draw.
		var bt *data.Batch
		var mask []bool
		rng := rand.New(rand.NewPCG(0, 0))
		for i := range shard.Samples {
			bt = data.Collate(bt, &shard, []int{i})
			mask = data.RandomMask(mask, bt, maskRatio, rng)
			for _, on := range mask {
				if on {
					p.valWeight++
				}
			}
		}
	case m.Cfg.Pool == model.PoolToken:
		for i := range shard.Samples {
			p.valWeight += float64(shard.Samples[i].Len(shard.C))
		}
	default:
		p.valWeight = float64(len(shard.Samples))
	}
	return &shard
}

// evaluate is eval.Evaluate over the ranks' validation shards, merged:
// the same numbers as one process evaluating the whole set, except that
// reconstruction masks are drawn per shard.
func (p *parallel) evaluate(m *model.Model[float32], ws *model.Workspace[float32], val, shard *data.Dataset, opt eval.Options) (eval.Metrics, error) {
	if !p.distributed() {
		return eval.Evaluate(m, ws, val, opt)
	}
	K := m.Cfg.Outputs
	classify := m.Cfg.Task == model.TaskClassify
	// loss·weight, weight, samples, ranks failed, objective·weight,
	// MSE·weight, then the confusion matrix.
	const conf = 6
	n := conf
	if classify {
		n += K * K
	}
	sums := make([]float64, n)
	var err error
	if len(shard.Samples) > 0 {
		var met eval.Metrics
		if met, err = eval.Evaluate(m, ws, shard, opt); err == nil {
			sums[0], sums[1], sums[2] = met.Loss*p.valWeight, p.valWeight, float64(met.N)
			sums[4], sums[5] = met.Objective*p.valWeight, met.MSE*p.valWeight
			for i, row := range met.Confusion {
				for j, n := range row {
					sums[conf+i*K+j] = float64(n)
				}
			}
		} else {
			sums[3] = 1
		}
	}
	if rerr := p.comm.AllreduceSum64(sums); rerr != nil {
		return eval.Metrics{}, errors.Join(err, rerr)
	}
	switch {
	case err != nil:
		return eval.Metrics{}, fmt.Errorf("rank %d of %d: %w", p.rank, p.size, err)
	case sums[3] > 0:
		return eval.Metrics{}, dist.Agreed(fmt.Errorf("validation failed on %v other rank(s) (their messages name the error)", sums[3]))
	}
	w := math.Max(sums[1], 1)
	met := eval.Metrics{N: int(sums[2]), Loss: sums[0] / w, Objective: sums[4] / w}
	switch m.Cfg.Task {
	case model.TaskClassify:
		met.Confusion = make([][]int, K)
		for i := range met.Confusion {
			met.Confusion[i] = make([]int, K)
			for j := range K {
				met.Confusion[i][j] = int(sums[conf+i*K+j])
			}
		}
		met.Accuracy, met.MacroF1 = eval.Accuracy(met.Confusion), eval.MacroF1(met.Confusion)
	default: // in the targets' units when they were standardised (opt.TargetStats)
		met.MSE = sums[5] / w
		met.RMSE = math.Sqrt(met.MSE)
	}
	return met, nil
}

// stopAll is the error every rank returns when the run was interrupted.
func stopAll(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return dist.Agreed(err)
	}
	return dist.Agreed(fmt.Errorf("%w: another rank was interrupted", context.Canceled))
}
