// Package experiments re-runs the paper's experiments that can run here,
// one function each, and reports romae's numbers next to the paper's:
// a results.json, a markdown table and PNG figures per experiment.
//
// Budgets: "paper" follows the paper's recipe (epochs, learning rate, batch,
// warm-up, clipping); "quick" shrinks data and epochs to finish in about
// ten minutes on a 2-core machine; "tiny" runs in seconds and only checks
// that everything is wired correctly (what the tests use).
package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"romae/ckpt"
)

// Budgets.
const (
	Tiny  = "tiny"
	Quick = "quick"
	Paper = "paper"
)

// Options for one experiment run.
type Options struct {
	Budget string
	Seeds  int       // 0: the budget's default
	Out    string    // results go to Out/<experiment>/
	Log    io.Writer // progress; nil: discard
	Data   string    // experiments that read a file (uea): its path
	// PosEncoding overrides the interpolation experiments' positional
	// encoding ("" = continuous p-RoPE); the siren experiment sets it.
	PosEncoding string
	timeScale   float64 // SIREN-RoPE time normalisation of the running experiment
	valFraction float64 // pretrainFinetune: fraction of the training data held out to select the fine-tuning epoch
	folds       int     // pretrainFinetune: fine-tune this many fold models and keep their ensemble (the CLI's data.folds)
	interpSmall bool    // synthetic and spiral on the small interpolation model (the siren experiment's quick runs)
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// pick returns the value for the run's budget.
func pick[T any](o *Options, tiny, quick, paper T) T {
	switch o.Budget {
	case Tiny:
		return tiny
	case Paper:
		return paper
	}
	return quick
}

func (o *Options) seeds(tiny, quick, paper int) int {
	if o.Seeds > 0 {
		return o.Seeds
	}
	return pick(o, tiny, quick, paper)
}

// resultsDirName is where an experiment's results go under Options.Out:
// its name, plus the dataset's for experiments that read a file, so that
// runs on several UEA datasets do not overwrite each other.
func resultsDirName(name, dataPath string) string {
	if dataPath == "" {
		return name
	}
	base := filepath.Base(dataPath)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return name + "-" + strings.TrimSuffix(base, "_TRAIN")
}

// Row is one line of a results table.
type Row struct {
	Experiment string    `json:"experiment"`
	Setting    string    `json:"setting"`
	Metric     string    `json:"metric"`
	Paper      string    `json:"paper"`  // the paper's number, as printed
	Mean       float64   `json:"mean"`   // ours
	Std        float64   `json:"std"`    // over seeds
	Values     []float64 `json:"values"` // per seed
	Baseline   float64   `json:"baseline,omitempty"`
	BaselineIs string    `json:"baseline_is,omitempty"` // what the trivial baseline is
	// Baselines are other methods' numbers on the same metric and test
	// tokens (interpolation: linear, spline, channel mean), mean over seeds.
	Baselines map[string]float64 `json:"baselines,omitempty"`
}

// Result is what an experiment run produced.
type Result struct {
	Name    string   `json:"name"`
	Budget  string   `json:"budget"`
	Seeds   int      `json:"seeds"`
	Rows    []Row    `json:"rows"`
	Figures []string `json:"figures"`
	Notes   []string `json:"notes"`
	Seconds float64  `json:"seconds"`
	Command string   `json:"command"`
	// Reproduce says, for every number computed from a saved model, how
	// `romae evaluate` recomputes it from the files the run left behind.
	Reproduce []Reproduction `json:"reproduce,omitempty"`
}

// Reproduction is one reported number and the command that gives it back
// exactly: romae evaluate (or Tool) --model Model --data Data [Args...],
// whose JSON output has Value under Metric.
type Reproduction struct {
	Tool   string   `json:"tool,omitempty"` // the romae command: evaluate when empty
	Model  string   `json:"model"`
	Data   string   `json:"data"`
	Args   []string `json:"args,omitempty"`
	Metric string   `json:"metric"`
	Value  float64  `json:"value"`
}

// Command is the shell command that reproduces the number.
func (p Reproduction) Command() string {
	tool := p.Tool
	if tool == "" {
		tool = "evaluate"
	}
	return strings.Join(append([]string{"romae", tool, "--model", p.Model, "--data", p.Data}, p.Args...), " ")
}

// reproduce records that evaluate on model and dataFile with batch size
// batch (and extra args) gives value under metric.
func (r *Result) reproduce(model, dataFile, metric string, value float64, batch int, args ...string) {
	args = append([]string{"--batch-size", strconv.Itoa(batch)}, args...)
	r.Reproduce = append(r.Reproduce, Reproduction{Model: model, Data: dataFile, Args: args, Metric: metric, Value: value})
}

// Experiment is one reproducible experiment.
type Experiment struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, o *Options, r *Result) error
}

var registry = map[string]Experiment{}

func register(e Experiment) { registry[e.Name] = e }

// Names lists the experiments.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Summary describes an experiment.
func Summary(name string) string { return registry[name].Summary }

// Run executes the named experiment and writes Out/<name>/results.json,
// results.md and its figures.
func Run(ctx context.Context, name string, o Options) (*Result, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown experiment %q (have %s)", name, strings.Join(Names(), ", "))
	}
	if o.Budget == "" {
		o.Budget = Quick
	}
	if o.Budget != Tiny && o.Budget != Quick && o.Budget != Paper {
		return nil, fmt.Errorf("budget %q: want tiny, quick or paper", o.Budget)
	}
	dir := filepath.Join(o.Out, resultsDirName(name, o.Data))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o.Out = dir
	r := &Result{Name: name, Budget: o.Budget, Command: fmt.Sprintf("romae experiment %s --budget %s", name, o.Budget)}
	if o.Seeds > 0 {
		r.Command += fmt.Sprintf(" --seeds %d", o.Seeds)
	}
	if o.Data != "" {
		r.Command += " --data " + o.Data
	}
	start := time.Now()
	if err := e.Run(ctx, &o, r); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", name, err)
	}
	r.Seconds = time.Since(start).Seconds()
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := writeAtomic(filepath.Join(dir, "results.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return r, writeAtomic(filepath.Join(dir, "results.md"), []byte(r.Markdown()))
}

// Markdown renders the result as table rows (with a header).
func (r *Result) Markdown() string {
	var b strings.Builder
	b.WriteString("| experiment | setting | metric | paper | romae (mean ± std) | baselines | seeds | budget | wall time | command |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %s | %s | `%s` |\n", row.Experiment, row.Setting, row.Metric,
			row.Paper, fmtMeanStd(row.Mean, row.Std), row.baselineCell(), len(row.Values), r.Budget, fmtDuration(r.Seconds), r.Command)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	return b.String()
}

// baselineCell lists the row's baselines, name-sorted, then the trivial
// one: "1-NN DTW 0.95, 1-NN ED 0.94; majority 0.25".
func (row Row) baselineCell() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(row.Baselines)) {
		parts = append(parts, fmt.Sprintf("%s %.4g", k, row.Baselines[k]))
	}
	cell := strings.Join(parts, ", ")
	if row.BaselineIs != "" && row.Baselines[row.BaselineIs] != row.Baseline {
		if cell != "" {
			cell += "; "
		}
		cell += fmt.Sprintf("%s %.4g", row.BaselineIs, row.Baseline)
	}
	if cell == "" {
		return "-"
	}
	return cell
}

func fmtMeanStd(m, s float64) string {
	return fmt.Sprintf("%.4g ± %.2g", m, s)
}

func fmtDuration(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// meanStd is the mean and sample standard deviation.
func meanStd(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	if len(x) < 2 {
		return m, 0
	}
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}

// addRow appends a row summarising per-seed values.
func (r *Result) addRow(row Row) {
	row.Mean, row.Std = meanStd(row.Values)
	r.Rows = append(r.Rows, row)
}

// writeAtomic replaces path with b through ckpt.WriteFileAtomic, so an
// interrupted experiment never leaves a half-written results file.
func writeAtomic(path string, b []byte) error {
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
