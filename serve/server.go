// Package serve is romae's HTTP inference server: one trained model held
// in memory, a JSON API under /v1/ (predict, embed, interpolate,
// reconstruct), dynamic micro-batching over a bounded queue that refuses
// (429 with Retry-After) rather than grows, per-request deadlines, health
// and readiness probes, Prometheus metrics, reload without dropping
// requests, graceful shutdown, optional bearer-token auth and TLS.
// docs/serving.md is the operator's guide; openapi.yaml the API.
package serve

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"romae/data"
	"romae/model"
)

// Config is how a Server runs. Zero fields take the defaults of
// DefaultConfig; Load is required.
type Config struct {
	// Load reads the model; it is called at start and on every Reload, and
	// is the only way a model reaches the server (no request names a file).
	Load   func() (*Model, error)
	Logger *slog.Logger

	Limits Limits
	// MaxBatch is the most samples in one forward pass; MaxWait how long
	// the first request of a batch waits for others to join it.
	MaxBatch int
	MaxWait  time.Duration
	// QueueSamples bounds the samples waiting; beyond it requests get 429.
	QueueSamples int
	// MaxBatchTokens bounds a forward pass's padded tokens (samples ×
	// longest), which bounds its activation memory.
	MaxBatchTokens int
	// RequestTimeout is each request's deadline, from arrival to answer.
	RequestTimeout time.Duration
	// ReadHeaderTimeout and ReadTimeout bound how long a client may take
	// to send the headers and the whole request (slow clients); IdleTimeout
	// how long a keep-alive connection may sit idle.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// DrainTimeout is how long shutdown waits for requests in flight.
	DrainTimeout time.Duration
	// MaxInflightBodyBytes bounds the bytes of request bodies being read
	// and decoded at once (a body of unknown length counts as the limit).
	MaxInflightBodyBytes int64

	// AuthTokenFile, when set, holds the bearer token every request but
	// the health probes must carry (re-read on Reload).
	AuthTokenFile string
	// TLSCertFile and TLSKeyFile, when set, serve HTTPS (re-read on Reload).
	TLSCertFile, TLSKeyFile string
}

// DefaultConfig is the configuration `romae serve` starts from.
func DefaultConfig() Config {
	return Config{Limits: DefaultLimits(), MaxBatch: 32, MaxWait: 5 * time.Millisecond, QueueSamples: 128,
		MaxBatchTokens: 8192, RequestTimeout: 30 * time.Second, ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, DrainTimeout: 30 * time.Second,
		MaxInflightBodyBytes: 64 << 20}
}

func (c *Config) fill() error {
	d := DefaultConfig()
	if c.Load == nil {
		return errors.New("serve: Config.Load is required")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Limits == (Limits{}) {
		c.Limits = d.Limits
	}
	setDefault(&c.MaxBatch, d.MaxBatch)
	setDefault(&c.MaxWait, d.MaxWait)
	setDefault(&c.QueueSamples, d.QueueSamples)
	setDefault(&c.MaxBatchTokens, d.MaxBatchTokens)
	setDefault(&c.RequestTimeout, d.RequestTimeout)
	setDefault(&c.ReadHeaderTimeout, d.ReadHeaderTimeout)
	setDefault(&c.ReadTimeout, d.ReadTimeout)
	setDefault(&c.IdleTimeout, d.IdleTimeout)
	setDefault(&c.DrainTimeout, d.DrainTimeout)
	setDefault(&c.MaxInflightBodyBytes, d.MaxInflightBodyBytes)
	switch {
	case c.MaxBatch < 1 || c.QueueSamples < 1 || c.MaxBatchTokens < 1:
		return fmt.Errorf("serve: max batch %d, queue %d samples, max batch tokens %d: want ≥ 1", c.MaxBatch, c.QueueSamples, c.MaxBatchTokens)
	case c.Limits.MaxSamples > c.QueueSamples:
		return fmt.Errorf("serve: %d samples per request could never fit a queue of %d samples", c.Limits.MaxSamples, c.QueueSamples)
	case c.MaxWait < 0 || c.RequestTimeout < 0 || c.ReadHeaderTimeout < 0 || c.ReadTimeout < 0 || c.IdleTimeout < 0 || c.DrainTimeout < 0:
		return errors.New("serve: negative duration")
	case c.MaxInflightBodyBytes < c.Limits.MaxBodyBytes:
		return fmt.Errorf("serve: %d in-flight body bytes cannot hold one body of the %d-byte limit", c.MaxInflightBodyBytes, c.Limits.MaxBodyBytes)
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return errors.New("serve: TLS needs both a certificate and a key file")
	}
	return c.Limits.check()
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Server serves one model over HTTP. Make it with New, run it with Serve.
type Server struct {
	cfg  Config
	log  *slog.Logger
	met  *metrics
	bat  *batcher
	http *http.Server

	model      atomic.Pointer[Model]
	generation int64      // under reloadMu
	reloadMu   sync.Mutex // one reload at a time
	draining   atomic.Bool
	token      atomic.Pointer[[sha256.Size]byte] // nil: no auth
	cert       atomic.Pointer[tls.Certificate]
	bodyBytes  atomic.Int64   // in-flight body bytes
	handlers   sync.WaitGroup // requests being handled
}

// New checks cfg and builds the server. It reads the auth token and TLS
// files (so that a bad one fails at start) but not the model: Serve loads
// it, answering /healthz meanwhile and /readyz only once it is warm.
func New(cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, met: newMetrics(cfg.MaxBatch)}
	s.bat = newBatcher(cfg.MaxBatch, cfg.MaxBatchTokens, cfg.MaxWait, cfg.QueueSamples, s.met, s.log)
	if err := s.loadSecrets(); err != nil {
		return nil, err
	}
	s.http = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		// Counted from the end of the headers: the body, the wait and the
		// answer must all fit.
		WriteTimeout:   cfg.ReadTimeout + cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:    cfg.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelDebug), // TLS handshake noise, timeouts
	}
	if cfg.TLSCertFile != "" {
		s.http.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert.Load(), nil }}
	}
	return s, nil
}

// loadSecrets (re)reads the auth token and the TLS key pair; on failure
// the previous ones stay.
func (s *Server) loadSecrets() error {
	if f := s.cfg.AuthTokenFile; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("auth token: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 {
			return fmt.Errorf("auth token file %s: the token has %d characters, want at least 16", f, len(tok))
		}
		if st, err := os.Stat(f); err == nil && st.Mode().Perm()&0o077 != 0 {
			s.log.Warn("the auth token file is readable by other users", "file", f, "mode", st.Mode().Perm().String())
		}
		h := sha256.Sum256([]byte(tok))
		s.token.Store(&h)
	}
	if s.cfg.TLSCertFile != "" {
		c, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		s.cert.Store(&c)
	}
	return nil
}

// Ready reports whether a warm model is being served and the server is
// not shutting down: what /readyz answers.
func (s *Server) Ready() bool { return s.model.Load() != nil && !s.draining.Load() }

// Serve serves on ln until ctx is done, then shuts down gracefully: it
// stops accepting connections, answers every request already accepted
// (for up to DrainTimeout), stops the batcher and returns nil. It loads
// the model first, in the background (/readyz false until it is warm);
// a failed first load stops the server with that error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go s.bat.run()
	loaded := make(chan error, 1)
	go func() { loaded <- s.Reload() }()
	served := make(chan error, 1)
	useTLS := s.http.TLSConfig != nil // read before Serve: it configures HTTP/2 on s.http
	go func() {
		var err error
		if useTLS {
			err = s.http.ServeTLS(ln, "", "")
		} else {
			err = s.http.Serve(ln)
		}
		served <- err
	}()
	s.log.Info("listening", "addr", ln.Addr().String(), "tls", useTLS, "auth", s.token.Load() != nil)
	var failure error
	for wait := true; wait; {
		select {
		case err := <-loaded:
			loaded = nil // a nil channel is never ready again
			if err != nil {
				failure, wait = fmt.Errorf("loading the model: %w", err), false
			}
		case err := <-served:
			served = nil
			failure, wait = err, false
		case <-ctx.Done():
			wait = false
		}
	}
	s.shutdown()
	if loaded != nil { // the first load is still running: let it finish
		<-loaded
	}
	if served != nil {
		if err := <-served; failure == nil && !errors.Is(err, http.ErrServerClosed) {
			failure = err
		}
	}
	return failure
}

// shutdown drains: not ready, no new connections, requests in flight
// answered (closed after DrainTimeout), then the batcher stopped.
func (s *Server) shutdown() {
	s.draining.Store(true)
	s.met.ready.Set(0)
	s.log.Info("shutting down: finishing the requests in flight", "timeout", s.cfg.DrainTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		s.log.Warn("drain timeout: closing the remaining connections", "error", err)
		s.http.Close()
	}
	s.handlers.Wait() // Close does not wait for handlers; their contexts are cancelled
	s.bat.close()
	s.log.Info("stopped")
}

// Reload loads the model again (Config.Load), warms it and swaps it in;
// requests already queued finish on the model they were prepared for. A
// load or warm-up that fails leaves the previous model serving and is
// returned (and logged). The auth token and TLS files are re-read too.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	start := time.Now()
	m, err := s.cfg.Load()
	if err == nil {
		err = s.warm(m)
	}
	if err != nil {
		s.met.reloads.WithLabelValues("error").Inc()
		if old := s.model.Load(); old != nil {
			s.log.Error("model reload failed; still serving the previous model", "error", err, "generation", old.generation)
			return fmt.Errorf("%w (still serving generation %d)", err, old.generation)
		}
		s.log.Error("model load failed", "error", err)
		return err
	}
	if s.generation > 0 { // at start New read them already
		if err := s.loadSecrets(); err != nil {
			s.log.Error("re-reading the auth token or TLS files failed; keeping the previous ones", "error", err)
		}
	}
	s.generation++
	m.generation, m.loadedAt = s.generation, time.Now()
	s.model.Store(m)
	s.met.reloads.WithLabelValues("ok").Inc()
	s.met.generation.Set(float64(m.generation))
	if !s.draining.Load() {
		s.met.ready.Set(1)
	}
	s.log.Info("model loaded", "name", m.Name, "task", m.Net.Cfg.Task, "generation", m.generation,
		"parameters", m.Net.NumParams(), "seconds", time.Since(start).Seconds())
	return nil
}

// warm runs every endpoint the model serves once on a synthetic batch of
// MaxBatch samples, so buffers are sized before the first request, and
// refuses a model whose outputs are not finite (a corrupt checkpoint can
// hold NaN weights). The model is not shared yet.
func (s *Server) warm(m *Model) error {
	const tokens = 16
	D := m.Net.Cfg.PosDims
	samples := make([]data.Sample, s.cfg.MaxBatch)
	for i := range samples {
		smp := data.Sample{ID: "warm", Label: -1, Values: make([]float32, tokens*m.values), Positions: make([]float32, tokens*D)}
		for t := range tokens {
			smp.Positions[t*D+m.timeAxis] = float32(t)
			for c := range m.values {
				smp.Values[t*m.values+c] = float32(math.Sin(float64(t + c)))
			}
		}
		samples[i] = smp
	}
	ds, err := m.prepare(samples)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	finite := func(what string, xs []float32) error {
		for _, x := range xs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("warm-up: the model's %s are not finite (corrupt weights?)", what)
			}
		}
		return nil
	}
	emb, err := m.embed(ds, m.defaultPool())
	if err == nil {
		err = finite("embeddings", emb)
	}
	if err != nil {
		return err
	}
	if m.Net.Cfg.Task != model.TaskPretrain {
		out, err := m.predict(ds)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		for _, p := range out {
			for _, v := range p {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return errors.New("warm-up: the model's predictions are not finite (corrupt weights?)")
				}
			}
		}
		return nil
	}
	if !m.can(epInterpolate) {
		return nil
	}
	q := make([][]float32, len(samples))
	masks := make([][]bool, len(samples))
	for i := range q {
		q[i] = make([]float32, D)
		masks[i] = make([]bool, tokens)
		masks[i][tokens/2] = true
	}
	vals, err := m.interpolate(ds, q)
	if err == nil {
		err = finite("interpolations", vals[0])
	}
	if err != nil {
		return err
	}
	_, err = m.reconstruct(ds, masks)
	return err
}
