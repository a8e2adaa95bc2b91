package model

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"romae/ckpt"
)

// An ensemble's output is the mean of its members' outputs, survives a
// save and load bit for bit (with members that pool differently too:
// model.pool mixed), and refuses training and mismatched members.
func TestEnsemble(t *testing.T) {
	for _, task := range []string{TaskClassify, TaskRegress} {
		for _, mixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mixed=%v", task, mixed), func(t *testing.T) { testEnsemble(t, task, mixed) })
		}
	}
	pre, _ := New[float32](smallConfig(TaskPretrain, 2), 1)
	if _, err := NewEnsemble([]*Model[float32]{pre, pre}); err == nil {
		t.Error("pre-training models accepted as members")
	}
}

func testEnsemble(t *testing.T, task string, mixed bool) {
	cfg := smallConfig(task, 2)
	var members []*Model[float32]
	for seed := range uint64(3) {
		c := cfg
		if mixed && seed == 1 {
			c.Pool = PoolMeanMax
		}
		m, err := New[float32](c, seed+1)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	bt := testBatch(4, 6, cfg.Values, 2, false, 5)
	if task == TaskRegress {
		bt.Labels, bt.TargetDim, bt.Targets = nil, cfg.Outputs, make([]float32, 4*cfg.Outputs)
	}
	want := make([]float64, 4*cfg.Outputs)
	for _, m := range members {
		ws := m.NewWorkspace()
		if _, err := m.ForwardTask(ws, bt, LossOptions{}, false, nil); err != nil {
			t.Fatal(err)
		}
		for i, v := range ws.Output() {
			want[i] += float64(v) / 3
		}
	}
	e, err := NewEnsemble(members)
	if err != nil {
		t.Fatal(err)
	}
	if e.Members() != 3 {
		t.Fatalf("Members() = %d", e.Members())
	}
	out := func(m *Model[float32]) []float32 {
		ws := m.NewWorkspace()
		if _, err := m.ForwardTask(ws, bt, LossOptions{}, false, nil); err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), ws.Output()...)
	}
	got := out(e)
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
			t.Fatalf("output %d: %v, mean of members %v", i, got[i], want[i])
		}
	}
	path := t.TempDir() + "/e.safetensors"
	if err := e.Save(path, map[string]string{"note": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	back, ck, err := Load[float32](path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Members() != 3 || ck.Meta["note"] != "x" {
		t.Fatalf("loaded %d members, meta %v", back.Members(), ck.Meta)
	}
	if wantPools := map[bool]string{true: cfg.Pool + ",meanmax," + cfg.Pool}[mixed]; ck.Meta[metaPools] != wantPools || back.others[0].Cfg.Pool != members[1].Cfg.Pool {
		t.Fatalf("member pools %q in the metadata, member 1 loaded with %s; want %q, %s", ck.Meta[metaPools], back.others[0].Cfg.Pool, wantPools, members[1].Cfg.Pool)
	}
	for i, v := range out(back) {
		if v != got[i] {
			t.Fatalf("after save and load, output %d: %v, was %v", i, v, got[i])
		}
	}
	if _, err := e.ForwardTask(e.NewWorkspace(), bt, LossOptions{}, true, nil); err == nil || !strings.Contains(err.Error(), "inference") {
		t.Errorf("training an ensemble: %v", err)
	}
	other := cfg
	other.Encoder.Depth = 1
	odd, _ := New[float32](other, 9)
	if _, err := NewEnsemble([]*Model[float32]{members[0], odd}); err == nil {
		t.Error("members of different configurations accepted")
	}
	if task == TaskRegress {
		tc := cfg
		tc.Pool = PoolToken
		tok, err := New[float32](tc, 9)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewEnsemble([]*Model[float32]{members[0], tok}); err == nil || !strings.Contains(err.Error(), "per-token") {
			t.Errorf("a per-token member with a per-series one: %v", err)
		}
	}
}

// A checkpoint whose member count is out of range, or that lacks a
// member's tensors, is refused with a message naming the problem.
func TestEnsembleCheckpointRefusals(t *testing.T) {
	cfg := smallConfig(TaskClassify, 2)
	a, _ := New[float32](cfg, 1)
	b, _ := New[float32](cfg, 2)
	e, err := NewEnsemble([]*Model[float32]{a, b})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := dir + "/e.safetensors"
	if err := e.Save(good, nil, nil); err != nil {
		t.Fatal(err)
	}
	f, err := ckpt.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ReadAll(); err != nil {
		t.Fatal(err)
	}
	var tensors []*ckpt.Tensor
	for _, name := range f.Order {
		tensors = append(tensors, f.Tensors[name])
	}
	for _, c := range []struct {
		name, count, drop, want string
	}{
		{"count not a number", "two", "", "member count"},
		{"count too large", "65", "", "member count"},
		{"count larger than the file", "3", "", "ensemble.member2."},
		{"member tensor missing", "2", "ensemble.member1.projection.weight", "ensemble.member1.projection.weight"},
		{"pools for another member count", "2", "", metaPools},
		{"pools that do not start with the configuration's", "2", "", metaPools},
		{"a member pool that is none", "2", "", "ensemble member 1"},
	} {
		meta := map[string]string{}
		for k, v := range f.Metadata {
			meta[k] = v
		}
		meta[metaEnsemble] = c.count
		switch c.name {
		case "pools for another member count":
			meta[metaPools] = cfg.Pool + "," + cfg.Pool + ",meanmax"
		case "pools that do not start with the configuration's":
			meta[metaPools] = "meanmax,mean"
		case "a member pool that is none":
			meta[metaPools] = cfg.Pool + ",median"
		}
		var keep []*ckpt.Tensor
		for _, tn := range tensors {
			if tn.Name != c.drop {
				keep = append(keep, tn)
			}
		}
		path := dir + "/bad.safetensors"
		if err := ckpt.WriteFile(path, keep, meta); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load[float32](path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
