package data

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"romae/ckpt"
)

// A dataset file stores a Dataset exactly — ragged samples, real positions
// on every axis, labels, targets — as a safetensors file:
//
//	values    F32 [tokens·C]   all samples' values, token-major, concatenated
//	positions F32 [tokens·D]
//	lengths   I64 [N]          tokens per sample
//	labels    I64 [N]          class index, −1 unlabelled (only with classes)
//	targets   F32 [...]        concatenated Target slices (only when TargetDim > 0)
//
// with metadata romae.format = romae-dataset-1, name, c, d, target_dim,
// target_per_token, time_axis, classes (JSON) and ids (JSON). Experiments that generate
// their data save their test sets this way, so `romae evaluate` can be run
// on exactly what the experiment evaluated.
const formatDataset = "romae-dataset-1"

// maxDatasetSlots bounds c, d and target_dim read from a dataset file.
const maxDatasetSlots = 1 << 16

// SaveDataset writes ds to path atomically.
func SaveDataset(path string, ds *Dataset) error {
	if err := ds.Validate(); err != nil {
		return err
	}
	var values, positions, targets []float32
	lengths := make([]byte, 8*len(ds.Samples))
	labels := make([]byte, 8*len(ds.Samples))
	ids := make([]string, len(ds.Samples))
	for i, s := range ds.Samples {
		values = append(values, s.Values...)
		positions = append(positions, s.Positions...)
		targets = append(targets, s.Target...)
		binary.LittleEndian.PutUint64(lengths[8*i:], uint64(s.Len(ds.C)))
		binary.LittleEndian.PutUint64(labels[8*i:], uint64(int64(s.Label)))
		ids[i] = s.ID
	}
	n := len(ds.Samples)
	tensors := []*ckpt.Tensor{
		ckpt.F32Tensor("values", []int{len(values)}, values),
		ckpt.F32Tensor("positions", []int{len(positions)}, positions),
		{Name: "lengths", DType: "I64", Shape: []int{n}, Data: lengths},
	}
	if len(ds.Classes) > 0 {
		tensors = append(tensors, &ckpt.Tensor{Name: "labels", DType: "I64", Shape: []int{n}, Data: labels})
	}
	if ds.TargetDim > 0 {
		tensors = append(tensors, ckpt.F32Tensor("targets", []int{len(targets)}, targets))
	}
	classes, _ := json.Marshal(ds.Classes)
	idj, _ := json.Marshal(ids)
	meta := map[string]string{"romae.format": formatDataset, "name": ds.Name, "c": strconv.Itoa(ds.C), "d": strconv.Itoa(ds.D),
		"target_dim": strconv.Itoa(ds.TargetDim), "target_per_token": strconv.FormatBool(ds.TargetPerToken), "time_axis": strconv.Itoa(ds.TimeAxis),
		"channel_axes": strconv.FormatBool(ds.ChannelAxes), "classes": string(classes), "ids": string(idj)}
	return ckpt.WriteFile(path, tensors, meta)
}

// LoadDataset reads a file written by SaveDataset, checking every count
// against the others before slicing.
func LoadDataset(path string) (*Dataset, error) {
	f, err := ckpt.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...)) }
	if got := f.Metadata["romae.format"]; got != formatDataset {
		return nil, bad("not a romae dataset file (romae.format %q, want %q)", got, formatDataset)
	}
	ds := &Dataset{Name: f.Metadata["name"]}
	for _, field := range []struct {
		key string
		dst *int
		min int
	}{{"c", &ds.C, 1}, {"d", &ds.D, 1}, {"target_dim", &ds.TargetDim, 0}} {
		v, err := strconv.Atoi(f.Metadata[field.key])
		if err != nil || v < field.min || v > maxDatasetSlots {
			return nil, bad("metadata %s = %q: want an integer in [%d, %d]", field.key, f.Metadata[field.key], field.min, maxDatasetSlots)
		}
		*field.dst = v
	}
	if ds.TimeAxis, err = strconv.Atoi(f.Metadata["time_axis"]); err != nil {
		return nil, bad("metadata time_axis: %v", err)
	}
	if ds.TargetPerToken, err = strconv.ParseBool(f.Metadata["target_per_token"]); err != nil {
		return nil, bad("metadata target_per_token: %v", err)
	}
	if v, ok := f.Metadata["channel_axes"]; ok { // absent from files of romae before 2026-11-30
		if ds.ChannelAxes, err = strconv.ParseBool(v); err != nil {
			return nil, bad("metadata channel_axes: %v", err)
		}
	}
	var ids []string
	if err := json.Unmarshal([]byte(f.Metadata["ids"]), &ids); err != nil {
		return nil, bad("metadata ids: %v", err)
	}
	if s := f.Metadata["classes"]; s != "" && s != "null" {
		if err := json.Unmarshal([]byte(s), &ds.Classes); err != nil {
			return nil, bad("metadata classes: %v", err)
		}
	}
	ints := func(name string) ([]int64, error) {
		t, ok := f.Tensors[name]
		if !ok {
			return nil, bad("no tensor %q", name)
		}
		if t.DType != "I64" || len(t.Shape) != 1 || t.Shape[0] != len(ids) {
			return nil, bad("tensor %q: %s %v, want I64 [%d]", name, t.DType, t.Shape, len(ids))
		}
		out := make([]int64, len(ids))
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
		return out, nil
	}
	lengths, err := ints("lengths")
	if err != nil {
		return nil, err
	}
	if t, ok := f.Tensors["values"]; ok {
		maxLen := int64(t.Numel() / ds.C)
		for i, n := range lengths {
			if n < 1 || n > maxLen {
				return nil, bad("sample %d has length %d, outside [1, %d]", i, n, maxLen)
			}
		}
	}
	labels := make([]int64, len(ids))
	if len(ds.Classes) > 0 {
		if labels, err = ints("labels"); err != nil {
			return nil, err
		}
	} else {
		for i := range labels {
			labels[i] = -1
		}
	}
	floats := func(name string, perToken, perSample int) ([]float32, error) {
		v, _, err := f.Float32(name)
		if err != nil {
			return nil, bad("%v", err)
		}
		var want int64
		for _, n := range lengths {
			want += n*int64(perToken) + int64(perSample) // lengths were bounded below
		}
		if want != int64(len(v)) {
			return nil, bad("tensor %q has %d values, the lengths need %d", name, len(v), want)
		}
		return v, nil
	}
	values, err := floats("values", ds.C, 0)
	if err != nil {
		return nil, err
	}
	positions, err := floats("positions", ds.D, 0)
	if err != nil {
		return nil, err
	}
	var targets []float32
	if ds.TargetDim > 0 {
		per, one := 0, ds.TargetDim
		if ds.TargetPerToken {
			per, one = ds.TargetDim, 0
		}
		if targets, err = floats("targets", per, one); err != nil {
			return nil, err
		}
	}
	ds.Samples = make([]Sample, len(ids))
	var vo, po, to int
	for i, n := range lengths {
		s := &ds.Samples[i]
		s.ID, s.Label = ids[i], int(labels[i])
		s.Values, vo = values[vo:vo+int(n)*ds.C:vo+int(n)*ds.C], vo+int(n)*ds.C
		s.Positions, po = positions[po:po+int(n)*ds.D:po+int(n)*ds.D], po+int(n)*ds.D
		if ds.TargetDim > 0 {
			k := ds.TargetDim
			if ds.TargetPerToken {
				k *= int(n)
			}
			s.Target, to = targets[to:to+k:to+k], to+k
		}
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}
