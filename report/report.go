// Package report renders one self-contained HTML page — inline SVG charts,
// tables, images as data URIs, no network resources — for a training run or
// an experiment's output directory. It knows nothing about models: callers
// fill a Page with blocks and write it.
package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Page is the whole report.
type Page struct {
	Title, Subtitle string
	Sections        []Section
}

// Section is a headed group of blocks; Collapsed ones start folded
// (<details>), for the many runs of an experiment.
type Section struct {
	Title     string
	Collapsed bool
	Blocks    []Block
}

// Block is one thing on the page: a Chart, Table, Confusion, Code, Image,
// Text or Grid.
type Block interface {
	render(b *bytes.Buffer)
}

// Text is a paragraph of plain text.
type Text string

func (t Text) render(b *bytes.Buffer) { fmt.Fprintf(b, "<p>%s</p>\n", html.EscapeString(string(t))) }

// Code is preformatted text (a configuration as JSON) under a title.
type Code struct{ Title, Text string }

func (c Code) render(b *bytes.Buffer) {
	if c.Title != "" {
		fmt.Fprintf(b, "<h3>%s</h3>\n", html.EscapeString(c.Title))
	}
	fmt.Fprintf(b, "<pre>%s</pre>\n", html.EscapeString(c.Text))
}

// Table is a plain table; numbers are right-aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

func (t Table) render(b *bytes.Buffer) {
	b.WriteString("<table>")
	if t.Caption != "" {
		fmt.Fprintf(b, "<caption>%s</caption>", html.EscapeString(t.Caption))
	}
	if strings.Join(t.Header, "") != "" {
		b.WriteString("<tr>")
		for _, h := range t.Header {
			fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
		}
		b.WriteString("</tr>\n")
	}
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range r {
			class := ""
			if _, err := fmt.Sscanf(c, "%g", new(float64)); err == nil {
				class = ` class="num"`
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// Confusion is a confusion matrix, counts[true][predicted], shaded by the
// fraction of each true class.
type Confusion struct {
	Title   string
	Classes []string
	Counts  [][]int
}

func (c Confusion) render(b *bytes.Buffer) {
	fmt.Fprintf(b, "<h3>%s</h3>\n<table class=\"confusion\"><tr><th>true \\ predicted</th>", html.EscapeString(c.Title))
	for _, name := range c.Classes {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(name))
	}
	b.WriteString("</tr>\n")
	for i, row := range c.Counts {
		total := 0
		for _, n := range row {
			total += n
		}
		name := fmt.Sprint(i)
		if i < len(c.Classes) {
			name = c.Classes[i]
		}
		fmt.Fprintf(b, "<tr><th>%s</th>", html.EscapeString(name))
		for j, n := range row {
			f := 0.0
			if total > 0 {
				f = float64(n) / float64(total)
			}
			color := "rgba(31,119,180,%.2f)"
			if i != j {
				color = "rgba(214,39,40,%.2f)"
			}
			fmt.Fprintf(b, "<td class=\"num\" style=\"background:"+color+"\" title=\"%.0f%% of %s\">%d</td>", f*0.8, 100*f, html.EscapeString(name), n)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// Image is a PNG figure, embedded as a data URI.
type Image struct {
	Title string
	PNG   []byte
}

func (im Image) render(b *bytes.Buffer) {
	fmt.Fprintf(b, "<figure><img alt=\"%s\" src=\"data:image/png;base64,%s\"><figcaption>%s</figcaption></figure>\n",
		html.EscapeString(im.Title), base64.StdEncoding.EncodeToString(im.PNG), html.EscapeString(im.Title))
}

// Grid lays blocks out side by side where the page is wide enough.
type Grid []Block

func (g Grid) render(b *bytes.Buffer) {
	b.WriteString("<div class=\"grid\">\n")
	for _, blk := range g {
		b.WriteString("<div>")
		blk.render(b)
		b.WriteString("</div>\n")
	}
	b.WriteString("</div>\n")
}

// WriteHTML writes the page.
func (p *Page) WriteHTML(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>%s</style></head>\n<body>\n<h1>%s</h1>\n",
		html.EscapeString(p.Title), css, html.EscapeString(p.Title))
	if p.Subtitle != "" {
		fmt.Fprintf(&b, "<p class=\"sub\">%s</p>\n", html.EscapeString(p.Subtitle))
	}
	if len(p.Sections) > 1 {
		b.WriteString("<nav>")
		for i, s := range p.Sections {
			if !s.Collapsed {
				fmt.Fprintf(&b, "<a href=\"#s%d\">%s</a> ", i, html.EscapeString(s.Title))
			}
		}
		b.WriteString("</nav>\n")
	}
	for i, s := range p.Sections {
		if s.Collapsed {
			fmt.Fprintf(&b, "<details id=\"s%d\"><summary>%s</summary>\n", i, html.EscapeString(s.Title))
		} else {
			fmt.Fprintf(&b, "<section id=\"s%d\"><h2>%s</h2>\n", i, html.EscapeString(s.Title))
		}
		for _, blk := range s.Blocks {
			blk.render(&b)
		}
		if s.Collapsed {
			b.WriteString("</details>\n")
		} else {
			b.WriteString("</section>\n")
		}
	}
	fmt.Fprintf(&b, "<script>%s</script>\n</body></html>\n", script)
	_, err := w.Write(b.Bytes())
	return err
}

const css = `
body{font:14px/1.45 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1280px;padding:0 16px;color:#222}
h1{font-size:22px;margin-bottom:2px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}h3{font-size:15px;margin:12px 0 6px}
.sub{color:#555;margin-top:0}nav a{margin-right:12px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:4px 0}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:420px;font-size:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:12px}
figure{margin:8px 0}img{max-width:100%}figcaption{color:#555}
svg.chart{width:100%;height:auto;max-width:640px;background:#fff}svg.chart text{font-size:11px;fill:#333}
.readout{color:#555;font-size:12px;min-height:1.2em}details{margin:8px 0}summary{font-weight:600;cursor:pointer}
`

// script shows the x and y under the pointer for each chart (the chart's
// data-x/data-y attributes hold its domain and scale), and marks the page
// ready, which the browser test checks.
const script = `
document.querySelectorAll("svg.chart").forEach(function (svg) {
  var out = svg.parentNode.querySelector(".readout");
  var d = svg.dataset, x0 = +d.x0, x1 = +d.x1, y0 = +d.y0, y1 = +d.y1, log = d.log === "1";
  var px0 = +d.px0, px1 = +d.px1, py0 = +d.py0, py1 = +d.py1;
  svg.addEventListener("mousemove", function (e) {
    var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    var sx = (e.clientX - r.left) * vb.width / r.width, sy = (e.clientY - r.top) * vb.height / r.height;
    if (sx < px0 || sx > px1 || sy < py1 || sy > py0) { out.textContent = ""; return; }
    var x = x0 + (sx - px0) / (px1 - px0) * (x1 - x0);
    var fy = (py0 - sy) / (py0 - py1), y = log ? Math.pow(10, y0 + fy * (y1 - y0)) : y0 + fy * (y1 - y0);
    out.textContent = d.xlabel + " " + x.toPrecision(4) + ", " + d.ylabel + " " + y.toPrecision(4);
  });
  svg.addEventListener("mouseleave", function () { out.textContent = ""; });
});
document.documentElement.dataset.ready = "1";
`

// finite drops NaN and ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
