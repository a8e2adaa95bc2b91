package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeEvents writes a small events CSV (ratings with a per-user taste
// for one half of the items) and an item features file into dir.
func writeEvents(t *testing.T, dir string) (eventsPath string, users, nEvents int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("userId,movieId,rating,timestamp\n")
	users = 40
	for u := 0; u < users; u++ {
		ts := 1.4e9 + float64(u)*1e6
		for i := 0; i < 12+rng.IntN(20); i++ {
			item := 1 + rng.IntN(30)
			rating := 2.0
			if (item <= 15) == (u%2 == 0) {
				rating = 4.5
			}
			ts += 600 + rng.Float64()*86400
			fmt.Fprintf(&b, "u%d,%d,%.1f,%.0f\n", u, item, rating, ts)
			nEvents++
		}
	}
	eventsPath = filepath.Join(dir, "ratings.csv")
	if err := os.WriteFile(eventsPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var items strings.Builder
	items.WriteString("movieId,title,genres\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&items, "%d,Item %d,%s\n", i, i, []string{"Drama", "Comedy|Drama", "Action"}[i%3])
	}
	if err := os.WriteFile(filepath.Join(dir, "movies.csv"), []byte(items.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return eventsPath, users, nEvents
}

// recsys-train, recsys-evaluate and recsys-score end to end for both
// tasks: evaluate gives the training run's best validation metrics back
// exactly, and score writes one row per event (ranking) or top-K per user.
func TestRecsysCommands(t *testing.T) {
	dir := t.TempDir()
	_, users, nEvents := writeEvents(t, dir)
	small := []string{"--data", dir, "--d-model", "16", "--heads", "2", "--depth", "1", "--ffn", "32", "--history", "10",
		"--epochs", "3", "--batch-size", "16", "--lr", "0.003", "--negatives", "8", "--progress", "none"}
	for _, task := range []string{"ranking", "next"} {
		out := filepath.Join(dir, "run-"+task)
		printed, err := capture(t, cmdRecsysTrain, append(small, "--task", task, "--pos", "siren", "--out", out)...)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Steps int
			Best  map[string]any
		}
		if err := json.Unmarshal([]byte(printed), &res); err != nil || res.Best == nil || res.Steps == 0 {
			t.Fatalf("%s: recsys-train printed %q (%v)", task, printed, err)
		}
		printed, err = capture(t, cmdRecsysEvaluate, "--model", out, "--data", dir, "--split", "val")
		if err != nil {
			t.Fatal(err)
		}
		var met map[string]any
		if err := json.Unmarshal([]byte(printed), &met); err != nil {
			t.Fatalf("%s: recsys-evaluate printed %q: %v", task, printed, err)
		}
		for k, v := range res.Best {
			if met[k] != v {
				t.Errorf("%s: evaluate %s = %v, training's best %v", task, k, met[k], v)
			}
		}
		scores := filepath.Join(dir, task+".csv")
		if _, err := capture(t, cmdRecsysScore, "--model", out, "--data", dir, "--out", scores, "--top", "5"); err != nil {
			t.Fatal(err)
		}
		rows := readCSV(t, scores)
		want, header := nEvents+1, "user,item,time,label,p"
		if task == "next" {
			want, header = users*5+1, "user,rank,item,score"
		}
		if len(rows) != want || strings.Join(rows[0], ",") != header {
			t.Errorf("%s: score wrote %d rows with header %v, want %d and %s", task, len(rows), rows[0], want, header)
		}
	}
}

func TestRecsysCommandErrors(t *testing.T) {
	dir := t.TempDir()
	writeEvents(t, dir)
	cases := []struct {
		run  func(context.Context, []string) error
		args []string
		want string
	}{
		{cmdRecsysTrain, []string{"--task", "ranking"}, "--data is required"},
		{cmdRecsysTrain, []string{"--data", dir, "--pos", "sinusoid"}, `positional variant "sinusoid"`},
		{cmdRecsysTrain, []string{"--data", dir, "--task", "rating"}, `task "rating"`},
		{cmdRecsysTrain, []string{"--data", filepath.Join(dir, "none.csv")}, "none.csv"},
		{cmdRecsysTrain, []string{"--data", dir, "--user", "who"}, `header has no user column "who"`},
		{cmdRecsysEvaluate, []string{"--model", filepath.Join(dir, "missing"), "--data", dir}, "missing"},
		{cmdRecsysEvaluate, []string{"--data", dir}, "--model and --data are required"},
		{cmdRecsysScore, []string{"--model", dir, "--data", dir}, "--out is required"},
	}
	for _, c := range cases {
		if _, err := capture(t, c.run, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}
