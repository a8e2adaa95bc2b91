package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"romae/data"
	"romae/tensor"
)

// actLen sums the lengths of every float32 buffer of a stack's activations
// that resize sizes: the []float32 fields of stackActs, its residual streams
// and each block's layerActs, found by reflection so that a buffer added to
// resize but not to actFloats fails TestActFloats.
func actLen(a *stackActs[float32]) int64 {
	var n int64
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch {
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Float32:
			n += int64(v.Len())
		case v.Kind() == reflect.Slice && (v.Type().Elem().Kind() == reflect.Slice || v.Type().Elem().Kind() == reflect.Struct):
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case v.Kind() == reflect.Struct && v.Type() == reflect.TypeFor[tensor.BF16Rows]():
			n += (*tensor.BF16Rows)(unsafe.Pointer(v.UnsafeAddr())).Bytes() / 4 // an unexported field: no Interface
		case v.Kind() == reflect.Struct && v.Type() == reflect.TypeFor[layerActs[float32]]():
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		}
	}
	v := reflect.ValueOf(a).Elem()
	for i := range v.NumField() {
		switch v.Type().Field(i).Name {
		case "selX", "selMerged", "selOut", "selDx", "selDMerged", "dAngles", "opBF":
			// grown on first use by [CLS]-only last blocks, SIREN-RoPE and
			// bf16 products (the next product's rounded operand), not by
			// resize: at most B·d each or one product's input in bf16, not
			// counted by the bound
		default:
			walk(v.Field(i))
		}
	}
	return n
}

// TestActFloats holds Config.StepBytes to what a step allocates: after a
// training or evaluation step of the task and pre-training models (with and
// without dropout, drop-path and query-independent decoding) the stacks'
// buffers hold exactly the bound's values.
func TestActFloats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		task  string
		query string
		drop  bool
		train bool
	}{
		{"classify/train", TaskClassify, "", false, true},
		{"classify/train/dropout", TaskClassify, "", true, true},
		{"classify/eval", TaskClassify, "", true, false},
		{"pretrain/train/independent", TaskPretrain, QueryIndependent, false, true},
		{"pretrain/train/all/dropout", TaskPretrain, QueryAll, true, true},
		{"pretrain/eval/independent", TaskPretrain, QueryIndependent, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig(tc.task, 1)
			cfg.QueryAttention = tc.query
			if tc.drop {
				cfg.AttnDropout, cfg.HiddenDropout, cfg.DropPath = 0.1, 0.1, 0.2
			}
			m, err := New[float32](cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			const B, L, ratio = 3, 11, 0.75
			bt := testBatch(B, L, cfg.Values, cfg.PosDims, false, 2)
			ws, rng := m.NewWorkspace(), rand.New(rand.NewPCG(3, 4))
			var got int64
			if tc.task == TaskPretrain {
				mask := data.RandomMask(nil, bt, ratio, rng)
				if _, err := m.ForwardPretrain(ws, bt, mask, tc.train, rng); err != nil {
					t.Fatal(err)
				}
				got = actLen(&ws.enc) + actLen(&ws.dec)
			} else {
				if _, err := m.ForwardTask(ws, bt, LossOptions{}, tc.train, rng); err != nil {
					t.Fatal(err)
				}
				got = actLen(&ws.enc)
			}
			if got == 0 {
				t.Fatal("no activation buffers found: actLen no longer sees the stack's fields")
			}
			if want := cfg.StepBytes(B, L, ratio, tc.train) / 4; got != want {
				t.Errorf("a step allocated %d activation values, StepBytes counts %d", got, want)
			}
		})
	}
}
