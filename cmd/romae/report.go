package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"romae/ckpt"
	"romae/data"
	"romae/eval"
	"romae/experiments"
	"romae/model"
	"romae/report"
	"romae/train"
)

func init() {
	commands["report"] = command{"a run's or an experiment's results as one self-contained HTML page", cmdReport}
}

// reportOptions are report's flags.
type reportOptions struct {
	data     string // series for the example interpolations (default: the run's training file)
	examples int
}

func cmdReport(_ context.Context, args []string) error {
	fs := newFlagSet("report", "report --run DIR [--out FILE] [--data FILE] [--examples N]")
	run := fs.String("run", "", "a run directory (metrics.jsonl, checkpoints) or an experiment's output directory (results.json, runs/)")
	out := fs.String("out", "", "HTML file to write (default: DIR/report.html)")
	var o reportOptions
	fs.StringVar(&o.data, "data", "", "pre-trained models: series to draw the example interpolations from (default: the run's training file)")
	fs.IntVar(&o.examples, "examples", 3, "pre-trained models: example series to draw (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *run == "":
		return fmt.Errorf("--run is required")
	case o.examples < 0 || o.examples > 50:
		return fmt.Errorf("--examples %d: want 0 to 50", o.examples)
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q (the directory is --run DIR)", fs.Arg(0))
	}
	if err := checkOutput(*out, ".html", ".htm"); err != nil {
		return err
	}
	var page *report.Page
	var err error
	if _, serr := os.Stat(filepath.Join(*run, "results.json")); serr == nil {
		page, err = experimentPage(*run)
	} else {
		page, err = runPage(*run, o)
	}
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(*run, "report.html")
	}
	if err := ckpt.WriteFileAtomic(*out, page.WriteHTML); err != nil {
		return err
	}
	fmt.Println(*out)
	return nil
}

// runPage is the report of one training run.
func runPage(dir string, o reportOptions) (*report.Page, error) {
	if isFoldsRun(dir) {
		return foldsPage(dir)
	}
	r, err := readRun(dir)
	if err != nil {
		return nil, err
	}
	page := &report.Page{Title: "romae run " + dir, Subtitle: r.subtitle()}
	page.Sections = append(page.Sections, r.summary(), r.curves())
	if c := r.confusion(); c != nil {
		page.Sections = append(page.Sections, report.Section{Title: "Confusion matrix", Blocks: []report.Block{c}})
	}
	page.Sections = append(page.Sections, holdoutSections(dir)...)
	if r.m != nil && r.m.Cfg.Task == model.TaskPretrain && o.examples > 0 {
		page.Sections = append(page.Sections, r.interpolations(cmp.Or(o.data, r.spec.Train), o.examples))
	}
	page.Sections = append(page.Sections, r.dataSection(), r.configSection())
	return page, nil
}

// experimentPage is the report of `romae experiment`'s output directory:
// its results, notes and figures, then every run it trained, folded.
func experimentPage(dir string) (*report.Page, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var res experiments.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	page := &report.Page{Title: "romae experiment " + res.Name,
		Subtitle: fmt.Sprintf("budget %s, %d seeds, %.0f s; %s", res.Budget, res.Seeds, res.Seconds, res.Command)}
	rows := report.Table{Header: []string{"setting", "metric", "paper", "romae (mean ± std)", "per seed", "baseline"}}
	for _, r := range res.Rows {
		var seeds []string
		for _, v := range r.Values {
			seeds = append(seeds, strconv.FormatFloat(v, 'g', 4, 64))
		}
		base := ""
		if r.BaselineIs != "" {
			base = fmt.Sprintf("%.4g (%s)", r.Baseline, r.BaselineIs)
		}
		rows.Rows = append(rows.Rows, []string{r.Setting, r.Metric, r.Paper, fmt.Sprintf("%.4g ± %.2g", r.Mean, r.Std), strings.Join(seeds, ", "), base})
	}
	results := report.Section{Title: "Results", Blocks: []report.Block{rows}}
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "|") { // a Markdown table: keep its columns
			results.Blocks = append(results.Blocks, report.Code{Text: n})
		} else {
			results.Blocks = append(results.Blocks, report.Text(n))
		}
	}
	for _, f := range res.Figures {
		// Figures are recorded relative to where the experiment ran; the
		// directory itself holds them.
		png, err := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
		if err != nil {
			results.Blocks = append(results.Blocks, report.Text(fmt.Sprintf("figure %s: %v", f, err)))
			continue
		}
		results.Blocks = append(results.Blocks, report.Image{Title: filepath.Base(f), PNG: png})
	}
	if len(res.Reproduce) > 0 {
		t := report.Table{Caption: "Each number again from the saved checkpoint", Header: []string{"metric", "value", "command"}}
		for _, rp := range res.Reproduce {
			t.Rows = append(t.Rows, []string{rp.Metric, strconv.FormatFloat(rp.Value, 'g', 6, 64),
				strings.Join(append([]string{"romae evaluate --model", rp.Model, "--data", rp.Data}, rp.Args...), " ")})
		}
		results.Blocks = append(results.Blocks, t)
	}
	page.Sections = append(page.Sections, results)
	runs, _ := filepath.Glob(filepath.Join(dir, "runs", "*", train.MetricsFile))
	sort.Strings(runs)
	for _, mf := range runs {
		r, err := readRun(filepath.Dir(mf))
		if err != nil {
			return nil, err
		}
		s := report.Section{Title: "run " + filepath.Base(r.dir) + ": " + r.subtitle(), Collapsed: true}
		s.Blocks = append(s.Blocks, r.summary().Blocks...)
		s.Blocks = append(s.Blocks, r.curves().Blocks...)
		if c := r.confusion(); c != nil {
			s.Blocks = append(s.Blocks, c)
		}
		for _, h := range holdoutSections(r.dir) {
			s.Blocks = append(append(s.Blocks, report.Text(h.Title)), h.Blocks...)
		}
		page.Sections = append(page.Sections, s)
	}
	return page, nil
}

// isFoldsRun reports whether dir is a data.folds run: fold runs inside, no
// training curves of its own.
func isFoldsRun(dir string) bool {
	_, own := os.Stat(filepath.Join(dir, train.MetricsFile))
	_, fold := os.Stat(filepath.Join(foldDir(dir, 1), train.MetricsFile))
	return own != nil && fold == nil
}

// foldsPage is the report of a data.folds run: the out-of-fold metrics and
// confusion matrix, each fold's training curves, and the data and
// configuration (the first fold's, which every fold shares).
func foldsPage(dir string) (*report.Page, error) {
	first, err := readRun(foldDir(dir, 1))
	if err != nil {
		return nil, err
	}
	var res struct {
		Folds   int           `json:"folds"`
		CV      *eval.Metrics `json:"cv"`
		Seconds float64       `json:"seconds"`
	}
	t := report.Table{Header: []string{"", ""}}
	add := func(k string, v any) { t.Rows = append(t.Rows, []string{k, fmt.Sprint(v)}) }
	if raw, err := os.ReadFile(filepath.Join(dir, "result.json")); err == nil {
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "result.json"), err)
		}
		add("model", fmt.Sprintf("%s: the ensemble of the %d fold models (outputs averaged)", filepath.Join(dir, train.BestFile), res.Folds))
		add("seconds (all folds)", strconv.FormatFloat(res.Seconds, 'f', 1, 64))
	} else {
		add("result.json", "none: the run has not finished (resume it with --train.resume)")
	}
	if first.ck != nil && first.ck.Meta["romae.pretrained_from"] != "" {
		add("pre-trained encoder from", first.ck.Meta["romae.pretrained_from"])
	}
	if res.CV != nil {
		for _, kv := range metricValues(res.CV) {
			add("out-of-fold "+kv[0], kv[1])
		}
	}
	page := &report.Page{Title: "romae run " + dir, Subtitle: fmt.Sprintf("data.folds: %d fold models; fold 1: %s", res.Folds, first.subtitle()),
		Sections: []report.Section{{Title: "Summary", Blocks: []report.Block{t}}}}
	if res.CV != nil && res.CV.Confusion != nil {
		title := "Out of fold: every training series, predicted by the fold model that did not train on it"
		page.Sections = append(page.Sections, report.Section{Title: "Confusion matrix (out of fold)",
			Blocks: []report.Block{confusionBlock(title, res.CV, first.spec.Classes)}})
	}
	for k := 1; ; k++ {
		fr, err := readRun(foldDir(dir, k))
		if err != nil {
			break
		}
		s := report.Section{Title: fmt.Sprintf("Fold %d: training curves (its validation series: fold %d)", k, k), Blocks: fr.curves().Blocks}
		if c := fr.confusion(); c != nil {
			s.Blocks = append(s.Blocks, c)
		}
		page.Sections = append(page.Sections, s)
	}
	page.Sections = append(page.Sections, first.dataSection(), first.configSection())
	return page, nil
}

// holdoutSections show data.refit's hold-out run inside run directory dir
// (none if there is none): its validation curves and confusion matrix are
// the estimate for the model trained afterwards on all series.
func holdoutSections(dir string) []report.Section {
	h, err := readRun(filepath.Join(dir, holdoutDir))
	if err != nil {
		return nil
	}
	out := []report.Section{{Title: "Hold-out run (data.refit: the estimate, before training on all series)", Blocks: h.curves().Blocks}}
	if c := h.confusion(); c != nil {
		out = append(out, report.Section{Title: "Confusion matrix (hold-out run, on its validation series)", Blocks: []report.Block{c}})
	}
	return out
}

// run is what a run directory holds.
type run struct {
	dir    string
	metric *runMetrics
	result *train.Result         // result.json; nil when the run did not finish
	m      *model.Model[float32] // best.safetensors, else last; nil when neither loads
	ck     *model.Checkpoint
	spec   *data.Spec
	note   string // why the checkpoint or spec is missing
}

func readRun(dir string) (*run, error) {
	r := &run{dir: dir, spec: &data.Spec{}}
	var err error
	if r.metric, err = readMetrics(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s has neither %s (a run directory) nor results.json (an experiment's output directory)", dir, train.MetricsFile)
		}
		return nil, err
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "result.json")); err == nil {
		r.result = &train.Result{}
		if err := json.Unmarshal(raw, r.result); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "result.json"), err)
		}
	}
	if r.m, r.ck, err = model.Load[float32](dir); err != nil {
		r.m, r.note = nil, "no checkpoint could be read: "+err.Error()
		return r, nil
	}
	spec, found, err := data.SpecFromMeta(r.ck.Meta)
	switch {
	case err != nil:
		r.note = err.Error()
	case !found:
		r.note = "the checkpoint carries no data spec"
	default:
		r.spec = spec
	}
	return r, nil
}

func (r *run) subtitle() string {
	var parts []string
	if r.m != nil {
		parts = append(parts, fmt.Sprintf("%s model, %d parameters", r.m.Cfg.Task, r.m.NumParams()))
	}
	if n := len(r.metric.epochX); n > 0 {
		parts = append(parts, fmt.Sprintf("%d epochs, %d steps", n, int(r.metric.epochX[n-1])))
	}
	if r.spec.Train != "" {
		parts = append(parts, "trained on "+r.spec.Train)
	}
	return strings.Join(parts, "; ")
}

// checkpointState is the part of a checkpoint's training state the
// report shows: the epoch it keeps and that epoch's validation metrics.
type checkpointState struct {
	BestEpoch int           `json:"best_epoch"`
	Best      *eval.Metrics `json:"best"`
}

// bestState is the run's checkpointState; nil when unknown.
func (r *run) bestState() *checkpointState {
	if r.ck == nil {
		return nil
	}
	var st checkpointState
	if json.Unmarshal([]byte(r.ck.Meta["romae.train_state"]), &st) != nil {
		return nil
	}
	return &st
}

func (r *run) summary() report.Section {
	t := report.Table{Header: []string{"", ""}}
	add := func(k string, v any) { t.Rows = append(t.Rows, []string{k, fmt.Sprint(v)}) }
	if r.m != nil {
		add("task", r.m.Cfg.Task)
		add("parameters", r.m.NumParams())
		add("checkpoint", r.ck.Path)
	}
	if r.ck != nil && r.ck.Meta["romae.pretrained_from"] != "" {
		add("pre-trained encoder from", r.ck.Meta["romae.pretrained_from"])
	}
	if res := r.result; res != nil {
		add("steps", res.Steps)
		add("epochs", res.Epochs)
		add("training loss (last epoch)", strconv.FormatFloat(res.TrainLoss, 'g', 5, 64))
		add("seconds", strconv.FormatFloat(res.Seconds, 'f', 1, 64))
		if res.Stopped {
			add("stopped", "by train.max_steps, before the last epoch")
		}
		if res.Best != nil {
			add("kept epoch", res.BestEpoch)
			for _, kv := range metricValues(res.Best) {
				add("validation "+kv[0], kv[1])
			}
		}
	} else {
		add("result.json", "none: the run has not finished (resume it with --train.resume)")
	}
	s := report.Section{Title: "Summary", Blocks: []report.Block{t}}
	if r.note != "" {
		s.Blocks = append(s.Blocks, report.Text(r.note))
	}
	return s
}

// metricValues lists the scalar metrics, name and value, in a fixed order.
func metricValues(m *eval.Metrics) [][2]string {
	out := [][2]string{{"loss", strconv.FormatFloat(m.Loss, 'g', 5, 64)}}
	if m.Confusion != nil {
		out = append(out, [2]string{"accuracy", strconv.FormatFloat(m.Accuracy, 'f', 4, 64)},
			[2]string{"macro-F1", strconv.FormatFloat(m.MacroF1, 'f', 4, 64)})
	} else if m.RMSE != 0 {
		out = append(out, [2]string{"RMSE", strconv.FormatFloat(m.RMSE, 'g', 5, 64)})
	}
	return out
}

func (r *run) curves() report.Section {
	mt := r.metric
	valLoss := mt.valCurve(func(v *eval.Metrics) float64 { return v.Loss })
	loss := report.Chart{Title: "Loss", XLabel: "step", YLabel: "loss", Series: []report.Series{
		{Name: "training (logged steps)", X: mt.stepX, Y: mt.loss},
		{Name: "training (epoch mean)", X: mt.epochX, Y: mt.trainLoss, Points: true, Hollow: true, Color: 2},
		{Name: "validation", X: mt.valX, Y: valLoss, Points: true, Color: 1}}}
	grid := report.Grid{loss}
	switch {
	case mt.classifier():
		grid = append(grid, report.Chart{Title: "Validation accuracy and macro-F1", XLabel: "step", YLabel: "fraction", Fixed: &[2]float64{0, 1},
			Series: []report.Series{
				{Name: "accuracy", X: mt.valX, Y: mt.valCurve(func(v *eval.Metrics) float64 { return v.Accuracy }), Points: true},
				{Name: "macro-F1", X: mt.valX, Y: mt.valCurve(func(v *eval.Metrics) float64 { return v.MacroF1 }), Points: true, Color: 1}}})
	case len(mt.val) > 0 && mt.val[0].RMSE > 0:
		grid = append(grid, report.Chart{Title: "Validation RMSE", XLabel: "step", YLabel: "RMSE", Series: []report.Series{
			{Name: "RMSE", X: mt.valX, Y: mt.valCurve(func(v *eval.Metrics) float64 { return v.RMSE }), Points: true}}})
	}
	grid = append(grid, report.Chart{Title: "Learning rate", XLabel: "step", YLabel: "learning rate",
		Series: []report.Series{{Name: "learning rate", X: mt.stepX, Y: mt.lr}}})
	if len(mt.gradNorm) == len(mt.stepX) && len(mt.gradNorm) > 0 {
		grid = append(grid, report.Chart{Title: "Gradient norm (before clipping)", XLabel: "step", YLabel: "norm",
			Series: []report.Series{{Name: "gradient norm", X: mt.stepX, Y: mt.gradNorm, Color: 4}}})
	}
	return report.Section{Title: "Training curves", Blocks: []report.Block{grid}}
}

// confusion is the validation confusion matrix of the kept epoch (the
// checkpoint's), else of the last evaluated one; nil for other tasks.
func (r *run) confusion() report.Block {
	var met *eval.Metrics
	title := ""
	if st := r.bestState(); st != nil && st.Best != nil && st.Best.Confusion != nil {
		met, title = st.Best, fmt.Sprintf("Validation, epoch %d (the one the checkpoint keeps)", st.BestEpoch)
	} else if n := len(r.metric.val); n > 0 && r.metric.val[n-1].Confusion != nil {
		met, title = &r.metric.val[n-1], fmt.Sprintf("Validation, epoch %d (the last evaluated)", r.metric.epochs[n-1])
	}
	if met == nil {
		return nil
	}
	return confusionBlock(title, met, r.spec.Classes)
}

// confusionBlock draws met's confusion matrix under title, rows and
// columns named by classes (by index when they do not match).
func confusionBlock(title string, met *eval.Metrics, classes []string) report.Block {
	if len(classes) != len(met.Confusion) {
		classes = nil
		for k := range met.Confusion {
			classes = append(classes, strconv.Itoa(k))
		}
	}
	return report.Confusion{Title: fmt.Sprintf("%s: accuracy %.4f, macro-F1 %.4f, %d series", title, met.Accuracy, met.MacroF1, met.N),
		Classes: classes, Counts: met.Confusion}
}

// interpolations draws example series of a pre-trained model: every other
// observation hidden, the model's curve through the rest, the hidden ones
// shown against it, and the interpolation MSE on them in data units.
func (r *run) interpolations(path string, n int) report.Section {
	s := report.Section{Title: "Example interpolations"}
	blocks, err := r.interpolationBlocks(path, n)
	if err != nil {
		s.Blocks = []report.Block{report.Text("No examples: " + err.Error())}
		return s
	}
	s.Blocks = blocks
	return s
}

func (r *run) interpolationBlocks(path string, n int) ([]report.Block, error) {
	switch {
	case path == "" && r.spec.Generated != "":
		return nil, fmt.Errorf("the training data was generated in memory (%s); give --data FILE", r.spec.Generated)
	case path == "":
		return nil, fmt.Errorf("the checkpoint names no training file; give --data FILE")
	}
	if err := pointModel(r.dir, r.spec); err != nil {
		return nil, err
	}
	ds, err := r.spec.Read(path)
	if err != nil {
		return nil, err
	}
	if ds.C != r.m.Cfg.Values || ds.D != r.m.Cfg.PosDims {
		return nil, fmt.Errorf("%s has %d values and %d position axes per token; the model expects %d and %d", path, ds.C, ds.D, r.m.Cfg.Values, r.m.Cfg.PosDims)
	}
	n = min(n, len(ds.Samples))
	C, D, ta := ds.C, ds.D, ds.TimeAxis
	observed, hidden := *ds, *ds
	observed.Samples, hidden.Samples = nil, nil
	for k := range n {
		smp := ds.Samples[k*len(ds.Samples)/n]
		o, h := data.Sample{ID: smp.ID, Label: -1}, data.Sample{ID: smp.ID, Label: -1}
		for t := range smp.Len(C) {
			dst := &o
			if t%2 == 1 {
				dst = &h
			}
			dst.Values = append(dst.Values, smp.Values[t*C:(t+1)*C]...)
			dst.Positions = append(dst.Positions, smp.Positions[t*D:(t+1)*D]...)
		}
		if len(h.Values) == 0 {
			return nil, fmt.Errorf("series %s has a single observation", smp.ID)
		}
		observed.Samples, hidden.Samples = append(observed.Samples, o), append(hidden.Samples, h)
	}
	blend, err := eval.BlendFromMeta(r.ck.Meta, r.m.Cfg.Values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.ck.Path, err)
	}
	mse, hiddenPred, err := eval.InterpolationMSE(r.m, &observed, &hidden, r.spec.Stats, 32)
	if err != nil {
		return nil, err
	}
	how := ""
	if blend != nil {
		alone := mse
		if mse, err = blend.MixedMSE(&observed, &hidden, r.spec.Stats, hiddenPred); err != nil {
			return nil, err
		}
		how = fmt.Sprintf(" (the model alone: %.4g). The curves and values mix the model's with linear and spline interpolation in time, by the weights pre-training fitted on its validation series (what interpolate uses on series pre-training saw; on others it refits them): %s.", alone, blend.Describe())
	}
	// A curve: 150 times across each series, for every combination of the
	// other axes (channel) it has.
	const points = 150
	q := make([][]float32, n)
	curves := make([][][]float32, n) // per series: the other axes' coordinates of each curve
	for i, smp := range observed.Samples {
		lo, hi := timeRange(&smp, D, ta)
		hlo, hhi := timeRange(&hidden.Samples[i], D, ta)
		lo, hi = min(lo, hlo), max(hi, hhi)
		seen := map[string]bool{}
		for t := range smp.Len(C) {
			p := smp.Positions[t*D : (t+1)*D]
			if k := fmt.Sprint(otherAxes(p, ta)); !seen[k] {
				seen[k] = true
				curves[i] = append(curves[i], otherAxes(p, ta))
			}
		}
		slices.SortFunc(curves[i], slices.Compare)
		for _, other := range curves[i] {
			for j := range points {
				p := slices.Insert(slices.Clone(other), ta, lo+(hi-lo)*float32(j)/(points-1))
				q[i] = append(q[i], p...)
			}
		}
	}
	pred, err := eval.Interpolate(r.m, r.m.NewWorkspace(), &observed, q, 32)
	if err != nil {
		return nil, err
	}
	if blend != nil {
		if err := blend.Mix(&observed, q, pred); err != nil {
			return nil, err
		}
	}
	obsU, hidU := unscaledValues(&observed, r.spec.Stats), unscaledValues(&hidden, r.spec.Stats)
	cols := dataColumns(ds, r.spec)
	blocks := []report.Block{report.Text(fmt.Sprintf("%d series of %s. Every other observation of each is hidden; the model sees the rest "+
		"(filled dots) and draws the curve (line) through the hidden ones (open dots), shown for the first %d channels. "+
		"Interpolation MSE on all the hidden values, in data units: %.4g%s", n, path, maxCurves, mse, cmp.Or(how, ".")))}
	var grid report.Grid
	for i := range n {
		if r.spec.Stats != nil {
			if err := r.spec.Stats.Invert(pred[i], q[i], D); err != nil {
				return nil, err
			}
		}
		ch := report.Chart{Title: "series " + observed.Samples[i].ID, XLabel: cols.axes[ta], YLabel: "value", Data: true}
		for ki, other := range curves[i] {
			// One colour per channel: per value slot for one-axis data, per
			// channel (first value slot) for data with a channel axis.
			for c := range C {
				color := ki*C + c
				if D > 1 && c > 0 || color >= maxCurves {
					continue
				}
				name := cols.values[c]
				if D == 2 {
					name = cols.position(1-ta, other[0]) + " " + name
				}
				line := report.Series{Name: name, Color: color}
				for j := range points {
					at := ki*points + j
					line.X = append(line.X, float64(q[i][at*D+ta]))
					line.Y = append(line.Y, float64(pred[i][at*C+c]))
				}
				ch.Series = append(ch.Series, line,
					tokens(&obsU.Samples[i], C, D, ta, c, other, color, false),
					tokens(&hidU.Samples[i], C, D, ta, c, other, color, true))
			}
		}
		grid = append(grid, ch)
	}
	return append(blocks, grid), nil
}

// otherAxes is a position without its time coordinate.
func otherAxes(p []float32, ta int) []float32 {
	return append(slices.Clone(p[:ta]), p[ta+1:]...)
}

// maxCurves is how many channels an example interpolation draws: more
// hide each other.
const maxCurves = 3

// timeRange is the first and last time of s's tokens.
func timeRange(s *data.Sample, D, ta int) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for t := ta; t < len(s.Positions); t += D {
		lo, hi = min(lo, s.Positions[t]), max(hi, s.Positions[t])
	}
	return lo, hi
}

// tokens is the values of slot c of s's tokens whose other axes are other,
// as points against time.
func tokens(s *data.Sample, C, D, ta, c int, other []float32, color int, hollow bool) report.Series {
	out := report.Series{Points: true, Hollow: hollow, Color: color}
	for t := range s.Len(C) {
		p := s.Positions[t*D : (t+1)*D]
		if slices.Equal(otherAxes(p, ta), other) {
			out.X = append(out.X, float64(p[ta]))
			out.Y = append(out.Y, float64(s.Values[t*C+c]))
		}
	}
	return out
}

// dataSection summarises how the training data was read and scaled and,
// when the training file is still there, what it holds.
func (r *run) dataSection() report.Section {
	s := report.Section{Title: "Data"}
	src := r.spec.Source
	t := report.Table{Header: []string{"", ""}}
	add := func(k, v string) {
		if v != "" {
			t.Rows = append(t.Rows, []string{k, v})
		}
	}
	add("training file", cmp.Or(r.spec.Train, r.spec.Generated))
	add("format", src.Format)
	add("missing values (data.nan)", cmp.Or(src.NaN, data.NaNMissing))
	if src.SeriesPatch > 1 {
		add("observations per token (data.series_patch)", strconv.Itoa(src.SeriesPatch))
	}
	if src.DropFraction > 0 {
		add("steps dropped at random (data.drop_fraction)", strconv.FormatFloat(src.DropFraction, 'g', 3, 64))
	}
	add("classes", strings.Join(r.spec.Classes, ", "))
	switch {
	case r.spec.Stats == nil:
		add("scaling", "none: values as read")
	case r.spec.Stats.PerChannel():
		add("scaling", "standardised per channel and value slot with the training set's means and stds (below)")
	default:
		add("scaling", "standardised per value slot with the training set's mean and std (below)")
	}
	if src.NormalizeSeries {
		add("each series first standardised on its own (data.normalize_series)", "yes")
	}
	s.Blocks = append(s.Blocks, t)
	var names []string // of the value slots, when the file names them
	if path := r.spec.Train; path != "" {
		if b, ds, err := fileSummary(path, src); err != nil {
			s.Blocks = append(s.Blocks, report.Text(fmt.Sprintf("%s could not be read now: %v", path, err)))
		} else {
			s.Blocks = append(s.Blocks, b)
			names = ds.ValueNames
		}
	}
	if st := r.spec.Stats; st != nil {
		t := report.Table{Caption: "Scaling statistics", Header: []string{"channel", "value", "mean", "std"}}
		row := func(channel string, mean, std []float64) {
			for k := range mean {
				name := "value" + strconv.Itoa(k)
				if len(names) == len(mean) {
					name = names[k]
				}
				t.Rows = append(t.Rows, []string{channel, name, strconv.FormatFloat(mean[k], 'g', 5, 64), strconv.FormatFloat(std[k], 'g', 5, 64)})
			}
		}
		c := len(st.Mean)
		for ch := range len(st.ChannelMean) / c {
			name := strconv.Itoa(ch)
			if ch < len(r.spec.Source.Channels) {
				name = r.spec.Source.Channels[ch]
			}
			row(name, st.ChannelMean[ch*c:(ch+1)*c], st.ChannelStd[ch*c:(ch+1)*c])
		}
		row("all", st.Mean, st.Std)
		s.Blocks = append(s.Blocks, t)
	}
	return s
}

// fileSummary reads path as the run did (unscaled) and counts what it holds.
func fileSummary(path string, src data.Source) (report.Block, *data.Dataset, error) {
	ds, err := src.Load(path)
	if err != nil {
		return nil, nil, err
	}
	lens := make([]int, len(ds.Samples))
	counts := make([]int, len(ds.Classes))
	for i, s := range ds.Samples {
		lens[i] = s.Len(ds.C)
		if s.Label >= 0 && s.Label < len(counts) {
			counts[s.Label]++
		}
	}
	slices.Sort(lens)
	t := report.Table{Caption: path, Header: []string{"", ""}}
	t.Rows = append(t.Rows,
		[]string{"series", strconv.Itoa(len(ds.Samples))},
		[]string{"tokens per series (min, median, max)", fmt.Sprintf("%d, %d, %d", lens[0], lens[len(lens)/2], lens[len(lens)-1])},
		[]string{"values per token, position axes", fmt.Sprintf("%d, %d", ds.C, ds.D)},
		[]string{"missing values; series left out", fmt.Sprintf("%d; %d", ds.MissingValues, ds.DroppedSamples)})
	if len(ds.ValueNames) == ds.C {
		t.Rows = append(t.Rows, []string{"value names", strings.Join(ds.ValueNames, ", ")})
	}
	if len(ds.Channels) > 0 {
		t.Rows = append(t.Rows, []string{"channels", strings.Join(ds.Channels, ", ")})
	}
	for k, c := range ds.Classes {
		t.Rows = append(t.Rows, []string{"class " + c, strconv.Itoa(counts[k])})
	}
	return t, ds, nil
}

// configSection shows the configuration the checkpoint records.
func (r *run) configSection() report.Section {
	s := report.Section{Title: "Configuration"}
	if r.m == nil {
		s.Blocks = append(s.Blocks, report.Text("No checkpoint: "+r.note))
		return s
	}
	indent := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	}
	s.Blocks = append(s.Blocks, report.Grid{report.Code{Title: "model", Text: indent(r.m.Cfg)}, r.trainConfig(indent),
		report.Code{Title: "data spec", Text: indent(r.spec)}})
	return s
}

func (r *run) trainConfig(indent func(any) string) report.Block {
	var v any
	if err := json.Unmarshal([]byte(r.ck.Meta["romae.train_config"]), &v); err != nil {
		return report.Text("The checkpoint records no training configuration.")
	}
	return report.Code{Title: "training", Text: indent(v)}
}
