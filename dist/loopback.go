package dist

import (
	"fmt"
	"sync"
)

// NewLoopback returns the n ranks of a job whose processes are goroutines
// of this one: the communicator for tests and examples of data-parallel
// code without MPI. Sums run in rank order, so every rank receives the
// same bits, as with MPI.
func NewLoopback(n int) []Comm {
	g := &group{n: n, deposit: make([]any, n)}
	g.cond = sync.NewCond(&g.mu)
	comms := make([]Comm, n)
	for r := range comms {
		comms[r] = &loopback{g: g, rank: r}
	}
	return comms
}

type group struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     int   // completed barriers
	deposit []any // each rank's buffer in the current collective
	aborted error
}

// barrier returns once all n ranks have called it (or one aborted).
func (g *group) barrier() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	gen := g.gen
	g.arrived++
	if g.arrived == g.n {
		g.arrived, g.gen = 0, g.gen+1
		g.cond.Broadcast()
	}
	for gen == g.gen && g.aborted == nil {
		g.cond.Wait()
	}
	return g.aborted
}

type loopback struct {
	g    *group
	rank int
}

func (c *loopback) Rank() int { return c.rank }
func (c *loopback) Size() int { return c.g.n }

// collective deposits buf, waits for every rank's, lets each rank read
// them all (read), then waits again so no buffer changes while another
// rank still reads it, and finally lets each rank write its own (write).
func collective[T any](c *loopback, buf []T, read func(all [][]T), write func()) error {
	g := c.g
	g.mu.Lock()
	g.deposit[c.rank] = buf
	g.mu.Unlock()
	if err := g.barrier(); err != nil {
		return err
	}
	all := make([][]T, g.n)
	for r, d := range g.deposit {
		all[r] = d.([]T)
		if len(all[r]) != len(buf) {
			return fmt.Errorf("loopback: rank %d passed %d elements, rank %d %d", r, len(all[r]), c.rank, len(buf))
		}
	}
	read(all)
	if err := g.barrier(); err != nil {
		return err
	}
	write()
	return g.barrier()
}

func allreduce[T float32 | float64](c *loopback, buf []T) error {
	sum := make([]T, len(buf))
	return collective(c, buf, func(all [][]T) {
		for _, b := range all {
			for i, v := range b {
				sum[i] += v
			}
		}
	}, func() { copy(buf, sum) })
}

func (c *loopback) AllreduceSum32(buf []float32) error { return allreduce(c, buf) }
func (c *loopback) AllreduceSum64(buf []float64) error { return allreduce(c, buf) }

func (c *loopback) Broadcast(buf []byte, root int) error {
	if root < 0 || root >= c.g.n {
		return fmt.Errorf("dist: broadcast from rank %d in a job of %d", root, c.g.n)
	}
	got := make([]byte, len(buf))
	return collective(c, buf, func(all [][]byte) { copy(got, all[root]) }, func() { copy(buf, got) })
}

// Abort fails every collective in progress or to come, on every rank.
func (c *loopback) Abort(code int) {
	g := c.g
	g.mu.Lock()
	g.aborted = fmt.Errorf("loopback: rank %d aborted with code %d", c.rank, code)
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (c *loopback) Close() error { return nil }
