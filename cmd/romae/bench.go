package main

// romae bench: issue 6's speed workloads, measured the way the authors'
// PyTorch numbers were (median of N steps, synthetic data of the same
// shape), printing one JSON line per (workload, pos-encoding, precision).

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"romae/data"
	"romae/model"
	"romae/optim"
	"romae/tensor"
)

func init() {
	commands["bench"] = command{"time pre-training / fine-tuning / inference steps on synthetic data (JSON)", cmdBench}
}

type benchOpts struct {
	workload, size, pos, precision string
	batch, tokens, values, posDims int
	classes, steps, warmup         int
	cpuprofile                     string // this run's profile file (cmdBench names it)
	maskRatio, lr                  float64
	seed                           uint64
	json, packWeights              bool
}

// benchResult is the JSON line. GFLOP counts the nominal workload
// (matmuls + attention products, backward = 2× forward), so it does not
// shrink when the engine skips work it can prove unused.
type benchResult struct {
	Workload     string  `json:"workload"`
	Size         string  `json:"size"`
	PosEncoding  string  `json:"pos_encoding"`
	Precision    string  `json:"precision"`
	Batch        int     `json:"batch"`
	Tokens       int     `json:"tokens"`
	Steps        int     `json:"steps"`
	MedianS      float64 `json:"median_s"`
	MinS         float64 `json:"min_s"`
	SamplesPerS  float64 `json:"samples_per_s"`
	GFLOP        float64 `json:"gflop"`
	GFLOPS       float64 `json:"gflops"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	AllocsPerStp float64 `json:"allocs_per_step"`
	BytesPerStep float64 `json:"bytes_per_step"`
	GEMM         string  `json:"gemm"`
	// The machine and what its products ran on (kernels are chosen by
	// CPU at run time; ROMAE_GEMM forces one): CPU brand string, class
	// (amd-zen4, amd-zen5, intel-amx, …), the features the CPU offers
	// romae, the kernel, the features it uses and its k block.
	CPU            string   `json:"cpu"`
	CPUClass       string   `json:"cpu_class"`
	CPUFeatures    []string `json:"cpu_features"`
	CPUCaches      string   `json:"cpu_caches"`
	Kernel         string   `json:"kernel"`
	KernelFeatures []string `json:"kernel_features"`
	KBlock         int      `json:"k_block,omitempty"`
	// PackedWeights: inference read weights packed once (--packed-weights).
	PackedWeights bool      `json:"packed_weights,omitempty"`
	Procs         int       `json:"procs"`
	StepS         []float64 `json:"step_s"`
	// CPUMedianS is the median process CPU time (user+system) per step:
	// on a shared box it tracks the work done when wall time is inflated
	// by other processes; ≈ procs × median_s when the box is quiet.
	CPUMedianS float64 `json:"cpu_median_s"`
}

func cmdBench(_ context.Context, args []string) error {
	var o benchOpts
	fs := newFlagSet("bench", "bench [--workload pretrain|finetune|infer[,...]] [--pos-encoding rope|rope-int|absolute[,...]] [--precision fp32|bf16[,...]] [flags]")
	fs.StringVar(&o.workload, "workload", "pretrain", "pretrain, finetune, infer or serve (HTTP load on romae serve, beside infer); a comma list runs each in turn")
	fs.StringVar(&o.size, "size", "tiny", "encoder size (decoder: tiny-shallow)")
	fs.IntVar(&o.batch, "batch-size", 32, "samples per step")
	deprecate(fs, "batch", "batch-size")
	fs.IntVar(&o.tokens, "tokens", 200, "tokens per sample")
	fs.IntVar(&o.values, "values", 2, "values per token")
	fs.IntVar(&o.posDims, "pos-dims", 2, "position axes (positions uniform in [0,100))")
	fs.StringVar(&o.pos, "pos-encoding", "rope", "rope, rope-int or absolute; a comma list runs each in turn")
	fs.StringVar(&o.precision, "precision", "fp32", "fp32 or bf16 matrix products; a comma list runs each in turn")
	fs.IntVar(&o.classes, "classes", 20, "classes of the fine-tuning/inference head")
	fs.IntVar(&o.steps, "steps", 5, "timed steps (median and min reported)")
	fs.IntVar(&o.warmup, "warmup", 1, "untimed steps first (buffers grow, caches warm)")
	fs.Float64Var(&o.maskRatio, "mask-ratio", 0.75, "pre-training mask ratio")
	fs.Float64Var(&o.lr, "lr", 1e-4, "AdamW learning rate")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of weights and synthetic data")
	fs.BoolVar(&o.json, "json", true, "print JSON lines (the only format)")
	fs.BoolVar(&o.packWeights, "packed-weights", true, "infer: pack the weights once before timing (Model.PackWeights), as romae serve and the inference commands do; false: every product packs its weight")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of the timed steps (not the set-up or warm-up) to this file; with several workloads, precisions or encodings, one file each, named FILE.workload-precision-encoding")
	so := serveBenchFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.steps < 1 || o.batch < 1 || o.tokens < 2 {
		return fmt.Errorf("need steps ≥ 1, batch-size ≥ 1, tokens ≥ 2")
	}
	defer tensor.SetPrecision(tensor.PrecisionFP32)
	precs, works, poss := strings.Split(o.precision, ","), strings.Split(o.workload, ","), strings.Split(o.pos, ",")
	for _, prec := range precs {
		for _, w := range works {
			for _, pos := range poss {
				// One profile per run: pprof cannot add to a file, so
				// several runs get one file each.
				o.cpuprofile = *cpuprof
				if o.cpuprofile != "" && len(precs)*len(works)*len(poss) > 1 {
					o.cpuprofile += "." + w + "-" + prec + "-" + pos
				}
				if err := tensor.SetPrecision(prec); err != nil {
					return err
				}
				if w == "serve" {
					stop, err := startProfile(o.cpuprofile)
					if err != nil {
						return err
					}
					err = runServeBench(o, so, pos, prec)
					if serr := stop(); err == nil {
						err = serr
					}
					if err != nil {
						return err
					}
					continue
				}
				r, err := runBench(o, w, pos)
				if err != nil {
					return err
				}
				r.Precision = prec
				if err := printJSON(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// benchConfig is the model of issue 6: size encoder, tiny-shallow decoder,
// [CLS], p-RoPE p=0.75, no dropout.
func benchConfig(o benchOpts, workload, pos string) (model.Config, error) {
	c := model.DefaultConfig()
	s, ok := model.Sizes[o.size]
	if !ok {
		return c, fmt.Errorf("size %q: want one of %v", o.size, model.SizeNames())
	}
	c.Encoder, c.Values, c.PosDims, c.PosEncoding = s, o.values, o.posDims, pos
	switch workload {
	case "pretrain":
		c.Task = model.TaskPretrain
	case "finetune", "infer":
		c.Task, c.Outputs = model.TaskClassify, o.classes
	default:
		return c, fmt.Errorf("workload %q: want pretrain, finetune or infer", workload)
	}
	return c, c.Validate()
}

// fillBenchBatch draws a fresh synthetic batch: values N(0,1), positions
// uniform in [0,100) (whole numbers for rope-int).
func fillBenchBatch(bt *data.Batch, rng *rand.Rand, integer bool) {
	for i := range bt.Values {
		bt.Values[i] = float32(rng.NormFloat64())
	}
	for i := range bt.Positions {
		p := rng.Float64() * 100
		if integer {
			p = math.Floor(p)
		}
		bt.Positions[i] = float32(p)
	}
}

func runBench(o benchOpts, workload, pos string) (*benchResult, error) {
	cfg, err := benchConfig(o, workload, pos)
	if err != nil {
		return nil, err
	}
	m, err := model.New[float32](cfg, o.seed)
	if err != nil {
		return nil, err
	}
	B, L, C, D := o.batch, o.tokens, o.values, o.posDims
	bt := &data.Batch{B: B, L: L, C: C, D: D, Values: make([]float32, B*L*C), Positions: make([]float32, B*L*D),
		Pad: make([]bool, B*L), Lengths: make([]int, B), Labels: make([]int, B)}
	for b := range bt.Lengths {
		bt.Lengths[b] = L
	}
	src := rand.NewPCG(o.seed, 7) // dropout draws from it as training does
	rng := rand.New(src)
	packed := workload == "infer" && o.packWeights
	if packed {
		m.PackWeights()
	}
	ws := m.NewWorkspace()
	opt := optim.NewAdamW()
	var mask []bool
	step := func() error {
		fillBenchBatch(bt, rng, pos == model.PosRoPEInt)
		for b := range bt.Labels {
			bt.Labels[b] = rng.IntN(o.classes)
		}
		switch workload {
		case "pretrain":
			mask = data.RandomMask(mask, bt, o.maskRatio, rng)
			m.ZeroGrad()
			if _, err := m.ForwardPretrain(ws, bt, mask, true, src); err != nil {
				return err
			}
			m.BackwardPretrain(ws)
			optim.ClipGradNorm(m.Params, 1)
			opt.Step(m.Params, o.lr)
		case "finetune":
			m.ZeroGrad()
			if _, err := m.ForwardTask(ws, bt, model.LossOptions{}, true, src); err != nil {
				return err
			}
			m.BackwardTask(ws)
			optim.ClipGradNorm(m.Params, 1)
			opt.Step(m.Params, o.lr)
		case "infer":
			if _, err := m.ForwardTask(ws, bt, model.LossOptions{}, false, nil); err != nil {
				return err
			}
		}
		return nil
	}
	for range o.warmup {
		if err := step(); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	stopProfile, err := startProfile(o.cpuprofile)
	if err != nil {
		return nil, err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	times, cpu := make([]float64, o.steps), make([]float64, o.steps)
	for i := range times {
		t0, c0 := time.Now(), cpuSeconds()
		if err := step(); err != nil {
			stopProfile()
			return nil, err
		}
		times[i], cpu[i] = time.Since(t0).Seconds(), cpuSeconds()-c0
	}
	runtime.ReadMemStats(&ms1)
	if err := stopProfile(); err != nil {
		return nil, err
	}
	sorted := append([]float64(nil), times...)
	sort.Float64s(sorted)
	med := median(times)
	gflop := benchFLOPs(cfg, workload, B, L, o.maskRatio) / 1e9
	machine, kern := tensor.CPU(), tensor.Kernel()
	r := &benchResult{Workload: workload, Size: o.size, PosEncoding: pos, Batch: B, Tokens: L, Steps: o.steps,
		MedianS: med, MinS: sorted[0], SamplesPerS: float64(B) / med, GFLOP: gflop, GFLOPS: gflop / med,
		PeakRSSMB: peakRSSMB(), GEMM: kern.Backend, Procs: runtime.GOMAXPROCS(0), StepS: times,
		CPU: machine.Name, CPUClass: machine.Class(), CPUFeatures: machine.Features, CPUCaches: machine.Caches(),
		Kernel: kern.Kernel, KernelFeatures: kern.Features, KBlock: kern.KBlock, PackedWeights: packed,
		AllocsPerStp: float64(ms1.Mallocs-ms0.Mallocs) / float64(o.steps),
		BytesPerStep: float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(o.steps), CPUMedianS: median(cpu)}
	return r, nil
}

// benchFLOPs counts a workload's matmul and attention FLOPs the way issue 6
// does: 2 per multiply-add, backward = 2× forward, optimiser not counted.
func benchFLOPs(c model.Config, workload string, B, L int, ratio float64) float64 {
	cls := 0
	if c.UseCLS {
		cls = 1
	}
	linear := func(n, i, o int) float64 { return 2 * float64(n) * float64(i) * float64(o) }
	stack := func(s model.Size, L int) float64 {
		N, d := B*L, s.DModel
		per := 4*linear(N, d, d) + linear(N, d, s.FFN) + linear(N, s.FFN, d) +
			2*2*float64(B)*float64(L)*float64(L)*float64(d) // q·kᵀ and p·v over all heads
		return float64(s.Depth) * per
	}
	var fwd float64
	switch workload {
	case "pretrain":
		masked := int(math.Round(ratio * float64(L)))
		masked = min(max(masked, 1), L-1)
		Le, Lq := cls+L-masked, masked
		dd := c.Decoder.DModel
		fwd = linear(B*Le, c.Values, c.Encoder.DModel) + stack(c.Encoder, Le) +
			linear(B*Le, c.Encoder.DModel, dd) + stack(c.Decoder, Le+Lq) + linear(B*Lq, dd, c.Values)
		return 3 * fwd
	default:
		fwd = linear(B*(cls+L), c.Values, c.Encoder.DModel) + stack(c.Encoder, cls+L) + linear(B, c.Encoder.DModel, c.Outputs)
		if workload == "infer" {
			return fwd
		}
		return 3 * fwd
	}
}

// peakRSSMB is the process's peak resident set (ru_maxrss, KiB on Linux).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// cpuSeconds is the process's user+system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// startProfile starts a CPU profile into path (nothing when path is
// empty); the function it returns stops it and closes the file.
func startProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
