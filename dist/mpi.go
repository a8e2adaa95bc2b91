//go:build mpi && cgo

package dist

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

// MPI_COMM_WORLD and the datatypes are macros over addresses in Open MPI,
// which cgo cannot name: thin wrappers instead.
static int romae_init(int *rank, int *size, int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	// Errors come back as codes (and become Go errors) instead of
	// aborting inside the library without a word about what failed.
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}
static int romae_allreduce_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int romae_allreduce_f64(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int romae_bcast(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}
static void romae_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static int romae_finalize(void) { return MPI_Finalize(); }
static int romae_error_string(int code, char *buf) {
	int n = 0;
	MPI_Error_string(code, buf, &n);
	return n;
}
static int romae_version(char *buf) {
	int n = 0;
	MPI_Get_library_version(buf, &n);
	return n;
}
static int romae_max_string(void) { return MPI_MAX_ERROR_STRING > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_ERROR_STRING : MPI_MAX_LIBRARY_VERSION_STRING; }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

// Built reports whether this binary carries the MPI communicator.
const Built = true

// mpiComm is MPI_COMM_WORLD.
type mpiComm struct{ rank, size int }

// chunk bounds one MPI call's element count (MPI counts are C ints).
const chunk = 1 << 30

func openMPI() (Comm, error) {
	// MPI wants MPI_Finalize on the thread that called MPI_Init.
	runtime.LockOSThread()
	var rank, size, provided C.int
	if rc := C.romae_init(&rank, &size, &provided); rc != C.MPI_SUCCESS {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("MPI_Init_thread: %s", errorString(rc))
	}
	if provided < C.MPI_THREAD_SERIALIZED {
		C.romae_finalize()
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("MPI_Init_thread: the library gives thread level %d, romae needs MPI_THREAD_SERIALIZED (%d): goroutines move between OS threads", provided, C.MPI_THREAD_SERIALIZED)
	}
	return &mpiComm{rank: int(rank), size: int(size)}, nil
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) AllreduceSum32(buf []float32) error {
	return inChunks(c, "MPI_Allreduce", buf, func(p unsafe.Pointer, n C.int) C.int {
		return C.romae_allreduce_f32((*C.float)(p), n)
	})
}

func (c *mpiComm) AllreduceSum64(buf []float64) error {
	return inChunks(c, "MPI_Allreduce", buf, func(p unsafe.Pointer, n C.int) C.int {
		return C.romae_allreduce_f64((*C.double)(p), n)
	})
}

func (c *mpiComm) Broadcast(buf []byte, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("dist: broadcast from rank %d in a job of %d", root, c.size)
	}
	return inChunks(c, "MPI_Bcast", buf, func(p unsafe.Pointer, n C.int) C.int {
		return C.romae_bcast(p, n, C.int(root))
	})
}

// inChunks makes call on buf in pieces whose counts fit MPI's C ints.
func inChunks[T any](c *mpiComm, name string, buf []T, call func(p unsafe.Pointer, n C.int) C.int) error {
	for len(buf) > 0 {
		n := min(len(buf), chunk)
		if rc := call(unsafe.Pointer(&buf[0]), C.int(n)); rc != C.MPI_SUCCESS {
			return fmt.Errorf("%s (rank %d of %d): %s", name, c.rank, c.size, errorString(rc))
		}
		buf = buf[n:]
	}
	return nil
}

func (c *mpiComm) Abort(code int) {
	C.romae_abort(C.int(code))
	os.Exit(code) // not reached: MPI_Abort does not return
}

func (c *mpiComm) Close() error {
	defer runtime.UnlockOSThread()
	if rc := C.romae_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("MPI_Finalize: %s", errorString(rc))
	}
	return nil
}

func errorString(rc C.int) string {
	buf := make([]byte, int(C.romae_max_string())+1)
	n := C.romae_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])))
	return string(buf[:n])
}

// Version names the MPI library this binary was built with.
func Version() string {
	buf := make([]byte, int(C.romae_max_string())+1)
	n := C.romae_version((*C.char)(unsafe.Pointer(&buf[0])))
	s := string(buf[:n])
	if i := strings.IndexAny(s, ",\n"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
