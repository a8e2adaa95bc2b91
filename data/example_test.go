package data_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"

	"romae/data"
)

func ExampleLoadTS() {
	ds, err := data.LoadTS("testdata/missing.ts", data.TSOptions{})
	if err != nil {
		log.Fatal(err)
	}
	s := ds.Samples[0]
	fmt.Println(ds.Name, "C =", ds.C, "D =", ds.D, ds.Classes)
	// Step 1 has a '?' and step 3 a NaN, so drop-step keeps steps 0 and 2.
	fmt.Println(s.Len(ds.C), "tokens at", s.Positions, "values", s.Values, "label", ds.Classes[s.Label])

	// The dimensional index trick keeps every observed value instead.
	ds, err = data.LoadTS("testdata/missing.ts", data.TSOptions{Missing: data.MissingChannelAxis})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("channel-axis: C =", ds.C, "D =", ds.D, "tokens:", ds.Samples[0].Len(ds.C))
	// Output:
	// Missing C = 3 D = 1 [up down]
	// 2 tokens at [0 2] values [1 10 100 3 30 300] label up
	// channel-axis: C = 1 D = 2 tokens: 10
}

func ExampleLoadLongCSV() {
	ds, err := data.LoadLongCSV("testdata/lightcurves.csv", data.CSVOptions{
		IDColumn: "object_id", TimeColumn: "mjd", ChannelColumn: "band",
		ValueColumns: []string{"flux", "flux_err"},
	})
	if err != nil {
		log.Fatal(err)
	}
	labels, err := data.LoadLabelsCSV("testdata/labels.csv", "object_id", "target")
	if err != nil {
		log.Fatal(err)
	}
	if err := data.AttachLabels(ds, labels, nil); err != nil {
		log.Fatal(err)
	}
	for _, s := range ds.Samples {
		// Positions are (band index, time) per token, sorted by time.
		fmt.Println(s.ID, ds.Classes[s.Label], s.Positions)
	}
	// Output:
	// obj1 6 [2 1 0 2 1 10.5 0 10.5]
	// obj2 90 [1 1 0 3]
}

func ExampleDenseSeries() {
	arrays, err := data.LoadNPZ("testdata/series.npz")
	if err != nil {
		log.Fatal(err)
	}
	labels, err := arrays["y"].Ints()
	if err != nil {
		log.Fatal(err)
	}
	ds, err := data.DenseSeries(arrays["x"], labels)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(arrays["x"].Shape, "→", len(ds.Samples), "samples, C =", ds.C)
	fmt.Println("sample 1 steps:", ds.Samples[1].Positions) // step 2 had a NaN
	// Output:
	// [3 4 2] → 3 samples, C = 2
	// sample 1 steps: [0 1 3]
}

func ExampleWriteNPY() {
	var buf bytes.Buffer
	if err := data.WriteNPY(&buf, []int{2, 2}, []float32{1, 2, 3, 4}); err != nil {
		log.Fatal(err)
	}
	a, err := data.ReadNPY(&buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.DType, a.Shape, a.Data)
	// Output: <f4 [2 2] [1 2 3 4]
}

func ExampleCollate() {
	ds := &data.Dataset{C: 1, D: 1, Samples: []data.Sample{
		{Values: []float32{1, 2, 3}, Positions: []float32{0, 1, 2}, Label: -1},
		{Values: []float32{4}, Positions: []float32{0.5}, Label: -1},
	}}
	rng := rand.New(rand.NewPCG(1, 2))
	var b *data.Batch
	var masked []bool
	for range 2 { // a training loop passes its buffers back in
		b = data.Collate(b, ds, []int{0, 1})
		masked = data.RandomMask(masked, b, 0.5, rng)
	}
	fmt.Println("B", b.B, "L", b.L, "values", b.Values, "pad", b.Pad)
	n := 0
	for _, m := range masked[:b.L] {
		if m {
			n++
		}
	}
	fmt.Println("sample 0 masked tokens:", n)
	// Output:
	// B 2 L 3 values [1 2 3 4 0 0] pad [false false false false true true]
	// sample 0 masked tokens: 2
}

func ExamplePatchify() {
	// A 4x4 single-channel image cut into 2x2 patches.
	img := make([]float32, 16)
	for i := range img {
		img[i] = float32(i)
	}
	vals, pos, err := data.Patchify(img, [3]int{1, 4, 4}, 1, [3]int{1, 2, 2}, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("token 1:", vals[4:8], "positions:", pos)
	back, _ := data.Unpatchify(vals, [3]int{1, 4, 4}, 1, [3]int{1, 2, 2})
	fmt.Println("restored:", back[:4])
	// Output:
	// token 1: [2 3 6 7] positions: [0 0 0 1 1 0 1 1]
	// restored: [0 1 2 3]
}

func ExampleSplit() {
	ds, err := data.LoadTS("testdata/missing.ts", data.TSOptions{})
	if err != nil {
		log.Fatal(err)
	}
	parts := data.Split(ds, []float64{2.0 / 3, 1.0 / 3}, rand.New(rand.NewPCG(1, 1)))
	fmt.Println(len(parts[0].Samples), len(parts[1].Samples))
	// Output: 2 1
}

func ExampleComputeStats() {
	ds := &data.Dataset{C: 1, D: 1, Samples: []data.Sample{
		{Values: []float32{1, 3}, Positions: []float32{0, 1}, Label: -1},
	}}
	st := data.ComputeStats(ds)
	if err := st.Apply(ds); err != nil {
		log.Fatal(err)
	}
	js, _ := json.Marshal(st) // what a checkpoint stores
	fmt.Println(string(js), ds.Samples[0].Values)
	// Output: {"mean":[2],"std":[1]} [-1 1]
}
