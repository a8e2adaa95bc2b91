package report

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestChooseScale(t *testing.T) {
	spike := []float64{40, 9, 3}
	for i := 0; i < 47; i++ {
		spike = append(spike, 1.2-0.01*float64(i))
	}
	flat := []float64{-1, 0.5, 1, 0.8, -0.2, 0.3, 0.1, 0.4, 0.2, 0.6, 0.7}
	earlyHigh := append([]float64{9}, flat...) // 12 points: the first tenth is one point
	for _, tc := range []struct {
		name string
		ys   [][]float64
		want Scale
	}{
		{"a positive loss spanning decades: log", [][]float64{spike}, Scale{Log: true, Lo: spike[49], Hi: 40}},
		{"values of both signs: linear, all shown", [][]float64{flat}, Scale{Lo: -1, Hi: 1}},
		{"a first-step spike over signed values: clipped", [][]float64{earlyHigh}, Scale{Lo: -1, Hi: 1 + 0.05*2, Clipped: true}},
		{"two series: the range of both", [][]float64{{1, 2}, {3, 4}}, Scale{Lo: 1, Hi: 4}},
		{"NaN ignored, constant widened", [][]float64{{2, math.NaN(), 2}}, Scale{Lo: 1.5, Hi: 2.5}},
		{"nothing finite", [][]float64{{math.Inf(1)}}, Scale{Lo: 0, Hi: 1}},
	} {
		got := ChooseScale(tc.ys...)
		if got.Log != tc.want.Log || got.Clipped != tc.want.Clipped || math.Abs(got.Lo-tc.want.Lo) > 1e-12 || math.Abs(got.Hi-tc.want.Hi) > 1e-12 {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// A data chart shows every value on a linear axis: no log, no clipping.
func TestDataChartShowsEveryValue(t *testing.T) {
	ys := []float64{9, 1, 0.5, 0.4, 0.3, -0.2, 0.1, 0.2, 0.3, 0.4, 0.5}
	if sc := ChooseScale(ys); !sc.Clipped {
		t.Fatalf("training-curve scale of %v: %+v, want clipped", ys, sc)
	}
	if sc := linearScale([][]float64{ys}); sc.Log || sc.Clipped || sc.Lo != -0.2 || sc.Hi != 9 {
		t.Errorf("data scale of %v: %+v, want linear over [-0.2, 9]", ys, sc)
	}
	var b strings.Builder
	p := Page{Sections: []Section{{Blocks: []Block{Chart{Data: true, Series: []Series{{X: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Y: ys, Points: true}}}}}}}
	p.WriteHTML(&b)
	if strings.Contains(b.String(), "drawn at the top") || strings.Contains(b.String(), "log scale") {
		t.Error("a data chart was clipped or made logarithmic")
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{0.9638, 0.9663, "0.964 0.9645 0.965 0.9655 0.966"},
		{3, 3, "3"},
	} {
		ts := linearTicks(tc.lo, tc.hi)
		var labels []string
		for _, v := range ts {
			labels = append(labels, tickLabel(v, ts))
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("ticks of [%v, %v]: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := logTicks(0.01, 40); len(got) != 4 || got[0] != 0.01 || got[3] != 10 {
		t.Errorf("log ticks of [0.01, 40]: %v, want 0.01 0.1 1 10", got)
	}
}

// The page is self-contained (no address outside it) and escapes what it
// is given.
func TestPageIsSelfContainedAndEscaped(t *testing.T) {
	p := Page{Title: `run <script>alert(1)</script>`, Sections: []Section{
		{Title: "curves", Blocks: []Block{Chart{Title: "loss & <b>", XLabel: "step", YLabel: "loss",
			Series: []Series{{Name: `"x"`, X: []float64{1, 2, 3}, Y: []float64{3, 2, 1}}}}}},
		{Title: "data", Blocks: []Block{Table{Header: []string{"a", "b"}, Rows: [][]string{{"<i>", "1.5"}}},
			Confusion{Classes: []string{"a", "b"}, Counts: [][]int{{3, 1}, {0, 4}}}, Image{Title: "png", PNG: []byte{0x89, 'P', 'N', 'G'}}}},
		{Title: "run 1", Collapsed: true, Blocks: []Block{Text("folded")}},
	}}
	var b strings.Builder
	if err := p.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script>alert", "<b>", "<i>", "http://", "https://", `src="//`} {
		if strings.Contains(out, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "<svg class=\"chart\"", "<polyline", "data:image/png;base64,", "<details", `<td class="num">1.5</td>`} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func ExamplePage_WriteHTML() {
	p := Page{Title: "a run", Sections: []Section{{Title: "Training curves", Blocks: []Block{
		Chart{Title: "Loss", XLabel: "step", YLabel: "loss", Series: []Series{{Name: "training", X: []float64{1, 2, 3}, Y: []float64{2.3, 1.1, 0.7}}}},
	}}}}
	if err := p.WriteHTML(os.Stdout); err != nil {
		panic(err)
	}
}
