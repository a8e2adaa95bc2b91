//go:build goexperiment.simd && amd64 && race

// Package simdpart: see part_amd64.go. Here the masked loads and stores go
// through a temporary, which checkptr accepts.
package simdpart

import (
	"math/bits"
	"simd/archsimd"
)

func Load16(s []float32) archsimd.Float32x16 {
	var t [16]float32
	copy(t[:], s)
	return archsimd.LoadFloat32x16(&t)
}

func Store16(v archsimd.Float32x16, s []float32) {
	var t [16]float32
	v.Store(&t)
	copy(s, t[:])
}

func Load8(s []float32) archsimd.Float32x8 {
	var t [8]float32
	copy(t[:], s)
	return archsimd.LoadFloat32x8(&t)
}

func Store8(v archsimd.Float32x8, s []float32) {
	var t [8]float32
	v.Store(&t)
	copy(s, t[:])
}

func Mask16(n int) archsimd.Mask32x16 { return archsimd.Mask32x16FromBits(uint16(1<<n - 1)) }

func LoadMasked16(s []float32, m archsimd.Mask32x16) archsimd.Float32x16 {
	var t [16]float32
	copy(t[:], s[:bits.OnesCount16(m.ToBits())])
	return archsimd.LoadMaskedFloat32x16(&t, m)
}

func StoreMasked16(v archsimd.Float32x16, s []float32, m archsimd.Mask32x16) {
	var t [16]float32
	v.Store(&t)
	copy(s[:bits.OnesCount16(m.ToBits())], t[:])
}
