package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Series is one line or point set of a chart.
type Series struct {
	Name   string
	X, Y   []float64
	Points bool // markers instead of a line
	Hollow bool // open markers (e.g. held-out values)
	Color  int  // palette index; series sharing a colour share a meaning
}

// Chart is an SVG line/scatter chart. Its y axis is chosen by ChooseScale
// (for training curves) unless Data asks for a plain linear axis over every
// value, or Fixed gives the range (e.g. [0, 1] for accuracy).
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Data                  bool
	Fixed                 *[2]float64
}

// Palette is the colour cycle of charts (and of the PNG curves).
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// Scale is a chart's y axis.
type Scale struct {
	Log     bool    // log10 axis
	Lo, Hi  float64 // the range shown (data units)
	Clipped bool    // values above Hi exist and are drawn at the top
}

// ChooseScale picks the y axis for the given values so that a spike at the
// start of training does not squash the rest: log10 when every value is
// positive and they span more than a factor of 20; otherwise linear, its
// top clipped to the largest value after the first tenth of each series
// when the first tenth would otherwise take more than two thirds of the
// height.
func ChooseScale(series ...[]float64) Scale {
	lo, hi, tail := math.Inf(1), math.Inf(-1), math.Inf(-1)
	positive := true
	for _, ys := range series {
		head := len(ys) / 10
		for i, y := range ys {
			if !finite(y) {
				continue
			}
			lo, hi = min(lo, y), max(hi, y)
			positive = positive && y > 0
			if i >= head {
				tail = max(tail, y)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return Scale{Lo: 0, Hi: 1}
	}
	if positive && hi/lo > 20 {
		return Scale{Log: true, Lo: lo, Hi: hi}
	}
	s := Scale{Lo: lo, Hi: hi}
	if !math.IsInf(tail, -1) && tail > lo && hi-lo > 3*(tail-lo) {
		s.Hi, s.Clipped = tail+0.05*(tail-lo), true
	}
	if s.Hi == s.Lo {
		s.Lo, s.Hi = s.Lo-0.5, s.Hi+0.5
	}
	return s
}

// linearScale is a linear axis over every finite value.
func linearScale(series [][]float64) Scale {
	s := Scale{Lo: math.Inf(1), Hi: math.Inf(-1)}
	for _, ys := range series {
		for _, y := range ys {
			if finite(y) {
				s.Lo, s.Hi = min(s.Lo, y), max(s.Hi, y)
			}
		}
	}
	switch {
	case math.IsInf(s.Lo, 1):
		return Scale{Lo: 0, Hi: 1}
	case s.Hi == s.Lo:
		s.Lo, s.Hi = s.Lo-0.5, s.Hi+0.5
	}
	return s
}

// Chart geometry in SVG user units.
const (
	chartW, chartH     = 640.0, 300.0
	plotX0, plotX1     = 58.0, 628.0
	plotYTop, plotYBot = 44.0, 262.0
	legendY            = 14.0
)

func (c Chart) render(b *bytes.Buffer) {
	var ys [][]float64
	x0, x1 := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		ys = append(ys, s.Y)
		for _, x := range s.X {
			if finite(x) {
				x0, x1 = min(x0, x), max(x1, x)
			}
		}
	}
	if math.IsInf(x0, 1) {
		x0, x1 = 0, 1
	}
	if x1 == x0 {
		x0, x1 = x0-0.5, x1+0.5
	}
	sc := ChooseScale(ys...)
	switch {
	case c.Fixed != nil:
		sc = Scale{Lo: c.Fixed[0], Hi: c.Fixed[1]}
	case c.Data:
		sc = linearScale(ys)
	}
	ty0, ty1 := sc.Lo, sc.Hi
	if sc.Log {
		ty0, ty1 = math.Log10(sc.Lo), math.Log10(sc.Hi)
		if ty1-ty0 < 1e-9 {
			ty0, ty1 = ty0-0.5, ty1+0.5
		}
	}
	px := func(x float64) float64 { return plotX0 + (x-x0)/(x1-x0)*(plotX1-plotX0) }
	py := func(y float64) float64 {
		if sc.Log {
			y = math.Log10(y)
		}
		y = min(max(y, ty0), ty1)
		return plotYBot - (y-ty0)/(ty1-ty0)*(plotYBot-plotYTop)
	}
	logFlag := 0
	if sc.Log {
		logFlag = 1
	}
	fmt.Fprintf(b, "<div class=\"chartbox\"><h3>%s</h3>\n", html.EscapeString(c.Title))
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s" data-x0="%g" data-x1="%g" data-y0="%g" data-y1="%g" data-log="%d" data-px0="%g" data-px1="%g" data-py0="%g" data-py1="%g" data-xlabel="%s" data-ylabel="%s">`,
		chartW, chartH, html.EscapeString(c.Title), x0, x1, ty0, ty1, logFlag, plotX0, plotX1, plotYBot, plotYTop,
		html.EscapeString(c.XLabel), html.EscapeString(c.YLabel))
	b.WriteString("\n")
	// Grid and ticks.
	xt := linearTicks(x0, x1)
	for _, t := range xt {
		x := px(t)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#eee"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`,
			x, x, plotYTop, plotYBot, x, plotYBot+14, tickLabel(t, xt))
	}
	var yt []float64
	if sc.Log {
		yt = logTicks(sc.Lo, sc.Hi)
	} else {
		yt = linearTicks(sc.Lo, sc.Hi)
	}
	for _, t := range yt {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`,
			plotX0, plotX1, y, y, plotX0-4, y+4, tickLabel(t, yt))
	}
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`, plotX0, plotYTop, plotX1-plotX0, plotYBot-plotYTop)
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, (plotX0+plotX1)/2, chartH-8, html.EscapeString(c.XLabel))
	yl := c.YLabel
	if sc.Log {
		yl += " (log scale)"
	}
	fmt.Fprintf(b, `<text transform="translate(14 %g) rotate(-90)" text-anchor="middle">%s</text>`, (plotYTop+plotYBot)/2, html.EscapeString(yl))
	if sc.Clipped {
		fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="end">values above %.4g drawn at the top (first steps' spike)</text>`, plotX1, plotYTop-6, sc.Hi)
	}
	b.WriteString("\n")
	// Data.
	for _, s := range c.Series {
		color := Palette[s.Color%len(Palette)]
		var pts []string
		for i := range s.X {
			if i >= len(s.Y) || !finite(s.X[i]) || !finite(s.Y[i]) || (sc.Log && s.Y[i] <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(s.X[i]), py(s.Y[i])))
		}
		if len(pts) == 0 {
			continue
		}
		name := html.EscapeString(s.Name)
		if !s.Points {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`, color, strings.Join(pts, " "), name)
		} else {
			fill := color
			if s.Hollow {
				fill = "#fff"
			}
			fmt.Fprintf(b, `<g fill="%s" stroke="%s"><title>%s</title>`, fill, color, name)
			for _, p := range pts {
				x, y, _ := strings.Cut(p, ",")
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.6"/>`, x, y)
			}
			b.WriteString("</g>")
		}
		b.WriteString("\n")
	}
	// Legend, one entry per name.
	seen := map[string]bool{}
	lx := plotX0
	for _, s := range c.Series {
		if s.Name == "" || seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		color := Palette[s.Color%len(Palette)]
		if s.Points {
			fill := color
			if s.Hollow {
				fill = "#fff"
			}
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%g" r="3" fill="%s" stroke="%s"/>`, lx+6, legendY, fill, color)
		} else {
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="2"/>`, lx, lx+12, legendY, legendY, color)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%g">%s</text>`, lx+16, legendY+4, html.EscapeString(s.Name))
		lx += 24 + 6.2*float64(len([]rune(s.Name)))
	}
	b.WriteString("</svg><div class=\"readout\"></div></div>\n")
}

// linearTicks are about five round values (1, 2 or 5 × 10^k apart) in [lo, hi].
func linearTicks(lo, hi float64) []float64 {
	if !(hi > lo) || !finite(hi-lo) {
		return []float64{lo}
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var ts []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		ts = append(ts, t)
	}
	return ts
}

// logTicks are the powers of ten in [lo, hi], with 2× and 5× when the range
// spans fewer than two decades.
func logTicks(lo, hi float64) []float64 {
	if !(lo > 0 && hi >= lo) || !finite(hi) {
		return []float64{lo, hi}
	}
	var ts []float64
	mults := []float64{1}
	if hi/lo < 100 {
		mults = []float64{1, 2, 5}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mults {
			if t := m * math.Pow(10, e); t >= lo*(1-1e-9) && t <= hi*(1+1e-9) {
				ts = append(ts, t)
			}
		}
	}
	if len(ts) < 2 {
		ts = slices.Compact([]float64{lo, hi})
	}
	return ts
}

// tickLabel formats tick v with the digits that tell it from its
// neighbours in ticks.
func tickLabel(v float64, ticks []float64) string {
	if math.Abs(v) < 1e-12*max(math.Abs(ticks[0]), math.Abs(ticks[len(ticks)-1]), 1e-300) {
		return "0"
	}
	digits := 3
	for ; digits < 8; digits++ {
		distinct := true
		for i := 1; i < len(ticks); i++ {
			if strconv.FormatFloat(ticks[i], 'g', digits, 64) == strconv.FormatFloat(ticks[i-1], 'g', digits, 64) {
				distinct = false
			}
		}
		if distinct {
			break
		}
	}
	return strconv.FormatFloat(v, 'g', digits, 64)
}
