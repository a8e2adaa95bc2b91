// Package jsondiff names the fields in which two values of one struct type
// differ, by their JSON names: what a refused resume says changed.
package jsondiff

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Fields lists "prefix+name a → b" for each top-level JSON field whose
// value differs between a and b (a nested object printed whole), in the
// order of b's sorted field names, then a's fields that b lacks.
func Fields(prefix string, a, b any) []string {
	ma, mb := object(a), object(b)
	keys := slices.Sorted(maps.Keys(mb))
	for _, k := range slices.Sorted(maps.Keys(ma)) {
		if _, ok := mb[k]; !ok {
			keys = append(keys, k)
		}
	}
	var diffs []string
	for _, k := range keys {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			diffs = append(diffs, fmt.Sprintf("%s%s %s → %s", prefix, k, show(ma[k]), show(mb[k])))
		}
	}
	return diffs
}

// object is v's JSON object as a map (empty when v is not one).
func object(v any) map[string]any {
	var m map[string]any
	if j, err := json.Marshal(v); err == nil {
		json.Unmarshal(j, &m)
	}
	return m
}

// show prints a field's value: scalars as fmt does, objects and arrays as
// JSON, a missing field as "(none)".
func show(v any) string {
	switch v.(type) {
	case nil:
		return "(none)"
	case map[string]any, []any:
		j, _ := json.Marshal(v)
		return string(j)
	}
	return fmt.Sprint(v)
}
