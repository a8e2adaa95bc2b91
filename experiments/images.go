package experiments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"romae/data"
	"romae/datasets"
	"romae/internal/figure"
	"romae/model"
	"romae/train"
)

func init() {
	register(Experiment{"images", "Table 2 stand-in: Fashion-MNIST, 7×7 patches, MAE pre-training then fine-tuning; RoPE + [CLS] vs RoPE without [CLS] vs absolute sin/cos", runImages})
}

// imagesPatch is the patch side: 28×28 images become a 4×4 grid of 7×7
// patches, the same 16-token grid as the paper's 64×64 Tiny ImageNet images
// cut into 16×16 patches (Table 2).
const imagesPatch = 7

// imageSetting is one column of Table 2.
type imageSetting struct {
	name, paper string
	cls         bool
	pos         string
}

// imageSettings are Table 2's three encoders. The absolute baseline keeps
// [CLS] (pooling on it), since only the positional encoding changes.
var imageSettings = []imageSetting{
	{"RoPE + [CLS]", "0.475", true, model.PosRoPE},
	{"RoPE, no [CLS] (mean pool)", "0.500", false, model.PosRoPE},
	{"absolute sin/cos + [CLS]", "0.479", true, model.PosAbsolute},
}

// ErrNoFashionMNIST is returned (wrapped) when Debian's Fashion-MNIST files
// are not installed.
var ErrNoFashionMNIST = errors.New("Fashion-MNIST not found: install Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist)")

// fashionMNIST loads n training and nTest test images as patch datasets,
// positions shifted by +1 so no patch shares (0, 0) with [CLS] (the
// authors' prepare_positions; their image scripts did not shift), and the
// statistics that standardise them: the training pixels' global mean and
// std (one number for all pixels, the usual image normalisation, so every
// patch keeps its relative brightness), repeated for every value slot.
func fashionMNIST(n, nTest int) (tr, te *data.Dataset, stats data.Stats, err error) {
	dir := datasets.FashionMNISTDir()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, stats, fmt.Errorf("%s: %w", dir, ErrNoFashionMNIST)
	}
	load := func(split string, k int) (*data.Dataset, error) {
		img, lab, err := datasets.LoadFashionMNIST(dir, split)
		if err != nil {
			return nil, err
		}
		return datasets.Images(img, lab, k, 28, 28, imagesPatch, datasets.FashionMNISTClasses)
	}
	if tr, err = load("train", n); err != nil {
		return nil, nil, stats, err
	}
	if te, err = load("test", nTest); err != nil {
		return nil, nil, stats, err
	}
	var s, s2, cnt float64
	for _, smp := range tr.Samples {
		for _, v := range smp.Values {
			s += float64(v)
			s2 += float64(v) * float64(v)
			cnt++
		}
	}
	mean := s / cnt
	std := sqrt(s2/cnt - mean*mean)
	for k := 0; k < tr.C; k++ {
		stats.Mean, stats.Std = append(stats.Mean, mean), append(stats.Std, std)
	}
	shiftPositions(tr, 1)
	shiftPositions(te, 1)
	return tr, te, stats, nil
}

func runImages(ctx context.Context, o *Options, r *Result) error {
	nTrain, nTest := pick(o, 512, 8000, 60000), pick(o, 256, 2000, 10000)
	tr, te, stats, err := fashionMNIST(nTrain, nTest)
	if err != nil {
		return err
	}
	teFile, err := o.saveTestData("fashion-mnist-test", te)
	if err != nil {
		return err
	}
	spec := &data.Spec{Generated: "fashion-mnist", Stats: &stats, Classes: tr.Classes}
	if err := spec.Prepare(tr, "fashion-mnist train"); err != nil {
		return err
	}
	if err := spec.Prepare(te, teFile); err != nil {
		return err
	}
	r.Seeds = o.seeds(1, 1, 3)
	enc := pick(o, model.Size{DModel: 24, Heads: 2, Depth: 2, FFN: 48}, model.Sizes["tiny-shallow"], model.Sizes["small"])
	dec := pick(o, model.Size{DModel: 24, Heads: 2, Depth: 1, FFN: 48}, model.Size{DModel: 120, Heads: 2, Depth: 1, FFN: 480}, model.Sizes["tiny-shallow"])
	var fig []figure.Series
	for si, st := range imageSettings {
		var accs []float64
		for seed := 1; seed <= r.Seeds; seed++ {
			c := model.DefaultConfig()
			c.Encoder, c.Decoder = enc, dec
			c.Values, c.PosDims, c.PosEncoding, c.UseCLS = tr.C, 2, st.pos, st.cls
			c.Task, c.NormTargets = model.TaskPretrain, true
			if !st.cls {
				c.Pool = model.PoolMean
			}
			pm := newModel(c, uint64(seed))
			// Pre-training: MAE recipe (75% masking, per-patch normalised
			// targets), AdamW lr 1e-3 (batch 64; the paper's image lr is not
			// in PAPER.md), wd 0.05, 5% warm-up, cosine, clip 1.
			tc := train.DefaultConfig()
			tc.Optimizer, tc.LR, tc.BatchSize, tc.Seed, tc.MaskRatio = "adamw", 1e-3, 64, uint64(seed), 0.75
			tc.Epochs = pick(o, 3, 4, 200)
			tc.EvalEvery = tc.Epochs
			// Fine-tuning: every encoder weight is trained (full fine-tuning),
			// AdamW lr 5e-4 (1e-3 for the short quick schedule, 3e-3 for tiny), wd 0.05, label smoothing 0.1, head dropout 0.1.
			ft := train.DefaultConfig()
			ft.Optimizer, ft.LR, ft.BatchSize, ft.Seed, ft.LabelSmoothing = "adamw", pick(o, 3e-3, 1e-3, 5e-4), 64, uint64(seed), 0.1
			ft.Epochs = pick(o, 8, 4, 15)
			ft.EvalEvery = ft.Epochs
			met, err := pretrainFinetune(ctx, o, r, fmt.Sprintf("setting%d-seed%d", si, seed), c, pm, tc, ft, tr, te, spec, teFile, 256)
			if err != nil {
				return err
			}
			accs = append(accs, met.Accuracy)
			o.logf("images %s seed %d: test accuracy %.4f", st.name, seed, met.Accuracy)
		}
		r.addRow(Row{Experiment: "images", Setting: "Fashion-MNIST, " + st.name, Metric: "accuracy",
			Paper: st.paper + " (Tiny ImageNet)", Values: accs, Baseline: 0.1, BaselineIs: "chance (10 balanced classes)"})
		row := r.Rows[len(r.Rows)-1]
		fig = append(fig, figure.Series{Name: st.name, X: []float64{float64(si)}, Y: []float64{row.Mean}, Errs: []float64{row.Std}, Points: true})
	}
	fig = append(fig, figure.Series{Name: "chance", X: []float64{-0.2, 2.2}, Y: []float64{0.1, 0.1}})
	path := filepath.Join(o.Out, "images.png")
	if err := figure.Save(path, "Fashion-MNIST test accuracy by positional encoding (cf. Table 2)", "setting (0: RoPE+[CLS], 1: RoPE mean-pool, 2: absolute)", "accuracy", fig); err != nil {
		return err
	}
	r.Figures = append(r.Figures, path)
	encName := pick(o, "d 24, depth 2 (wiring check)", "RoMAE-tiny-shallow", "RoMAE-small")
	r.Notes = append(r.Notes,
		fmt.Sprintf("Stand-in for Table 2: the paper's numbers are Tiny ImageNet (200 classes, 64×64, RoMAE-small, 200 pre-training + 15 fine-tuning epochs), ours are Fashion-MNIST (10 classes, 28×28, Debian's dataset-fashion-mnist); compare the ordering of the settings, not the values. %d training / %d test images, %s encoder.", nTrain, nTest, encName),
		"Tokens: 7×7 patches, a 4×4 grid (the same 16 tokens as 64×64 images in 16×16 patches), 2-D positions (row, column) + 1 so no patch sits on [CLS]'s (0, 0); pixels standardised with the training set's global mean and std.",
		"Each setting is pre-trained (MAE, 75% masking, per-patch normalised targets) and then fully fine-tuned; the test set is used once, after the last fine-tuning epoch.",
		"Paper budget (not run here): RoMAE-small on all 60 000 images, 200 pre-training + 15 fine-tuning epochs, 3 settings × 3 seeds. Estimate from FLOPs (~0.8 GFLOP per pre-training sample with 4 of 16 patches visible, ~2.7 GFLOP per fine-tuning sample, ~100 GFLOP/s sustained on 2 cores): about 35 hours per setting and seed, some 13 days in all.")
	return nil
}
