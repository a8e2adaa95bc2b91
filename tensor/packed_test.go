package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmPacked checks GemmPacked against Gemm(false, true, …) on W as
// stored, and float32 GemmPackedSerial against GemmSerial, bit for bit: the packed layout is the one Gemm packs itself on
// every call, the k blocks are summed in the same order, and only the
// pack is skipped. It runs on every back end and both precisions, packing
// under one setting and multiplying under each (a served model's weights
// are packed once, rounded to bf16 if packed under bf16; a later
// SetBackend or SetPrecision must still give right answers), with strides
// wider than the matrices, both betas, and the model's shapes next to odd
// ones.
func TestGemmPacked(t *testing.T) {
	precisions := restoreSettings(t)
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		m, out, in  int
		alpha, beta float32
		pad         int // extra row stride on A and C
	}{
		{200, 540, 180, 1, 0, 0}, // q|k|v of a lone 200-token sample
		{200, 720, 180, 1, 0, 0}, // MLP in
		{200, 180, 720, 1, 0, 0}, // MLP out
		{batchRows(), 180, 180, 1, 0, 0},
		{1, 20, 180, 1, 1, 0}, // a classifier head on one [CLS] row
		{37, 33, 260, 0.5, 1, 3},
		{9, 800, 70, 1, 0, 5}, // n over one column block
		{8, 720, 180, 1, 0, 0},
		{32, 180, 720, 1, 0, 0}, // MLP out, a chunk of rows (model's rowTail): two k blocks
	}
	for _, tc := range cases {
		w32 := to32(randSlice(rng, tc.out*tc.in))
		w64 := randSlice(rng, tc.out*tc.in)
		lda, ldc := tc.in+tc.pad, tc.out+tc.pad
		a32, c0 := to32(randSlice(rng, tc.m*lda)), to32(randSlice(rng, tc.m*ldc))
		a64, c064 := randSlice(rng, tc.m*lda), randSlice(rng, tc.m*ldc)
		for _, packBE := range Backends() {
			for _, packPrec := range precisions {
				SetBackend(packBE.Name())
				if err := SetPrecision(packPrec); err != nil {
					t.Fatal(err)
				}
				p32 := PackWeight(w32, tc.out, tc.in)
				p64 := PackWeight(w64, tc.out, tc.in)
				for _, be := range Backends() {
					for _, prec := range precisions {
						name := fmt.Sprintf("m%d_%dx%d_packed-%s-%s_run-%s-%s", tc.m, tc.out, tc.in, packBE.Name(), packPrec, be.Name(), prec)
						t.Run(name, func(t *testing.T) {
							SetBackend(be.Name())
							if err := SetPrecision(prec); err != nil {
								t.Fatal(err)
							}
							defer SetPrecision(PrecisionFP32)
							want := append([]float32(nil), c0...)
							got := append([]float32(nil), c0...)
							Gemm(false, true, tc.m, tc.out, tc.in, tc.alpha, a32, lda, w32, tc.in, tc.beta, want, ldc)
							GemmPacked(tc.m, tc.alpha, a32, lda, p32, tc.beta, got, ldc)
							for i := range want {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("float32 C[%d] = %v, Gemm gives %v", i, got[i], want[i])
								}
							}
							want64 := append([]float64(nil), c064...)
							got64 := append([]float64(nil), c064...)
							Gemm(false, true, tc.m, tc.out, tc.in, float64(tc.alpha), a64, lda, w64, tc.in, float64(tc.beta), want64, ldc)
							GemmPacked(tc.m, float64(tc.alpha), a64, lda, p64, float64(tc.beta), got64, ldc)
							for i := range want64 {
								if got64[i] != want64[i] {
									t.Fatalf("float64 C[%d] = %v, Gemm gives %v", i, got64[i], want64[i])
								}
							}
							if packBE != be || packPrec != prec || tc.m > 64 {
								// GemmPackedSerial is GemmPacked's driver with one
								// worker (float64's fallback is the same line):
								// once per setting, on the chunks of rows it is
								// called with, is enough.
								return
							}
							copy(want, c0)
							copy(got, c0)
							GemmSerial(false, true, tc.m, tc.out, tc.in, tc.alpha, a32, lda, w32, tc.in, tc.beta, want, ldc)
							GemmPackedSerial(tc.m, tc.alpha, a32, lda, p32, tc.beta, got, ldc)
							for i := range want {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("float32 C[%d] = %v from GemmPackedSerial, GemmSerial gives %v", i, got[i], want[i])
								}
							}
						})
					}
				}
			}
		}
	}
}

// restoreSettings puts the back end and precision back as they were when
// t ends, and returns the precisions this CPU can run.
func restoreSettings(t *testing.T) []string {
	prevBackend := BackendName()
	t.Cleanup(func() { SetBackend(prevBackend); SetPrecision(PrecisionFP32) })
	precisions := []string{PrecisionFP32}
	if BF16Supported() {
		precisions = append(precisions, PrecisionBF16)
	}
	return precisions
}

// TestPackWeightPanics: a weight shorter than [out, in] is a programmer
// error, named at the call, not an index panic in a kernel later.
func TestPackWeightPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("PackWeight of 5 floats as [2, 3] did not panic")
		}
	}()
	PackWeight(make([]float32, 5), 2, 3)
}

// TestRepack: a weight repacked in place (training packs each step's
// weight once per pass) gives Gemm's products bit for bit, whatever the
// memory it reuses held before: the buffers are filled with NaN first,
// which any element the packing failed to write (a padding column, an
// odd k's zero half) would carry into C. The shapes leave partial
// slivers and odd k; the pack runs under every back end and precision,
// repacking after a switch of precision too.
func TestRepack(t *testing.T) {
	precisions := restoreSettings(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct{ m, out, in int }{{64, 540, 180}, {19, 45, 37}, {33, 20, 181}} {
		w1, w2 := to32(randSlice(rng, s.out*s.in)), to32(randSlice(rng, s.out*s.in))
		a := to32(randSlice(rng, s.m*s.in))
		for _, be := range Backends() {
			for i, prec := range precisions {
				t.Run(fmt.Sprintf("%dx%d_%s_%s", s.out, s.in, be.Name(), prec), func(t *testing.T) {
					SetBackend(be.Name())
					// Packed first under the other precision: the repack
					// must change layout, reusing what memory it can.
					if err := SetPrecision(precisions[(i+1)%len(precisions)]); err != nil {
						t.Fatal(err)
					}
					p := PackWeight(w1, s.out, s.in)
					if err := SetPrecision(prec); err != nil {
						t.Fatal(err)
					}
					p.Repack(w1)
					for j := range p.packed {
						p.packed[j] = float32(math.NaN())
					}
					for j := range p.packedBF {
						p.packedBF[j] = 0x7fc07fc0 // a bf16 NaN in both halves
					}
					held32, heldBF := p.packed, p.packedBF
					p.Repack(w2)
					if len(held32) > 0 && &p.packed[0] != &held32[0] || len(heldBF) > 0 && &p.packedBF[0] != &heldBF[0] {
						t.Error("Repack of a same-shaped weight allocated new memory")
					}
					if want := p.packed != nil || p.packedBF != nil; p.InKernelOrder() != want {
						t.Errorf("InKernelOrder() = %v with packed %v, packedBF %v", !want, p.packed != nil, p.packedBF != nil)
					}
					want, got := make([]float32, s.m*s.out), make([]float32, s.m*s.out)
					Gemm(false, true, s.m, s.out, s.in, 1, a, s.in, w2, s.in, 0, want, s.out)
					GemmPacked(s.m, 1, a, s.in, p, 0, got, s.out)
					for j := range want {
						if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
							t.Fatalf("C[%d] = %v, Gemm on the new weight gives %v", j, got[j], want[j])
						}
					}
				})
			}
		}
	}
	// Packed under avx512 (fp32), used under gonum: the layout is not
	// the kernel's any more, and InKernelOrder must say so.
	if err := SetPrecision(PrecisionFP32); err != nil {
		t.Fatal(err)
	}
	if SetBackend("avx512") != nil {
		return // no avx512 back end in this build
	}
	p := PackWeight(to32(randSlice(rng, 40*30)), 40, 30)
	SetBackend("gonum")
	if p.InKernelOrder() {
		t.Error("InKernelOrder() under gonum for a weight packed under avx512")
	}
}
