//go:build !(mpi && cgo)

package dist

// Built reports whether this binary carries the MPI communicator.
const Built = false

func openMPI() (Comm, error) { panic("dist: openMPI in a build without MPI") }

// Version names the MPI library this binary was built with ("" without).
func Version() string { return "" }
