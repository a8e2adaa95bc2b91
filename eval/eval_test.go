package eval

import (
	"math"
	"testing"

	"romae/model"
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

// A classifier's reported loss is the plain cross-entropy whatever the
// training loss's form: with label smoothing or class weights those go to
// Objective (what selection minimises), and Loss is what evaluating
// without them gives, equal to −log p(label) averaged from Predict's
// probabilities.
func TestEvaluateLossIsPlainCrossEntropy(t *testing.T) {
	c := model.DefaultConfig()
	c.Encoder = model.Size{DModel: 16, Heads: 2, Depth: 1, FFN: 32}
	c.Values, c.PosDims, c.Task, c.Outputs = 2, 1, model.TaskClassify, 2
	m, err := model.New[float32](c, 3)
	if err != nil {
		t.Fatal(err)
	}
	ds := smoothSeries(20, 10, 1)
	ds.Classes = []string{"a", "b"}
	for i := range ds.Samples {
		ds.Samples[i].Label = i % 2
	}
	ws := m.NewWorkspace()
	plain, err := Evaluate(m, ws, ds, Options{BatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	probs, err := Predict(m, ws, ds, 8)
	if err != nil {
		t.Fatal(err)
	}
	var nll float64
	for i, p := range probs {
		nll -= math.Log(p[ds.Samples[i].Label])
	}
	nll /= float64(len(probs))
	if math.Abs(plain.Loss-nll) > 1e-6 || plain.Objective != 0 {
		t.Fatalf("plain: loss %v objective %v, want %v and 0", plain.Loss, plain.Objective, nll)
	}
	for _, lo := range []model.LossOptions{{LabelSmoothing: 0.1}, {ClassWeights: []float64{0.2, 1.8}}} {
		met, err := Evaluate(m, ws, ds, Options{BatchSize: 8, Loss: lo})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(met.Loss-plain.Loss) > 1e-9 || met.Objective == 0 || math.Abs(met.Objective-met.Loss) < 1e-6 {
			t.Errorf("%+v: loss %v objective %v, want loss %v and another objective", lo, met.Loss, met.Objective, plain.Loss)
		}
	}
}
