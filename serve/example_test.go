package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"romae/data"
	"romae/model"
	"romae/serve"
	"romae/tensor"
)

// A classifier served on a loopback port and asked for one prediction.
// A deployment loads the model from a checkpoint instead:
// serve.LoadModel(path, eval.SpecChoice{}), as `romae serve` does.
func Example() {
	cfg := model.DefaultConfig()
	cfg.Encoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	cfg.Task, cfg.Outputs, cfg.Values, cfg.PosDims = model.TaskClassify, 2, 1, 1
	nw, err := model.New[float32](cfg, 1)
	if err != nil {
		panic(err)
	}
	m, err := serve.NewModel("example", nw, &data.Spec{Classes: []string{"quiet", "flaring"}})
	if err != nil {
		panic(err)
	}
	s, err := serve.New(serve.Config{
		Load:   func() (*serve.Model, error) { return m, nil },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, ln) }()
	for !s.Ready() {
		time.Sleep(time.Millisecond)
	}

	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Post("http://"+ln.Addr().String()+"/v1/predict", "application/json", strings.NewReader(
		`{"samples": [{"id": "lc-7", "tokens": [{"values": [0.3], "position": [0.5]}, {"values": [1.7], "position": [2.25]}]}]}`))
	if err != nil {
		panic(err)
	}
	var answer struct {
		Predictions []struct {
			ID            string             `json:"id"`
			Probabilities map[string]float64 `json:"probabilities"`
		} `json:"predictions"`
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	p := answer.Predictions[0]
	classes := make([]string, 0, len(p.Probabilities))
	for c := range p.Probabilities {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	fmt.Println(resp.StatusCode, p.ID, classes)

	client.CloseIdleConnections()
	stop() // what SIGTERM does in romae serve: drain, then return
	fmt.Println(<-done)
	// Output:
	// 200 lc-7 [flaring quiet]
	// <nil>
}

// A program that serves sizes itself once, at start: the forward passes'
// products on 2 goroutines, and a third P for the network.
func ExampleReserveNetworkP() {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // this example restores them
	defer tensor.SetThreads(0)

	compute := serve.ReserveNetworkP(2)
	fmt.Println("compute threads:", compute, "GOMAXPROCS:", runtime.GOMAXPROCS(0))
	// Output: compute threads: 2 GOMAXPROCS: 3
}
