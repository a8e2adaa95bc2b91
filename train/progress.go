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
	w       io.Writer
	bar     bool
	quiet   bool
	total   int
	start   time.Time
	last    time.Time
	samples int
	drawn   bool
}

func newProgress(w io.Writer, mode string, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
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
	now := time.Now()
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
	eta := time.Duration(float64(p.total-step) * el / float64(max(step, 1)) * float64(time.Second)).Round(time.Second)
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

// done ends a bar line so the next message starts on a fresh line.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
