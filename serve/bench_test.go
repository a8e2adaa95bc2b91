package serve

import (
	"encoding/json"
	"testing"

	"romae/data"
)

// body200 is the bench workload's request: one sample of 200 tokens
// (2 values, 2 position axes).
func body200() []byte {
	s := data.Sample{ID: "x"}
	for t := range 200 {
		s.Values = append(s.Values, float32(t)*0.37, -1.25e-3*float32(t))
		s.Positions = append(s.Positions, float32(t%3), 12.5+float32(t)*0.731)
	}
	return []byte(requestBody([]data.Sample{s}, nil, nil))
}

// BenchmarkDecode200Tokens is the request decoder; BenchmarkUnmarshal
// 200Tokens is encoding/json on the same body, the alternative it was
// measured against (docs/serving.md).
func BenchmarkDecode200Tokens(b *testing.B) {
	body, lim := body200(), DefaultLimits()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRequest(body, epPredict, shape{values: 2, axes: 2}, lim); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal200Tokens(b *testing.B) {
	body := body200()
	var req reference
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}
