package dist

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		n, size int
		want    []int // each rank's count
	}{
		{8, 2, []int{4, 4}},
		{9, 2, []int{5, 4}},
		{4, 3, []int{2, 1, 1}},
		{2, 4, []int{1, 1, 0, 0}},
		{0, 3, []int{0, 0, 0}},
	} {
		next := 0
		for r, want := range tc.want {
			lo, hi := Split(tc.n, r, tc.size)
			if lo != next || hi-lo != want {
				t.Errorf("Split(%d, %d, %d) = [%d, %d), want [%d, %d)", tc.n, r, tc.size, lo, hi, next, next+want)
			}
			next = hi
		}
		if next != tc.n {
			t.Errorf("Split(%d, ·, %d) covers %d items", tc.n, tc.size, next)
		}
	}
}

// onRanks runs fn on each rank of a loopback job and returns their errors.
func onRanks(n int, fn func(c Comm) error) []error {
	comms := NewLoopback(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() { errs[r] = fn(c) })
	}
	wg.Wait()
	return errs
}

func TestLoopbackCollectives(t *testing.T) {
	const n = 3
	got := make([][]float32, n)
	blobs := make([][]byte, n)
	errs := onRanks(n, func(c Comm) error {
		r := c.Rank()
		buf := []float32{float32(r), 1, float32(10 * r)}
		for range 2 { // twice: buffers are reused between collectives
			if err := c.AllreduceSum32(buf); err != nil {
				return err
			}
		}
		got[r] = buf
		w := []float32{float32(r + 7), float32(r)}
		if err := BroadcastFloat32(c, w, 2); err != nil {
			return err
		}
		if w[0] != 9 || w[1] != 2 {
			return fmt.Errorf("rank %d received %v from rank 2", r, w)
		}
		var msg []byte
		if r == 1 {
			msg = []byte("from rank 1")
		}
		var err error
		blobs[r], err = BroadcastBlob(c, msg, 1)
		return err
	})
	for r := range n {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		// (0+1+2, 3, 0+10+20), then summed again over 3 ranks.
		if want := []float32{9, 9, 90}; fmt.Sprint(got[r]) != fmt.Sprint(want) {
			t.Errorf("rank %d: allreduce gave %v, want %v", r, got[r], want)
		}
		if string(blobs[r]) != "from rank 1" {
			t.Errorf("rank %d: blob %q", r, blobs[r])
		}
	}
}

// A rank that aborts releases the others from the collective they wait in.
func TestLoopbackAbort(t *testing.T) {
	errs := onRanks(2, func(c Comm) error {
		if c.Rank() == 1 {
			c.Abort(3)
			return nil
		}
		return c.AllreduceSum64([]float64{1})
	})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 1 aborted") {
		t.Errorf("rank 0 got %v, want the abort", errs[0])
	}
}

func TestOpenDetectsLaunch(t *testing.T) {
	for _, k := range append(launchVars, sizeVars...) {
		t.Setenv(k, "")
	}
	if c, err := Open(); err != nil || c.Size() != 1 {
		t.Fatalf("no launcher: %v, %v; want Local", c, err)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "0")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	if launched, size := Launched(); !launched || size != 1 {
		t.Errorf("Launched() = %v, %d under mpirun -np 1", launched, size)
	}
	if Built {
		return // the rest is about the build without MPI
	}
	if c, err := Open(); err != nil || c.Size() != 1 {
		t.Errorf("mpirun -np 1 without MPI built in: %v, %v; want Local", c, err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	if _, err := Open(); err == nil || !strings.Contains(err.Error(), "one of 4 MPI ranks") || !strings.Contains(err.Error(), "-tags mpi") {
		t.Errorf("mpirun -np 4 without MPI built in: %v, want a refusal naming the fix", err)
	}
}

func TestAgreed(t *testing.T) {
	base := errors.New("loss is NaN")
	err := fmt.Errorf("step 3: %w", Agreed(base))
	if !IsAgreed(err) || !errors.Is(err, base) || IsAgreed(base) || Agreed(nil) != nil {
		t.Errorf("Agreed/IsAgreed do not mark and unwrap: %v", err)
	}
}
