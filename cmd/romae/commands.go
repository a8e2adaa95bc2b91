package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"romae/data"
	"romae/eval"
	"romae/model"
	"romae/train"
)

// Checkpoint metadata written by pretrain/finetune so that later commands
// read and scale new files exactly as the training data was.
const (
	metaSource  = "romae.data_source"
	metaStats   = "romae.data_stats"
	metaClasses = "romae.classes"
)

func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: romae %s\n\nflags (defaults in parentheses):\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(v)
}

// ─── training ─────────────────────────────────────────────────────────────

func cmdPretrain(ctx context.Context, args []string) error {
	cfg := defaultRunConfig()
	fs := newFlagSet("pretrain", "pretrain --data.train FILE [--config run.yaml] [--section.field value ...]")
	if err := parseRunConfig(fs, &cfg, args); err != nil {
		return err
	}
	tr, val, meta, err := loadTraining(&cfg, nil)
	if err != nil {
		return err
	}
	mc, err := cfg.Model.modelConfig(model.TaskPretrain, tr.C, tr.D, 0)
	if err != nil {
		return err
	}
	m, err := model.New[float32](mc, cfg.Train.Seed)
	if err != nil {
		return err
	}
	return runTrainer(ctx, &cfg, m, tr, val, meta)
}

func cmdFinetune(ctx context.Context, args []string) error {
	cfg := defaultRunConfig()
	cfg.Train.Optimizer, cfg.Train.LR = "adamw", 1e-4
	fs := newFlagSet("finetune", "finetune --from CHECKPOINT --data.train FILE [--config run.yaml] [...]")
	from := fs.String("from", "", "pre-trained checkpoint: a romae run directory or .safetensors file, or an authors' checkpoint directory")
	if err := parseRunConfig(fs, &cfg, args); err != nil {
		return err
	}
	if *from == "" {
		return fmt.Errorf("--from is required (a pre-trained checkpoint)")
	}
	pm, ck, err := model.Load[float32](*from)
	if err != nil {
		return err
	}
	// Scale inputs exactly as during pre-training.
	var stats *data.Stats
	if s := ck.Meta[metaStats]; s != "" {
		stats = new(data.Stats)
		if err := json.Unmarshal([]byte(s), stats); err != nil {
			return fmt.Errorf("%s: %s: %w", *from, metaStats, err)
		}
	}
	tr, val, meta, err := loadTraining(&cfg, stats)
	if err != nil {
		return err
	}
	task, pool, outputs := cfg.Model.Task, cfg.Model.Pool, 0
	if task == "auto" {
		switch {
		case len(tr.Classes) > 0:
			task = model.TaskClassify
		case tr.TargetDim > 0:
			task = model.TaskRegress
		default:
			return fmt.Errorf("%s has neither labels nor regression targets; set model.task or add labels", cfg.Data.Train)
		}
	}
	if task == model.TaskClassify {
		outputs = len(tr.Classes)
	} else {
		outputs = tr.TargetDim
	}
	mc := pm.Cfg
	mc.Task, mc.Outputs, mc.Decoder = task, outputs, model.Size{}
	mc.AttnDropout, mc.HiddenDropout, mc.HeadDropout, mc.DropPath = cfg.Model.AttnDropout, cfg.Model.HiddenDropout, cfg.Model.HeadDropout, cfg.Model.DropPath
	switch {
	case pool != "auto":
		mc.Pool = pool
	case tr.TargetPerToken:
		mc.Pool = model.PoolToken
	case mc.UseCLS:
		mc.Pool = model.PoolCLS
	default:
		mc.Pool = model.PoolMean
	}
	if tr.C != mc.Values || tr.D != mc.PosDims {
		return fmt.Errorf("%s has %d values and %d position axes per token; the pre-trained model expects %d and %d",
			cfg.Data.Train, tr.C, tr.D, mc.Values, mc.PosDims)
	}
	m, err := model.New[float32](mc, cfg.Train.Seed)
	if err != nil {
		return err
	}
	if err := m.TransferEncoder(pm); err != nil {
		return err
	}
	meta["romae.pretrained_from"] = *from
	return runTrainer(ctx, &cfg, m, tr, val, meta)
}

// loadTraining reads the training (and validation) data, normalises it with
// stats (computed from the training set when nil and data.normalize is
// on), and returns the metadata that checkpoints carry.
func loadTraining(cfg *runConfig, stats *data.Stats) (tr, val *data.Dataset, meta map[string]string, err error) {
	if cfg.Data.Train == "" {
		return nil, nil, nil, fmt.Errorf("data.train is required (e.g. --data.train BasicMotions_TRAIN.ts)")
	}
	if tr, err = cfg.Data.Source.Load(cfg.Data.Train); err != nil {
		return nil, nil, nil, err
	}
	if cfg.Data.Val != "" {
		if val, err = cfg.Data.Source.Load(cfg.Data.Val); err != nil {
			return nil, nil, nil, err
		}
		if len(tr.Classes) > 0 {
			if err := data.MatchClasses(val, tr.Classes); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if stats == nil && cfg.Data.Normalize {
		s := data.ComputeStats(tr)
		stats = &s
	}
	meta = map[string]string{}
	if stats != nil {
		for _, ds := range []*data.Dataset{tr, val} {
			if ds != nil {
				if err := stats.Apply(ds); err != nil {
					return nil, nil, nil, fmt.Errorf("%s: %w", ds.Name, err)
				}
			}
		}
		b, _ := json.Marshal(stats)
		meta[metaStats] = string(b)
	}
	if val == nil && cfg.Data.ValFraction > 0 {
		parts := data.Split(tr, []float64{1 - cfg.Data.ValFraction, cfg.Data.ValFraction}, rand.New(rand.NewPCG(cfg.Train.Seed, 0x5911)))
		tr, val = parts[0], parts[1]
	}
	src, _ := json.Marshal(cfg.Data.Source)
	meta[metaSource] = string(src)
	if len(tr.Classes) > 0 {
		b, _ := json.Marshal(tr.Classes)
		meta[metaClasses] = string(b)
	}
	return tr, val, meta, nil
}

func runTrainer(ctx context.Context, cfg *runConfig, m *model.Model[float32], tr, val *data.Dataset, meta map[string]string) error {
	fmt.Fprintf(os.Stderr, "romae: %s model, %d parameters; %d training samples, %d validation; run directory %s\n",
		m.Cfg.Task, m.NumParams(), len(tr.Samples), lenSamples(val), cfg.Train.Out)
	t := &train.Trainer{Cfg: cfg.Train, Model: m, Train: tr, Val: val, Meta: meta}
	res, err := t.Run(ctx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.Train.Out, "result.json"), mustJSON(res), 0o644); err != nil {
		return err
	}
	if _, err := writeCurves(cfg.Train.Out); err != nil {
		return fmt.Errorf("training finished, but drawing its curves failed: %w", err)
	}
	return printJSON(res)
}

func lenSamples(ds *data.Dataset) int {
	if ds == nil {
		return 0
	}
	return len(ds.Samples)
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// ─── using a trained model ────────────────────────────────────────────────

// loaded is a checkpoint plus a data file read the way it was trained.
type loaded struct {
	m     *model.Model[float32]
	ck    *model.Checkpoint
	ds    *data.Dataset
	stats *data.Stats
}

// loadModelAndData reads the checkpoint and the data file with the
// checkpoint's data source (format overridable) and scaling.
func loadModelAndData(modelPath, dataPath, format string) (*loaded, error) {
	if modelPath == "" || dataPath == "" {
		return nil, fmt.Errorf("--model and --data are required")
	}
	m, ck, err := model.Load[float32](modelPath)
	if err != nil {
		return nil, err
	}
	src := defaultRunConfig().Data.Source
	if s := ck.Meta[metaSource]; s != "" {
		if err := json.Unmarshal([]byte(s), &src); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", modelPath, metaSource, err)
		}
	}
	if format != "" {
		src.Format = format
	}
	ds, err := src.Load(dataPath)
	if err != nil {
		return nil, err
	}
	if ds.C != m.Cfg.Values || ds.D != m.Cfg.PosDims {
		return nil, fmt.Errorf("%s has %d values and %d position axes per token; the model expects %d and %d", dataPath, ds.C, ds.D, m.Cfg.Values, m.Cfg.PosDims)
	}
	if s := ck.Meta[metaClasses]; s != "" {
		var classes []string
		if err := json.Unmarshal([]byte(s), &classes); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", modelPath, metaClasses, err)
		}
		if err := data.MatchClasses(ds, classes); err != nil {
			return nil, fmt.Errorf("%s: %w", dataPath, err)
		}
	}
	l := &loaded{m: m, ck: ck, ds: ds}
	if s := ck.Meta[metaStats]; s != "" {
		l.stats = new(data.Stats)
		if err := json.Unmarshal([]byte(s), l.stats); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", modelPath, metaStats, err)
		}
		if err := l.stats.Apply(ds); err != nil {
			return nil, fmt.Errorf("%s: %w", dataPath, err)
		}
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", dataPath, err)
	}
	if len(ds.Samples) == 0 {
		return nil, fmt.Errorf("%s: no samples", dataPath)
	}
	return l, nil
}

func usingFlags(name, synopsis string) (*flag.FlagSet, *string, *string, *string, *int) {
	fs := newFlagSet(name, synopsis)
	mp := fs.String("model", "", "checkpoint: romae run directory or .safetensors file, or an authors' checkpoint directory")
	dp := fs.String("data", "", "data file (.ts, .csv, .npy, .npz), read as the model's training data was")
	format := fs.String("format", "", "override the data format (ts, csv, npy, npz)")
	bs := fs.Int("batch-size", 32, "samples per forward pass")
	return fs, mp, dp, format, bs
}

func cmdEvaluate(_ context.Context, args []string) error {
	fs, mp, dp, format, bs := usingFlags("evaluate", "evaluate --model CHECKPOINT --data FILE")
	ratio := fs.Float64("mask-ratio", 0.75, "pre-training models: fraction of tokens masked and reconstructed")
	seed := fs.Uint64("seed", 1, "pre-training models: seed of the evaluation masks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := loadModelAndData(*mp, *dp, *format)
	if err != nil {
		return err
	}
	if l.m.Cfg.Task == model.TaskClassify {
		for i, s := range l.ds.Samples {
			if s.Label < 0 {
				return fmt.Errorf("%s: sample %d (%s) has no label to evaluate against", *dp, i, s.ID)
			}
		}
	}
	met, err := eval.Evaluate(l.m, l.m.NewWorkspace(), l.ds, eval.Options{BatchSize: *bs, MaskRatio: *ratio, Seed: *seed})
	if err != nil {
		return err
	}
	return printJSON(met)
}

func cmdPredict(_ context.Context, args []string) error {
	fs, mp, dp, format, bs := usingFlags("predict", "predict --model CHECKPOINT --data FILE [--out preds.csv|preds.json]")
	out := fs.String("out", "-", "output file, .csv or .json (- : CSV on stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := loadModelAndData(*mp, *dp, *format)
	if err != nil {
		return err
	}
	preds, err := eval.Predict(l.m, l.m.NewWorkspace(), l.ds, *bs)
	if err != nil {
		return err
	}
	classes := l.ds.Classes
	if l.m.Cfg.Task == model.TaskClassify && len(classes) == 0 {
		for k := 0; k < l.m.Cfg.Outputs; k++ {
			classes = append(classes, strconv.Itoa(k))
		}
	}
	type row struct {
		ID            string             `json:"id"`
		Label         string             `json:"label,omitempty"`
		Probabilities map[string]float64 `json:"probabilities,omitempty"`
		Prediction    []float64          `json:"prediction,omitempty"`
	}
	rows := make([]row, len(preds))
	for i, p := range preds {
		rows[i].ID = l.ds.Samples[i].ID
		if l.m.Cfg.Task == model.TaskClassify {
			best := 0
			rows[i].Probabilities = map[string]float64{}
			for k, v := range p {
				rows[i].Probabilities[classes[k]] = v
				if v > p[best] {
					best = k
				}
			}
			rows[i].Label = classes[best]
		} else {
			rows[i].Prediction = p
		}
	}
	if strings.HasSuffix(*out, ".json") {
		return os.WriteFile(*out, mustJSON(rows), 0o644)
	}
	return writeCSV(*out, func(w *csv.Writer) error {
		header := []string{"id"}
		if l.m.Cfg.Task == model.TaskClassify {
			header = append(header, "label")
			for _, c := range classes {
				header = append(header, "p_"+c)
			}
		} else {
			for k := range preds[0] {
				header = append(header, fmt.Sprintf("y%d", k))
			}
		}
		if err := w.Write(header); err != nil {
			return err
		}
		for i, r := range rows {
			rec := []string{r.ID}
			if r.Label != "" {
				rec = append(rec, r.Label)
			}
			for _, v := range preds[i] {
				rec = append(rec, strconv.FormatFloat(v, 'g', 7, 64))
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeCSV(path string, fill func(*csv.Writer) error) error {
	f := os.Stdout
	if path != "-" && path != "" {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer f.Close()
	}
	w := csv.NewWriter(f)
	if err := fill(w); err != nil {
		return err
	}
	w.Flush()
	return w.Error()
}

func cmdInterpolate(_ context.Context, args []string) error {
	fs, mp, dp, format, bs := usingFlags("interpolate", "interpolate --model PRETRAINED --data FILE (--at START:STOP:STEP | --queries FILE) [--out values.csv]")
	at := fs.String("at", "", "grid on the last position axis (time), START:STOP:STEP; with several axes, queried for every combination of the other axes' values seen in the series (e.g. every band)")
	queries := fs.String("queries", "", "CSV with header id,pos1[,pos2,...]: positions to predict per series")
	out := fs.String("out", "-", "output CSV (- : stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := loadModelAndData(*mp, *dp, *format)
	if err != nil {
		return err
	}
	D, C := l.m.Cfg.PosDims, l.m.Cfg.Values
	var q [][]float32
	switch {
	case *at != "" && *queries == "":
		if q, err = gridQueries(l.ds, *at); err != nil {
			return err
		}
	case *queries != "" && *at == "":
		if q, err = fileQueries(l.ds, *queries); err != nil {
			return err
		}
	default:
		return fmt.Errorf("give exactly one of --at and --queries")
	}
	vals, err := eval.Interpolate(l.m, l.m.NewWorkspace(), l.ds, q, *bs)
	if err != nil {
		return err
	}
	return writeCSV(*out, func(w *csv.Writer) error {
		header := []string{"id"}
		for a := 0; a < D; a++ {
			header = append(header, fmt.Sprintf("pos%d", a))
		}
		for c := 0; c < C; c++ {
			header = append(header, fmt.Sprintf("value%d", c))
		}
		if err := w.Write(header); err != nil {
			return err
		}
		for i, s := range l.ds.Samples {
			v := vals[i]
			if l.stats != nil {
				if err := l.stats.Invert(v); err != nil {
					return err
				}
			}
			for j := 0; j < len(q[i])/D; j++ {
				rec := []string{s.ID}
				for a := 0; a < D; a++ {
					rec = append(rec, strconv.FormatFloat(float64(q[i][j*D+a]), 'g', 8, 32))
				}
				for c := 0; c < C; c++ {
					rec = append(rec, strconv.FormatFloat(float64(v[j*C+c]), 'g', 7, 32))
				}
				if err := w.Write(rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// gridQueries builds START:STOP:STEP on the last axis for every combination
// of the leading axes' values present in each series.
func gridQueries(ds *data.Dataset, spec string) ([][]float32, error) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("--at %q: want START:STOP:STEP", spec)
	}
	var g [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--at %q: %q is not a finite number", spec, p)
		}
		g[i] = v
	}
	if !(g[2] > 0) || g[1] < g[0] || (g[1]-g[0])/g[2] > 1e6 {
		return nil, fmt.Errorf("--at %q: want START ≤ STOP and 0 < STEP, at most a million points", spec)
	}
	D := ds.D
	q := make([][]float32, len(ds.Samples))
	for i, s := range ds.Samples {
		seen := map[string][]float32{}
		var keys []string
		for t := 0; t < len(s.Positions)/D; t++ {
			lead := s.Positions[t*D : t*D+D-1]
			k := fmt.Sprint(lead)
			if _, ok := seen[k]; !ok {
				seen[k] = lead
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			for t := g[0]; t <= g[1]+1e-9*g[2]; t += g[2] {
				q[i] = append(q[i], seen[k]...)
				q[i] = append(q[i], float32(t))
			}
		}
	}
	return q, nil
}

// fileQueries reads id,pos1[,pos2...] rows.
func fileQueries(ds *data.Dataset, path string) ([][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = ds.D + 1
	index := map[string]int{}
	for i, s := range ds.Samples {
		index[s.ID] = i
	}
	q := make([][]float32, len(ds.Samples))
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("%s:%d: %w (want id and %d positions)", path, line, err, ds.D)
		}
		if line == 1 {
			continue // header
		}
		i, ok := index[rec[0]]
		if !ok {
			return nil, fmt.Errorf("%s:%d: series %q is not in the data", path, line, rec[0])
		}
		for a := 0; a < ds.D; a++ {
			v, err := strconv.ParseFloat(rec[1+a], 32)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: position %q is not a finite number", path, line, rec[1+a])
			}
			q[i] = append(q[i], float32(v))
		}
	}
	return q, nil
}

func cmdEmbed(_ context.Context, args []string) error {
	fs, mp, dp, format, bs := usingFlags("embed", "embed --model CHECKPOINT --data FILE --out emb.npy [--pool cls|mean]")
	out := fs.String("out", "", "output .npy file, [N, d_model] float32; the sample ids go to the same name with .ids.txt")
	pool := fs.String("pool", "auto", "cls, mean, or auto ([CLS] when the model has it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	l, err := loadModelAndData(*mp, *dp, *format)
	if err != nil {
		return err
	}
	if *pool == "auto" {
		*pool = model.PoolMean
		if l.m.Cfg.UseCLS {
			*pool = model.PoolCLS
		}
	}
	emb, err := eval.Embed(l.m, l.m.NewWorkspace(), l.ds, *pool, *bs)
	if err != nil {
		return err
	}
	if err := data.SaveNPY(*out, []int{len(l.ds.Samples), l.m.Cfg.Encoder.DModel}, emb); err != nil {
		return err
	}
	ids := make([]string, len(l.ds.Samples))
	for i, s := range l.ds.Samples {
		ids[i] = s.ID
	}
	return os.WriteFile(strings.TrimSuffix(*out, ".npy")+".ids.txt", []byte(strings.Join(ids, "\n")+"\n"), 0o644)
}

func cmdInspect(_ context.Context, args []string) error {
	fs := newFlagSet("inspect", "inspect CHECKPOINT")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want one checkpoint path")
	}
	m, ck, err := model.Load[float32](fs.Arg(0))
	if err != nil {
		return err
	}
	info := map[string]any{"path": ck.Path, "config": m.Cfg, "parameters": m.NumParams(),
		"encoder_parameters": m.Cfg.Encoder.Params()}
	meta := map[string]any{}
	for k, v := range ck.Meta {
		var j any
		if json.Unmarshal([]byte(v), &j) == nil {
			meta[k] = j
		} else {
			meta[k] = v
		}
	}
	info["metadata"] = meta
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(info)
}

func cmdSizes(_ context.Context, args []string) error {
	fs := newFlagSet("sizes", "sizes [--json]")
	asJSON := fs.Bool("json", false, "one JSON object per size")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range model.SizeNames() {
		s := model.Sizes[name]
		if *asJSON {
			if err := printJSON(map[string]any{"size": name, "d_model": s.DModel, "heads": s.Heads, "depth": s.Depth,
				"ffn": s.FFN, "encoder_params": s.Params()}); err != nil {
				return err
			}
			continue
		}
		fmt.Printf("%-13s d_model %4d  heads %2d  depth %2d  ffn %4d  encoder %.3gM parameters\n", name, s.DModel, s.Heads, s.Depth, s.FFN, float64(s.Params())/1e6)
	}
	return nil
}

func cmdVerifyOfficial(_ context.Context, args []string) error {
	fs := newFlagSet("verify-official", "verify-official --fixture DIR")
	dir := fs.String("fixture", "", "directory with fixture.json, classifier.safetensors and pretrain.safetensors")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--fixture is required")
	}
	rep, err := model.VerifyOfficial[float32](*dir)
	if err != nil {
		return err
	}
	if err := printJSON(rep); err != nil {
		return err
	}
	if rep.ClassifierMaxRelErr > 1e-4 || rep.PretrainMaxRelErr > 1e-4 || rep.LossAbsErr > 1e-4 {
		return fmt.Errorf("outputs differ from the authors' by more than 1e-4")
	}
	return nil
}
