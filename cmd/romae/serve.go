package main

// romae serve: the HTTP inference server of package serve around one
// checkpoint (docs/serving.md).

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"romae/eval"
	"romae/serve"
)

func cmdServe(ctx context.Context, args []string) error {
	fs := newFlagSet("serve", "serve --model CHECKPOINT [--addr 127.0.0.1:8080] [flags]")
	cfg := serve.DefaultConfig()
	modelPath := fs.String("model", "", "checkpoint: romae run directory or .safetensors file, or an authors' checkpoint directory")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address host:port (loopback by default; 0.0.0.0:8080 for every interface)")
	var choice eval.SpecChoice
	fs.StringVar(&choice.File, "data-spec", "", "JSON data spec for a checkpoint that lacks one (romae inspect --data-spec CHECKPOINT prints one)")
	fs.BoolVar(&choice.Raw, "raw", false, "for a checkpoint without a data spec: take values unscaled, classes named by index")
	computePriority := fs.String("compute-priority", serve.PriorityOverload, "overload: while requests are being refused, forward passes run on SCHED_IDLE threads (Linux), which yield a core at once to the network thread, so refusals are answered while the cores compute (back to normal after a second without a refusal, or at once when another busy process starves them); idle: always; normal: never (docs/serving.md)")
	computeThreads := fs.Int("compute-threads", 0, "goroutines a forward pass's matrix products split over (0: GOMAXPROCS, the cores Go sees); GOMAXPROCS becomes this + 1, keeping a P free for the network")
	fs.IntVar(&cfg.MaxBatch, "max-batch", cfg.MaxBatch, "most samples in one forward pass")
	fs.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "how long the first request of a batch waits for others")
	fs.IntVar(&cfg.QueueSamples, "queue", cfg.QueueSamples, "samples that may wait; beyond, requests get 429 with Retry-After")
	fs.IntVar(&cfg.MaxBatchTokens, "max-batch-tokens", cfg.MaxBatchTokens, "most padded tokens (samples × longest) in one forward pass")
	fs.DurationVar(&cfg.RequestTimeout, "timeout", cfg.RequestTimeout, "each request's deadline, arrival to answer (504 after)")
	fs.DurationVar(&cfg.ReadHeaderTimeout, "read-header-timeout", cfg.ReadHeaderTimeout, "time a client has to send the headers")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "time a client has to send the whole request (408 after)")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&cfg.DrainTimeout, "drain-timeout", cfg.DrainTimeout, "on SIGTERM/SIGINT, how long to finish the requests in flight")
	fs.Int64Var(&cfg.Limits.MaxBodyBytes, "max-body-bytes", cfg.Limits.MaxBodyBytes, "largest request body (413 beyond)")
	fs.Int64Var(&cfg.MaxInflightBodyBytes, "max-inflight-body-bytes", cfg.MaxInflightBodyBytes, "request body bytes being read at once (429 beyond)")
	fs.IntVar(&cfg.Limits.MaxSamples, "max-samples", cfg.Limits.MaxSamples, "samples per request")
	fs.IntVar(&cfg.Limits.MaxTokens, "max-tokens", cfg.Limits.MaxTokens, "tokens per sample")
	fs.IntVar(&cfg.Limits.MaxQueries, "max-queries", cfg.Limits.MaxQueries, "query positions per sample (interpolate)")
	fs.Float64Var(&cfg.Limits.MaxAbsValue, "max-abs-value", cfg.Limits.MaxAbsValue, "largest |value| of a token, data units")
	fs.Float64Var(&cfg.Limits.MaxAbsPosition, "max-abs-position", cfg.Limits.MaxAbsPosition, "largest |coordinate| of a position or query")
	fs.StringVar(&cfg.AuthTokenFile, "auth-token-file", "", "file holding the bearer token every request but /healthz, /readyz must carry (re-read on SIGHUP)")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", "", "PEM certificate: serve HTTPS (with --tls-key; re-read on SIGHUP)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", "", "PEM private key of --tls-cert")
	logFormat := fs.String("log-format", "text", "text or json (one object per line), on standard error")
	logLevel := fs.String("log-level", "info", "debug (one line per request), info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *modelPath == "" {
		return fmt.Errorf("--model is required")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch *logFormat {
	case "text":
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, opts))
	case "json":
		cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, opts))
	default:
		return fmt.Errorf("--log-format %q: want text or json", *logFormat)
	}
	if *computeThreads < 0 {
		return fmt.Errorf("--compute-threads %d: want ≥ 0", *computeThreads)
	}
	// The compute drops to an idle class while refusing (docs/serving.md,
	// "Idle-class compute while refusing"); where that class does not exist
	// the default falls back to normal, a mode asked for by name fails.
	if err := serve.SetComputePriority(*computePriority); err != nil {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "compute-priority" })
		if given {
			return fmt.Errorf("--compute-priority: %w", err)
		}
		cfg.Logger.Warn("compute priority stays normal", "reason", err.Error())
		*computePriority = serve.PriorityNormal
	}
	// Refusals and probes are answered at once only if a forward pass
	// cannot hold every P (docs/serving.md, "A P for the network").
	n := serve.ReserveNetworkP(*computeThreads)
	cfg.Logger.Info("compute", "threads", n, "GOMAXPROCS", runtime.GOMAXPROCS(0), "priority", *computePriority)
	choice.RawSource = defaultRunConfig().Data.Source
	cfg.Load = func() (*serve.Model, error) { return serve.LoadModel(*modelPath, choice) }
	s, err := serve.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && (cfg.AuthTokenFile == "" || cfg.TLSCertFile == "") {
		cfg.Logger.Warn("listening beyond loopback without both --auth-token-file and --tls-cert: anyone who can reach this port can use the model", "addr", ln.Addr().String())
	}
	// SIGHUP reloads the model (and the token and TLS files); a reload
	// that fails keeps the old model and logs why. main cancels ctx on
	// SIGTERM/SIGINT, which drains and stops the server.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reloads := make(chan struct{})
	go func() {
		defer close(reloads)
		for {
			select {
			case <-hup:
				s.Reload() // logs the outcome
			case <-ctx.Done():
				return
			}
		}
	}()
	err = s.Serve(ctx, ln)
	cancel()
	<-reloads
	return err
}
