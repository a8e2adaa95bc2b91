// Package linelog lets several runs share one log, whole lines at a time.
package linelog

import (
	"bytes"
	"io"
	"sync"
)

// Sink is one writer that several runs' logs share, so that lines of
// models training side by side never interleave within a line.
type Sink struct {
	mu sync.Mutex
	w  io.Writer
}

func NewSink(w io.Writer) *Sink { return &Sink{w: w} }

// Prefixed is a writer onto s that starts every line with prefix; it
// holds a line back until its newline arrives.
func (s *Sink) Prefixed(prefix string) io.Writer { return &prefixWriter{sink: s, prefix: prefix} }

type prefixWriter struct {
	sink    *Sink
	prefix  string
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.partial = append(p.partial, b...)
			break
		}
		line := append(append([]byte(p.prefix), p.partial...), b[:i+1]...)
		p.sink.mu.Lock()
		_, err := p.sink.w.Write(line)
		p.sink.mu.Unlock()
		if err != nil {
			return n - len(b), err
		}
		p.partial, b = p.partial[:0], b[i+1:]
	}
	return n, nil
}
