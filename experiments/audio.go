package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"romae/audio"
	"romae/data"
	"romae/internal/figure"
	"romae/model"
	"romae/train"
)

func init() {
	register(Experiment{"audio", "Table 3 stand-in: spoken words from espeak-ng (voices × speeds), Kaldi log-mel, 16×16 patches, pre-train + fine-tune, accuracy", runAudio})
}

// audioWords are the classes: Speech Commands keywords, spoken by espeak-ng.
var audioWords = []string{"yes", "no", "up", "down", "left", "right", "stop", "go"}

// audioVoices are espeak-ng voices and variants (different accents and
// synthetic speakers); each is a separate "speaker".
var audioVoices = []string{"en-us", "en-gb", "en-gb-scotland", "en+m3", "en+f2", "en-us+f4", "en-us+klatt", "en+m1", "en-gb-x-rp+f3"}

// audioSpeeds are espeak-ng speaking rates in words per minute.
var audioSpeeds = []int{120, 150, 175, 210, 250}

// audioFrames is the clip length in 10 ms frames (1.28 s, AST's 128 frames
// for 1 s Speech Commands clips): 8 × 8 patches of 16 frames × 16 mel bins.
const audioFrames = 128

// audioClips synthesises the word clips with espeak-ng, or, when espeak-ng is
// not installed, generates the package's synthetic tones with as many
// classes and clips; note says which.
func audioClips(words, voices []string, speeds []int, seed uint64) (clips []audio.LabeledClip, note string, err error) {
	if err := audio.ExecAvailable(); err != nil {
		per := len(voices) * len(speeds)
		clips = audio.Tones(audio.ToneOptions{Classes: len(words), PerClass: per, Seed: seed})
		return clips, fmt.Sprintf("espeak-ng is not available (%v): the clips are audio.Tones' synthetic tones (%d classes × %d clips), not speech.", err, len(words), per), nil
	}
	dir, err := os.MkdirTemp("", "romae-audio-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	clips, err = audio.SpeakWords(dir, words, voices, speeds)
	if err != nil {
		return nil, "", err
	}
	return clips, fmt.Sprintf("Clips: espeak-ng, %d words × %d voices %v × %d speeds %v wpm = %d clips (22.05 kHz, resampled to 16 kHz).",
		len(words), len(voices), voices, len(speeds), speeds, len(clips)), nil
}

// splitClips deals each class's clips out at random: a fraction test of
// them to the test set, the rest to training (stratified, so chance is 1/K
// on both).
func splitClips(clips []audio.LabeledClip, test float64, rng *rand.Rand) (tr, te []audio.LabeledClip) {
	byLabel := map[string][]audio.LabeledClip{}
	var order []string
	for _, c := range clips {
		if _, ok := byLabel[c.Label]; !ok {
			order = append(order, c.Label)
		}
		byLabel[c.Label] = append(byLabel[c.Label], c)
	}
	for _, l := range order {
		cs := byLabel[l]
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		k := int(float64(len(cs))*test + 0.5)
		te, tr = append(te, cs[:k]...), append(tr, cs[k:]...)
	}
	return tr, te
}

// audioStats are the mean and std of the training clips' log-mel features
// (the dataset-level normalisation of AST), computed on training data only.
func audioStats(clips []audio.LabeledClip, opt audio.FbankOptions) (mean, std float32, err error) {
	feats := make([][]float32, len(clips))
	for i, c := range clips {
		cl, err := audio.Resample(c.Clip, 16000)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", c.ID, err)
		}
		if feats[i], _, err = audio.Fbank(cl.Samples, cl.SampleRate, opt); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", c.ID, err)
		}
	}
	mean, std = audio.MeanStd(feats...)
	return mean, std, nil
}

func runAudio(ctx context.Context, o *Options, r *Result) error {
	words := pick(o, audioWords[:4], audioWords, audioWords)
	voices := pick(o, audioVoices[:4], audioVoices, audioVoices)
	speeds := pick(o, audioSpeeds[1:4], audioSpeeds, audioSpeeds)
	r.Seeds = o.seeds(1, 1, 3)
	var accs []float64
	var fig []figure.Series
	var srcNote string
	for seed := 1; seed <= r.Seeds; seed++ {
		clips, note, err := audioClips(words, voices, speeds, uint64(seed))
		if err != nil {
			return err
		}
		srcNote = note
		trc, tec := splitClips(clips, 0.25, rand.New(rand.NewPCG(uint64(seed), 11)))
		fb := audio.DefaultFbankOptions()
		fb.Window = audio.WindowHanning // AST/SSAST's window
		mean, std, err := audioStats(trc, fb)
		if err != nil {
			return err
		}
		opt := audio.DatasetOptions{Name: "espeak-words", Fbank: fb, TargetFrames: audioFrames, PatchT: 16, PatchF: 16,
			Mean: mean, Std: std, Classes: sortedLabels(clips)}
		tr, err := audio.SpeechCommandsDataset(trc, opt)
		if err != nil {
			return err
		}
		te, err := audio.SpeechCommandsDataset(tec, opt)
		if err != nil {
			return err
		}
		shiftPositions(tr, 1)
		shiftPositions(te, 1)
		// The log-mel features are scaled by the fbank options above; the
		// saved test clips are the model's input as is.
		teFile, err := o.saveTestData(fmt.Sprintf("espeak-words-test-seed%d", seed), te)
		if err != nil {
			return err
		}

		c := model.DefaultConfig()
		c.Values, c.PosDims, c.Task, c.NormTargets = tr.C, 2, model.TaskPretrain, true
		c.Encoder = pick(o, model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 48}, model.Sizes["tiny-shallow"], model.Sizes["small"])
		c.Decoder = pick(o, model.Size{DModel: 24, Heads: 2, Depth: 1, FFN: 48}, model.Size{DModel: 120, Heads: 2, Depth: 1, FFN: 480}, model.Sizes["tiny-shallow"])
		pm := newModel(c, uint64(seed))
		// Pre-training (SSAST-style masked patch reconstruction, 75% of the
		// 64 patches masked, per-patch normalised targets) on the training
		// clips only; the paper pre-trains on Librispeech / AudioSet.
		tc := train.DefaultConfig()
		tc.Optimizer, tc.LR, tc.BatchSize, tc.Seed, tc.MaskRatio = "adamw", 1e-3, 16, uint64(seed), 0.75
		tc.Epochs = pick(o, 4, 40, 200)
		tc.EvalEvery = tc.Epochs
		ft := train.DefaultConfig()
		ft.Optimizer, ft.LR, ft.BatchSize, ft.Seed, ft.LabelSmoothing = "adamw", pick(o, 3e-3, 5e-4, 5e-4), 16, uint64(seed), 0.1
		ft.Epochs = pick(o, 25, 40, 50)
		ft.EvalEvery = ft.Epochs
		met, err := pretrainFinetune(ctx, o, r, fmt.Sprintf("seed%d", seed), c, pm, tc, ft, tr, te, &data.Spec{Generated: "espeak-words", Classes: tr.Classes}, teFile, 64)
		if err != nil {
			return err
		}
		accs = append(accs, met.Accuracy)
		o.logf("audio seed %d: test accuracy %.4f on %d clips", seed, met.Accuracy, len(te.Samples))
		if seed == 1 {
			s := figure.Series{Name: "RoMAE, per-class test accuracy", Points: true}
			for k, row := range met.Confusion {
				n := 0
				for _, v := range row {
					n += v
				}
				s.X, s.Y = append(s.X, float64(k)), append(s.Y, float64(row[k])/float64(max(n, 1)))
			}
			chance := 1 / float64(len(tr.Classes))
			fig = append(fig, s, figure.Series{Name: "chance", X: []float64{0, float64(len(tr.Classes) - 1)}, Y: []float64{chance, chance}})
		}
	}
	r.addRow(Row{Experiment: "audio", Setting: fmt.Sprintf("%d spoken words, held-out 25%% of clips, pre-train + fine-tune", len(words)),
		Metric: "accuracy", Paper: "ESC-50: 83.2 (Librispeech), 84.7 (AudioSet-20k)", Values: accs,
		Baseline: 1 / float64(len(words)), BaselineIs: "chance (balanced classes)"})
	path := filepath.Join(o.Out, "audio.png")
	if err := figure.Save(path, fmt.Sprintf("Spoken words: per-class test accuracy (classes %v)", words), "class index", "accuracy", fig); err != nil {
		return err
	}
	r.Figures = append(r.Figures, path)
	encName := pick(o, "d 24, depth 2 (wiring check)", "RoMAE-tiny-shallow", "RoMAE-small")
	r.Notes = append(r.Notes, srcNote,
		fmt.Sprintf("Stand-in for Table 3 (ESC-50 numbers are not comparable): Kaldi log-mel filterbanks (audio.Fbank: 128 bins, 25 ms Hanning window, 10 ms shift, 16 kHz), clips padded/cut to %d frames, normalised with the training clips' mean and std, cut into 16×16 patches (8×8 grid), 2-D positions (time patch, mel patch) + 1 so no patch sits on [CLS]. %s encoder, MAE pre-training (75%% masking) on the training clips, then full fine-tuning; the test set is used once.", audioFrames, encName),
		"Test clips are a stratified random 25% of all (word, voice, speed) clips, so the same voice appears in training at other speeds; only pipeline correctness and an above-chance result are claimed.")
	return nil
}

// sortedLabels lists the distinct clip labels, sorted.
func sortedLabels(clips []audio.LabeledClip) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range clips {
		if !seen[c.Label] {
			seen[c.Label] = true
			out = append(out, c.Label)
		}
	}
	sort.Strings(out)
	return out
}
