//go:build goexperiment.simd && amd64 && !race

// Package simdpart holds the masked loads and stores of a slice shorter
// than a vector that tensor and rope share: zero-filled lanes on load,
// only len(s) lanes stored. Race builds use part_race_amd64.go instead:
// there checkptr rejects archsimd's conversion of a short slice to
// *[16]float32 (or *[8]float32) when the slice ends near the end of its
// allocation.
package simdpart

import "simd/archsimd"

// Load16 and Store16 are the 16-lane (AVX-512) pair.
func Load16(s []float32) archsimd.Float32x16 { return archsimd.LoadFloat32x16SlicePart(s) }

func Store16(v archsimd.Float32x16, s []float32) { v.StoreSlicePart(s) }

// Load8 and Store8 are the 8-lane (AVX2) pair.
func Load8(s []float32) archsimd.Float32x8 { return archsimd.LoadFloat32x8SlicePart(s) }

func Store8(v archsimd.Float32x8, s []float32) { v.StoreSlicePart(s) }
