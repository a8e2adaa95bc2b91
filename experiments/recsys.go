package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"romae/events"
	"romae/recsys"
)

func init() {
	register(Experiment{"recsys", "Issue 16: SIREN-RoPE where its paper uses it — eight positional variants of a causal recommender on an events CSV (--data FILE or DIR): ranking NE/AUC, next-item HR@10/NDCG@10, paired differences against RoPE on the index, step-time overhead", runRecsys})
}

// recsysBudget sizes one budget of the recsys experiment.
type recsysBudget struct {
	// maxEvents and maxPerUser cap the log (most recent events per user,
	// then whole users dropped in a seeded order), so any file runs in
	// bounded time; movielens-small (100,836 events, at most 2,698 per
	// user) is not cut by quick or paper.
	maxEvents, maxPerUser int
	size                  recsys.Config // DModel, Heads, Depth, FFN
	history               int
	epochsRank, epochsNxt int
	negatives, batch      int
	lr                    float64
	maxSteps              int // per run (0: every epoch)
	overheadPairs         int
}

var recsysBudgets = map[string]recsysBudget{
	Tiny:  {maxEvents: math.MaxInt, maxPerUser: math.MaxInt, size: recsys.Config{DModel: 16, Heads: 2, Depth: 1, FFN: 32}, history: 20, epochsRank: 1, epochsNxt: 1, negatives: 64, batch: 32, lr: 3e-3, maxSteps: 4, overheadPairs: 3},
	Quick: {maxEvents: 200_000, maxPerUser: 5000, size: recsys.Config{DModel: 32, Heads: 2, Depth: 2, FFN: 64}, history: 50, epochsRank: 3, epochsNxt: 6, negatives: 256, batch: 32, lr: 3e-3, overheadPairs: 100},
	Paper: {maxEvents: math.MaxInt, maxPerUser: math.MaxInt, size: recsys.Config{DModel: 128, Heads: 4, Depth: 2, FFN: 256}, history: 50, epochsRank: 10, epochsNxt: 40, negatives: 0, batch: 64, lr: 1e-3, overheadPairs: 100},
}

// recsysTask is one task's protocol.
type recsysTask struct {
	name, label string
	rule        events.SplitRule
	metrics     []string // reported, in table order
	higher      map[string]bool
}

var recsysTasks = []recsysTask{
	{recsys.TaskRanking, "A: pointwise ranking (outcome of each event from earlier events)",
		events.SplitRule{Rule: events.LastFraction, Val: 0.1, Test: 0.2},
		[]string{"NE", "AUC", "log loss"}, map[string]bool{"AUC": true}},
	{recsys.TaskNext, "B: next item, leave-one-out, full ranking",
		events.SplitRule{Rule: events.LeaveOneOut},
		[]string{"HR@10", "NDCG@10", "NLL"}, map[string]bool{"HR@10": true, "NDCG@10": true}},
}

func metricValue(m recsys.Metrics, name string) float64 {
	switch name {
	case "NE":
		return m.NE
	case "AUC":
		return m.AUC
	case "log loss":
		return m.LogLoss
	case "HR@10":
		return m.HR10
	case "NDCG@10":
		return m.NDCG10
	}
	return m.NLL
}

func runRecsys(ctx context.Context, o *Options, r *Result) error {
	if o.Data == "" {
		return fmt.Errorf("recsys needs --data: an events CSV (user, item, time, optional rating or 0/1 label) or a directory holding ratings.csv or events.csv, optionally with movies.csv or items.csv (item id, '|'-separated genres)")
	}
	b := recsysBudgets[o.Budget]
	r.Seeds = o.seeds(1, 5, 5)
	base, spec, err := recsys.Prepare(recsys.Source{Events: o.Data}, events.SplitRule{Rule: events.LeaveOneOut})
	if err != nil {
		return err
	}
	kept, total := capLog(base.Log, b.maxEvents, b.maxPerUser)
	o.logf("recsys: %s: %d users, %d events (%d in the file), %d items", spec.Source.Events, len(base.Log.Users), kept, total, base.Log.Vocab.Items.Len()-1)
	if kept < total {
		r.Notes = append(r.Notes, fmt.Sprintf("The %s budget kept %d of the file's %d events (each user's %d most recent, at most %d in all, whole users dropped in a seeded order).", o.Budget, kept, total, b.maxPerUser, b.maxEvents))
	}
	tables := map[string]map[string]map[string][]float64{} // task → metric → variant → per seed
	var ran []recsysTask
	for _, task := range recsysTasks {
		if task.name == recsys.TaskRanking && !base.Log.HasLabel {
			r.Notes = append(r.Notes, "Task A skipped: the events have no outcome (no label or rating column).")
			continue
		}
		ran = append(ran, task)
		d := &recsys.Data{Log: base.Log, Items: base.Items}
		if d.Split, err = task.rule.Apply(base.Log); err != nil {
			return err
		}
		tspec := *spec
		tspec.Split = task.rule
		vals := map[string]map[string][]float64{}
		for _, m := range task.metrics {
			vals[m] = map[string][]float64{}
		}
		tables[task.name] = vals
		for seed := 1; seed <= r.Seeds; seed++ {
			for _, variant := range recsys.Variants() {
				tag := fmt.Sprintf("%s-%s-seed%d", task.name, variant, seed)
				met, err := recsysRun(ctx, o, b, d, &tspec, task.name, variant, uint64(seed), tag)
				if err != nil {
					return fmt.Errorf("%s: %w", tag, err)
				}
				// The headline pair of the first seed, when the file was
				// read whole: recsys-evaluate on it gives the number back.
				if seed == 1 && kept == total && (variant == recsys.PosIndex || variant == recsys.PosSiren) {
					name, v := "ne", met.NE
					if task.name == recsys.TaskNext {
						name, v = "ndcg@10", met.NDCG10
					}
					r.Reproduce = append(r.Reproduce, Reproduction{Tool: "recsys-evaluate", Model: filepath.Join(o.runDir(tag), recsys.BestFile),
						Data: o.Data, Args: []string{"--batch-size", fmt.Sprint(recsys.DefaultTrainConfig().EvalBatch)}, Metric: name, Value: v})
				}
				o.logf("recsys %s: test %s", tag, met.Summary())
				for _, m := range task.metrics {
					vals[m][variant] = append(vals[m][variant], metricValue(met, m))
				}
			}
		}
		// Baselines on the same test targets.
		var bl recsys.Metrics
		var blName string
		if task.name == recsys.TaskRanking {
			bl, err = recsys.UserRateBaseline(d, events.Test, 5)
			blName = "user's earlier positive rate"
		} else {
			bl, err = recsys.PopularityBaseline(d, events.Test)
			blName = "popularity"
		}
		if err != nil {
			return err
		}
		for _, m := range task.metrics {
			for _, variant := range recsys.Variants() {
				r.addRow(Row{Experiment: "recsys/" + task.name, Setting: variant, Metric: m + " (test)", Paper: "-",
					Values: vals[m][variant], Baselines: map[string]float64{blName: metricValue(bl, m)}})
			}
		}
		for _, m := range task.metrics {
			for _, variant := range recsys.Variants() {
				if variant == recsys.PosIndex {
					continue
				}
				diff := make([]float64, r.Seeds)
				for i := range diff {
					diff[i] = vals[m][variant][i] - vals[m][recsys.PosIndex][i]
				}
				r.addRow(Row{Experiment: "recsys/" + task.name + "/paired", Setting: variant + " − rope-index", Metric: m + " (test)", Paper: "-", Values: diff})
			}
		}
		r.Notes = append(r.Notes, fmt.Sprintf("Task %s: %s baseline on the same %d test targets: %s.", task.label, blName, bl.N, bl.Summary()))
	}
	r.Notes = append(r.Notes, recsysTable(ran, tables, r.Seeds))
	if err := recsysOverhead(r, b, base, spec); err != nil {
		return err
	}
	r.Notes = append(r.Notes, fmt.Sprintf("Protocol: %s; model d %d, %d heads, depth %d, FFN %d, history %d events, batch %d windows, AdamW lr %g (warm-up 5%%, cosine; quick's 3e-3 chosen over the reference's 1e-3 on the validation metrics of one RoPE-on-index run per task), %d/%d epochs (A/B), next-item trained with %s; best epoch by validation NE (A) or full-softmax NLL (B; HR/NDCG on one target per user move by whole hits), reported on the test targets. Every variant of a seed starts from the same shared weights. Paired differences: variant − rope-index per seed, two-sided paired t-test, Holm-adjusted over the table. `romae recsys-evaluate --model %s/runs/TAG/best.safetensors --data %s` gives a run's test metrics back (when the budget read the whole file).",
		recsysProtocol(), b.size.DModel, b.size.Heads, b.size.Depth, b.size.FFN, b.history, b.batch, b.lr, b.epochsRank, b.epochsNxt, negativesText(b.negatives), o.Out, o.Data))
	return nil
}

func negativesText(n int) string {
	if n == 0 {
		return "the full softmax"
	}
	return fmt.Sprintf("a sampled softmax (%d negatives shared by a batch, drawn in proportion to training popularity, logQ-corrected; the reported NLL is the full softmax's)", n)
}

func recsysProtocol() string {
	var parts []string
	for _, t := range recsysTasks {
		rule := t.rule.Rule
		if rule == events.LastFraction {
			rule = fmt.Sprintf("each user's last %.0f%% of events test, the %.0f%% before validation", 100*t.rule.Test, 100*t.rule.Val)
		} else {
			rule = "each user's last event test, the one before validation"
		}
		parts = append(parts, fmt.Sprintf("%s — %s", t.label, rule))
	}
	return strings.Join(parts, "; ")
}

// recsysRun trains one (task, variant, seed) and returns its test metrics
// from the best validation epoch's checkpoint.
func recsysRun(ctx context.Context, o *Options, b recsysBudget, d *recsys.Data, spec *recsys.DataSpec, task, variant string, seed uint64, tag string) (recsys.Metrics, error) {
	cfg := recsys.DefaultConfig(task, variant)
	cfg.DModel, cfg.Heads, cfg.Depth, cfg.FFN = b.size.DModel, b.size.Heads, b.size.Depth, b.size.FFN
	cfg.MaxLen = b.history
	if task == recsys.TaskRanking {
		cfg.MaxLen++ // the candidate
	}
	cfg = spec.ModelConfig(cfg)
	var itemOf [][]int32
	if spec.ItemCats != nil {
		itemOf = spec.ItemOf
	}
	m, err := recsys.New[float32](cfg, itemOf, seed)
	if err != nil {
		return recsys.Metrics{}, err
	}
	tc := recsys.DefaultTrainConfig()
	tc.Epochs, tc.BatchSize, tc.Negatives, tc.Seed, tc.Out, tc.MaxSteps, tc.LR = b.epochsRank, b.batch, b.negatives, seed, o.runDir(tag), b.maxSteps, b.lr
	if task == recsys.TaskNext {
		tc.Epochs = b.epochsNxt
	}
	// An interrupted experiment continues where it stopped when run again
	// with the same --out: finished runs are read back, a killed one
	// resumes exactly (the trainer refuses a different recipe).
	tc.Resume = true
	tc.Progress = "none"
	if o.Log != nil {
		tc.Progress = "lines"
	}
	tr := &recsys.Trainer{Cfg: tc, Model: m, Data: d, Spec: spec, Log: o.Log}
	if _, err := tr.Run(ctx); err != nil {
		return recsys.Metrics{}, err
	}
	ld, err := recsys.Load(filepath.Join(tc.Out, recsys.BestFile))
	if err != nil {
		return recsys.Metrics{}, err
	}
	return recsys.Evaluate(ld.Model, ld.Model.NewWorkspace(), d, events.Test, tc.EvalBatch)
}

// capLog keeps each user's maxPerUser most recent events, then drops
// whole users (in a seeded order) until at most maxEvents remain. It
// returns the events kept and the events there were.
func capLog(l *events.Log, maxEvents, maxPerUser int) (kept, total int) {
	total = l.NumEvents()
	for u := range l.Users {
		if ev := l.Users[u].Events; len(ev) > maxPerUser {
			l.Users[u].Events = ev[len(ev)-maxPerUser:]
		}
	}
	kept = l.NumEvents()
	if kept <= maxEvents {
		return kept, total
	}
	drop := make([]bool, len(l.Users))
	for _, u := range rand.New(rand.NewPCG(1, 0x16)).Perm(len(l.Users)) {
		if kept <= maxEvents {
			break
		}
		drop[u] = true
		kept -= len(l.Users[u].Events)
	}
	users := l.Users[:0]
	for u, usr := range l.Users {
		if !drop[u] {
			users = append(users, usr)
		}
	}
	l.Users = users
	return kept, total
}

// pairedP is the two-sided p-value of a paired t-test that the mean of
// the per-seed differences is 0 (1 when they are all equal).
func pairedP(diff []float64) float64 {
	m, sd := meanStd(diff)
	n := float64(len(diff))
	if len(diff) < 2 || sd == 0 {
		if m == 0 {
			return 1
		}
		return 0
	}
	t := math.Abs(m) / (sd / math.Sqrt(n))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(t)
}

// holm adjusts p-values for a family of tests (Holm–Bonferroni): with all
// of them, at least one "significant" difference is expected by chance.
func holm(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, len(p))
	prev := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(len(p)-rank)*p[i])
		prev = math.Max(prev, v) // adjusted p-values never decrease
		adj[i] = prev
	}
	return adj
}

// recsysTable renders the variant × task table: mean ± std per metric and,
// for every variant but rope-index, the paired difference with its
// p-value; "beyond noise" when the Holm-adjusted p-value over the whole
// table is below 0.05.
func recsysTable(tasks []recsysTask, tables map[string]map[string]map[string][]float64, seeds int) string {
	type col struct{ task, metric, head string }
	var cols []col
	for _, t := range tasks {
		for _, m := range t.metrics[:2] {
			cols = append(cols, col{t.name, m, strings.Split(t.label, ":")[0] + " " + m})
		}
	}
	// Every paired test of the table, for the family-wise correction.
	type cell struct{ dm, ds, p float64 }
	cells := map[[2]string]cell{}
	var keys [][2]string
	var ps []float64
	for _, v := range recsys.Variants() {
		for _, c := range cols {
			if v == recsys.PosIndex || seeds < 2 {
				continue
			}
			x, base := tables[c.task][c.metric][v], tables[c.task][c.metric][recsys.PosIndex]
			diff := make([]float64, len(x))
			for i := range x {
				diff[i] = x[i] - base[i]
			}
			dm, ds := meanStd(diff)
			k := [2]string{v, c.head}
			cells[k] = cell{dm, ds, pairedP(diff)}
			keys, ps = append(keys, k), append(ps, cells[k].p)
		}
	}
	adj := map[[2]string]float64{}
	for i, a := range holm(ps) {
		adj[keys[i]] = a
	}
	var b strings.Builder
	b.WriteString("| variant |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.head)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, v := range recsys.Variants() {
		fmt.Fprintf(&b, "| %s |", v)
		for _, c := range cols {
			m, sd := meanStd(tables[c.task][c.metric][v])
			text := fmt.Sprintf("%.4f ± %.4f", m, sd)
			if e, ok := cells[[2]string{v, c.head}]; ok {
				verdict := "noise"
				switch a := adj[[2]string{v, c.head}]; {
				case a < 0.05:
					verdict = "**beyond noise**"
				case e.p < 0.05:
					verdict = fmt.Sprintf("noise after Holm (%.2f)", a)
				}
				text += fmt.Sprintf(" (Δ %+.4f ± %.4f, p %.2f, %s)", e.dm, e.ds, e.p, verdict)
			}
			fmt.Fprintf(&b, " %s |", text)
		}
		b.WriteString("\n")
	}
	if len(ps) > 0 {
		fmt.Fprintf(&b, "\nΔ: paired difference variant − rope-index over %d seeds (mean ± sd); p: two-sided paired t-test; beyond noise: Holm-adjusted p < 0.05 over the table's %d tests.\n", seeds, len(ps))
	}
	return b.String()
}

// recsysOverhead times SIREN-RoPE's training step against RoPE on the
// index, side by side in this process, on a batch of this data at this
// budget's size (ranking when the data has outcomes, else next-item),
// once per seed's initial weights.
func recsysOverhead(r *Result, b recsysBudget, base *recsys.Data, spec *recsys.DataSpec) error {
	task := recsys.TaskNext
	rule := events.SplitRule{Rule: events.LeaveOneOut}
	if base.Log.HasLabel {
		task, rule = recsys.TaskRanking, events.SplitRule{Rule: events.LastFraction, Val: 0.1, Test: 0.2}
	}
	d := &recsys.Data{Log: base.Log, Items: base.Items}
	var err error
	if d.Split, err = rule.Apply(base.Log); err != nil {
		return err
	}
	var itemOf [][]int32
	if spec.ItemCats != nil {
		itemOf = spec.ItemOf
	}
	var over, cpu, msA, msB []float64
	var bt *recsys.Batch
	for seed := 1; seed <= r.Seeds; seed++ {
		var models [2]*recsys.Model[float32]
		for i, v := range []string{recsys.PosIndex, recsys.PosSiren} {
			cfg := recsys.DefaultConfig(task, v)
			cfg.DModel, cfg.Heads, cfg.Depth, cfg.FFN, cfg.MaxLen = b.size.DModel, b.size.Heads, b.size.Depth, b.size.FFN, b.history+1
			if models[i], err = recsys.New[float32](spec.ModelConfig(cfg), itemOf, uint64(seed)); err != nil {
				return err
			}
		}
		if bt == nil {
			wins := models[0].Windows(d, events.Train)
			if bt, err = d.Collate(nil, wins[:min(b.batch, len(wins))], task); err != nil {
				return err
			}
		}
		sc, err := recsys.CompareSteps(models[0], models[1], bt, nil, b.overheadPairs)
		if err != nil {
			return err
		}
		over, cpu = append(over, sc.Overhead), append(cpu, sc.CPUOverhead)
		msA, msB = append(msA, 1e3*sc.MedianA), append(msB, 1e3*sc.MedianB)
	}
	setting := fmt.Sprintf("%s training step, %d windows of ≤ %d events, d %d", task, bt.B, b.history+1, b.size.DModel)
	r.addRow(Row{Experiment: "recsys/overhead", Setting: setting, Metric: "SIREN-RoPE step time over RoPE on the index (%, wall)", Paper: "+2.4% (SIREN-RoPE paper)", Values: over})
	r.addRow(Row{Experiment: "recsys/overhead", Setting: setting, Metric: "SIREN-RoPE step time over RoPE on the index (%, CPU time)", Paper: "-", Values: cpu})
	a, _ := meanStd(msA)
	s, _ := meanStd(msB)
	r.Notes = append(r.Notes, fmt.Sprintf("Step-time overhead: %d ABBA pairs per seed in this process (GOMAXPROCS=%s), medians per seed; mean step RoPE on the index %.2f ms, SIREN-RoPE %.2f ms. `go test -bench SirenOverhead ./recsys/` measures it at the reference's size (d 128) too.",
		b.overheadPairs, gomaxprocs(), a, s))
	return nil
}

func gomaxprocs() string {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	return "default"
}
