package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"romae/model"
	"romae/nn"
)

//go:embed openapi.yaml
var openAPI []byte

// route is one path of the API and the methods it answers.
type route struct {
	path    string
	methods []string
	handle  http.HandlerFunc
}

// routes are the API's paths (openapi_test.go checks openapi.yaml against
// them). Every answer, errors included, is JSON but /metrics and
// /openapi.yaml.
func (s *Server) routes() []route {
	get := []string{http.MethodGet, http.MethodHead}
	post := []string{http.MethodPost}
	rs := []route{
		{"/v1/model", get, func(w http.ResponseWriter, r *http.Request) {
			m := s.model.Load()
			if m == nil {
				s.refuse(w, r, http.StatusServiceUnavailable, "not_ready", "the model is still loading", 1)
				return
			}
			writeJSON(w, http.StatusOK, m.info(s.cfg.Limits))
		}},
		{"/healthz", get, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}},
		{"/readyz", get, func(w http.ResponseWriter, r *http.Request) {
			switch m := s.model.Load(); {
			case s.draining.Load():
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			case m == nil:
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
			default:
				writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "generation": m.generation})
			}
		}},
		{"/metrics", get, promhttp.HandlerFor(s.met.reg, promhttp.HandlerOpts{}).ServeHTTP},
		{"/openapi.yaml", get, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/yaml")
			w.Write(openAPI)
		}},
		{"/admin/reload", post, func(w http.ResponseWriter, r *http.Request) {
			if err := s.Reload(); err != nil {
				s.fail(w, r, http.StatusInternalServerError, "reload_failed", "reload failed: "+err.Error())
				return
			}
			writeJSON(w, http.StatusOK, map[string]int64{"generation": s.model.Load().generation})
		}},
	}
	for _, ep := range []string{epPredict, epEmbed, epInterpolate, epReconstruct} {
		rs = append(rs, route{"/v1/" + ep, post, s.inference(ep)})
	}
	return rs
}

// handler is the routes behind the middleware, with a JSON 404 and 405.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.HandleFunc(rt.path, func(w http.ResponseWriter, r *http.Request) {
			if !slices.Contains(rt.methods, r.Method) {
				allow := strings.Join(rt.methods, ", ")
				w.Header().Set("Allow", allow)
				s.fail(w, r, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, allow))
				return
			}
			rt.handle(w, r)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s (GET /openapi.yaml describes the API)", r.URL.Path))
	})
	return s.middleware(mux)
}

// ─── middleware ───────────────────────────────────────────────────────────

type ctxKey int

const requestIDKey ctxKey = 0

// statusWriter records the status code for metrics and logs.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// codeClientGone is recorded (never sent) when the client left first.
const codeClientGone = 499

// middleware gives every request an id, counts it in flight (shutdown
// waits for it), recovers a panic into a 500 (logged with its stack; the
// server keeps serving), checks the bearer token, and records metrics and
// an access log line (debug level; errors at error level).
func (s *Server) middleware(next http.Handler) http.Handler {
	known := map[string]bool{} // the metrics' endpoint label takes only these values
	for _, rt := range s.routes() {
		known[rt.path] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handlers.Add(1)
		defer s.handlers.Done()
		start := time.Now()
		id := r.Header.Get("X-Request-ID")
		if !validRequestID(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-ID", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		sw := &statusWriter{ResponseWriter: w}
		ep := r.URL.Path
		if !known[ep] {
			ep = "other"
		}
		s.met.inflight.Inc()
		defer func() {
			s.met.inflight.Dec()
			p := recover()
			if p == http.ErrAbortHandler { // the client left: the connection is dropped unanswered
				sw.code = codeClientGone
			} else if p != nil {
				s.met.panics.WithLabelValues("handler").Inc()
				s.log.Error("panic in a handler", "panic", fmt.Sprint(p), "path", r.URL.Path, "request_id", id, "stack", string(debug.Stack()))
				if sw.code == 0 {
					s.fail(sw, r, http.StatusInternalServerError, "internal", "internal error (logged)")
				}
			}
			code := sw.code
			if code == 0 {
				code = codeClientGone
			}
			dt := time.Since(start)
			s.met.requests.WithLabelValues(ep, strconv.Itoa(code)).Inc()
			s.met.latency.WithLabelValues(ep, outcome(code)).Observe(dt.Seconds())
			level := slog.LevelDebug // refusals (429, 503) are load, not errors
			if code >= 500 && code != http.StatusServiceUnavailable {
				level = slog.LevelError
			}
			s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "code", code,
				"seconds", dt.Seconds(), "request_id", id, "remote", r.RemoteAddr)
			if p == http.ErrAbortHandler {
				panic(p) // net/http closes the connection without logging
			}
		}()
		if !s.authorized(r) {
			sw.Header().Set("WWW-Authenticate", `Bearer realm="romae"`)
			s.fail(sw, r, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token (Authorization: Bearer TOKEN)")
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// outcome classes a status code for the latency histogram.
func outcome(code int) string {
	switch {
	case code == codeClientGone:
		return "client_gone"
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return "refused"
	case code >= 500:
		return "server_error"
	case code >= 400:
		return "client_error"
	}
	return "ok"
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// authorized checks the bearer token (compared as SHA-256 digests in
// constant time); the health probes and the API description are open.
func (s *Server) authorized(r *http.Request) bool {
	want := s.token.Load()
	if want == nil {
		return true
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/openapi.yaml":
		return true
	}
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "Bearer ") { // the scheme is case-insensitive
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(h[7:])))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// ─── answers ──────────────────────────────────────────────────────────────

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // a NaN in an output: never send invalid JSON
		code = http.StatusInternalServerError
		b, _ = json.Marshal(apiError{Error: errorBody{Reason: "internal", Message: "the answer could not be encoded: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// apiError is every error answer: {"error": {"reason", "message", "request_id"}}.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, reason, msg string) {
	id, _ := r.Context().Value(requestIDKey).(string)
	writeJSON(w, code, apiError{errorBody{Reason: reason, Message: msg, RequestID: id}})
}

// refuse is a fail that tells the client when to retry (429, 503).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, reason, msg string, retryAfter int) {
	if code == http.StatusTooManyRequests {
		noteRefusal()
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	s.fail(w, r, code, reason, msg)
}

// ─── inference ────────────────────────────────────────────────────────────

// inference is POST /v1/{predict,embed,interpolate,reconstruct}: refuse
// early what cannot be served (not ready, queue full, body too large),
// read and decode the body within the limits, queue the samples, wait for
// the batch or the deadline, answer in data units.
func (s *Server) inference(ep string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		m := s.model.Load()
		switch {
		case s.draining.Load():
			s.refuse(w, r, http.StatusServiceUnavailable, "shutting_down", "the server is shutting down", 1)
			return
		case m == nil:
			s.refuse(w, r, http.StatusServiceUnavailable, "not_ready", "the model is still loading", 1)
			return
		case !m.can(ep):
			s.fail(w, r, http.StatusBadRequest, "wrong_endpoint", fmt.Sprintf("the served model (%s, %s) does not do %s; it does %s",
				m.Name, m.Net.Cfg.Task, ep, strings.Join(m.endpoints(), ", ")))
			return
		case s.bat.full():
			s.refuse(w, r, http.StatusTooManyRequests, "queue_full", "the queue is full; retry later", s.bat.retryAfter())
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				s.fail(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", fmt.Sprintf("Content-Type %q: send application/json", ct))
				return
			}
		}
		lim := s.cfg.Limits
		if r.ContentLength > lim.MaxBodyBytes {
			// Refused from the header alone: the body is never read.
			s.fail(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("a body of %d bytes is over the limit of %d", r.ContentLength, lim.MaxBodyBytes))
			return
		}
		reserve := r.ContentLength
		if reserve < 0 {
			reserve = lim.MaxBodyBytes
		}
		if s.bodyBytes.Add(reserve) > s.cfg.MaxInflightBodyBytes {
			s.bodyBytes.Add(-reserve)
			s.refuse(w, r, http.StatusTooManyRequests, "busy", "too many request bodies are being read; retry later", 1)
			return
		}
		j, req, code, reason, err := s.enqueue(ctx, w, r, ep, m, reserve)
		if err != nil {
			if code == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", strconv.Itoa(s.bat.retryAfter()))
			}
			s.fail(w, r, code, reason, err.Error())
			return
		}
		// The job's fields are the batcher's until it closes done.
		var jerr error
		select {
		case <-j.done:
			jerr = j.err
		case <-ctx.Done():
			select {
			case <-j.done:
				jerr = j.err
			default:
				jerr = ctx.Err() // the deadline or the client won
			}
		}
		switch {
		case jerr == nil:
			writeJSON(w, http.StatusOK, s.answer(m, ep, j.pool, req, j))
		case r.Context().Err() != nil:
			panic(http.ErrAbortHandler) // the client is gone: no one to answer (recorded as 499)
		case errors.Is(jerr, context.DeadlineExceeded):
			s.fail(w, r, http.StatusGatewayTimeout, "deadline_exceeded", fmt.Sprintf("no answer within the request deadline of %s", s.cfg.RequestTimeout))
		case errors.Is(jerr, errShuttingDown):
			s.refuse(w, r, http.StatusServiceUnavailable, "shutting_down", jerr.Error(), 1)
		default:
			s.fail(w, r, http.StatusInternalServerError, "internal", jerr.Error())
		}
	}
}

// enqueue reads the body (at most MaxBodyBytes, within ReadTimeout),
// decodes it, prepares the samples for m and queues them; then it gives
// back the reserved in-flight body bytes. A failure comes with the status
// and reason to answer. While it decodes, the batcher knows a request is
// about to join (a batch waits for it, up to MaxWait).
func (s *Server) enqueue(ctx context.Context, w http.ResponseWriter, r *http.Request, ep string, m *Model, reserved int64) (*job, *request, int, string, error) {
	defer s.bodyBytes.Add(-reserved)
	lim := s.cfg.Limits
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, lim.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	var netErr interface{ Timeout() bool }
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		return nil, nil, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Errorf("the body is over the limit of %d bytes", lim.MaxBodyBytes)
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, nil, http.StatusRequestTimeout, "body_timeout", fmt.Errorf("the body did not arrive within %s", s.cfg.ReadTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, nil, http.StatusBadRequest, "bad_request", errors.New("the body is shorter than its Content-Length")
	case r.Context().Err() != nil:
		panic(http.ErrAbortHandler) // the client is gone: no one to answer
	default:
		return nil, nil, http.StatusBadRequest, "bad_request", fmt.Errorf("reading the body: %w", err)
	}
	s.bat.arriving.Add(1)
	defer s.bat.arriving.Add(-1)
	req, err := m.decode(buf.Bytes(), ep, lim)
	if err != nil {
		return nil, nil, http.StatusBadRequest, "bad_request", err
	}
	ds, err := m.prepare(req.samples)
	if err != nil {
		return nil, nil, http.StatusBadRequest, "bad_request", err
	}
	pool := req.pool
	if ep == epEmbed && pool == "" {
		pool = m.defaultPool()
	}
	if pool == model.PoolCLS && !m.Net.Cfg.UseCLS {
		return nil, nil, http.StatusBadRequest, "bad_request", errors.New("pool: the model has no [CLS] token; use \"mean\"")
	}
	j := newJob(ctx, m, ep, pool, ds)
	j.queries, j.masks = req.queries, req.masks
	if !s.bat.submit(j) {
		return nil, nil, http.StatusTooManyRequests, "queue_full", errors.New("the queue is full; retry later")
	}
	return j, req, 0, "", nil
}

// Answers of the four endpoints (openapi.yaml describes them).
type (
	modelRef struct {
		Name       string `json:"name"`
		Generation int64  `json:"generation"`
	}
	prediction struct {
		ID               string             `json:"id"`
		Label            string             `json:"label,omitempty"`
		Probabilities    map[string]float64 `json:"probabilities,omitempty"`
		Prediction       []float64          `json:"prediction,omitempty"`
		TokenPredictions [][]float64        `json:"token_predictions,omitempty"`
	}
	predictAnswer struct {
		Model       modelRef     `json:"model"`
		Predictions []prediction `json:"predictions"`
	}
	embedding struct {
		ID        string    `json:"id"`
		Embedding []float32 `json:"embedding"`
	}
	embedAnswer struct {
		Model      modelRef    `json:"model"`
		Pool       string      `json:"pool"`
		Embeddings []embedding `json:"embeddings"`
	}
	interpolation struct {
		ID     string      `json:"id"`
		Values [][]float32 `json:"values"`
	}
	interpolateAnswer struct {
		Model   modelRef        `json:"model"`
		Results []interpolation `json:"results"`
	}
	reconstruction struct {
		ID     string      `json:"id"`
		Masked []int       `json:"masked"`
		Values [][]float32 `json:"values"`
		MSE    float64     `json:"mse"`
	}
	reconstructAnswer struct {
		Model   modelRef         `json:"model"`
		Units   string           `json:"units"`
		Results []reconstruction `json:"results"`
	}
)

// answer turns the batcher's outputs into data units and names.
func (s *Server) answer(m *Model, ep, pool string, req *request, j *job) any {
	ref := modelRef{m.Name, m.generation}
	C := m.values
	rows := func(flat []float32, width int) [][]float32 {
		out := make([][]float32, len(flat)/width)
		for k := range out {
			out[k] = flat[k*width : (k+1)*width]
		}
		return out
	}
	switch ep {
	case epPredict:
		a := predictAnswer{Model: ref, Predictions: make([]prediction, len(j.probs))}
		K := m.Net.Cfg.Outputs
		for i, p := range j.probs {
			pr := prediction{ID: req.samples[i].ID}
			switch {
			case m.Net.Cfg.Task == model.TaskClassify:
				pr.Probabilities = make(map[string]float64, K)
				best := 0
				for k, v := range p {
					pr.Probabilities[m.Spec.Classes[k]] = v
					if v > p[best] {
						best = k
					}
				}
				pr.Label = m.Spec.Classes[best]
			default:
				if ts := m.Spec.TargetStats; ts != nil {
					for k := range p {
						p[k] = p[k]*ts.Std[k%K] + ts.Mean[k%K]
					}
				}
				if m.Net.Cfg.Pool == model.PoolToken {
					for lo := 0; lo < len(p); lo += K {
						pr.TokenPredictions = append(pr.TokenPredictions, p[lo:lo+K])
					}
				} else {
					pr.Prediction = p
				}
			}
			a.Predictions[i] = pr
		}
		return a
	case epEmbed:
		a := embedAnswer{Model: ref, Pool: pool, Embeddings: make([]embedding, len(j.vecs))}
		for i, v := range j.vecs {
			a.Embeddings[i] = embedding{req.samples[i].ID, v}
		}
		return a
	case epInterpolate:
		a := interpolateAnswer{Model: ref, Results: make([]interpolation, len(j.vecs))}
		for i, v := range j.vecs {
			if st := m.Spec.Stats; st != nil {
				st.Invert(v, req.queries[i], j.ds.D) // cannot fail: the spec was checked against the model
			}
			a.Results[i] = interpolation{req.samples[i].ID, rows(v, C)}
		}
		return a
	default: // reconstruct
		a := reconstructAnswer{Model: ref, Units: "data", Results: make([]reconstruction, len(j.vecs))}
		if m.Net.Cfg.NormTargets {
			a.Units = "token-normalized" // MAE's per-patch target normalisation: not invertible without the truth
		}
		for i, v := range j.vecs {
			rc := reconstruction{ID: req.samples[i].ID}
			var truth, pos []float32
			smp, D := &j.ds.Samples[i], j.ds.D
			for t, h := range req.masks[i] {
				if h {
					rc.Masked = append(rc.Masked, t)
					truth = append(truth, smp.Values[t*C:(t+1)*C]...)
					pos = append(pos, smp.Positions[t*D:(t+1)*D]...)
				}
			}
			if m.Net.Cfg.NormTargets {
				nn.NormalizePatches(truth, len(truth)/C, C)
			} else if st := m.Spec.Stats; st != nil {
				st.Invert(v, pos, D)
				st.Invert(truth, pos, D)
			}
			var se float64
			for k := range v {
				e := float64(v[k]) - float64(truth[k])
				se += e * e
			}
			rc.Values, rc.MSE = rows(v, C), se/float64(max(len(v), 1))
			a.Results[i] = rc
		}
		return a
	}
}
