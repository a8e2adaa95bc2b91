package serve

import (
	"encoding/json"
	"testing"

	"romae/data"
)

// BenchmarkDecode200Tokens: one sample of 200 tokens (2 values, 2 axes),
// the bench workload's request.
func BenchmarkDecode200Tokens(b *testing.B) {
	s := data.Sample{ID: "x"}
	for t := range 200 {
		s.Values = append(s.Values, float32(t)*0.37, -1.25e-3*float32(t))
		s.Positions = append(s.Positions, float32(t%3), 12.5+float32(t)*0.731)
	}
	body := []byte(requestBody([]data.Sample{s}, nil, nil))
	lim := DefaultLimits()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRequest(body, epPredict, shape{2, 2}, lim); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal200Tokens(b *testing.B) {
	s := data.Sample{ID: "x"}
	for t := range 200 {
		s.Values = append(s.Values, float32(t)*0.37, -1.25e-3*float32(t))
		s.Positions = append(s.Positions, float32(t%3), 12.5+float32(t)*0.731)
	}
	body := []byte(requestBody([]data.Sample{s}, nil, nil))
	type tok struct {
		Values   []float32 `json:"values"`
		Position []float32 `json:"position"`
	}
	type smp struct {
		ID     string `json:"id"`
		Tokens []tok  `json:"tokens"`
	}
	var req struct {
		Samples []smp `json:"samples"`
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}
