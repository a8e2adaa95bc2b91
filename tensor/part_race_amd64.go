//go:build goexperiment.simd && amd64 && race

package tensor

import "simd/archsimd"

// loadPart and storePart (and the 8-lane pair) through a temporary: what
// checkptr accepts (see part_amd64.go).
func loadPart(s []float32) archsimd.Float32x16 {
	var t [16]float32
	copy(t[:], s)
	return archsimd.LoadFloat32x16(&t)
}

func storePart(v archsimd.Float32x16, s []float32) {
	var t [16]float32
	v.Store(&t)
	copy(s, t[:])
}

func loadPart8(s []float32) archsimd.Float32x8 {
	var t [8]float32
	copy(t[:], s)
	return archsimd.LoadFloat32x8(&t)
}

func storePart8(v archsimd.Float32x8, s []float32) {
	var t [8]float32
	v.Store(&t)
	copy(s, t[:])
}
