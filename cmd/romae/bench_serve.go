package main

// romae bench --workload serve: closed- and open-loop HTTP load against
// romae serve (in this process on a loopback port, or a running one with
// --serve-url), beside the offline batched inference of the same model in
// the same run (docs/serving.md reports the numbers).

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"romae/data"
	"romae/model"
	"romae/serve"
)

type serveBenchOpts struct {
	url         string
	phases      string
	duration    time.Duration
	soak        time.Duration
	clients     int
	samples     int
	rate        float64
	maxRequests int
	maxWait     time.Duration
	queue       int
	process     bool
	priority    string
}

// serveBenchFlags registers the serve workload's flags on bench's set.
func serveBenchFlags(fs *flag.FlagSet) *serveBenchOpts {
	so := &serveBenchOpts{}
	fs.StringVar(&so.url, "serve-url", "", "serve: a running romae serve on loopback (http://127.0.0.1:PORT); empty: start one in this process with the bench model")
	fs.StringVar(&so.phases, "serve-phases", "lone,closed,open50,paced50,overload", "serve: phases in order: lone (one request at a time), closed (--serve-clients back to back: saturation), open50 (Poisson arrivals at half the closed throughput, or --serve-rate), paced50 (the same rate at even intervals, as wrk2 and vegeta pace load), overload (3× the closed throughput), soak (open50 for --serve-soak, RSS and goroutines at start and end)")
	fs.DurationVar(&so.duration, "serve-duration", 15*time.Second, "serve: length of each phase but soak")
	fs.DurationVar(&so.soak, "serve-soak", 10*time.Minute, "serve: length of the soak phase")
	fs.IntVar(&so.clients, "serve-clients", 0, "serve: closed-loop clients (0: 2 × --batch)")
	fs.IntVar(&so.samples, "serve-samples", 1, "serve: samples per request")
	fs.Float64Var(&so.rate, "serve-rate", 0, "serve: open-loop rate in samples/s for open50, paced50 and soak (0: half the closed-loop throughput)")
	fs.IntVar(&so.maxRequests, "serve-max-requests", 200000, "serve: most requests in one phase")
	fs.DurationVar(&so.maxWait, "serve-max-wait", 5*time.Millisecond, "serve: the server's --max-wait")
	fs.IntVar(&so.queue, "serve-queue", 0, "serve: the server's --queue in samples (0: 4 × --batch)")
	fs.BoolVar(&so.process, "serve-process", true, "serve: run the server as a child process (romae serve); false: in this process")
	fs.StringVar(&so.priority, "serve-compute-priority", serve.PriorityOverload, "serve: the child server's --compute-priority (overload, idle or normal)")
	return so
}

// servePhase is one JSON line of the serve workload. Latencies are in
// milliseconds, from sending the request to reading the whole answer.
type servePhase struct {
	Workload      string  `json:"workload"`
	Phase         string  `json:"phase"`
	Size          string  `json:"size,omitempty"`
	Batch         int     `json:"batch"`
	Tokens        int     `json:"tokens"`
	SamplesPerReq int     `json:"samples_per_request"`
	Clients       int     `json:"clients,omitempty"`
	OfferedPerS   float64 `json:"offered_samples_per_s,omitempty"`
	DurationS     float64 `json:"duration_s"`
	Requests      int     `json:"requests"`
	OK            int     `json:"ok"`
	Refused       int     `json:"refused"` // 429 and 503 with Retry-After
	Errors        int     `json:"errors"`  // any other answer or failure
	Hung          int     `json:"hung"`    // no answer within the client's 60 s
	SamplesPerS   float64 `json:"samples_per_s"`
	P50Ms         float64 `json:"p50_ms"`
	P95Ms         float64 `json:"p95_ms"`
	P99Ms         float64 `json:"p99_ms"`
	RefusalP50Ms  float64 `json:"refusal_p50_ms,omitempty"`
	RefusalP99Ms  float64 `json:"refusal_p99_ms,omitempty"`
	// ServerRefusalP99Ms is the p99 of refusals as the server timed them
	// (from reading the headers to answering; the upper bound of its
	// histogram bucket): the client's figure adds the network stack and
	// the client's own wait for a CPU.
	ServerRefusalP99Ms float64            `json:"server_refusal_p99_ms,omitempty"`
	BatchHist          map[string]float64 `json:"batch_hist"` // forward passes by batch size (upper bucket bound)
	MeanBatch          float64            `json:"mean_batch"`
	CPUPerSampleMs     float64            `json:"cpu_ms_per_sample,omitempty"` // the server process's CPU time (with the load generator when in-process)
	// The soak: the server's resident memory, Go heap in use and
	// goroutines at the start and the end (idle client connections
	// closed), and sampled under load.
	RSSStartMB      float64     `json:"rss_start_mb,omitempty"`
	RSSEndMB        float64     `json:"rss_end_mb,omitempty"`
	HeapStartMB     float64     `json:"heap_inuse_start_mb,omitempty"`
	HeapEndMB       float64     `json:"heap_inuse_end_mb,omitempty"`
	GoroutinesStart float64     `json:"goroutines_start,omitempty"`
	GoroutinesEnd   float64     `json:"goroutines_end,omitempty"`
	Series          []soakPoint `json:"series,omitempty"`
}

// soakPoint is the server's memory and goroutines at a moment of the soak
// (open connections included).
type soakPoint struct {
	S          float64 `json:"s"`
	RSSMB      float64 `json:"rss_mb"`
	HeapMB     float64 `json:"heap_inuse_mb"`
	Goroutines float64 `json:"goroutines"`
}

// memory is RSS and heap in use (MB) and goroutines from a scrape.
func memory(m map[string]float64) (rss, heap, goroutines float64) {
	return m["process_resident_memory_bytes"] / (1 << 20), m["go_memstats_heap_inuse_bytes"] / (1 << 20), m["go_goroutines"]
}

// sample scrapes the server every interval until stop.
func (tgt *loadTarget) sample(interval time.Duration, stop chan struct{}) []soakPoint {
	var out []soakPoint
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
			if m, err := scrape(tgt); err == nil {
				rss, heap, g := memory(m)
				out = append(out, soakPoint{time.Since(start).Seconds(), rss, heap, g})
			}
		}
	}
}

// serveSummary compares the phases with the offline batched inference of
// the same model measured in the same run, against issue 15's targets.
type serveSummary struct {
	Workload           string  `json:"workload"`
	Phase              string  `json:"phase"`
	OfflineBefore      float64 `json:"offline_samples_per_s_before"`
	OfflineAfter       float64 `json:"offline_samples_per_s_after"`
	OfflineSamplesPerS float64 `json:"offline_samples_per_s"` // their mean
	OfflineCPUPerSamMs float64 `json:"offline_cpu_ms_per_sample"`
	SaturatedPerS      float64 `json:"saturated_samples_per_s"`
	SaturatedRatio     float64 `json:"saturated_over_offline"`
	// CPUEfficiency is offline CPU time per sample over the server's in the
	// closed phase (HTTP and JSON included): less sensitive than wall time
	// to what else runs on the machine.
	CPUEfficiency      float64 `json:"cpu_efficiency"`
	LoneP50Ms          float64 `json:"lone_p50_ms"`
	HalfLoadP99Ms      float64 `json:"half_load_p99_ms"`
	HalfLoadP99OverLon float64 `json:"half_load_p99_over_lone"`
	HalfLoadErrors     int     `json:"half_load_errors"`
	// The same for paced50: arrivals at even intervals, as wrk2 and vegeta
	// pace an open loop.
	PacedP99Ms         float64         `json:"half_load_paced_p99_ms"`
	PacedP99OverLon    float64         `json:"half_load_paced_p99_over_lone"`
	PacedErrors        int             `json:"half_load_paced_errors"`
	OverloadRefusalP99 float64         `json:"overload_refusal_p99_ms"`
	OverloadServerP99  float64         `json:"overload_server_refusal_p99_ms"`
	OverloadHung       int             `json:"overload_hung"`
	Targets            map[string]bool `json:"targets_met"`
	CPU                string          `json:"cpu"`
	Procs              int             `json:"procs"`
	LoadAvg            string          `json:"load_avg_at_end"`
	ComputePriority    string          `json:"compute_priority,omitempty"` // the child server's --compute-priority
}

// loadTarget is what the load generator talks to.
type loadTarget struct {
	url      string
	endpoint string
	client   *http.Client
	bodies   [][]byte
	samples  int
}

func runServeBench(o benchOpts, so *serveBenchOpts, pos, precision string) error {
	if so.samples < 1 || so.samples > o.batch {
		return fmt.Errorf("--serve-samples %d: want 1..--batch (%d)", so.samples, o.batch)
	}
	if so.priority != serve.PriorityOverload && (!so.process || so.url != "") {
		return fmt.Errorf("--serve-compute-priority %s: only for the server this bench starts as a child process", so.priority)
	}
	if so.clients == 0 {
		so.clients = 2 * o.batch
	}
	if so.queue == 0 {
		so.queue = 4 * o.batch
	}
	var offline *benchResult
	base := so.url
	if base == "" {
		// The offline reference: the same model, batch and tokens, timed
		// in this run.
		var err error
		if offline, err = runBench(o, "infer", pos); err != nil {
			return err
		}
		offline.Precision = precision
		if err := printJSON(offline); err != nil {
			return err
		}
		start := spawnBenchServer
		if !so.process {
			start = startBenchServer
		}
		url, stop, err := start(o, so, pos)
		if err != nil {
			return err
		}
		defer stop()
		base = url
	} else if err := checkLoopback(base); err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4096, DisableCompression: true}
	defer tr.CloseIdleConnections()
	tgt := &loadTarget{url: base, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}, samples: so.samples}
	if err := tgt.prepare(o); err != nil {
		return err
	}
	results := map[string]*servePhase{}
	closedRate := 0.0
	for _, ph := range strings.Split(so.phases, ",") {
		r := &servePhase{Workload: "serve", Phase: ph, Size: o.size, Batch: o.batch, Tokens: o.tokens, SamplesPerReq: so.samples}
		if so.url != "" {
			r.Size = ""
		}
		if ph == "soak" {
			tgt.settle()
		}
		before, err := scrape(tgt)
		if err != nil {
			return err
		}
		var rec *recorder
		switch ph {
		case "lone":
			rec = tgt.lone(so.duration, min(so.maxRequests, 200))
		case "closed":
			r.Clients = so.clients
			rec = tgt.closedLoop(so.clients, so.duration, so.maxRequests)
			closedRate = float64(rec.okSamples) / rec.elapsed.Seconds()
		case "open50", "paced50", "overload", "soak":
			rate := so.rate
			if rate == 0 || ph == "overload" {
				if closedRate == 0 {
					return fmt.Errorf("phase %s needs the closed phase before it (or --serve-rate for open50, paced50 and soak)", ph)
				}
				rate = closedRate / 2
				if ph == "overload" {
					rate = 3 * closedRate
				}
			}
			r.OfferedPerS = rate
			d := so.duration
			var sampled chan []soakPoint
			stopSampling := make(chan struct{})
			if ph == "soak" {
				d = so.soak
				r.RSSStartMB, r.HeapStartMB, r.GoroutinesStart = memory(before)
				sampled = make(chan []soakPoint, 1)
				go func() { sampled <- tgt.sample(min(d/10, time.Minute), stopSampling) }()
			}
			rec = tgt.openLoop(rate/float64(so.samples), d, so.maxRequests, ph == "paced50")
			close(stopSampling)
			if sampled != nil {
				r.Series = <-sampled
			}
		default:
			return fmt.Errorf("--serve-phases: unknown phase %q (lone, closed, open50, paced50, overload, soak)", ph)
		}
		if ph == "soak" {
			tgt.settle()
		}
		after, err := scrape(tgt)
		if err != nil {
			return err
		}
		if ph == "soak" {
			r.RSSEndMB, r.HeapEndMB, r.GoroutinesEnd = memory(after)
		}
		rec.fill(r)
		if rec.okSamples > 0 {
			r.CPUPerSampleMs = 1000 * (after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]) / float64(rec.okSamples)
		}
		r.BatchHist, r.MeanBatch = batchHistogram(before, after)
		if r.Refused > 0 {
			r.ServerRefusalP99Ms = 1000 * histogramQuantile(before, after,
				fmt.Sprintf(`romae_serve_request_duration_seconds_bucket{endpoint="%s",outcome="refused",le="`, tgt.endpoint), 0.99)
		}
		results[ph] = r
		if err := printJSON(r); err != nil {
			return err
		}
	}
	var offlineAfter *benchResult
	if offline != nil {
		// Again after the load: on a shared machine the two bracket the
		// drift of what else runs.
		var err error
		if offlineAfter, err = runBench(o, "infer", pos); err != nil {
			return err
		}
		offlineAfter.Precision = precision
		if err := printJSON(offlineAfter); err != nil {
			return err
		}
	}
	sum := summarize(offline, offlineAfter, results)
	if so.url == "" && so.process {
		sum.ComputePriority = so.priority
	}
	return printJSON(sum)
}

// benchServeModel is the bench model (random weights, the infer
// workload's classifier with classes c0, c1, ...).
func benchServeModel(o benchOpts, pos string) (*model.Model[float32], *data.Spec, error) {
	cfg, err := benchConfig(o, "infer", pos)
	if err != nil {
		return nil, nil, err
	}
	m, err := model.New[float32](cfg, o.seed)
	if err != nil {
		return nil, nil, err
	}
	spec := &data.Spec{}
	for k := range o.classes {
		spec.Classes = append(spec.Classes, "c"+strconv.Itoa(k))
	}
	return m, spec, nil
}

// serverConfig is the serve configuration the bench runs: batches of
// --batch, every request of the workload within the limits.
func serverConfig(o benchOpts, so *serveBenchOpts) serve.Config {
	sc := serve.DefaultConfig()
	sc.MaxBatch, sc.MaxWait, sc.QueueSamples = o.batch, so.maxWait, so.queue
	sc.MaxBatchTokens = max(sc.MaxBatchTokens, o.batch*o.tokens)
	sc.Limits.MaxSamples = min(sc.Limits.MaxSamples, so.queue)
	sc.Limits.MaxTokens = max(sc.Limits.MaxTokens, o.tokens)
	return sc
}

// startBenchServer serves the bench model in this process on a loopback
// port.
func startBenchServer(o benchOpts, so *serveBenchOpts, pos string) (string, func(), error) {
	nw, spec, err := benchServeModel(o, pos)
	if err != nil {
		return "", nil, err
	}
	m, err := serve.NewModel("bench-"+o.size, nw, spec)
	if err != nil {
		return "", nil, err
	}
	sc := serverConfig(o, so)
	sc.Load = func() (*serve.Model, error) { return m, nil }
	sc.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := serve.New(sc)
	if err != nil {
		return "", nil, err
	}
	ln, err := listenLoopback()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	for !s.Ready() {
		select {
		case err := <-done:
			cancel()
			return "", nil, err
		case <-time.After(5 * time.Millisecond):
		}
	}
	return "http://" + ln.Addr().String(), func() { cancel(); <-done }, nil
}

// spawnBenchServer saves the bench model to a temporary checkpoint and
// runs `romae serve` on it as a child process (this executable), as a
// deployment would: the load generator and the server do not share a Go
// scheduler. stop sends SIGTERM and waits.
func spawnBenchServer(o benchOpts, so *serveBenchOpts, pos string) (string, func(), error) {
	nw, spec, err := benchServeModel(o, pos)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "romae-bench-serve-")
	if err != nil {
		return "", nil, err
	}
	ckpt := filepath.Join(dir, "bench.safetensors")
	if err := nw.Save(ckpt, spec.Meta(), nil); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	sc := serverConfig(o, so)
	cmd := exec.Command(exe, "serve", "--model", ckpt, "--addr", "127.0.0.1:0", "--log-format", "json",
		"--max-batch", strconv.Itoa(sc.MaxBatch), "--max-wait", sc.MaxWait.String(), "--queue", strconv.Itoa(sc.QueueSamples),
		"--max-batch-tokens", strconv.Itoa(sc.MaxBatchTokens), "--max-samples", strconv.Itoa(sc.Limits.MaxSamples),
		"--max-tokens", strconv.Itoa(sc.Limits.MaxTokens), "--compute-priority", so.priority)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			switch {
			case json.Unmarshal(sc.Bytes(), &line) != nil:
				fmt.Fprintln(os.Stderr, sc.Text())
			case line["msg"] == "listening":
				addr <- fmt.Sprint(line["addr"])
			case line["level"] == "WARN" || line["level"] == "ERROR":
				fmt.Fprintln(os.Stderr, sc.Text())
			}
		}
		exited <- cmd.Wait()
	}()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	}
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case err := <-exited:
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("romae serve exited before listening: %v", err)
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, fmt.Errorf("romae serve did not listen within 60 s")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := client.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("romae serve was not ready within 60 s")
		}
	}
	client.CloseIdleConnections()
	return url, stop, nil
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// checkLoopback refuses a --serve-url that is not this machine: the load
// generator is for one's own server.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--serve-url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("--serve-url %q: want http:// or https://", raw)
	}
	ips, err := net.LookupIP(u.Hostname())
	if err != nil {
		return fmt.Errorf("--serve-url %q: %w", raw, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("--serve-url %q: %s is not a loopback address; the load generator only targets this machine", raw, ip)
		}
	}
	return nil
}

// prepare asks the server what its model takes and builds request bodies
// of random tokens shaped like the offline bench's batches.
func (tgt *loadTarget) prepare(o benchOpts) error {
	resp, err := tgt.client.Get(tgt.url + "/v1/model")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var info serve.ModelInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/v1/model: status %d: %v", tgt.url, resp.StatusCode, err)
	}
	tgt.endpoint = "/v1/predict"
	if info.Task == model.TaskPretrain {
		tgt.endpoint = "/v1/embed"
	}
	type token struct {
		Values   []float32 `json:"values"`
		Position []float32 `json:"position"`
	}
	type sample struct {
		Tokens []token `json:"tokens"`
	}
	rng := rand.New(rand.NewPCG(o.seed, 15))
	for range 64 {
		ss := make([]sample, tgt.samples)
		for i := range ss {
			ss[i].Tokens = make([]token, o.tokens)
			for t := range ss[i].Tokens {
				tk := token{make([]float32, info.ValuesPerToken), make([]float32, info.PositionAxes)}
				for c := range tk.Values {
					tk.Values[c] = float32(rng.NormFloat64())
				}
				for a := range tk.Position {
					tk.Position[a] = float32(rng.Float64() * 100)
				}
				ss[i].Tokens[t] = tk
			}
		}
		b, err := json.Marshal(map[string]any{"samples": ss})
		if err != nil {
			return err
		}
		tgt.bodies = append(tgt.bodies, b)
	}
	return nil
}

// recorder collects the outcome of every request of a phase.
type recorder struct {
	mu        sync.Mutex
	ok        []time.Duration
	refusals  []time.Duration
	errors    int
	hung      int
	requests  int
	okSamples int
	elapsed   time.Duration
}

func (r *recorder) add(code int, d time.Duration, err error, samples int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	switch {
	case err != nil && os.IsTimeout(err):
		r.hung++
	case err != nil:
		r.errors++
	case code == http.StatusOK:
		r.ok = append(r.ok, d)
		r.okSamples += samples
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		r.refusals = append(r.refusals, d)
	default:
		r.errors++
	}
}

func (r *recorder) fill(p *servePhase) {
	p.DurationS = r.elapsed.Seconds()
	p.Requests, p.OK, p.Refused, p.Errors, p.Hung = r.requests, len(r.ok), len(r.refusals), r.errors, r.hung
	p.SamplesPerS = float64(r.okSamples) / r.elapsed.Seconds()
	p.P50Ms, p.P95Ms, p.P99Ms = quantileMs(r.ok, 0.5), quantileMs(r.ok, 0.95), quantileMs(r.ok, 0.99)
	p.RefusalP50Ms, p.RefusalP99Ms = quantileMs(r.refusals, 0.5), quantileMs(r.refusals, 0.99)
}

// quantileMs is the q-quantile (nearest rank) in milliseconds, 0 for none.
func quantileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[min(max(k, 0), len(s)-1)]) / 1e6
}

// send posts one request and reads the whole answer.
func (tgt *loadTarget) send(body []byte) (int, time.Duration, error) {
	start := time.Now()
	resp, err := tgt.client.Post(tgt.url+tgt.endpoint, "application/json", strings.NewReader(string(body)))
	if err != nil {
		return 0, time.Since(start), err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), err
}

func (tgt *loadTarget) lone(d time.Duration, n int) *recorder {
	rec := &recorder{}
	start := time.Now()
	for i := 0; i < n && time.Since(start) < d; i++ {
		code, dt, err := tgt.send(tgt.bodies[i%len(tgt.bodies)])
		rec.add(code, dt, err, tgt.samples)
	}
	rec.elapsed = time.Since(start)
	return rec
}

func (tgt *loadTarget) closedLoop(clients int, d time.Duration, maxRequests int) *recorder {
	rec := &recorder{}
	var issued atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := c; time.Since(start) < d && issued.Add(1) <= int64(maxRequests); k += clients {
				code, dt, err := tgt.send(tgt.bodies[k%len(tgt.bodies)])
				rec.add(code, dt, err, tgt.samples)
			}
		}()
	}
	wg.Wait()
	rec.elapsed = time.Since(start)
	return rec
}

// openLoop sends requests at Poisson arrival times of the given rate
// (requests/s), or at even intervals when paced, whatever the answers, for
// d; then waits for the answers.
func (tgt *loadTarget) openLoop(rate float64, d time.Duration, maxRequests int, paced bool) *recorder {
	rec := &recorder{}
	rng := rand.New(rand.NewPCG(uint64(rate*1000), 3))
	var wg sync.WaitGroup
	start := time.Now()
	next := time.Duration(0)
	for k := 0; k < maxRequests; k++ {
		gap := 1.0
		if !paced {
			gap = rng.ExpFloat64()
		}
		next += time.Duration(gap / rate * float64(time.Second))
		if next >= d {
			break
		}
		time.Sleep(time.Until(start.Add(next)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, dt, err := tgt.send(tgt.bodies[k%len(tgt.bodies)])
			rec.add(code, dt, err, tgt.samples)
		}()
	}
	wg.Wait()
	rec.elapsed = time.Since(start)
	return rec
}

// settle closes the load generator's idle keep-alive connections and
// gives the server a moment to see them go, so that its goroutine count is
// its own (one goroutine per open connection is not a leak).
func (tgt *loadTarget) settle() {
	tgt.client.CloseIdleConnections()
	time.Sleep(time.Second)
}

// scrape reads the server's /metrics as name{labels} → value.
func scrape(tgt *loadTarget) (map[string]float64, error) {
	resp, err := tgt.client.Get(tgt.url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil && i > 0 {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// batchHistogram is the forward passes per batch-size bucket between two
// scrapes, and their mean size.
func batchHistogram(before, after map[string]float64) (map[string]float64, float64) {
	const prefix = `romae_serve_batch_samples_bucket{le="`
	type bucket struct {
		le  float64
		key string
		cum float64
	}
	var bs []bucket
	for k, v := range after {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			key := strings.TrimSuffix(rest, `"}`)
			le, err := strconv.ParseFloat(key, 64)
			if err == nil {
				bs = append(bs, bucket{le, key, v - before[k]})
			}
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	hist, prev := map[string]float64{}, 0.0
	for _, b := range bs {
		if n := b.cum - prev; n > 0 {
			hist["≤"+b.key] = n
		}
		prev = b.cum
	}
	count := after["romae_serve_batch_samples_count"] - before["romae_serve_batch_samples_count"]
	sum := after["romae_serve_batch_samples_sum"] - before["romae_serve_batch_samples_sum"]
	if count == 0 {
		return hist, 0
	}
	return hist, sum / count
}

// histogramQuantile is the upper bound of the bucket holding the
// q-quantile of the observations between two scrapes of the histogram
// whose bucket series start with prefix.
func histogramQuantile(before, after map[string]float64, prefix string, q float64) float64 {
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range after {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if le, err := strconv.ParseFloat(strings.TrimSuffix(rest, `"}`), 64); err == nil {
				bs = append(bs, bucket{le, v - before[k]})
			}
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return 0
	}
	total := bs[len(bs)-1].n
	for _, b := range bs {
		if b.n >= q*total {
			return b.le
		}
	}
	return math.Inf(1)
}

func summarize(before, after *benchResult, ph map[string]*servePhase) *serveSummary {
	s := &serveSummary{Workload: "serve", Phase: "summary", Targets: map[string]bool{}, CPU: cpuModel(),
		Procs: runtime.GOMAXPROCS(0), LoadAvg: loadAvg()}
	if c := ph["closed"]; c != nil {
		s.SaturatedPerS = c.SamplesPerS
		if before != nil && after != nil {
			s.OfflineBefore, s.OfflineAfter = before.SamplesPerS, after.SamplesPerS
			s.OfflineSamplesPerS = (before.SamplesPerS + after.SamplesPerS) / 2
			s.OfflineCPUPerSamMs = 1000 * (before.CPUMedianS + after.CPUMedianS) / 2 / float64(before.Batch)
			s.SaturatedRatio = c.SamplesPerS / s.OfflineSamplesPerS
			s.Targets["saturated_ge_85pct_offline"] = s.SaturatedRatio >= 0.85
			if c.CPUPerSampleMs > 0 {
				s.CPUEfficiency = s.OfflineCPUPerSamMs / c.CPUPerSampleMs
			}
		}
	}
	if l := ph["lone"]; l != nil {
		s.LoneP50Ms = l.P50Ms
	}
	// Half load, Poisson (open50) and evenly paced (paced50): p99, its
	// ratio to a lone request, and the requests that did not succeed.
	halfLoad := func(h *servePhase, target string, p99, ratio *float64, errs *int) {
		*p99, *errs = h.P99Ms, h.Errors+h.Refused+h.Hung
		s.Targets[target+"_zero_errors"] = *errs == 0
		if s.LoneP50Ms > 0 {
			*ratio = h.P99Ms / s.LoneP50Ms
			s.Targets[target+"_p99_le_3x_lone"] = *ratio <= 3
		}
	}
	if h := ph["open50"]; h != nil {
		halfLoad(h, "half_load", &s.HalfLoadP99Ms, &s.HalfLoadP99OverLon, &s.HalfLoadErrors)
	}
	if h := ph["paced50"]; h != nil {
		halfLoad(h, "half_load_paced", &s.PacedP99Ms, &s.PacedP99OverLon, &s.PacedErrors)
	}
	if o := ph["overload"]; o != nil {
		s.OverloadRefusalP99, s.OverloadServerP99, s.OverloadHung = o.RefusalP99Ms, o.ServerRefusalP99Ms, o.Hung
		s.Targets["overload_refusal_p99_lt_5ms"] = o.Refused > 0 && o.RefusalP99Ms < 5
		s.Targets["overload_server_refusal_p99_lt_5ms"] = o.Refused > 0 && o.ServerRefusalP99Ms < 5
		s.Targets["overload_none_hang"] = o.Hung == 0
	}
	return s
}

// cpuModel is the CPU's name from /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return fmt.Sprintf("%s ×%d", strings.TrimSpace(v), runtime.NumCPU())
		}
	}
	return runtime.GOARCH
}

// loadAvg is /proc/loadavg's first three fields: how contended the
// machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
