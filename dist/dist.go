// Package dist is the communicator data-parallel training runs on: one
// process per rank, started by mpirun, srun or the Kubeflow MPI Operator,
// exchanging gradients with MPI collectives. Open detects the launch;
// without one it returns Local, the one-process communicator, so the same
// code trains on a laptop and on a cluster.
//
// The MPI implementation calls Open MPI through cgo and is compiled only
// with the build tag mpi (needs libopenmpi-dev); the default build has no C
// dependency and refuses, with a message, to run as one rank of a larger
// job (N independent copies writing one run directory would be silent
// damage).
package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// Comm connects the ranks of one job. Every rank must call the collectives
// (the All… and Broadcast methods) in the same order with buffers of the
// same length, as in MPI. Their errors are not recoverable: the caller
// stops and the launcher ends the job.
type Comm interface {
	Rank() int // 0 … Size()−1; rank 0 writes files
	Size() int
	// AllreduceSum32 replaces buf, on every rank, by the elementwise sum
	// over all ranks' buf; every rank receives the same bits.
	AllreduceSum32(buf []float32) error
	AllreduceSum64(buf []float64) error
	// Broadcast copies root's buf into every other rank's buf.
	Broadcast(buf []byte, root int) error
	// Abort ends every rank of the job with code: the way out when this
	// rank cannot go on while others may be waiting in a collective.
	Abort(code int)
	// Close ends this rank's part in the job (MPI_Finalize); call it from
	// the goroutine that called Open.
	Close() error
}

// Local is the one-process communicator: every collective is the identity.
type Local struct{}

func (Local) Rank() int                      { return 0 }
func (Local) Size() int                      { return 1 }
func (Local) AllreduceSum32([]float32) error { return nil }
func (Local) AllreduceSum64([]float64) error { return nil }
func (Local) Broadcast(buf []byte, root int) error {
	if root != 0 {
		return fmt.Errorf("dist: broadcast from rank %d in a job of 1", root)
	}
	return nil
}
func (Local) Abort(code int) { os.Exit(code) }
func (Local) Close() error   { return nil }

// launchVars are set, for each process, by the launchers romae supports:
// Open MPI's mpirun (OMPI_COMM_WORLD_*), PMIx (srun --mpi=pmix, recent
// mpirun) and PMI-1/2 (srun --mpi=pmi2, MPICH's hydra).
var launchVars = []string{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}

// sizeVars give the job's size where the launcher states it.
var sizeVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}

// Launched reports whether the environment says this process is one rank
// of an MPI job, and the job's size when the environment states it (0 if
// it does not).
func Launched() (launched bool, size int) {
	for _, k := range launchVars {
		if os.Getenv(k) != "" {
			launched = true
		}
	}
	if !launched {
		return false, 0
	}
	for _, k := range sizeVars {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
			return true, n
		}
	}
	return true, 0
}

// Open returns this process's communicator: MPI when it was launched as a
// rank of an MPI job, Local otherwise. A binary built without the mpi tag
// returns an error when launched as one of several ranks.
func Open() (Comm, error) {
	launched, size := Launched()
	switch {
	case !launched:
		return Local{}, nil
	case Built:
		return openMPI()
	case size == 1:
		return Local{}, nil
	}
	n := "several"
	if size > 1 {
		n = strconv.Itoa(size)
	}
	return nil, fmt.Errorf("launched as one of %s MPI ranks, but this binary was built without MPI: "+
		"use bin/romae-mpi (scripts/setup.sh builds it) or build with `go build -tags mpi ./cmd/romae`", n)
}

// BroadcastFloat32 copies root's buf into every other rank's buf.
func BroadcastFloat32(c Comm, buf []float32, root int) error {
	if len(buf) == 0 {
		return nil
	}
	return c.Broadcast(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 4*len(buf)), root)
}

// BroadcastBlob sends root's blob to every rank and returns it there
// (other ranks pass nil): the length travels first.
func BroadcastBlob(c Comm, blob []byte, root int) ([]byte, error) {
	var n [8]byte
	if c.Rank() == root {
		binary.LittleEndian.PutUint64(n[:], uint64(len(blob)))
	}
	if err := c.Broadcast(n[:], root); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(n[:])
	if c.Rank() != root {
		blob = make([]byte, size)
	}
	if size == 0 {
		return blob, nil
	}
	return blob, c.Broadcast(blob, root)
}

// Split is the deterministic rule that divides n items (the samples of a
// global batch, the batches of a validation pass) among size ranks: rank
// gets the contiguous range [lo, hi), sizes differing by at most one,
// the earlier ranks taking the larger share.
func Split(n, rank, size int) (lo, hi int) {
	q, r := n/size, n%size
	lo = rank*q + min(rank, r)
	hi = lo + q
	if rank < r {
		hi++
	}
	return lo, hi
}

// Agreed marks err as one that every rank of the job returns at the same
// point (a decision taken through a collective: an interruption, a
// non-finite loss, a failure reported by another rank). Such a job can
// end cleanly, every rank finishing its file writes and calling Close;
// any other error on one rank must end the job with Abort, since the
// others may be waiting for it in a collective.
func Agreed(err error) error {
	if err == nil {
		return nil
	}
	return agreedError{err}
}

// IsAgreed reports whether err was marked by Agreed.
func IsAgreed(err error) bool {
	var a agreedError
	return errors.As(err, &a)
}

type agreedError struct{ error }

func (e agreedError) Unwrap() error { return e.error }
