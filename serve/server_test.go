package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"romae/data"
	"romae/eval"
	"romae/model"
)

func close32(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// A classifier's answers are eval.Predict's on the same samples read with
// the checkpoint's normalisation, with the checkpoint's class names.
func TestPredictMatchesOffline(t *testing.T) {
	dir := t.TempDir()
	path := saveTiny(t, dir, model.TaskClassify, 1)
	ts := startServer(t, path, Config{})
	samples := synthSamples(9)
	code, ans, _ := ts.post(t, "/v1/predict", requestBody(samples, nil, nil))
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, ans)
	}
	m, spec := tinyModel(t, model.TaskClassify, 1)
	want, err := eval.Predict(m, m.NewWorkspace(), offline(t, samples, spec), 4)
	if err != nil {
		t.Fatal(err)
	}
	preds := ans["predictions"].([]any)
	if len(preds) != len(samples) {
		t.Fatalf("%d predictions for %d samples", len(preds), len(samples))
	}
	for i, p := range preds {
		p := p.(map[string]any)
		if p["id"] != samples[i].ID {
			t.Errorf("prediction %d has id %v, want %s", i, p["id"], samples[i].ID)
		}
		probs := p["probabilities"].(map[string]any)
		best := 0
		for k, name := range spec.Classes {
			if got := probs[name].(float64); !close32(got, want[i][k], 1e-5) {
				t.Errorf("sample %d class %s: %v, offline %v", i, name, got, want[i][k])
			}
			if want[i][k] > want[i][best] {
				best = k
			}
		}
		if p["label"] != spec.Classes[best] {
			t.Errorf("sample %d label %v, want %s", i, p["label"], spec.Classes[best])
		}
	}
	if ans["model"].(map[string]any)["generation"].(float64) != 1 {
		t.Errorf("model %v, want generation 1", ans["model"])
	}
}

// A regressor answers in target units (TargetStats undone).
func TestPredictRegressionInTargetUnits(t *testing.T) {
	path := saveTinyWith(t, t.TempDir(), model.TaskRegress, 2, func(s *data.Spec) { s.Source.TargetColumns = []string{"redshift", "mass"} })
	ts := startServer(t, path, Config{})
	resp, err := ts.client.Get(ts.url + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); !strings.Contains(body, `"targets":["redshift","mass"]`) {
		t.Errorf("GET /v1/model %s: no target names", body)
	}
	samples := synthSamples(3)
	code, ans, _ := ts.post(t, "/v1/predict", requestBody(samples, nil, nil))
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, ans)
	}
	m, spec := tinyModel(t, model.TaskRegress, 2)
	want, err := eval.Predict(m, m.NewWorkspace(), offline(t, samples, spec), 8)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ans["predictions"].([]any) {
		got := p.(map[string]any)["prediction"].([]any)
		for k := range got {
			w := want[i][k]*spec.TargetStats.Std[k] + spec.TargetStats.Mean[k]
			if !close32(got[k].(float64), w, 1e-5) {
				t.Errorf("sample %d output %d: %v, want %v", i, k, got[k], w)
			}
		}
	}
}

// A pre-trained model embeds, interpolates (values back in data units)
// and reconstructs as the library does, and refuses predict.
func TestPretrainEndpoints(t *testing.T) {
	// Per channel: the tiny model's first axis (0 or 1) is the channel.
	perChannel := func(s *data.Spec) {
		s.Stats.ChannelMean, s.Stats.ChannelStd = []float64{3, -1, -4, 2}, []float64{0.5, 4, 2, 0.25}
	}
	for _, tc := range []struct {
		name string
		edit func(*data.Spec)
	}{{"stats per slot", nil}, {"stats per channel", perChannel}} {
		t.Run(tc.name, func(t *testing.T) { testPretrainEndpoints(t, tc.edit) })
	}
}

func testPretrainEndpoints(t *testing.T, edit func(*data.Spec)) {
	path := saveTinyWith(t, t.TempDir(), model.TaskPretrain, 3, edit)
	ts := startServer(t, path, Config{})
	m, spec := tinyModel(t, model.TaskPretrain, 3)
	if edit != nil {
		edit(spec)
	}
	samples := synthSamples(5)
	ds := offline(t, samples, spec)

	code, ans, _ := ts.post(t, "/v1/embed", strings.Replace(requestBody(samples, nil, nil), `{"samples"`, `{"pool":"mean","samples"`, 1))
	if code != http.StatusOK {
		t.Fatalf("embed: status %d: %v", code, ans)
	}
	emb, err := eval.Embed(m, m.NewWorkspace(), ds, model.PoolMean, 8)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Cfg.Encoder.DModel
	for i, e := range ans["embeddings"].([]any) {
		vec := e.(map[string]any)["embedding"].([]any)
		if len(vec) != d {
			t.Fatalf("embedding of %d numbers, want %d", len(vec), d)
		}
		for k, v := range vec {
			if !close32(v.(float64), float64(emb[i*d+k]), 1e-4) {
				t.Fatalf("sample %d embedding[%d] %v, offline %v", i, k, v, emb[i*d+k])
			}
		}
	}

	queries := func(i int) map[string]any {
		return map[string]any{"queries": [][]float32{{0, 0.25}, {1, float32(i) + 2.5}}}
	}
	code, ans, _ = ts.post(t, "/v1/interpolate", requestBody(samples, queries, nil))
	if code != http.StatusOK {
		t.Fatalf("interpolate: status %d: %v", code, ans)
	}
	q := make([][]float32, len(samples))
	for i := range q {
		q[i] = []float32{0, 0.25, 1, float32(i) + 2.5}
	}
	vals, err := eval.Interpolate(m, m.NewWorkspace(), ds, q, 8)
	if err != nil {
		t.Fatal(err)
	}
	checkInterpolated(t, ans, vals, q, spec)

	mask := func(i, tok int) bool { return tok == 1 || tok == 2 }
	code, ans, _ = ts.post(t, "/v1/reconstruct", requestBody(samples, nil, mask))
	if code != http.StatusOK {
		t.Fatalf("reconstruct: status %d: %v", code, ans)
	}
	if ans["units"] != "data" {
		t.Errorf("units %v, want data", ans["units"])
	}
	bt := data.Collate(nil, ds, []int{0, 1, 2, 3, 4})
	masked := make([]bool, bt.B*bt.L)
	for b := 0; b < bt.B; b++ {
		masked[b*bt.L+1], masked[b*bt.L+2] = true, true
	}
	ws := m.NewWorkspace()
	if _, err := m.ForwardPretrain(ws, bt, masked, false, nil); err != nil {
		t.Fatal(err)
	}
	rec := ws.Reconstruction()
	for i, r := range ans["results"].([]any) {
		res := r.(map[string]any)
		if fmt.Sprint(res["masked"]) != "[1 2]" {
			t.Errorf("sample %d masked %v, want [1 2]", i, res["masked"])
		}
		var se float64
		for j, row := range res["values"].([]any) {
			for c, v := range row.([]any) {
				mean, std := spec.Stats.At(c, samples[i].Positions[(1+j)*2:(2+j)*2])
				want := float64(rec[(i*ws.QueriesPerSample()+j)*2+c])*std + mean
				if !close32(v.(float64), want, 1e-4) {
					t.Errorf("sample %d masked token %d value %d: %v, want %v", i, j, c, v, want)
				}
				e := v.(float64) - float64(samples[i].Values[(1+j)*2+c])
				se += e * e
			}
		}
		if mse := res["mse"].(float64); !close32(mse, se/4, 1e-4) {
			t.Errorf("sample %d mse %v, want %v", i, mse, se/4)
		}
	}

	code, ans, _ = ts.post(t, "/v1/predict", requestBody(samples, nil, nil))
	if code != http.StatusBadRequest || !strings.Contains(errorMessage(ans), "interpolate") {
		t.Errorf("predict on a pre-training model: %d %v", code, ans)
	}
}

// Requests that arrive while the model is busy run together as one
// forward pass when it is free.
func TestConcurrentRequestsShareABatch(t *testing.T) {
	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	ts := startServer(t, path, Config{MaxBatch: 8})
	entered, release := blockForward(ts.Server)
	samples := synthSamples(9)
	var wg sync.WaitGroup
	codes := make([]int, 9)
	send := func(i int) {
		defer wg.Done()
		codes[i], _, _ = ts.post(t, "/v1/predict", requestBody(samples[i:i+1], nil, nil))
	}
	wg.Add(1)
	go send(0)
	<-entered // the model is busy with request 0
	before := histogram(t, ts.Server, "romae_serve_batch_samples")
	for i := 1; i < 9; i++ {
		wg.Add(1)
		go send(i)
	}
	waitFor(t, "8 queued samples", func() bool { return ts.bat.queued.Load() == 8 })
	release()
	wg.Wait()
	after := histogram(t, ts.Server, "romae_serve_batch_samples")
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	// Request 0's pass (recorded when it ends) and one pass of the 8.
	if passes, n := after.count-before.count, after.sum-before.sum; passes != 2 || n != 9 {
		t.Errorf("%d forward passes over %v samples, want 2 over 9 (1 + 8)", passes, n)
	}
}

// A batch waits (up to MaxWait) for requests that are being decoded, and
// not for requests that are not there: a lone request runs at once.
func TestBatchWaitsOnlyForArrivingRequests(t *testing.T) {
	m, spec := tinyModel(t, model.TaskClassify, 1)
	sm, err := NewModel("tiny", m, spec)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatcher(8, 1<<20, time.Hour, 64, newMetrics(8), quietLogger())
	job1 := func() *job {
		ds, err := sm.prepare(synthSamples(1))
		if err != nil {
			t.Fatal(err)
		}
		return newJob(t.Context(), sm, epPredict, "", ds)
	}
	// Nothing arriving: the first job goes alone, however long MaxWait.
	a := job1()
	b.submit(a)
	start := time.Now()
	if g := b.collect(b.take(<-b.ch)); len(g) != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("lone job: a group of %d after %v", len(g), time.Since(start))
	}
	// One arriving: the batch waits for it.
	b.arriving.Add(1)
	b.submit(job1())
	go func() {
		time.Sleep(50 * time.Millisecond)
		b.submit(job1())
		b.arriving.Add(-1)
	}()
	if g := b.collect(b.take(<-b.ch)); len(g) != 2 {
		t.Errorf("with one arriving: a group of %d, want 2", len(g))
	}
}

// With one P (GOMAXPROCS=1, a one-CPU container) a handler that is
// runnable but not running cannot mark its request as arriving: the
// batch yields once before it decides that nothing else is coming, so a
// request queued meanwhile joins it rather than running alone after it.
func TestBatchYieldsToRunnableHandlersOnOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m, spec := tinyModel(t, model.TaskClassify, 1)
	sm, err := NewModel("tiny", m, spec)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatcher(8, 1<<20, time.Hour, 64, newMetrics(8), quietLogger())
	var jobs []*job
	for range 2 {
		ds, err := sm.prepare(synthSamples(1))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, newJob(t.Context(), sm, epPredict, "", ds))
	}
	b.submit(jobs[0])
	go b.submit(jobs[1]) // runnable; with one P it runs only when this goroutine yields
	if g := b.collect(b.take(<-b.ch)); len(g) != 2 {
		t.Errorf("a group of %d, want 2 (the second job was queued by a runnable goroutine)", len(g))
	}
}

type hist struct {
	count uint64
	sum   float64
}

func histogram(t *testing.T, s *Server, name string) hist {
	t.Helper()
	mfs, err := s.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return hist{h.GetSampleCount(), h.GetSampleSum()}
		}
	}
	t.Fatalf("no metric %s", name)
	return hist{}
}

func counter(t *testing.T, s *Server, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := s.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Gauge != nil:
				total += m.GetGauge().GetValue()
			}
		}
	}
	return total
}

// Batches are cut by padded tokens and sorted by length: a long sample
// does not pad a batch of short ones.
func TestBatchesCutByTokens(t *testing.T) {
	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	// 4 samples of 3..6 tokens, at most 8 padded tokens per pass: [3], [4],
	// [5], [6] each alone would be 4 passes; sorted, 3+4 cannot share (2×4
	// = 8 fits), so the passes are {3,4}, {5}, {6}.
	ts := startServer(t, path, Config{MaxBatch: 8, MaxBatchTokens: 8, MaxWait: time.Second})
	samples := synthSamples(4) // 3, 4, 5, 6 tokens
	before := histogram(t, ts.Server, "romae_serve_batch_samples")
	code, ans, _ := ts.post(t, "/v1/predict", requestBody([]data.Sample{samples[3], samples[1], samples[2], samples[0]}, nil, nil))
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, ans)
	}
	after := histogram(t, ts.Server, "romae_serve_batch_samples")
	if passes := after.count - before.count; passes != 3 {
		t.Errorf("%d forward passes, want 3 ({3,4} {5} {6} tokens)", passes)
	}
	// The answers stay in request order.
	for i, id := range []string{"s3", "s1", "s2", "s0"} {
		if got := ans["predictions"].([]any)[i].(map[string]any)["id"]; got != id {
			t.Errorf("prediction %d is %v, want %s", i, got, id)
		}
	}
}

func TestModelInfoAndProbes(t *testing.T) {
	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	ts := startServer(t, path, Config{})
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/healthz", 200, `"ok"`},
		{"/readyz", 200, `"ready"`},
		{"/v1/model", 200, `"classes":["low","mid","high"]`},
		{"/metrics", 200, "romae_serve_model_generation 1"},
		{"/openapi.yaml", 200, "openapi: 3"},
		{"/v1/nothing", 404, "no endpoint /v1/nothing"},
	} {
		resp, err := ts.client.Get(ts.url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, err = fmt.Fprint(&b, readAll(t, resp))
		if resp.StatusCode != c.code || !strings.Contains(b.String(), c.want) {
			t.Errorf("GET %s: %d %q, want %d with %q", c.path, resp.StatusCode, b.String(), c.code, c.want)
		}
	}
	code, ans, hdr := ts.post(t, "/healthz", "{}")
	if code != http.StatusMethodNotAllowed || hdr.Get("Allow") == "" || errorMessage(ans) == "" {
		t.Errorf("POST /healthz: %d %v allow %q", code, ans, hdr.Get("Allow"))
	}
	resp, err := ts.client.Get(ts.url + "/v1/predict")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/predict: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	var info ModelInfo
	resp, err = ts.client.Get(ts.url + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(readAll(t, resp)), &info); err != nil {
		t.Fatal(err)
	}
	if info.ValuesPerToken != 2 || info.PositionAxes != 2 || info.Task != model.TaskClassify || !info.Normalized ||
		fmt.Sprint(info.Endpoints) != "[predict embed]" || info.Name != "classify.safetensors" {
		t.Errorf("model info %+v", info)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// /readyz stays 503 until the model is loaded and warm; /healthz answers
// from the start; inference meanwhile is a 503 with Retry-After.
func TestNotReadyWhileLoading(t *testing.T) {
	path := saveTiny(t, t.TempDir(), model.TaskClassify, 1)
	gate := make(chan struct{})
	ts := startUnready(t, Config{Logger: quietLogger(), Load: func() (*Model, error) {
		<-gate
		return LoadModel(path, eval.SpecChoice{})
	}})
	get := func(p string) int {
		resp, err := ts.client.Get(ts.url + p)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		return resp.StatusCode
	}
	if h, r := get("/healthz"), get("/readyz"); h != 200 || r != 503 {
		t.Errorf("while loading: healthz %d readyz %d, want 200 503", h, r)
	}
	code, _, hdr := ts.post(t, "/v1/predict", requestBody(synthSamples(1), nil, nil))
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("predict while loading: %d, Retry-After %q", code, hdr.Get("Retry-After"))
	}
	close(gate)
	ts.waitReady(t)
	if r := get("/readyz"); r != 200 {
		t.Errorf("loaded: readyz %d", r)
	}
}

// A first load that fails stops the server with the reason.
func TestFailedFirstLoadStops(t *testing.T) {
	s, err := New(Config{Logger: quietLogger(), Load: func() (*Model, error) { return LoadModel(t.TempDir()+"/none.safetensors", eval.SpecChoice{}) }})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	err = s.Serve(t.Context(), ln)
	if err == nil || !strings.Contains(err.Error(), "none.safetensors") {
		t.Errorf("Serve: %v, want the load error", err)
	}
}

func TestConfigRefused(t *testing.T) {
	load := func() (*Model, error) { return nil, nil }
	for _, c := range []Config{
		{},
		{Load: load, QueueSamples: 8, Limits: Limits{MaxBodyBytes: 1 << 20, MaxSamples: 16, MaxTokens: 8, MaxQueries: 8, MaxAbsValue: 1, MaxAbsPosition: 1}},
		{Load: load, TLSCertFile: "x.pem"},
		{Load: load, Limits: Limits{MaxBodyBytes: 1 << 20, MaxSamples: 1, MaxTokens: 1, MaxQueries: 1, MaxAbsValue: math.Inf(1), MaxAbsPosition: 1}},
		{Load: load, AuthTokenFile: t.TempDir() + "/missing"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// A model trained on patches of observations (data.series_patch) takes
// requests of single observations and patches them as training did,
// along the axis that is time for its training file's format.
func TestPatchedModel(t *testing.T) {
	const P = 2
	c := tinyConfig(model.TaskClassify)
	c.Values = P*2 + P // P observations of 2 values and their P time offsets
	m, err := model.New[float32](c, 4)
	if err != nil {
		t.Fatal(err)
	}
	spec := &data.Spec{Source: data.Source{SeriesPatch: P}, Train: "train.csv", Classes: []string{"a", "b", "c"}}
	path := t.TempDir() + "/patched.safetensors"
	if err := m.Save(path, spec.Meta(), nil); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, path, Config{})
	samples := synthSamples(4)
	code, ans, _ := ts.post(t, "/v1/predict", requestBody(samples, nil, nil))
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, ans)
	}
	// Offline: long CSV data has (channel, time) positions, time last.
	ds, err := data.PatchSeries(&data.Dataset{Name: "offline", C: 2, D: 2, TimeAxis: 1, Samples: samples}, P)
	if err != nil {
		t.Fatal(err)
	}
	want, err := eval.Predict(m, m.NewWorkspace(), ds, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ans["predictions"].([]any) {
		for k, name := range spec.Classes {
			if got := p.(map[string]any)["probabilities"].(map[string]any)[name].(float64); !close32(got, want[i][k], 1e-5) {
				t.Errorf("sample %d class %s: %v, offline %v", i, name, got, want[i][k])
			}
		}
	}
	code, ans, _ = ts.post(t, "/v1/embed", `{"samples":[{"tokens":[{"values":[1,2,3,4,5,6],"position":[0,1]}]}]}`)
	if code != http.StatusBadRequest || !strings.Contains(errorMessage(ans), "the model takes 2") {
		t.Errorf("a patch sent as a token: %d %v", code, ans)
	}

	for _, c := range []struct {
		train string
		axis  int
		fails bool
	}{{"x.csv", 1, false}, {"x.ts", 0, false}, {"x.npy", 0, false}, {"", 0, true}, {"x.safetensors", 0, true}} {
		sp := *spec
		sp.Train = c.train
		sm, err := NewModel("patched", m, &sp)
		switch {
		case c.fails && err == nil:
			t.Errorf("train file %q: a patched 2-axis model whose time axis is unknown was accepted", c.train)
		case !c.fails && (err != nil || sm.timeAxis != c.axis):
			t.Errorf("train file %q: time axis %v (%v), want %d", c.train, sm, err, c.axis)
		}
	}
}

// A checkpoint carrying pretrain's blend interpolates with it, along the
// time axis of the data it was trained on (the last for long CSV), as
// eval.Blend.Mix does offline, and GET /v1/model shows it.
func TestInterpolateBlend(t *testing.T) {
	m, spec := tinyModel(t, model.TaskPretrain, 3)
	spec.Source.Format, spec.Train = "csv", "train.csv"
	blend := &eval.Blend{Model: []float64{0.25, 0.5}, Spline: []float64{0.5, 0}, Holdout: 0.2, Draws: 3, Series: 10, Tokens: 60}
	meta := spec.Meta()
	raw, err := json.Marshal(blend)
	if err != nil {
		t.Fatal(err)
	}
	meta[eval.MetaBlend] = string(raw)
	path := filepath.Join(t.TempDir(), "blend.safetensors")
	if err := m.Save(path, meta, nil); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, path, Config{})

	resp, err := ts.client.Get(ts.url + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	var info ModelInfo
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil || info.InterpBlend == nil || info.InterpBlend.Model[1] != 0.5 {
		t.Errorf("GET /v1/model: interp_blend %+v (%v), want the checkpoint's", info.InterpBlend, err)
	}

	samples := synthSamples(6)
	queries := func(i int) map[string]any {
		return map[string]any{"queries": [][]float32{{0, 0.75 + float32(i)}, {1, float32(i) + 2.5}, {0, float32(i) + 4}}}
	}
	code, ans, _ := ts.post(t, "/v1/interpolate", requestBody(samples, queries, nil))
	if code != http.StatusOK {
		t.Fatalf("interpolate: status %d: %v", code, ans)
	}
	ds := offline(t, samples, spec)
	ds.TimeAxis = 1
	q := make([][]float32, len(samples))
	for i := range q {
		q[i] = []float32{0, 0.75 + float32(i), 1, float32(i) + 2.5, 0, float32(i) + 4}
	}
	vals, err := eval.Interpolate(m, m.NewWorkspace(), ds, q, 8)
	if err != nil {
		t.Fatal(err)
	}
	alone := make([][]float32, len(vals))
	for i := range vals {
		alone[i] = slices.Clone(vals[i])
	}
	if err := blend.Mix(ds, q, vals); err != nil {
		t.Fatal(err)
	}
	checkInterpolated(t, ans, vals, q, spec)
	differs := false
	for i := range vals {
		differs = differs || !slices.Equal(vals[i], alone[i])
	}
	if !differs {
		t.Error("the blend changed no value: the test cannot tell it from the model alone")
	}
}

// A model trained on time stamps mapped per series (data.time_origin
// series, data.time_unit 10) answers requests in the file's units: Unix
// seconds, which float32 would round to 128 s, are mapped from the float64
// sent, each sample from its earliest token, queries with it; the answer
// is what the library gives on the mapped positions.
func TestServeMapsTimes(t *testing.T) {
	m, spec := tinyModel(t, model.TaskPretrain, 3)
	spec.Source = data.Source{Format: "csv", TimeOrigin: data.TimeOriginSeries, TimeUnit: 10}
	path := filepath.Join(t.TempDir(), "pre.safetensors")
	if err := m.Save(path, spec.Meta(), nil); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, path, Config{})
	samples := synthSamples(3) // (channel, time) positions; the time axis is the last
	const unix = 1.7e9
	var body strings.Builder
	body.WriteString(`{"samples":[`)
	q := make([][]float32, len(samples))
	for i, s := range samples {
		if i > 0 {
			body.WriteString(",")
		}
		origin := unix + 10*float64(s.Positions[1]) // the first token is the earliest
		fmt.Fprintf(&body, `{"id":%q,"tokens":[`, s.ID)
		for k := range len(s.Values) / 2 {
			ch, tm := s.Positions[2*k], unix+10*float64(s.Positions[2*k+1])
			fmt.Fprintf(&body, `%s{"values":[%v,%v],"position":[%v,%.1f]}`, map[bool]string{true: ",", false: ""}[k > 0], s.Values[2*k], s.Values[2*k+1], ch, tm)
			samples[i].Positions[2*k+1] = float32((tm - origin) / 10)
		}
		fmt.Fprintf(&body, `],"queries":[[0,%.1f],[1,%.1f]]}`, origin+5, origin+25)
		q[i] = []float32{0, 0.5, 1, 2.5}
	}
	body.WriteString("]}")
	served, err := NewModel("pre", m, spec)
	if err != nil {
		t.Fatal(err)
	}
	req, err := served.decode([]byte(body.String()), epInterpolate, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range req.samples {
		if !slices.Equal(s.Positions, samples[i].Positions) || !slices.Equal(req.queries[i], q[i]) {
			t.Fatalf("sample %d: positions %v, queries %v; want %v and %v", i, s.Positions, req.queries[i], samples[i].Positions, q[i])
		}
	}
	code, ans, _ := ts.post(t, "/v1/interpolate", body.String())
	if code != http.StatusOK {
		t.Fatalf("interpolate: status %d: %v", code, ans)
	}
	vals, err := eval.Interpolate(m, m.NewWorkspace(), offline(t, samples, spec), q, 8)
	if err != nil {
		t.Fatal(err)
	}
	checkInterpolated(t, ans, vals, q, spec)
}

// checkInterpolated holds an /v1/interpolate answer to vals, the library's
// values (model units, 2 per query) mapped back to data units with spec.
func checkInterpolated(t *testing.T, ans map[string]any, vals, q [][]float32, spec *data.Spec) {
	t.Helper()
	for i, r := range ans["results"].([]any) {
		rows := r.(map[string]any)["values"].([]any)
		if len(rows) != len(vals[i])/2 {
			t.Fatalf("sample %d: %d rows for %d queries", i, len(rows), len(vals[i])/2)
		}
		for j, row := range rows {
			for c, v := range row.([]any) {
				mean, std := spec.Stats.At(c, q[i][j*2:(j+1)*2])
				want := float64(vals[i][j*2+c])*std + mean
				if !close32(v.(float64), want, 1e-4) {
					t.Errorf("sample %d query %d value %d: %v, want %v (data units)", i, j, c, v, want)
				}
			}
		}
	}
}

// A model trained on a long CSV's channel axis lists its channels and
// refuses a channel coordinate that is not one of their indices, in tokens
// and in queries.
func TestChannelCoordinatesChecked(t *testing.T) {
	dir := t.TempDir()
	for _, task := range []string{model.TaskClassify, model.TaskPretrain} {
		path := saveTinyWith(t, dir, task, 1, func(s *data.Spec) { s.Source.Channels = []string{"g", "r"} })
		ts := startServer(t, path, Config{})
		resp, err := ts.client.Get(ts.url + "/v1/model")
		if err != nil {
			t.Fatal(err)
		}
		if body := readAll(t, resp); !strings.Contains(body, `"channels":["g","r"]`) {
			t.Errorf("%s: GET /v1/model %s: no channels", task, body)
		}
		samples := synthSamples(3) // channel coordinates 0 and 1
		ep, queries := "/v1/embed", func(int) map[string]any { return nil }
		if task == model.TaskPretrain {
			ep = "/v1/interpolate"
			queries = func(int) map[string]any { return map[string]any{"queries": [][]float32{{1, 2.5}}} }
		}
		if code, ans, _ := ts.post(t, ep, requestBody(samples, queries, nil)); code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", task, ep, code, ans)
		}
		for _, c := range []float32{2, -1, 0.5} {
			bad := synthSamples(3)
			bad[1].Positions[2] = c
			code, ans, _ := ts.post(t, ep, requestBody(bad, queries, nil))
			want := fmt.Sprintf("samples[1].tokens[1].position[0]: %v is not a channel index: the model's channels are 0 g, 1 r", c)
			if code != http.StatusBadRequest || !strings.Contains(errorMessage(ans), want) {
				t.Errorf("%s channel %v: %d %q, want 400 with %q", task, c, code, errorMessage(ans), want)
			}
		}
		if task == model.TaskPretrain {
			badQ := func(int) map[string]any { return map[string]any{"queries": [][]float32{{1, 2.5}, {3, 1}}} }
			code, ans, _ := ts.post(t, ep, requestBody(samples, badQ, nil))
			if code != http.StatusBadRequest || !strings.Contains(errorMessage(ans), "samples[0].queries[1].position[0]: 3 is not a channel index") {
				t.Errorf("query at channel 3: %d %q", code, errorMessage(ans))
			}
		}
	}
}

// A model fine-tuned with data.normalize_series standardises each request
// series on its own, per channel, as romae predict does, before its
// training scaling.
func TestPredictNormalizeSeries(t *testing.T) {
	edit := func(s *data.Spec) {
		s.Train, s.Source.Channels, s.Source.NormalizeSeries = "train.csv", []string{"g", "r"}, true
	}
	path := saveTinyWith(t, t.TempDir(), model.TaskClassify, 1, edit)
	ts := startServer(t, path, Config{})
	samples := synthSamples(9)
	code, ans, _ := ts.post(t, "/v1/predict", requestBody(samples, nil, nil))
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, ans)
	}
	m, spec := tinyModel(t, model.TaskClassify, 1)
	edit(spec)
	cp := make([]data.Sample, len(samples))
	for i, s := range samples {
		cp[i] = s
		cp[i].Values = slices.Clone(s.Values)
	}
	ds := &data.Dataset{Name: "offline", C: 2, D: 2, TimeAxis: 1, ChannelAxes: true, Samples: cp}
	data.StandardiseSeries(ds)
	if err := (&data.Spec{Stats: spec.Stats}).Prepare(ds, "offline"); err != nil {
		t.Fatal(err)
	}
	want, err := eval.Predict(m, m.NewWorkspace(), ds, 4)
	if err != nil {
		t.Fatal(err)
	}
	unscaled, err := eval.Predict(m, m.NewWorkspace(), offline(t, samples, spec), 4)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0.0
	for i, p := range ans["predictions"].([]any) {
		probs := p.(map[string]any)["probabilities"].(map[string]any)
		for k, name := range spec.Classes {
			if got := probs[name].(float64); !close32(got, want[i][k], 1e-5) {
				t.Errorf("sample %d class %s: %v, offline %v", i, name, got, want[i][k])
			}
			moved = max(moved, math.Abs(want[i][k]-unscaled[i][k]))
		}
	}
	if moved < 1e-3 {
		t.Errorf("standardising each series moved no probability by 1e-3 (%v): the test cannot tell it was applied", moved)
	}
}
