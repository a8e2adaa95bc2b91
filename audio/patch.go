package audio

import (
	"fmt"
	"math"

	"romae/data"
)

// Normalize maps feats in place to (x − mean)/std, AST's dataset-level
// normalisation. AST itself divides by 2·std (its feature std becomes 0.5);
// pass 2·std to reproduce that. It panics if std is zero or not finite.
func Normalize(feats []float32, mean, std float32) {
	if std == 0 || math.IsNaN(float64(std)) || math.IsInf(float64(std), 0) {
		panic(fmt.Sprintf("audio: Normalize: std = %v", std))
	}
	inv := 1 / float64(std)
	for i, v := range feats {
		feats[i] = float32((float64(v) - float64(mean)) * inv)
	}
}

// MeanStd returns the mean and (population) standard deviation over all
// values of all feature matrices, accumulated in float64: the statistics to
// pass to Normalize. It returns (0, 1) when there are no values, and std 1
// when every value is equal.
func MeanStd(feats ...[]float32) (mean, std float32) {
	var n int
	var s, ss float64
	for _, f := range feats {
		for _, v := range f {
			s += float64(v)
		}
		n += len(f)
	}
	if n == 0 {
		return 0, 1
	}
	m := s / float64(n)
	for _, f := range feats {
		for _, v := range f {
			d := float64(v) - m
			ss += d * d
		}
	}
	sd := math.Sqrt(ss / float64(n))
	if sd == 0 {
		sd = 1
	}
	return float32(m), float32(sd)
}

// Patches cuts a frames×bins feature matrix (time-major, bin fastest, as
// Fbank returns it) into non-overlapping patchT×patchF patches, one token
// each. It pads rather than drops: the ragged end of either axis is padded
// up to a whole patch with the smallest value in feats, which is the floor
// value for a clip containing any silence (LogFloor before normalisation,
// its image after, because Normalize is increasing) and otherwise the
// quietest cell of the clip. Use PatchesPad to choose the pad value.
//
// Tokens run over the patch grid time-major: token k = i·nF + j for
// time-patch i and frequency-patch j. A token's patchT·patchF values are the
// patch flattened (time, freq) with freq fastest; its two positions are
// (i, j). n is the token count. It panics if the geometry is invalid
// (non-positive sizes or len(feats) ≠ frames·bins).
func Patches(feats []float32, frames, bins, patchT, patchF int) (values, positions []float32, n int) {
	var pad float32
	if len(feats) > 0 {
		pad = feats[0]
		for _, v := range feats {
			pad = min(pad, v)
		}
	}
	return PatchesPad(feats, frames, bins, patchT, patchF, pad)
}

// PatchesPad is Patches with an explicit pad value for the ragged ends.
func PatchesPad(feats []float32, frames, bins, patchT, patchF int, pad float32) (values, positions []float32, n int) {
	if frames < 0 || bins <= 0 || patchT <= 0 || patchF <= 0 || len(feats) != frames*bins {
		panic(fmt.Sprintf("audio: Patches: %d values for %d frames × %d bins, patch %d×%d", len(feats), frames, bins, patchT, patchF))
	}
	if frames == 0 {
		return nil, nil, 0
	}
	T := (frames + patchT - 1) / patchT * patchT
	F := (bins + patchF - 1) / patchF * patchF
	grid := feats
	if T != frames || F != bins {
		grid = make([]float32, T*F)
		for i := range grid {
			grid[i] = pad
		}
		for t := range frames {
			copy(grid[t*F:t*F+bins], feats[t*bins:(t+1)*bins])
		}
	}
	// A (1, T, F) grid with patch (1, patchT, patchF) and two positional
	// axes is exactly the (time, freq) patching described above.
	values, positions, err := data.Patchify(grid, [3]int{1, T, F}, 1, [3]int{1, patchT, patchF}, 2)
	if err != nil {
		panic("audio: Patches: " + err.Error()) // unreachable: geometry checked above
	}
	return values, positions, (T / patchT) * (F / patchF)
}
