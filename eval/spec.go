package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"romae/data"
	"romae/model"
)

// SpecChoice says how new data is read for a checkpoint: by default with
// the data spec the checkpoint carries. The CLI's --data-spec and --raw
// flags (predict, embed, interpolate, evaluate, serve) fill it.
type SpecChoice struct {
	// File is a JSON data spec (`romae inspect --data-spec` prints one);
	// it wins over the checkpoint's own.
	File string
	// Raw reads data for a checkpoint without a spec with RawSource, no
	// scaling, class names in the data's order.
	Raw       bool
	RawSource data.Source
}

// CheckpointSpec is the data spec that data for the checkpoint ck (read
// from path) must be read with: c.File when given; else the checkpoint's
// own; else, for a checkpoint without one, c.RawSource with c.Raw. The
// authors' checkpoints never carry one and take data as it is in the file
// (their code normalises nothing). A romae checkpoint without a spec is
// refused rather than silently read another way.
func CheckpointSpec(path string, ck *model.Checkpoint, c SpecChoice) (*data.Spec, error) {
	spec, found, err := data.SpecFromMeta(ck.Meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case c.File != "":
		raw, err := os.ReadFile(c.File)
		if err != nil {
			return nil, err
		}
		spec = &data.Spec{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			return nil, fmt.Errorf("%s: JSON data spec: %w", c.File, err)
		}
		return spec, spec.Check()
	case found:
		if c.Raw {
			return nil, fmt.Errorf("%s carries a data spec; --raw applies only to checkpoints without one", path)
		}
		return spec, nil
	case c.Raw || ck.File == nil:
		return &data.Spec{Source: c.RawSource}, nil
	}
	return nil, fmt.Errorf("%s has no data spec (metadata %s: how its training data was read and scaled), so its numbers cannot be reproduced on new files; "+
		"give --data-spec FILE (JSON, as `romae inspect --data-spec` prints) or --raw to read the data unscaled with default options", path, data.MetaSpec)
}
