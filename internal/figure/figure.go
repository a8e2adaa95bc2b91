// Package figure draws the PNG line and scatter plots romae writes for
// training runs and experiments, on gonum/plot.
package figure

import (
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"romae/ckpt"
)

// Series is one named line or point set of a figure.
type Series struct {
	Name   string
	X, Y   []float64
	Points bool      // scatter instead of line
	Errs   []float64 // symmetric error bars, optional
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
}

// Save writes a PNG figure (6×4 inches), atomically (ckpt.WriteFileAtomic):
// an interrupted run never leaves a half-written image behind.
func Save(path, title, xlabel, ylabel string, ss []Series) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xlabel, ylabel
	p.Add(plotter.NewGrid())
	for i, s := range ss {
		xy := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xy[j].X, xy[j].Y = s.X[j], s.Y[j]
		}
		c := palette[i%len(palette)]
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color, sc.GlyphStyle.Radius = c, vg.Points(2)
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
		} else {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color, l.Width = c, vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(s.Name, l)
		}
		if s.Errs != nil {
			ye := make(plotter.Errors, len(s.Errs))
			for j, e := range s.Errs {
				ye[j].Low, ye[j].High = e, e
			}
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xy, plotter.YErrors(ye)})
			if err != nil {
				return err
			}
			eb.Color = c
			p.Add(eb)
		}
	}
	p.Legend.Top = true
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return err
	}
	return ckpt.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}
