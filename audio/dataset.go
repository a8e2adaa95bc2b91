package audio

import (
	"fmt"
	"math"
	"slices"

	"romae/data"
)

// DatasetOptions configures SpeechCommandsDataset. Zero fields take the
// defaults shown.
type DatasetOptions struct {
	Name       string       // dataset name, default "speech-commands"
	SampleRate int          // every clip is resampled to this rate, default 16000
	Fbank      FbankOptions // zero value → DefaultFbankOptions()
	// TargetFrames pads (with LogFloor) or cuts every clip's features to
	// this many frames, as AST does (it uses 128 frames for 1 s Speech
	// Commands clips). 0 → the longest clip's frame count, rounded up to a
	// multiple of PatchT.
	TargetFrames   int
	PatchT, PatchF int // patch size in frames × mel bins, default 16×16
	// Mean and Std are the normalisation statistics (Normalize). When Std
	// is 0 both are estimated with MeanStd over the unpadded features of
	// all clips given (labels are not used, but for a strict protocol
	// estimate them on the training clips and pass them in). AST divides by
	// 2·std: set Std to twice the dataset std to reproduce that.
	Mean, Std float32
	// Classes fixes the label order; every clip label must be in it. nil →
	// the distinct labels, sorted.
	Classes []string
}

// SpeechCommandsDataset turns labelled clips into a RoMAE dataset: each
// clip is resampled to opt.SampleRate, converted to Kaldi log-mel features
// (Fbank), padded with LogFloor or cut to TargetFrames frames, normalised
// with (Mean, Std) and cut into PatchT×PatchF patches (Patches). The result
// has C = PatchT·PatchF values per token, D = 2 positions per token
// (time-patch index, mel-patch index), Classes as described in
// DatasetOptions, one sample per clip (ID = clip ID, Label = class index),
// and it passes data.Dataset.Validate. Every sample has the same number of
// tokens: ⌈TargetFrames/PatchT⌉·⌈NumMelBins/PatchF⌉.
func SpeechCommandsDataset(clips []LabeledClip, opt DatasetOptions) (*data.Dataset, error) {
	if len(clips) == 0 {
		return nil, fmt.Errorf("audio: SpeechCommandsDataset: no clips")
	}
	if opt.Name == "" {
		opt.Name = "speech-commands"
	}
	if opt.SampleRate <= 0 {
		opt.SampleRate = 16000
	}
	if opt.Fbank == (FbankOptions{}) {
		opt.Fbank = DefaultFbankOptions()
	}
	if opt.PatchT <= 0 {
		opt.PatchT = 16
	}
	if opt.PatchF <= 0 {
		opt.PatchF = 16
	}
	classes := opt.Classes
	if classes == nil {
		for _, c := range clips {
			classes = append(classes, c.Label)
		}
		slices.Sort(classes)
		classes = slices.Compact(classes)
	}
	index := make(map[string]int, len(classes))
	for i, c := range classes {
		if _, dup := index[c]; dup {
			return nil, fmt.Errorf("audio: SpeechCommandsDataset: class %q listed twice", c)
		}
		index[c] = i
	}

	bins := opt.Fbank.NumMelBins
	feats := make([][]float32, len(clips))
	frames := make([]int, len(clips))
	longest := 0
	for i, c := range clips {
		if _, ok := index[c.Label]; !ok {
			return nil, fmt.Errorf("audio: clip %d (%s): label %q not in classes %q", i, c.ID, c.Label, classes)
		}
		if c.Clip == nil {
			return nil, fmt.Errorf("audio: clip %d (%s): nil Clip", i, c.ID)
		}
		clip, err := Resample(c.Clip, opt.SampleRate)
		if err != nil {
			return nil, fmt.Errorf("audio: clip %d (%s): %w", i, c.ID, err)
		}
		f, nf, err := Fbank(clip.Samples, clip.SampleRate, opt.Fbank)
		if err != nil {
			return nil, fmt.Errorf("audio: clip %d (%s): %w", i, c.ID, err)
		}
		feats[i], frames[i] = f, nf
		longest = max(longest, nf)
	}
	target := opt.TargetFrames
	if target <= 0 {
		target = (max(longest, 1) + opt.PatchT - 1) / opt.PatchT * opt.PatchT
	}
	mean, std := opt.Mean, opt.Std
	if std == 0 {
		mean, std = MeanStd(feats...)
	}
	if math.IsNaN(float64(std)) || math.IsInf(float64(std), 0) || std < 0 {
		return nil, fmt.Errorf("audio: SpeechCommandsDataset: Std = %v", std)
	}

	ds := &data.Dataset{
		Name:    opt.Name,
		C:       opt.PatchT * opt.PatchF,
		D:       2,
		Classes: slices.Clone(classes),
		Samples: make([]data.Sample, len(clips)),
	}
	for i, c := range clips {
		grid := make([]float32, target*bins)
		copy(grid, feats[i][:min(frames[i], target)*bins])
		for j := min(frames[i], target) * bins; j < len(grid); j++ {
			grid[j] = LogFloor
		}
		Normalize(grid, mean, std)
		padValue := (LogFloor - mean) / std
		vals, pos, _ := PatchesPad(grid, target, bins, opt.PatchT, opt.PatchF, padValue)
		ds.Samples[i] = data.Sample{ID: c.ID, Values: vals, Positions: pos, Label: index[c.Label]}
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("audio: %w", err)
	}
	return ds, nil
}
