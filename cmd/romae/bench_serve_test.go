package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The serve workload end to end on a small model, in process: every
// phase answers, the summary compares with offline inference.
func TestBenchServeWorkload(t *testing.T) {
	out, err := capture(t, cmdBench, "--workload", "serve", "--size", "tiny-shallow", "--batch", "4", "--tokens", "8",
		"--steps", "2", "--serve-duration", "300ms", "--serve-max-requests", "400", "--serve-process=false")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 { // infer, 5 phases, infer again, summary
		t.Fatalf("want 8 JSON lines, got %d: %s", len(lines), out)
	}
	phases := map[string]servePhase{}
	for _, l := range lines[1:6] {
		var p servePhase
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		phases[p.Phase] = p
	}
	for _, name := range []string{"lone", "closed", "open50", "paced50", "overload"} {
		p, ok := phases[name]
		if !ok || p.Requests == 0 || p.OK == 0 || p.Errors != 0 || p.Hung != 0 || p.SamplesPerS <= 0 || p.P50Ms <= 0 {
			t.Errorf("phase %s: %+v", name, p)
		}
	}
	if l := phases["lone"]; l.MeanBatch != 1 {
		t.Errorf("lone requests ran in batches of %v, want 1", l.MeanBatch)
	}
	if c := phases["closed"]; c.MeanBatch <= 1 || c.BatchHist["≤4"] == 0 {
		t.Errorf("closed loop with 8 clients: mean batch %v, histogram %v: want full batches", c.MeanBatch, c.BatchHist)
	}
	var s serveSummary
	if err := json.Unmarshal([]byte(lines[7]), &s); err != nil {
		t.Fatal(err)
	}
	if s.OfflineSamplesPerS <= 0 || s.SaturatedRatio <= 0 || s.LoneP50Ms <= 0 || s.PacedP99OverLon <= 0 || len(s.Targets) < 6 {
		t.Errorf("summary %+v", s)
	}
	if _, err := capture(t, cmdBench, "--workload", "serve", "--serve-url", "http://192.0.2.1:80"); err == nil {
		t.Error("a non-loopback --serve-url was accepted")
	}
}
