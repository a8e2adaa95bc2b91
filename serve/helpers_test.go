package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"romae/data"
	"romae/eval"
	"romae/model"
)

// Every test must leave no goroutine behind: servers, batchers, client
// connections (goleak checks after each fault test and after them all).
// The matrix multiply's worker pool lives as long as the process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions...) }

var leakOptions = []goleak.Option{goleak.IgnoreAnyFunction("romae/tensor.poolWorker")}

// tinyConfig is a model small enough that a forward pass takes well under
// a millisecond: 2 values and 2 position axes per token.
func tinyConfig(task string) model.Config {
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Decoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Values, c.PosDims, c.Task = 2, 2, task
	switch task {
	case model.TaskClassify:
		c.Outputs = 3
	case model.TaskRegress:
		c.Outputs, c.Pool = 2, model.PoolMean
	}
	return c
}

// tinyModel is a freshly initialised model with a data spec that scales
// values (so a missing normalisation would show) and names classes.
func tinyModel(t testing.TB, task string, seed uint64) (*model.Model[float32], *data.Spec) {
	t.Helper()
	m, err := model.New[float32](tinyConfig(task), seed)
	if err != nil {
		t.Fatal(err)
	}
	spec := &data.Spec{Stats: &data.Stats{Mean: []float64{1, -2}, Std: []float64{2, 0.5}}}
	switch task {
	case model.TaskClassify:
		spec.Classes = []string{"low", "mid", "high"}
	case model.TaskRegress:
		spec.TargetStats = &data.Stats{Mean: []float64{10, -10}, Std: []float64{3, 4}}
	}
	return m, spec
}

// saveTiny writes a tiny model as a romae checkpoint in dir and returns
// its path.
func saveTiny(t testing.TB, dir, task string, seed uint64) string {
	t.Helper()
	return saveTinyWith(t, dir, task, seed, nil)
}

// saveTinyWith is saveTiny with the data spec changed by edit first.
func saveTinyWith(t testing.TB, dir, task string, seed uint64, edit func(*data.Spec)) string {
	t.Helper()
	m, spec := tinyModel(t, task, seed)
	if edit != nil {
		edit(spec)
	}
	path := filepath.Join(dir, task+".safetensors")
	if err := m.Save(path, spec.Meta(), nil); err != nil {
		t.Fatal(err)
	}
	return path
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// lockedBuffer collects a log written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is a running server on a loopback port.
type testServer struct {
	*Server
	url    string
	client *http.Client
	stop   func() error // graceful shutdown; returns Serve's error
}

// startServer runs a server for the model at path (cfg.Load is set when
// nil) and waits until it is ready.
func startServer(t *testing.T, path string, cfg Config) *testServer {
	t.Helper()
	if cfg.Load == nil {
		cfg.Load = func() (*Model, error) { return LoadModel(path, eval.SpecChoice{}) }
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	ts := startUnready(t, cfg)
	ts.waitReady(t)
	return ts
}

// startUnready starts a server without waiting for its model.
func startUnready(t *testing.T, cfg Config) *testServer {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	ts := &testServer{Server: s, url: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
	var once sync.Once
	var stopErr error
	ts.stop = func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
			tr.CloseIdleConnections()
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

func (ts *testServer) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ts.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the server did not become ready in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// post sends a JSON body and returns the status, the decoded answer (nil
// when it is not JSON) and the headers. A failure to get an answer is a
// test error and status 0 (never Fatal: post runs on other goroutines).
func (ts *testServer) post(t *testing.T, path, body string) (int, map[string]any, http.Header) {
	t.Helper()
	resp, err := ts.client.Post(ts.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return 0, nil, http.Header{}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("POST %s: reading the answer: %v", path, err)
		return 0, nil, http.Header{}
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		v = nil
	}
	return resp.StatusCode, v, resp.Header
}

// errorMessage is the message of an error answer.
func errorMessage(v map[string]any) string { return errorField(v, "message") }

// errorField is a field of an error answer ("" when absent).
func errorField(v map[string]any, key string) string {
	e, _ := v["error"].(map[string]any)
	f, _ := e[key].(string)
	return f
}

// synthSamples are n samples of varied lengths (3 to 3+n tokens), values
// and positions in data units.
func synthSamples(n int) []data.Sample {
	out := make([]data.Sample, n)
	for i := range out {
		L := 3 + i%7
		s := data.Sample{ID: fmt.Sprintf("s%d", i), Label: -1}
		for t := range L {
			s.Values = append(s.Values, float32(math.Sin(float64(i+t))), float32(math.Cos(float64(2*i+t))))
			s.Positions = append(s.Positions, float32(t%2), float32(t)*1.5+float32(i))
		}
		out[i] = s
	}
	return out
}

// requestBody is the JSON body of samples; extra adds sample fields
// (e.g. queries) by index, mask marks tokens masked.
func requestBody(samples []data.Sample, extra func(i int) map[string]any, mask func(i, t int) bool) string {
	type tok struct {
		Values   []float32 `json:"values"`
		Position []float32 `json:"position"`
		Masked   bool      `json:"masked,omitempty"`
	}
	var ss []map[string]any
	for i, s := range samples {
		var toks []tok
		for t := 0; t < len(s.Values)/2; t++ {
			toks = append(toks, tok{s.Values[2*t : 2*t+2], s.Positions[2*t : 2*t+2], mask != nil && mask(i, t)})
		}
		m := map[string]any{"id": s.ID, "tokens": toks}
		if extra != nil {
			for k, v := range extra(i) {
				m[k] = v
			}
		}
		ss = append(ss, m)
	}
	b, err := json.Marshal(map[string]any{"samples": ss})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// offline is ds read as the CLI reads a file: scaled with the spec.
func offline(t *testing.T, samples []data.Sample, spec *data.Spec) *data.Dataset {
	t.Helper()
	cp := make([]data.Sample, len(samples))
	for i, s := range samples {
		cp[i] = s
		cp[i].Values = append([]float32(nil), s.Values...)
	}
	ds := &data.Dataset{Name: "offline", C: 2, D: 2, Samples: cp}
	if err := (&data.Spec{Stats: spec.Stats}).Prepare(ds, "offline"); err != nil {
		t.Fatal(err)
	}
	return ds
}

// blockForward makes every forward pass wait until release is closed.
// entered receives once per pass that starts waiting.
func blockForward(s *Server) (entered chan struct{}, release func()) {
	entered = make(chan struct{}, 1024)
	gate := make(chan struct{})
	hook := func(string) {
		entered <- struct{}{}
		<-gate
	}
	s.bat.beforeForward.Store(&hook)
	var once sync.Once
	return entered, func() { once.Do(func() { close(gate) }) }
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// inChild runs the calling test alone in a child process of this test
// binary, with env added to its environment, fails unless it passes
// there, and returns false; inside that child it returns true, and the
// test goes on. For tests that change process-wide state or need a
// GODEBUG setting the runtime reads only at start.
func inChild(t *testing.T, env ...string) bool {
	if os.Getenv("ROMAE_SERVE_TEST_CHILD") == t.Name() {
		return true
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(parts, "/"), "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "ROMAE_SERVE_TEST_CHILD="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	t.Logf("child process:\n%s", out)
	return false
}
