package experiments

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one named line or point set of a figure.
type series struct {
	name   string
	x, y   []float64
	points bool // scatter instead of line
	errs   []float64
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
}

// savePlot writes a PNG figure.
func savePlot(path, title, xlabel, ylabel string, ss []series) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xlabel, ylabel
	p.Add(plotter.NewGrid())
	for i, s := range ss {
		xy := make(plotter.XYs, len(s.x))
		for j := range s.x {
			xy[j].X, xy[j].Y = s.x[j], s.y[j]
		}
		c := palette[i%len(palette)]
		if s.points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color, sc.GlyphStyle.Radius = c, vg.Points(2)
			p.Add(sc)
			p.Legend.Add(s.name, sc)
		} else {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color, l.Width = c, vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(s.name, l)
		}
		if s.errs != nil {
			ye := make(plotter.Errors, len(s.errs))
			for j, e := range s.errs {
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
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
