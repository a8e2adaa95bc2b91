package serve

import (
	"math/bits"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus series, in a registry of its own
// (several servers in one process, as in tests, do not collide), with the
// Go runtime and process collectors beside them (goroutines, RSS).
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec   // endpoint, code
	latency    *prometheus.HistogramVec // endpoint, outcome
	inflight   prometheus.Gauge
	batchSize  prometheus.Histogram
	queueDepth prometheus.Gauge
	queueWait  prometheus.Histogram
	forward    *prometheus.HistogramVec // endpoint
	dropped    prometheus.Counter
	panics     *prometheus.CounterVec // where: handler, batcher
	reloads    *prometheus.CounterVec // result: ok, error
	generation prometheus.Gauge
	ready      prometheus.Gauge
}

func newMetrics(maxBatch int) *metrics {
	const ns = "romae_serve_"
	latencyBuckets := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "requests_total",
			Help: "HTTP requests by endpoint and status code (499: the client went away first)."}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: ns + "request_duration_seconds",
			Help:    "Time from a request's headers to its answer, by endpoint and outcome (ok, refused: 429/503, client_error: other 4xx, server_error: 5xx, client_gone).",
			Buckets: latencyBuckets}, []string{"endpoint", "outcome"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "requests_in_flight", Help: "Requests being handled."}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: ns + "batch_samples",
			Help: "Samples per forward pass.", Buckets: prometheus.ExponentialBuckets(1, 2, bits.Len(uint(max(maxBatch, 1))))}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "queue_samples", Help: "Samples waiting for a forward pass."}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: ns + "queue_wait_seconds",
			Help: "Time a request waited in the queue.", Buckets: latencyBuckets}),
		forward: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: ns + "forward_seconds",
			Help: "Duration of one batched forward pass, by endpoint.", Buckets: latencyBuckets}, []string{"endpoint"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "dropped_total",
			Help: "Queued requests not run because their client left or their deadline passed."}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "panics_total",
			Help: "Recovered panics, by where they happened."}, []string{"where"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "model_reloads_total",
			Help: "Model loads (start and reloads), by result."}, []string{"result"}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "model_generation", Help: "Generation of the model being served (1 after start, +1 per successful reload)."}),
		ready:      prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "ready", Help: "1 when /readyz says ready."}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.inflight, m.batchSize, m.queueDepth, m.queueWait, m.forward,
		m.dropped, m.panics, m.reloads, m.generation, m.ready,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
