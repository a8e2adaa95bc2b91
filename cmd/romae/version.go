package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"romae/dist"
	"romae/tensor"
)

// cmdVersion prints what a bug report needs: the module version, the
// commit it was built from, the Go toolchain, and the matrix-multiply back
// ends this binary has with the one chosen for this CPU (ROMAE_GEMM
// overrides the choice) and the cache sizes its blocking uses
// (ROMAE_CACHES overrides CPUID's), and the MPI library it was built with.
func cmdVersion(_ context.Context, args []string) error {
	fs := newFlagSet("version", "version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	version, commit, modified := "(devel)", "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
	}
	var names []string
	for _, b := range tensor.Backends() {
		names = append(names, b.Name())
	}
	cpu := tensor.CPU()
	fmt.Printf("romae %s\ncommit %s%s\n%s %s/%s\ngemm back ends: %s; chosen: %s; bf16 kernels: %s (first chosen); cpu: %s (%s; %s)\n",
		version, commit, modified, runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Join(names, ", "),
		tensor.BackendName(), strings.Join(tensor.BF16Kernels(), ", "), cpu.Name, cpu.Class(), cpu.Caches())
	// What decides the products' bits: a run elsewhere matches this one's
	// numbers where these agree (ROMAE_CACHES sets the k splits there).
	n := tensor.CurrentNumerics()
	fmt.Printf("numerics: %s, %s, k splits %v", n.Precision, n.Kernels, n.KSplits)
	if n.Caches != "" {
		fmt.Printf(" (ROMAE_CACHES=%s gives them to another CPU with these kernels)", n.Caches)
	}
	fmt.Println()
	if mpi := dist.Version(); mpi != "" {
		fmt.Printf("mpi: %s\n", mpi)
	} else {
		fmt.Println("mpi: not built in (bin/romae-mpi, -tags mpi)")
	}
	return nil
}
