package data

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"romae/internal/jsondiff"
)

// Spec is the whole recipe for turning a data file into what a model was
// trained on: how the file is read (Source, including the step-dropping
// protocol), how values are scaled (Stats), which class index each label
// name has (Classes), and how regression targets were standardised
// (TargetStats). Every checkpoint that romae writes carries one, so that
// evaluate, predict, embed, interpolate and serving read new files exactly
// as training did: a saved model is the whole recipe for its predictions.
type Spec struct {
	Source  Source   `json:"source"`
	Stats   *Stats   `json:"stats,omitempty"`   // per value slot; nil: values used as read
	Classes []string `json:"classes,omitempty"` // classification: names in head order
	// TargetStats, when set, is the standardisation applied to regression
	// targets for training; predictions are mapped back with it and
	// metrics are reported in the targets' own units.
	TargetStats *Stats `json:"target_stats,omitempty"`
	// Train is the training data file as given to the training command
	// (evaluate --baselines re-reads it); Generated names the generator
	// when the training data was made in memory (experiments).
	Train     string `json:"train,omitempty"`
	Generated string `json:"generated,omitempty"`
}

// MetaSpec is the checkpoint metadata key holding the Spec as JSON.
const MetaSpec = "romae.data"

// Keys of checkpoints written before the Spec existed (romae ≤ stop 9
// training commands); SpecFromMeta still reads them.
const (
	legacySource  = "romae.data_source"
	legacyStats   = "romae.data_stats"
	legacyClasses = "romae.classes"
)

// Meta is the Spec as checkpoint metadata.
func (s *Spec) Meta() map[string]string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return map[string]string{MetaSpec: string(b)}
}

// SpecFromMeta reads the Spec from checkpoint metadata. found is false
// when the checkpoint carries none (older experiment checkpoints, the
// authors' checkpoints); a present but malformed or inconsistent Spec is
// an error naming the key.
func SpecFromMeta(meta map[string]string) (spec *Spec, found bool, err error) {
	spec = &Spec{}
	if s, ok := meta[MetaSpec]; ok {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			return nil, true, fmt.Errorf("metadata %s: %w", MetaSpec, err)
		}
		return spec, true, spec.Check()
	}
	src, ok := meta[legacySource]
	if !ok {
		return nil, false, nil
	}
	if err := json.Unmarshal([]byte(src), &spec.Source); err != nil {
		return nil, true, fmt.Errorf("metadata %s: %w", legacySource, err)
	}
	if s := meta[legacyStats]; s != "" {
		spec.Stats = new(Stats)
		if err := json.Unmarshal([]byte(s), spec.Stats); err != nil {
			return nil, true, fmt.Errorf("metadata %s: %w", legacyStats, err)
		}
	}
	if s := meta[legacyClasses]; s != "" {
		if err := json.Unmarshal([]byte(s), &spec.Classes); err != nil {
			return nil, true, fmt.Errorf("metadata %s: %w", legacyClasses, err)
		}
	}
	return spec, true, spec.Check()
}

// Check validates the Spec on its own: statistics of matching lengths with
// finite means and positive finite deviations, distinct non-empty class names.
func (s *Spec) Check() error {
	for name, st := range map[string]*Stats{"stats": s.Stats, "target_stats": s.TargetStats} {
		if st != nil {
			if err := st.check(len(st.Mean)); err != nil {
				return fmt.Errorf("data spec: %s: %w", name, err)
			}
		}
	}
	seen := map[string]bool{}
	for i, c := range s.Classes {
		if c == "" || seen[c] {
			return fmt.Errorf("data spec: class %d %q is empty or repeated", i, c)
		}
		seen[c] = true
	}
	return nil
}

// CheckModel checks that the Spec fits a model with `values` values per
// token, a classification head of `classes` outputs (0: not a classifier)
// and `targets` regression outputs (0: not a regressor).
func (s *Spec) CheckModel(values, classes, targets int) error {
	if s.Stats != nil && len(s.Stats.Mean) != values {
		return fmt.Errorf("data spec: stats for %d value slots, the model has %d", len(s.Stats.Mean), values)
	}
	if classes > 0 && len(s.Classes) != classes {
		return fmt.Errorf("data spec: %d class names for a classifier with %d outputs", len(s.Classes), classes)
	}
	if classes == 0 && len(s.Classes) > 0 && targets > 0 {
		return fmt.Errorf("data spec: class names for a regressor")
	}
	if s.TargetStats != nil && len(s.TargetStats.Mean) != targets {
		return fmt.Errorf("data spec: target_stats for %d targets, the model predicts %d", len(s.TargetStats.Mean), targets)
	}
	return nil
}

// Read loads path as the Spec says: Source.Load, class names matched to the
// model's by name, values scaled with Stats, targets with TargetStats.
func (s *Spec) Read(path string) (*Dataset, error) {
	ds, err := s.Source.Load(path)
	if err != nil {
		return nil, err
	}
	return ds, s.Prepare(ds, path)
}

// Prepare applies the Spec's class order and scaling to ds, read from path
// (named in errors). It is what Read does after loading, for data that is
// already in memory.
func (s *Spec) Prepare(ds *Dataset, path string) error {
	if len(s.Classes) > 0 {
		if err := MatchClasses(ds, s.Classes); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.Stats != nil {
		if err := s.Stats.Apply(ds); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.TargetStats != nil && ds.TargetDim > 0 {
		if err := s.TargetStats.ApplyTargets(ds); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := ds.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Differences names, as settings, how o reads and scales its file
// otherwise than s: the training file, data.normalize (statistics present
// or not, or other statistics), and each Source option by its JSON name
// ("data.series_patch 4 → 8"). It is what a resumed run says when its
// training set is not the checkpoint's.
func (s *Spec) Differences(o *Spec) []string {
	var diffs []string
	if s.Train != o.Train {
		diffs = append(diffs, fmt.Sprintf("data.train %s → %s", s.Train, o.Train))
	}
	switch {
	case (s.Stats == nil) != (o.Stats == nil):
		diffs = append(diffs, fmt.Sprintf("data.normalize %v → %v", s.Stats != nil, o.Stats != nil))
	case s.Stats != nil && !reflect.DeepEqual(s.Stats, o.Stats):
		diffs = append(diffs, "data.normalize's statistics (another file's values)")
	}
	diffs = append(diffs, jsondiff.Fields("data.", s.Source, o.Source)...)
	return diffs
}
