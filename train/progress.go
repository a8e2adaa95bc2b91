package train

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress shows a live bar (carriage-return redraws) on terminals and
// plain periodic lines in logs, with throughput and ETA.
type progress struct {
	w     io.Writer
	bar   bool
	quiet bool
	total int
	// first is the step this process started at (the checkpoint's step
	// after a resume): the rate, and so the ETA, counts only the steps
	// this process has timed.
	first   int
	now     func() time.Time
	start   time.Time
	last    time.Time
	samples int
	drawn   bool
}

func newProgress(w io.Writer, mode string, total, first int) *progress {
	p := &progress{w: w, total: total, first: first, now: time.Now}
	p.start = p.now()
	switch mode {
	case "bar":
		p.bar = true
	case "none":
		p.quiet = true
	case "auto":
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				p.bar = true
			}
		}
	}
	return p
}

func (p *progress) step(step, epoch, epochs int, loss float64, batch int) {
	p.samples += batch
	if p.quiet {
		return
	}
	now := p.now()
	interval := 10 * time.Second
	if p.bar {
		interval = 200 * time.Millisecond
	}
	if now.Sub(p.last) < interval && step != p.total {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := float64(p.samples) / el
	eta := p.eta(step, el)
	frac := float64(step) / float64(max(p.total, 1))
	if p.bar {
		const width = 24
		n := int(frac * width)
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% epoch %d/%d step %d/%d loss %.4g  %.0f samples/s  ETA %v   ",
			strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, epoch, epochs, step, p.total, loss, rate, eta)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "step %d/%d epoch %d/%d loss %.4g %.0f samples/s ETA %v\n", step, p.total, epoch, epochs, loss, rate, eta)
}

// eta is the time left at step after elapsed seconds of this process: the
// steps left times the mean time of the steps this process ran.
func (p *progress) eta(step int, elapsed float64) time.Duration {
	perStep := elapsed / float64(max(step-p.first, 1))
	return time.Duration(float64(p.total-step) * perStep * float64(time.Second)).Round(time.Second)
}

// done ends a bar line so the next message starts on a fresh line.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// Interrupted is the error Run returns when its context is cancelled (Ctrl-C,
// SIGTERM): the checkpoint to resume from has been written.
type Interrupted struct {
	Checkpoint string // last.safetensors, written before returning
	Step       int    // optimiser steps it holds
	Err        error  // the context's error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted at step %d (%v); checkpoint written to %s", e.Step, e.Err, e.Checkpoint)
}

func (e *Interrupted) Unwrap() error { return e.Err }
