//go:build goexperiment.simd && amd64 && !race

// Package simdpart holds the masked loads and stores of a slice shorter
// than a vector that tensor and rope share: zero-filled lanes on load,
// only len(s) lanes stored. Race builds use part_race_amd64.go instead:
// there checkptr rejects archsimd's conversion of a short slice to
// *[16]float32 (or *[8]float32) when the slice ends near the end of its
// allocation.
package simdpart

import (
	"simd/archsimd"
	"unsafe"
)

// Load16 and Store16 are the 16-lane (AVX-512) pair.
func Load16(s []float32) archsimd.Float32x16 { return archsimd.LoadFloat32x16SlicePart(s) }

func Store16(v archsimd.Float32x16, s []float32) { v.StoreSlicePart(s) }

// Load8 and Store8 are the 8-lane (AVX2) pair.
func Load8(s []float32) archsimd.Float32x8 { return archsimd.LoadFloat32x8SlicePart(s) }

func Store8(v archsimd.Float32x8, s []float32) { v.StoreSlicePart(s) }

// Mask16 is the mask of the first n of 16 lanes (0 ≤ n ≤ 16), built once
// for LoadMasked16 and StoreMasked16 where a kernel's slices all have the
// same short length: Load16 and Store16 test the length and build the
// mask on every call.
func Mask16(n int) archsimd.Mask32x16 { return archsimd.Mask32x16FromBits(uint16(1<<n - 1)) }

// LoadMasked16 loads the lanes of m from s[0:], zero in the others; s must
// hold every lane m enables (unchecked: Load16 checks).
func LoadMasked16(s []float32, m archsimd.Mask32x16) archsimd.Float32x16 {
	return archsimd.LoadMaskedFloat32x16((*[16]float32)(unsafe.Pointer(unsafe.SliceData(s))), m)
}

// StoreMasked16 stores the lanes of m of v to s[0:], as LoadMasked16.
func StoreMasked16(v archsimd.Float32x16, s []float32, m archsimd.Mask32x16) {
	v.StoreMasked((*[16]float32)(unsafe.Pointer(unsafe.SliceData(s))), m)
}
