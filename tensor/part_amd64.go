//go:build goexperiment.simd && amd64 && !race

package tensor

import "simd/archsimd"

// loadPart and storePart are archsimd's masked loads and stores of a
// slice shorter than 16 (zero-filled lanes on load, only len(s) lanes
// stored). Race builds use part_race_amd64.go instead: there checkptr
// rejects archsimd's conversion of a short slice to *[16]float32 when the
// slice ends near the end of its allocation.
func loadPart(s []float32) archsimd.Float32x16 { return archsimd.LoadFloat32x16SlicePart(s) }

func storePart(v archsimd.Float32x16, s []float32) { v.StoreSlicePart(s) }

// loadPart8 and storePart8 are the same for 8 lanes (AVX2 code).
func loadPart8(s []float32) archsimd.Float32x8 { return archsimd.LoadFloat32x8SlicePart(s) }

func storePart8(v archsimd.Float32x8, s []float32) { v.StoreSlicePart(s) }
