package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"romae/experiments"
)

func init() {
	commands["experiment"] = command{"reproduce a paper experiment (romae experiment list)", cmdExperiment}
}

func cmdExperiment(ctx context.Context, args []string) error {
	fs := newFlagSet("experiment", "experiment NAME [--budget tiny|quick|paper] [--seeds N] [--out DIR] [--data FILE]   (NAME list: all experiments)")
	budget := fs.String("budget", experiments.Quick, "tiny (seconds, wiring check), quick (about 10 minutes on 2 cores) or paper (the paper's recipe)")
	seeds := fs.Int("seeds", 0, "seeds to average over (0: the budget's default)")
	out := fs.String("out", "results", "results go to OUT/NAME/: results.json, results.md, figures, runs/")
	dataPath := fs.String("data", "", "input file for experiments that read one (uea: NAME_TRAIN.ts)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := fs.Parse(args); err != nil {
			return err // -h: main prints the usage
		}
		return fmt.Errorf("missing experiment name (romae experiment list names them)")
	}
	name := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if name == "list" {
		for _, n := range experiments.Names() {
			fmt.Printf("%-16s %s\n", n, experiments.Summary(n))
		}
		return nil
	}
	res, err := experiments.Run(ctx, name, experiments.Options{Budget: *budget, Seeds: *seeds, Out: *out, Log: os.Stderr, Data: *dataPath})
	if err != nil {
		return err
	}
	fmt.Print(res.Markdown())
	return nil
}
