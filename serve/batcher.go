package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"romae/data"
)

// job is one request's samples on their way through the batcher. The
// batcher fills the outputs (or err) and then closes done; the handler
// waits for done or for its context.
type job struct {
	ctx      context.Context
	model    *Model // the model the samples were prepared for
	endpoint string
	pool     string
	ds       *data.Dataset
	queries  [][]float32 // interpolate
	masks    [][]bool    // reconstruct
	enqueued time.Time

	probs [][]float64 // predict: per sample
	vecs  [][]float32 // embed, interpolate, reconstruct: per sample
	err   error
	done  chan struct{}
}

func newJob(ctx context.Context, m *Model, endpoint, pool string, ds *data.Dataset) *job {
	j := &job{ctx: ctx, model: m, endpoint: endpoint, pool: pool, ds: ds, done: make(chan struct{})}
	if endpoint == epPredict {
		j.probs = make([][]float64, len(ds.Samples))
	} else {
		j.vecs = make([][]float32, len(ds.Samples))
	}
	return j
}

func (j *job) samples() int { return len(j.ds.Samples) }

var errShuttingDown = errors.New("the server is shutting down")

// batcher runs requests that arrive together as one padded batch: a single
// goroutine takes the first waiting job, gathers more until it has
// maxBatch samples or the first has waited maxWait, and runs them, sorted
// by length and cut so that a forward pass holds at most maxBatch samples
// and maxTokens padded tokens. The queue is bounded in samples: submit
// refuses rather than waits. One goroutine is enough: the matrix products
// inside a forward pass already use the compute threads (ReserveNetworkP).
type batcher struct {
	maxBatch, maxTokens int
	maxWait             time.Duration
	capacity            int64 // samples that may wait

	queued atomic.Int64 // samples waiting
	// arriving counts requests whose bodies are read and being decoded:
	// about to be queued. A batch waits for them (up to maxWait), not for
	// requests that may or may not come.
	arriving atomic.Int64
	rate     atomic.Uint64
	ch       chan *job
	stop     chan struct{}
	stopped  chan struct{}

	met *metrics
	log *slog.Logger
	// beforeForward, when set (tests), runs before each forward pass.
	beforeForward atomic.Pointer[func(endpoint string)]
}

func newBatcher(maxBatch, maxTokens int, maxWait time.Duration, capacity int, met *metrics, log *slog.Logger) *batcher {
	return &batcher{maxBatch: maxBatch, maxTokens: maxTokens, maxWait: maxWait, capacity: int64(capacity),
		ch: make(chan *job, capacity), stop: make(chan struct{}), stopped: make(chan struct{}), met: met, log: log}
}

// full reports whether no sample can be queued now.
func (b *batcher) full() bool { return b.queued.Load() >= b.capacity }

// submit queues j, or returns false at once when its samples do not fit.
// The channel holds at most as many jobs as there are queued samples, so
// the send never blocks.
func (b *batcher) submit(j *job) bool {
	n := int64(j.samples())
	for {
		q := b.queued.Load()
		if q+n > b.capacity {
			return false
		}
		if b.queued.CompareAndSwap(q, q+n) {
			break
		}
	}
	j.enqueued = time.Now()
	b.met.queueDepth.Set(float64(b.queued.Load()))
	b.ch <- j
	return true
}

// retryAfter is the whole seconds the queued samples take at the recent
// throughput, between 1 and 30: what a refused client should wait.
func (b *batcher) retryAfter() int {
	rate := math.Float64frombits(b.rate.Load())
	if !(rate > 0) {
		return 1
	}
	return int(min(max(math.Ceil(float64(b.queued.Load())/rate), 1), 30))
}

func (b *batcher) run() {
	defer close(b.stopped)
	// The forward passes run on this goroutine too: its thread follows
	// the compute priority (cores.go). Locked, it ends with the goroutine,
	// so it never returns to Go's pool idle-class.
	managed, idle := computeManaged(), false
	if managed {
		applyComputePolicy()
		idle = priority.idle.Load()
		// The thread ends with this goroutine; its id may be reused.
		defer priority.locked.Delete(threadID())
	}
	for {
		select {
		case <-b.stop:
			b.drain()
			return
		case j := <-b.ch:
			group := b.collect(b.take(j))
			if managed {
				settleComputePolicy()
				if now := priority.idle.Load(); now != idle {
					setThreadPolicy(0, now)
					idle = now
				}
			}
			b.process(group)
		}
	}
}

// close stops the batcher after the batch it is running; jobs still
// queued are answered with errShuttingDown.
func (b *batcher) close() {
	close(b.stop)
	<-b.stopped
}

func (b *batcher) drain() {
	for {
		select {
		case j := <-b.ch:
			b.take(j)
			j.err = errShuttingDown
			close(j.done)
		default:
			return
		}
	}
}

func (b *batcher) take(j *job) *job {
	b.met.queueDepth.Set(float64(b.queued.Add(-int64(j.samples()))))
	b.met.queueWait.Observe(time.Since(j.enqueued).Seconds())
	return j
}

// collect gathers jobs after first until maxBatch samples, or until no
// request is queued or arriving (being decoded), or until first has waited
// maxWait (counted from when it was queued, so a job that already waited
// behind a running batch does not wait again). A lone request thus runs at
// once, and requests that arrive together run together.
func (b *batcher) collect(first *job) []*job {
	group, n := []*job{first}, first.samples()
	deadline := first.enqueued.Add(b.maxWait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	yielded := false
	for n < b.maxBatch {
		select {
		case j := <-b.ch:
			group, n = append(group, b.take(j)), n+j.samples()
			continue
		default:
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		if b.arriving.Load() == 0 {
			if yielded {
				break
			}
			// Once per batch, let the handlers that are runnable but not
			// running read and queue their requests first: with one P
			// (GOMAXPROCS=1, a one-CPU container) they cannot run beside
			// this goroutine, so nothing ever looked "arriving" and
			// every batch ran alone.
			yielded = true
			runtime.Gosched()
			continue
		}
		// A request being decoded may still fail, so look again shortly.
		wait = min(wait, 200*time.Microsecond)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case j := <-b.ch:
			group, n = append(group, b.take(j)), n+j.samples()
		case <-timer.C:
		case <-b.stop:
			return group
		}
	}
	return group
}

// ref is sample i of a job.
type ref struct {
	j *job
	i int
}

// process runs a group: jobs whose client left or whose deadline passed
// are dropped; the rest run per (model, endpoint, pool), every job is
// answered.
func (b *batcher) process(group []*job) {
	type key struct {
		m        *Model
		endpoint string
		pool     string
	}
	parts := map[key][]ref{}
	var order []key
	for _, j := range group {
		if err := j.ctx.Err(); err != nil {
			b.met.dropped.Inc()
			j.err = err
			continue
		}
		k := key{j.model, j.endpoint, j.pool}
		if _, ok := parts[k]; !ok {
			order = append(order, k)
		}
		for i := range j.ds.Samples {
			parts[k] = append(parts[k], ref{j, i})
		}
	}
	for _, k := range order {
		refs := parts[k]
		C := k.m.Net.Cfg.Values
		// Similar lengths together: less padding.
		slices.SortStableFunc(refs, func(a, c ref) int {
			return a.j.ds.Samples[a.i].Len(C) - c.j.ds.Samples[c.i].Len(C)
		})
		for lo := 0; lo < len(refs); {
			hi := lo + 1
			for hi < len(refs) && hi-lo < b.maxBatch && (hi-lo+1)*refs[hi].j.ds.Samples[refs[hi].i].Len(C) <= b.maxTokens {
				hi++
			}
			b.forward(k.m, k.endpoint, k.pool, refs[lo:hi])
			lo = hi
		}
	}
	for _, j := range group {
		close(j.done)
	}
}

// forward runs one batch and stores each sample's output in its job; a
// failure (or a panic, which is logged with its stack) fails every job of
// the batch, and the batcher goes on.
func (b *batcher) forward(m *Model, endpoint, pool string, refs []ref) {
	live := refs[:0:0]
	for _, r := range refs {
		if r.j.err == nil && r.j.ctx.Err() == nil {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	start := time.Now()
	err := b.guarded(func() error { return b.run1(m, endpoint, pool, live) })
	if err != nil {
		for _, r := range live {
			r.j.err = err
		}
		return
	}
	dt := time.Since(start).Seconds()
	b.met.batchSize.Observe(float64(len(live)))
	b.met.forward.WithLabelValues(endpoint).Observe(dt)
	// Throughput for Retry-After: an exponentially weighted average.
	r := float64(len(live)) / max(dt, 1e-6)
	if old := math.Float64frombits(b.rate.Load()); old > 0 {
		r = 0.8*old + 0.2*r
	}
	b.rate.Store(math.Float64bits(r))
}

func (b *batcher) guarded(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			b.met.panics.WithLabelValues("batcher").Inc()
			b.log.Error("panic in a forward pass", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error in the forward pass (logged)")
		}
	}()
	return f()
}

func (b *batcher) run1(m *Model, endpoint, pool string, refs []ref) error {
	if hook := b.beforeForward.Load(); hook != nil {
		(*hook)(endpoint)
	}
	first := refs[0].j.ds
	ds := &data.Dataset{Name: "batch", C: first.C, D: first.D, TimeAxis: first.TimeAxis, Samples: make([]data.Sample, len(refs))}
	for k, r := range refs {
		ds.Samples[k] = r.j.ds.Samples[r.i]
	}
	switch endpoint {
	case epPredict:
		out, err := m.predict(ds)
		if err != nil {
			return err
		}
		for k, r := range refs {
			r.j.probs[r.i] = out[k]
		}
	case epEmbed:
		out, err := m.embed(ds, pool)
		if err != nil {
			return err
		}
		d := len(out) / len(refs)
		for k, r := range refs {
			r.j.vecs[r.i] = out[k*d : (k+1)*d]
		}
	case epInterpolate, epReconstruct:
		var out [][]float32
		var err error
		if endpoint == epInterpolate {
			q := make([][]float32, len(refs))
			for k, r := range refs {
				q[k] = r.j.queries[r.i]
			}
			out, err = m.interpolate(ds, q)
		} else {
			mk := make([][]bool, len(refs))
			for k, r := range refs {
				mk[k] = r.j.masks[r.i]
			}
			out, err = m.reconstruct(ds, mk)
		}
		if err != nil {
			return err
		}
		for k, r := range refs {
			r.j.vecs[r.i] = out[k]
		}
	default:
		return fmt.Errorf("unknown endpoint %q", endpoint)
	}
	return nil
}
