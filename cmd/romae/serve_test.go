package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"romae/data"
	"romae/model"
)

// servedProcess is `romae serve` running as a child process (this test
// binary standing in for romae, as in TestHostileInputsCLI), with its JSON
// log lines collected.
type servedProcess struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs []map[string]any
	done chan error
}

func startServeProcess(t *testing.T, args ...string) *servedProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "ROMAE_HOSTILE_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &servedProcess{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue // not a log line
			}
			p.mu.Lock()
			p.logs = append(p.logs, line)
			p.mu.Unlock()
			if line["msg"] == "listening" {
				addr <- line["addr"].(string)
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("romae serve did not start listening in 30 s")
	}
	p.waitLog(t, "model loaded", 1)
	return p
}

// waitLog waits until the log has n lines with message msg.
func (p *servedProcess) waitLog(t *testing.T, msg string, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		var seen []map[string]any
		for _, l := range p.logs {
			if l["msg"] == msg {
				seen = append(seen, l)
			}
		}
		p.mu.Unlock()
		if len(seen) >= n {
			return seen[n-1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %d× %q in the log", n, msg)
	return nil
}

// predict posts a sample and returns the status and the model
// generation that answered.
func (p *servedProcess) predict(t *testing.T, client *http.Client) (int, float64) {
	t.Helper()
	body := `{"samples":[{"id":"a","tokens":[{"values":[1],"position":[0]},{"values":[2],"position":[1]}]}]}`
	resp, err := client.Post(p.url+"/v1/predict", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("predict: %v", err)
	}
	defer resp.Body.Close()
	var ans struct{ Model struct{ Generation float64 } }
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &ans)
	return resp.StatusCode, ans.Model.Generation
}

func saveServeModel(t *testing.T, path string, seed uint64) {
	t.Helper()
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 8, Heads: 2, Depth: 1, FFN: 16}
	c.Task, c.Outputs = model.TaskClassify, 2
	m, err := model.New[float32](c, seed)
	if err != nil {
		t.Fatal(err)
	}
	spec := &data.Spec{Classes: []string{"no", "yes"}, Stats: &data.Stats{Mean: []float64{1}, Std: []float64{2}}}
	if err := m.Save(path, spec.Meta(), nil); err != nil {
		t.Fatal(err)
	}
}

// The real process and the real signals: SIGHUP with a corrupt checkpoint
// keeps the old model serving and logs why; SIGHUP with a good one swaps
// it; SIGTERM under load answers every accepted request and exits 0.
func TestServeSignals(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "model.safetensors")
	saveServeModel(t, ckpt, 1)
	p := startServeProcess(t, "--model", ckpt)
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	if code, gen := p.predict(t, client); code != 200 || gen != 1 {
		t.Fatalf("first predict: %d generation %v", code, gen)
	}

	if err := os.WriteFile(ckpt, []byte("corrupt"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	failed := p.waitLog(t, "model reload failed; still serving the previous model", 1)
	if !strings.Contains(fmt.Sprint(failed["error"]), ckpt) {
		t.Errorf("the reload failure does not say why: %v", failed)
	}
	if code, gen := p.predict(t, client); code != 200 || gen != 1 {
		t.Errorf("after a corrupt reload: %d generation %v, want 200 from generation 1", code, gen)
	}
	saveServeModel(t, ckpt, 2)
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitLog(t, "model loaded", 2)
	if code, gen := p.predict(t, client); code != 200 || gen != 2 {
		t.Errorf("after a good reload: %d generation %v", code, gen)
	}

	// SIGTERM while 16 requests are mid-upload: accepted (their handlers
	// are reading the bodies), unanswered. Each gets its answer.
	const n = 16
	body := `{"samples":[{"tokens":[{"values":[1],"position":[0]},{"values":[2],"position":[1]}]}]}`
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:20])
		conns[i] = c
	}
	// n requests and the scrape itself in flight.
	waitMetric(t, client, p.url, fmt.Sprintf("romae_serve_requests_in_flight %d", n+1))
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitLog(t, "shutting down: finishing the requests in flight", 1)
	for i, c := range conns {
		if _, err := io.WriteString(c, body[20:]); err != nil {
			t.Fatalf("request %d: finishing the body after SIGTERM: %v", i, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("request %d accepted before SIGTERM: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("request %d accepted before SIGTERM: %d", i, resp.StatusCode)
		}
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("romae serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("romae serve did not exit 30 s after SIGTERM")
	}
	p.done <- nil // for the cleanup
	p.waitLog(t, "stopped", 1)
}

func waitMetric(t *testing.T, client *http.Client, url, line string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get(url + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "\n"+line+"\n") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("/metrics never showed %q", line)
}

func TestServeFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--model", "x", "--log-format", "xml"},
		{"--model", "x", "--log-level", "loud"},
		{"--model", "x", "extra"},
		{"--model", "x", "--max-batch", "-1"},
		{"--model", "x", "--compute-priority", "high"},
	} {
		if err := cmdServe(t.Context(), args); err == nil {
			t.Errorf("serve %v accepted", args)
		}
	}
}

// --compute-priority: the process says which in its log and answers (the
// threads' classes are tested in serve/TestComputePriority).
func TestServeComputePriority(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SCHED_IDLE is Linux's")
	}
	ckpt := filepath.Join(t.TempDir(), "model.safetensors")
	saveServeModel(t, ckpt, 1)
	for _, mode := range []string{"", "idle", "normal"} {
		args := []string{"--model", ckpt}
		if mode != "" {
			args = append(args, "--compute-priority", mode)
		} else {
			mode = "overload" // the default
		}
		p := startServeProcess(t, args...)
		if l := p.waitLog(t, "compute", 1); l["priority"] != mode {
			t.Errorf("compute log line %v: want priority %s", l, mode)
		}
		if code, _ := p.predict(t, http.DefaultClient); code != http.StatusOK {
			t.Errorf("%s: predict: %d", mode, code)
		}
	}
}
