// Package tensor holds romae's numeric foundation: the matrix-multiply seam
// with its interchangeable back ends, and the parallel loop helper that
// element-wise kernels use to spread work over all cores.
package tensor

// Float is the element type of every op. Training and inference run in
// float32; float64 exists so gradient checks can use finite differences
// without drowning in rounding error.
type Float interface{ ~float32 | ~float64 }
