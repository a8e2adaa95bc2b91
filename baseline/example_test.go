package baseline_test

import (
	"fmt"

	"romae/baseline"
	"romae/data"
)

func Example() {
	// Two classes of length-5 series: rising and falling ramps.
	mk := func(labels []int, series ...[]float32) *data.Dataset {
		ds := &data.Dataset{C: 1, D: 1, Classes: []string{"up", "down"}}
		for i, v := range series {
			ds.Samples = append(ds.Samples, data.Sample{
				Values: v, Positions: []float32{0, 1, 2, 3, 4}, Label: labels[i]})
		}
		return ds
	}
	train := mk([]int{0, 0, 1},
		[]float32{0, 1, 2, 3, 4}, []float32{0, 0, 1, 2, 3}, []float32{4, 3, 2, 1, 0})
	test := mk([]int{1, 0}, []float32{4, 4, 3, 1, 0}, []float32{1, 1, 2, 3, 4})

	rows, err := baseline.ClassificationTable(train, test, 0)
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Printf("%-24s %.2f\n", r.Name, r.Accuracy)
	}

	// Interpolation: a channel observed at t = 0 and 2, asked at t = 1 and 5.
	fmt.Println(baseline.Linear([]float32{10, 20}, []float32{0, 2}, 1, 1, []float32{1, 5}))
	// Output:
	// majority                 0.50
	// 1-NN ED                  1.00
	// 1-NN DTW (full window)   1.00
	// [15 20]
}
