package main

// romae recsys-train / recsys-evaluate / recsys-score: the causal event-
// sequence recommender of package recsys (issue 16) from the command line.

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"romae/events"
	"romae/recsys"
)

// recsysSourceFlags binds the flags that say how to read an events file.
func recsysSourceFlags(fs *flag.FlagSet, src *recsys.Source) {
	fs.StringVar(&src.Items, "items", "", "item features CSV (id and '|'-separated categories; default: movies.csv or items.csv beside the events; - for none)")
	fs.StringVar(&src.User, "user", "", "user column (default: the first of "+strings.Join(events.UserAliases, ", ")+")")
	fs.StringVar(&src.Item, "item", "", "item column (default: the first of "+strings.Join(events.ItemAliases, ", ")+")")
	fs.StringVar(&src.Time, "time", "", "time column, seconds since 1970 (default: the first of "+strings.Join(events.TimeAliases, ", ")+")")
	fs.StringVar(&src.Label, "label", "", "0/1 outcome column (default: the first of "+strings.Join(events.LabelAliases, ", ")+" present; else the rating thresholded at --label-threshold)")
	fs.StringVar(&src.Rating, "rating", "", "numeric rating column (default: rating or score when present)")
	fs.Float64Var(&src.LabelThreshold, "label-threshold", 4, "outcome = rating ≥ this")
	fs.Func("categorical", "comma-separated event-side categorical columns (device, context, …)", func(s string) error {
		src.Categorical = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&src.ItemFeature, "item-feature", "genres", "categorical column of the item features file")
	fs.StringVar(&src.ItemSep, "item-sep", "|", "separator of the item feature's values")
}

func cmdRecsysTrain(ctx context.Context, args []string) error {
	fs := newFlagSet("recsys-train", "recsys-train --data FILE|DIR --task ranking|next --pos VARIANT [--out DIR] [flags]")
	var src recsys.Source
	fs.StringVar(&src.Events, "data", "", "events CSV, or a directory holding ratings.csv or events.csv (required)")
	recsysSourceFlags(fs, &src)
	task := fs.String("task", recsys.TaskRanking, "ranking (outcome of each event from the earlier ones: NE, AUC) or next (next item, leave-one-out: HR@10, NDCG@10)")
	pos := fs.String("pos", recsys.PosSiren, "positional variant: "+strings.Join(recsys.Variants(), ", "))
	split := fs.String("split", "", "split rule: leave-one-out or last-fraction (default: last-fraction for ranking, leave-one-out for next)")
	valFrac := fs.Float64("val-fraction", 0.1, "last-fraction: share of each user's events for validation")
	testFrac := fs.Float64("test-fraction", 0.2, "last-fraction: share of each user's last events for test")
	history := fs.Int("history", 50, "maximum history: earlier events a prediction sees")
	def := recsys.DefaultConfig(recsys.TaskRanking, recsys.PosSiren)
	dModel := fs.Int("d-model", def.DModel, "model width")
	heads := fs.Int("heads", def.Heads, "attention heads")
	depth := fs.Int("depth", def.Depth, "Transformer layers")
	ffn := fs.Int("ffn", def.FFN, "MLP hidden width")
	ropeBase := fs.Float64("rope-base", def.RoPEBase, "RoPE frequency base")
	timeUnit := fs.Float64("time-unit", def.TimeUnit, "rope-time: seconds per position unit")
	sirenHidden := fs.Int("siren-hidden", def.SirenHidden, "SIREN-RoPE: hidden width of the angle network's branches")
	omega0 := fs.Float64("omega0", def.Omega0, "SIREN-RoPE: sine frequency ω0")
	tc := recsys.DefaultTrainConfig()
	fs.IntVar(&tc.Epochs, "epochs", tc.Epochs, "passes over the training windows")
	fs.IntVar(&tc.BatchSize, "batch-size", tc.BatchSize, "windows per step")
	fs.Float64Var(&tc.LR, "lr", tc.LR, "peak learning rate (AdamW, warm-up then cosine)")
	fs.Float64Var(&tc.WarmupFrac, "warmup-frac", tc.WarmupFrac, "warm-up as a fraction of all steps")
	fs.Float64Var(&tc.WeightDecay, "weight-decay", tc.WeightDecay, "AdamW weight decay on weight matrices")
	fs.Float64Var(&tc.ClipNorm, "clip-norm", tc.ClipNorm, "clip the global gradient norm (0: off)")
	fs.IntVar(&tc.Negatives, "negatives", tc.Negatives, "next: sampled negatives per step (0: full softmax)")
	fs.Uint64Var(&tc.Seed, "seed", tc.Seed, "seed of initialisation, shuffling and negatives")
	fs.IntVar(&tc.EvalBatch, "eval-batch", tc.EvalBatch, "windows per evaluation batch")
	fs.StringVar(&tc.Out, "out", tc.Out, "run directory: last/best.safetensors, metrics.jsonl, result.json")
	fs.BoolVar(&tc.Resume, "resume", false, "continue from OUT/last.safetensors if it exists (exactly)")
	fs.StringVar(&tc.Progress, "progress", tc.Progress, "lines or none")
	fs.IntVar(&tc.CheckpointEvery, "checkpoint-every", 0, "also write last.safetensors every N steps")
	fs.IntVar(&tc.MaxSteps, "max-steps", 0, "stop after N steps in all (0: every epoch)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if src.Events == "" {
		return fmt.Errorf("--data is required (an events CSV or a directory with ratings.csv or events.csv)")
	}
	rule := events.SplitRule{Rule: *split}
	switch {
	case rule.Rule == "" && *task == recsys.TaskNext:
		rule.Rule = events.LeaveOneOut
	case rule.Rule == "":
		rule.Rule = events.LastFraction
	}
	if rule.Rule == events.LastFraction {
		rule.Val, rule.Test = *valFrac, *testFrac
	}
	cfg := recsys.DefaultConfig(*task, *pos)
	cfg.DModel, cfg.Heads, cfg.Depth, cfg.FFN = *dModel, *heads, *depth, *ffn
	cfg.RoPEBase, cfg.TimeUnit, cfg.SirenHidden, cfg.Omega0 = *ropeBase, *timeUnit, *sirenHidden, *omega0
	if *history < 1 {
		return fmt.Errorf("--history %d: want ≥ 1", *history)
	}
	cfg.MaxLen = *history
	if *task == recsys.TaskRanking {
		cfg.MaxLen++ // the candidate itself
	}
	probe := cfg
	probe.Items = 2 // the data sets it; check the rest before reading
	if err := probe.Validate(); err != nil {
		return err
	}
	d, spec, err := recsys.Prepare(src, rule)
	if err != nil {
		return err
	}
	cfg = spec.ModelConfig(cfg)
	var itemOf [][]int32
	if spec.ItemCats != nil {
		itemOf = spec.ItemOf
	}
	m, err := recsys.New[float32](cfg, itemOf, tc.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "romae: %s %s model, %d parameters; %s: %d users, %d events, %d items (%d train / %d val / %d test events); run directory %s\n",
		cfg.Task, cfg.Variant, len(m.W), spec.Source.Events, len(d.Log.Users), d.Log.NumEvents(), cfg.Items-1,
		d.Split.Count(events.Train), d.Split.Count(events.Val), d.Split.Count(events.Test), tc.Out)
	tr := &recsys.Trainer{Cfg: tc, Model: m, Data: d, Spec: spec, Log: os.Stderr}
	res, err := tr.Run(ctx)
	if err != nil {
		return err
	}
	return printJSON(res)
}

// loadRecsys reads a recsys checkpoint and a data file as it was trained.
func loadRecsys(model, data string) (*recsys.Loaded, *recsys.Data, error) {
	if model == "" || data == "" {
		return nil, nil, fmt.Errorf("--model and --data are required")
	}
	ld, err := recsys.Load(model)
	if err != nil {
		return nil, nil, err
	}
	d, err := ld.Spec.Read(data)
	if err != nil {
		return nil, nil, err
	}
	if d.Log.Unknown > 0 {
		fmt.Fprintf(os.Stderr, "romae: %s: %d events have an item or category the model has never seen (scored as unknown)\n", d.Log.Path, d.Log.Unknown)
	}
	return ld, d, nil
}

func cmdRecsysEvaluate(_ context.Context, args []string) error {
	fs := newFlagSet("recsys-evaluate", "recsys-evaluate --model CHECKPOINT --data FILE|DIR [--split test|val] [--baseline]")
	model := fs.String("model", "", "recsys checkpoint: a .safetensors file or a run directory (its best.safetensors)")
	data := fs.String("data", "", "events CSV or directory, read with the checkpoint's columns, vocabularies and split rule")
	split := fs.String("split", "test", "which targets: test or val")
	batch := fs.Int("batch-size", recsys.DefaultTrainConfig().EvalBatch, "windows per batch (the training run's eval batch reproduces its numbers exactly)")
	baseline := fs.Bool("baseline", false, "also report the baseline on the same targets: the user's earlier positive rate (ranking) or popularity (next)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	role := map[string]events.Role{"test": events.Test, "val": events.Val}
	r, ok := role[*split]
	if !ok {
		return fmt.Errorf("--split %q: want test or val", *split)
	}
	if *batch < 1 {
		return fmt.Errorf("--batch-size %d: want ≥ 1", *batch)
	}
	ld, d, err := loadRecsys(*model, *data)
	if err != nil {
		return err
	}
	met, err := recsys.Evaluate(ld.Model, ld.Model.NewWorkspace(), d, r, *batch)
	if err != nil {
		return err
	}
	if !*baseline {
		return printJSON(met)
	}
	var bl recsys.Metrics
	if ld.Model.Cfg.Task == recsys.TaskRanking {
		bl, err = recsys.UserRateBaseline(d, r, 5)
	} else {
		bl, err = recsys.PopularityBaseline(d, r)
	}
	if err != nil {
		return err
	}
	return printJSON(struct {
		recsys.Metrics
		Baseline recsys.Metrics `json:"baseline"`
	}{met, bl})
}

func cmdRecsysScore(_ context.Context, args []string) error {
	fs := newFlagSet("recsys-score", "recsys-score --model CHECKPOINT --data FILE|DIR --out scores.csv [--top K]")
	model := fs.String("model", "", "recsys checkpoint: a .safetensors file or a run directory (its best.safetensors)")
	data := fs.String("data", "", "events CSV or directory, read with the checkpoint's columns and vocabularies")
	out := fs.String("out", "", "output CSV (required)")
	top := fs.Int("top", 10, "next-item models: recommendations per user")
	batch := fs.Int("batch-size", recsys.DefaultTrainConfig().EvalBatch, "windows per batch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	if err := checkOutput(*out, ".csv"); err != nil {
		return err
	}
	if *top < 1 || *batch < 1 {
		return fmt.Errorf("--top %d and --batch-size %d must be ≥ 1", *top, *batch)
	}
	ld, d, err := loadRecsys(*model, *data)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var n int
	if ld.Model.Cfg.Task == recsys.TaskRanking {
		n, err = scoreEvents(w, ld, d, *batch)
	} else {
		n, err = recommend(w, ld, d, *top, *batch)
	}
	if err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "romae: %d rows → %s\n", n, *out)
	return nil
}

// scoreEvents writes, for every event, the probability of a positive
// outcome given the user's earlier events in the file.
func scoreEvents(w *csv.Writer, ld *recsys.Loaded, d *recsys.Data, batch int) (int, error) {
	if !d.Log.HasLabel {
		return 0, fmt.Errorf("%s: a ranking model reads each user's earlier outcomes: the file needs the label or rating column it was trained with", d.Log.Path)
	}
	all := make(events.Split, len(d.Log.Users))
	for u, usr := range d.Log.Users {
		all[u] = make([]events.Role, len(usr.Events))
		for i := range all[u] {
			all[u][i] = events.Test
		}
	}
	d.Split = all
	m := ld.Model
	wins := m.Windows(d, events.Test)
	ws := m.NewWorkspace()
	items := d.Log.Vocab.Items.Values
	w.Write([]string{"user", "item", "time", "label", "p"})
	n := 0
	var bt *recsys.Batch
	for lo := 0; lo < len(wins); lo += batch {
		var err error
		if bt, err = d.Collate(bt, wins[lo:min(lo+batch, len(wins))], recsys.TaskRanking); err != nil {
			return n, err
		}
		z, err := m.Logits(ws, bt)
		if err != nil {
			return n, err
		}
		for r, t := range bt.Target {
			if t < 0 {
				continue
			}
			e := bt.Ref[r]
			label := ""
			if e.Label >= 0 {
				label = strconv.Itoa(int(e.Label))
			}
			p := 1 / (1 + math.Exp(-float64(z[r])))
			w.Write([]string{d.Log.Users[bt.User[r/bt.L]].ID, items[e.Item], strconv.FormatFloat(e.Time, 'f', -1, 64), label, strconv.FormatFloat(p, 'g', 6, 64)})
			n++
		}
	}
	return n, nil
}

// recommend writes each user's top items after its last event, among the
// items it has not interacted with.
func recommend(w *csv.Writer, ld *recsys.Loaded, d *recsys.Data, top, batch int) (int, error) {
	m := ld.Model
	var wins []events.Window
	for u, usr := range d.Log.Users {
		n := len(usr.Events)
		wins = append(wins, events.Window{User: u, Start: max(0, n-m.Cfg.MaxLen), End: n})
	}
	ws := m.NewWorkspace()
	items := d.Log.Vocab.Items.Values
	w.Write([]string{"user", "rank", "item", "score"})
	rows := 0
	var bt *recsys.Batch
	for lo := 0; lo < len(wins); lo += batch {
		chunk := wins[lo:min(lo+batch, len(wins))]
		var err error
		if bt, err = d.Collate(bt, chunk, recsys.TaskNext); err != nil {
			return rows, err
		}
		for b := range chunk {
			bt.Target[b*bt.L+bt.Len[b]-1] = 0 // score the last token
		}
		scored, sc, err := m.ItemScores(ws, bt)
		if err != nil {
			return rows, err
		}
		V := m.Cfg.Items
		for k, r := range scored {
			u := bt.User[r/bt.L]
			seen := map[int32]bool{0: true}
			for _, e := range d.Log.Users[u].Events {
				seen[e.Item] = true
			}
			cand := make([]int, 0, V)
			for i := 1; i < V; i++ {
				if !seen[int32(i)] {
					cand = append(cand, i)
				}
			}
			s := sc[k*V : (k+1)*V]
			sort.Slice(cand, func(a, b int) bool { return s[cand[a]] > s[cand[b]] || s[cand[a]] == s[cand[b]] && cand[a] < cand[b] })
			for rank, i := range cand[:min(top, len(cand))] {
				w.Write([]string{d.Log.Users[u].ID, strconv.Itoa(rank + 1), items[i], strconv.FormatFloat(float64(s[i]), 'g', 6, 32)})
				rows++
			}
		}
	}
	return rows, nil
}
