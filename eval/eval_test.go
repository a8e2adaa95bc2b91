package eval

import (
	"math"
	"testing"
)

func TestClassificationMetrics(t *testing.T) {
	truth := []int{0, 0, 0, 1, 1, 2, -1}
	pred := []int{0, 0, 1, 1, 2, 2, 0}
	conf := Confusion(truth, pred, 4)
	if conf[0][0] != 2 || conf[0][1] != 1 || conf[1][2] != 1 || conf[2][2] != 1 {
		t.Fatalf("confusion %v", conf)
	}
	if got := Accuracy(conf); math.Abs(got-4.0/6) > 1e-12 {
		t.Errorf("accuracy %v, want 4/6 (the unlabelled sample is ignored)", got)
	}
	// Per-class F1: class 0: 2·2/(4+1+0) = 0.8; class 1: 2/(2+1+1) = 0.5;
	// class 2: 2/(2+0+1) = 2/3; class 3 absent everywhere: not averaged.
	want := (0.8 + 0.5 + 2.0/3) / 3
	if got := MacroF1(conf); math.Abs(got-want) > 1e-12 {
		t.Errorf("macro-F1 %v, want %v", got, want)
	}
}

func TestSoftmaxArgmax(t *testing.T) {
	p := make([]float64, 3)
	Softmax(p, []float32{1000, 1000, -1000}) // no overflow
	if math.Abs(p[0]-0.5) > 1e-12 || p[2] != 0 {
		t.Errorf("softmax %v", p)
	}
	if Argmax([]float32{1, 3, 2}) != 1 {
		t.Error("argmax")
	}
}
