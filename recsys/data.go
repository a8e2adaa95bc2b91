package recsys

import (
	"fmt"
	"os"
	"path/filepath"

	"romae/events"
)

// Source says where the events are and how to read them. Zero fields take
// the events package's defaults.
type Source struct {
	Events string `json:"events"`          // events CSV, or a directory holding ratings.csv or events.csv
	Items  string `json:"items,omitempty"` // item features CSV ("": movies.csv or items.csv beside the events, if present; "-": none)
	// Event columns ("": the first usual spelling present, see events.Options).
	User           string   `json:"user,omitempty"`
	Item           string   `json:"item,omitempty"`
	Time           string   `json:"time,omitempty"`
	Label          string   `json:"label,omitempty"`
	Rating         string   `json:"rating,omitempty"`
	LabelThreshold float64  `json:"label_threshold,omitempty"`
	Categorical    []string `json:"categorical,omitempty"`
	// Item features: id column, categorical column and separator.
	ItemID      string `json:"item_id,omitempty"`
	ItemFeature string `json:"item_feature,omitempty"`
	ItemSep     string `json:"item_sep,omitempty"`
}

// Resolve turns a directory into its events and item files: DIR/ratings.csv
// or DIR/events.csv, and DIR/movies.csv or DIR/items.csv when Items is empty.
func (s Source) Resolve() (Source, error) {
	fi, err := os.Stat(s.Events)
	if err != nil {
		return s, err
	}
	dir := filepath.Dir(s.Events)
	if fi.IsDir() {
		dir = s.Events
		s.Events = ""
		for _, name := range []string{"ratings.csv", "events.csv"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				s.Events = filepath.Join(dir, name)
				break
			}
		}
		if s.Events == "" {
			return s, fmt.Errorf("%s: no ratings.csv or events.csv in the directory", dir)
		}
	}
	switch s.Items {
	case "-":
		s.Items = ""
	case "":
		for _, name := range []string{"movies.csv", "items.csv"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				s.Items = filepath.Join(dir, name)
				break
			}
		}
	}
	return s, nil
}

func (s Source) eventOptions(v *events.Vocab) events.Options {
	return events.Options{User: s.User, Item: s.Item, Time: s.Time, Label: s.Label, Rating: s.Rating,
		LabelThreshold: s.LabelThreshold, Categorical: s.Categorical, Vocab: v}
}

func (s Source) itemOptions(v *events.Index) events.ItemOptions {
	return events.ItemOptions{Item: s.ItemID, Column: s.ItemFeature, Sep: s.ItemSep, Values: v}
}

// DataSpec is how a model's data was read — the source, the split, the
// vocabularies and the item categories — stored in every checkpoint so
// that evaluation and scoring read new files exactly alike.
type DataSpec struct {
	Source   Source           `json:"source"`
	Split    events.SplitRule `json:"split"`
	Vocab    *events.Vocab    `json:"vocab"`
	ItemCats *events.Index    `json:"item_cats,omitempty"`
	ItemOf   [][]int32        `json:"item_of,omitempty"` // item index → category indices
}

// Prepare reads a source for training: vocabularies from the file, the
// split by rule.
func Prepare(src Source, rule events.SplitRule) (*Data, *DataSpec, error) {
	src, err := src.Resolve()
	if err != nil {
		return nil, nil, err
	}
	l, err := events.Load(src.Events, src.eventOptions(nil))
	if err != nil {
		return nil, nil, err
	}
	d := &Data{Log: l}
	spec := &DataSpec{Source: src, Split: rule, Vocab: l.Vocab}
	if src.Items != "" {
		if d.Items, err = events.LoadItemFeatures(src.Items, l.Vocab.Items, src.itemOptions(nil)); err != nil {
			return nil, nil, err
		}
		spec.ItemCats, spec.ItemOf = d.Items.Values, d.Items.Of
	}
	if d.Split, err = rule.Apply(l); err != nil {
		return nil, nil, err
	}
	return d, spec, nil
}

// Read loads an events file as the spec's model was trained: the same
// columns, its vocabularies (unknown items map to 0), its item categories
// and its split rule.
func (s *DataSpec) Read(path string) (*Data, error) {
	src := s.Source
	src.Events, src.Items = path, "-"
	src, err := src.Resolve()
	if err != nil {
		return nil, err
	}
	l, err := events.Load(src.Events, src.eventOptions(s.Vocab))
	if err != nil {
		return nil, err
	}
	d := &Data{Log: l}
	if s.ItemCats != nil {
		d.Items = &events.ItemFeatures{Values: s.ItemCats, Of: s.ItemOf}
	}
	if d.Split, err = s.Split.Apply(l); err != nil {
		return nil, err
	}
	return d, nil
}

// Check validates a spec read from a checkpoint.
func (s *DataSpec) Check() error {
	if s.Vocab == nil {
		return fmt.Errorf("data spec has no vocabulary")
	}
	if err := s.Vocab.Items.Check(); err != nil {
		return err
	}
	for _, ix := range s.Vocab.EventCats {
		if err := ix.Check(); err != nil {
			return err
		}
	}
	if s.ItemCats != nil {
		if err := s.ItemCats.Check(); err != nil {
			return err
		}
		if len(s.ItemOf) != s.Vocab.Items.Len() {
			return fmt.Errorf("data spec: item categories for %d items, vocabulary has %d", len(s.ItemOf), s.Vocab.Items.Len())
		}
	}
	return nil
}

// ModelConfig fills cfg's vocabulary sizes from the spec.
func (s *DataSpec) ModelConfig(cfg Config) Config {
	cfg.Items, cfg.ItemCats, cfg.EventCats = s.Vocab.Items.Len(), 0, nil
	if s.ItemCats != nil {
		cfg.ItemCats = s.ItemCats.Len()
	}
	for _, ix := range s.Vocab.EventCats {
		cfg.EventCats = append(cfg.EventCats, ix.Len())
	}
	return cfg
}
