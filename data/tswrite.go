package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteTS writes ds as a UEA/UCR .ts file that LoadTS reads back to the same
// samples: one case per sample, one dimension per value slot (C), one step
// per token. It needs one position axis (D = 1, the time); when every
// sample's positions are its step indices 0, 1, 2, … the file holds plain
// values, otherwise "(t,v)" pairs under @timeStamps true. Labels go out as
// @classLabel (every sample labelled) and per-sample targets of width 1 as
// @targetLabel. Class names must be single words without ':' or ','. Sample
// IDs are not written: LoadTS numbers cases from 0.
func WriteTS(w io.Writer, ds *Dataset) error {
	if err := ds.Validate(); err != nil {
		return err
	}
	if ds.D != 1 {
		return fmt.Errorf("write .ts: %d position axes, the format has one (time)", ds.D)
	}
	if len(ds.Samples) == 0 {
		return errors.New("write .ts: no samples")
	}
	labelled := len(ds.Classes) > 0
	target := ds.TargetDim == 1 && !ds.TargetPerToken
	if ds.TargetDim > 0 && !target {
		return fmt.Errorf("write .ts: targets of width %d (per token %v); the format holds one number per case", ds.TargetDim, ds.TargetPerToken)
	}
	if labelled && target {
		return errors.New("write .ts: both class labels and targets; the format holds one")
	}
	for _, c := range ds.Classes {
		if c == "" || strings.ContainsAny(c, " \t\r\n:,#@") {
			return fmt.Errorf("write .ts: class name %q: want one word without ':', ',', '#' or '@'", c)
		}
	}
	stamped, equal := false, true
	for i := range ds.Samples {
		s := &ds.Samples[i]
		if labelled && s.Label < 0 {
			return fmt.Errorf("write .ts: sample %d (%s) has no label", i, s.ID)
		}
		for t, p := range s.Positions {
			if p != float32(t) {
				stamped = true
			}
			if t > 0 && p <= s.Positions[t-1] {
				return fmt.Errorf("write .ts: sample %d (%s): position %d (%v) not after %v; the format needs increasing times", i, s.ID, t, p, s.Positions[t-1])
			}
		}
		equal = equal && len(s.Positions) == len(ds.Samples[0].Positions)
	}

	bw := bufio.NewWriter(w)
	name := ds.Name
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		name = "romae"
	}
	fmt.Fprintf(bw, "@problemName %s\n@timeStamps %v\n@missing false\n@univariate %v\n", name, stamped, ds.C == 1)
	if ds.C > 1 {
		fmt.Fprintf(bw, "@dimensions %d\n", ds.C)
	}
	fmt.Fprintf(bw, "@equalLength %v\n", equal)
	if equal && !stamped {
		fmt.Fprintf(bw, "@seriesLength %d\n", len(ds.Samples[0].Positions))
	}
	if labelled {
		fmt.Fprintf(bw, "@classLabel true %s\n", strings.Join(ds.Classes, " "))
	} else {
		fmt.Fprintf(bw, "@classLabel false\n")
	}
	if target {
		fmt.Fprintf(bw, "@targetLabel true\n")
	}
	fmt.Fprintf(bw, "@data\n")
	num := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	var line []byte
	for i := range ds.Samples {
		s := &ds.Samples[i]
		line = line[:0]
		for c := range ds.C {
			if c > 0 {
				line = append(line, ':')
			}
			for t, p := range s.Positions {
				if t > 0 {
					line = append(line, ',')
				}
				v := num(s.Values[t*ds.C+c])
				if stamped {
					line = append(line, '(')
					line = append(line, num(p)...)
					line = append(line, ',')
					line = append(line, v...)
					line = append(line, ')')
				} else {
					line = append(line, v...)
				}
			}
		}
		switch {
		case labelled:
			line = append(line, ':')
			line = append(line, ds.Classes[s.Label]...)
		case target:
			line = append(line, ':')
			line = append(line, num(s.Target[0])...)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
