package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"romae/internal/figure"
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
	path, err := writeCurves(*run)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// writeCurves draws training loss per logged step and validation loss per
// epoch from run/metrics.jsonl into run/curves.png.
func writeCurves(run string) (string, error) {
	f, err := os.Open(filepath.Join(run, train.MetricsFile))
	if err != nil {
		return "", err
	}
	defer f.Close()
	trainLoss := figure.Series{Name: "training loss (logged steps)"}
	valLoss := figure.Series{Name: "validation loss (epochs)", Points: true}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Step int      `json:"step"`
			Loss *float64 `json:"loss"`
			Val  *struct {
				Loss float64 `json:"loss"`
			} `json:"val"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return "", fmt.Errorf("%s:%d: %w", f.Name(), line, err)
		}
		if rec.Loss != nil {
			trainLoss.X, trainLoss.Y = append(trainLoss.X, float64(rec.Step)), append(trainLoss.Y, *rec.Loss)
		}
		if rec.Val != nil {
			valLoss.X, valLoss.Y = append(valLoss.X, float64(rec.Step)), append(valLoss.Y, rec.Val.Loss)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	ss := []figure.Series{trainLoss}
	if len(valLoss.X) > 0 {
		ss = append(ss, valLoss)
	}
	out := filepath.Join(run, "curves.png")
	return out, figure.Save(out, "Training curves: "+filepath.Base(run), "step", "loss", ss)
}
