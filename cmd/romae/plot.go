package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"romae/ckpt"
	"romae/eval"
	"romae/report"
	"romae/train"
)

func init() {
	commands["plot"] = command{"draw a run's training curves (metrics.jsonl → curves.png)", cmdPlot}
}

func cmdPlot(_ context.Context, args []string) error {
	fs := newFlagSet("plot", "plot --run DIR")
	run := fs.String("run", "", "run directory with metrics.jsonl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *run == "" {
		return fmt.Errorf("--run is required")
	}
	if isFoldsRun(*run) { // one figure per fold model (each drew its own too)
		for k := 1; ; k++ {
			if _, err := os.Stat(filepath.Join(foldDir(*run, k), train.MetricsFile)); err != nil {
				return nil
			}
			path, err := writeCurves(foldDir(*run, k))
			if err != nil {
				return err
			}
			fmt.Println(path)
		}
	}
	path, err := writeCurves(*run)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// runMetrics is a run's metrics.jsonl as curves: per logged step and per
// epoch (x is the global step in both).
type runMetrics struct {
	stepX, loss, lr, gradNorm []float64
	epochX, trainLoss         []float64
	valX                      []float64
	val                       []eval.Metrics
	epochs                    []int // of val
}

// readMetrics reads run/metrics.jsonl.
func readMetrics(run string) (*runMetrics, error) {
	f, err := os.Open(filepath.Join(run, train.MetricsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &runMetrics{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Step      int           `json:"step"`
			Epoch     int           `json:"epoch"`
			Loss      *float64      `json:"loss"`
			LR        float64       `json:"lr"`
			GradNorm  *float64      `json:"grad_norm"`
			TrainLoss *float64      `json:"train_loss"`
			Val       *eval.Metrics `json:"val"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", f.Name(), line, err)
		}
		x := float64(rec.Step)
		if rec.Loss != nil {
			m.stepX, m.loss, m.lr = append(m.stepX, x), append(m.loss, *rec.Loss), append(m.lr, rec.LR)
			if rec.GradNorm != nil {
				m.gradNorm = append(m.gradNorm, *rec.GradNorm)
			}
		}
		if rec.TrainLoss != nil {
			m.epochX, m.trainLoss = append(m.epochX, x), append(m.trainLoss, *rec.TrainLoss)
		}
		if rec.Val != nil {
			m.valX, m.val, m.epochs = append(m.valX, x), append(m.val, *rec.Val), append(m.epochs, rec.Epoch)
		}
	}
	return m, sc.Err()
}

// classifier reports whether the validation metrics are a classifier's.
func (m *runMetrics) classifier() bool { return len(m.val) > 0 && m.val[0].Confusion != nil }

func (m *runMetrics) valCurve(f func(*eval.Metrics) float64) []float64 {
	ys := make([]float64, len(m.val))
	for i := range m.val {
		ys[i] = f(&m.val[i])
	}
	return ys
}

// writeCurves draws run/metrics.jsonl into run/curves.png: the losses
// (training per logged step, validation per epoch) on the axis
// report.ChooseScale picks — log, or clipped above a first-steps spike —
// and below them the validation accuracy and macro-F1 of a classifier, or
// the learning rate.
func writeCurves(run string) (string, error) {
	m, err := readMetrics(run)
	if err != nil {
		return "", err
	}
	top := plot.New()
	top.Title.Text, top.X.Label.Text, top.Y.Label.Text = "Training curves: "+filepath.Base(run), "step", "loss"
	valLoss := m.valCurve(func(v *eval.Metrics) float64 { return v.Loss })
	sc := report.ChooseScale(m.loss, valLoss)
	if sc.Log {
		top.Y.Scale, top.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		top.Y.Label.Text = "loss (log scale)"
	} else if sc.Clipped {
		top.Y.Label.Text = fmt.Sprintf("loss (clipped at %.3g)", sc.Hi)
	}
	top.Y.Min, top.Y.Max = sc.Lo, sc.Hi
	if err := addLines(top, sc, []curve{{"training loss (logged steps)", m.stepX, m.loss, false}, {"validation loss (epochs)", m.valX, valLoss, true}}); err != nil {
		return "", err
	}
	bottom := plot.New()
	bottom.X.Label.Text = "step"
	if m.classifier() {
		bottom.Y.Label.Text, bottom.Y.Min, bottom.Y.Max = "validation accuracy, macro-F1", 0, 1
		err = addLines(bottom, report.Scale{Lo: 0, Hi: 1}, []curve{
			{"accuracy", m.valX, m.valCurve(func(v *eval.Metrics) float64 { return v.Accuracy }), true},
			{"macro-F1", m.valX, m.valCurve(func(v *eval.Metrics) float64 { return v.MacroF1 }), true}})
	} else {
		bottom.Y.Label.Text = "learning rate"
		err = addLines(bottom, report.ChooseScale(m.lr), []curve{{"learning rate", m.stepX, m.lr, false}})
	}
	if err != nil {
		return "", err
	}
	const w, h = 6 * vg.Inch, 6 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(6)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return "", err
	}
	out := filepath.Join(run, "curves.png")
	return out, ckpt.WriteFileAtomic(out, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

type curve struct {
	name   string
	x, y   []float64
	points bool
}

// addLines adds the curves to p, values outside the scale's range drawn at
// its edge (a clipped spike stays visible at the top).
func addLines(p *plot.Plot, sc report.Scale, cs []curve) error {
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for i, c := range cs {
		if len(c.x) == 0 {
			continue
		}
		xy := make(plotter.XYs, 0, len(c.x))
		for j := range c.x {
			y := c.y[j]
			if sc.Log && !(y > 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: c.x[j], Y: min(max(y, sc.Lo), sc.Hi)})
		}
		col := paletteColor(i)
		if c.points {
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			s.GlyphStyle.Color, s.GlyphStyle.Radius = col, vg.Points(2)
			p.Add(s)
			p.Legend.Add(c.name, s)
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(c.name, l)
	}
	return nil
}

func paletteColor(i int) color.Color {
	var r, g, b uint8
	fmt.Sscanf(report.Palette[i%len(report.Palette)], "#%02x%02x%02x", &r, &g, &b)
	return color.RGBA{r, g, b, 255}
}
