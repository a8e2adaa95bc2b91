package main

import (
	"fmt"
	"os"

	"romae/dist"
)

// endRank ends a training rank whose run failed. Alone, or when every
// rank stopped at the same point (dist.IsAgreed: an interruption, a
// non-finite loss), the rank finishes cleanly and rank 0 reports the
// error; the others exit with status 1 without repeating it. An error
// of this rank alone ends the whole job through MPI_Abort, since the
// others may be waiting for it in a collective.
func endRank(c dist.Comm, err error) error {
	if c.Size() == 1 {
		return err
	}
	if !dist.IsAgreed(err) {
		fmt.Fprintf(os.Stderr, "romae %s: rank %d of %d: %v\n", os.Args[1], c.Rank(), c.Size(), err)
		c.Abort(1)
	}
	c.Close()
	if c.Rank() == 0 {
		return err
	}
	os.Exit(1)
	return nil
}
