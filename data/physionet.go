package data

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// PhysioNetFeatures is the number of physiological variables in the
// PhysioNet 2012 challenge records as HeTVAE (and mTAN before it)
// preprocessed them.
const PhysioNetFeatures = 41

// LoadPhysioNetNPZ reads one split (key "train" or "test") of HeTVAE's
// physionet_compressed.npz, the file behind the paper's PhysioNet
// interpolation result (Table 7), and returns one sample per record with
// one token per observed (time, feature) value: C = 1 value and D = 2
// positions (t/T, feature index 0..40) — the paper's "dimensional index
// trick" layout. Tokens follow the array's time rows in order (HeTVAE's rows
// are sorted by time), features in index order within a row. Sample
// IDs are key-000042 (the record's row in the array); records carry no
// label or target.
//
// The file layout (HeTVAE's utils.get_physionet_data reads data['train'] and
// data['test']) is an array [N, T, 2·41 + 1] per split: along the last axis,
// 41 feature values, then the 41 matching observation masks (1 observed,
// 0 missing), then the time of the row. Records shorter than T are padded
// with rows whose masks are all 0; such rows are skipped whatever their
// time. Values under a 0 mask are ignored (HeTVAE stores 0 there), so they
// may even be NaN.
//
// Time. The records cover the first 48 hours of an ICU stay, with times
// rounded to the minute; the npz comes from mTAN's data pipeline, whose
// collate step scales times to [0, 1] (t/T), but that file is not
// available here to confirm it. The loader therefore divides by the largest
// time of any observed row in the array: a file already in [0, 1] whose
// latest observation is at 1 is unchanged, and a file that kept raw hours
// or minutes becomes the same t/T. This makes T a property of the split
// that is loaded; for raw-time files whose splits end at different times,
// rescale one split to the other's T. Values are used as stored (the
// preprocessing has already normalised each feature).
//
// Errors name the file and key: a missing key or wrong rank, a last axis
// that is not 83, a mask that is neither 0 nor 1, a non-finite value or
// time on an observed row, a negative time, and a record with no observed
// value at all (which would be an empty sample).
func LoadPhysioNetNPZ(path, key string) (*Dataset, error) {
	arrs, err := LoadNPZ(path)
	if err != nil {
		return nil, err
	}
	arr, ok := arrs[key]
	if !ok {
		keys := make([]string, 0, len(arrs))
		for k := range arrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("%s: no array %q (arrays: %s; HeTVAE's file has train and test)", path, key, strings.Join(keys, ", "))
	}
	ds, err := PhysioNetRecords(arr, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, key, err)
	}
	return ds, nil
}

// PhysioNetRecords converts an in-memory [N, T, 83] array in HeTVAE's layout
// (see LoadPhysioNetNPZ) to a dataset named "physionet-"+name whose sample
// IDs are name-000042.
func PhysioNetRecords(arr *Array, name string) (*Dataset, error) {
	const F = PhysioNetFeatures
	const width = 2*F + 1
	if len(arr.Shape) != 3 {
		return nil, fmt.Errorf("shape %v, want [records, times, %d] (41 values, 41 masks, time)", arr.Shape, width)
	}
	N, T, W := arr.Shape[0], arr.Shape[1], arr.Shape[2]
	if W != width {
		return nil, fmt.Errorf("last axis has %d entries, want %d = 41 values + 41 masks + 1 time", W, width)
	}
	if N == 0 || T == 0 {
		return nil, fmt.Errorf("shape %v holds no records", arr.Shape)
	}
	// First pass: check every row, count tokens, find the time scale.
	counts := make([]int, N)
	tmax := 0.0
	for n := 0; n < N; n++ {
		for t := 0; t < T; t++ {
			row := arr.Data[(n*T+t)*W : (n*T+t+1)*W]
			obs := 0
			for f := 0; f < F; f++ {
				switch m := row[F+f]; {
				case m == 1:
					obs++
					if v := row[f]; !isFinite(v) {
						return nil, fmt.Errorf("record %d, time row %d, feature %d: value %v is observed (mask 1) but not finite", n, t, f, v)
					}
				case m != 0:
					return nil, fmt.Errorf("record %d, time row %d, feature %d: mask %v, want 0 or 1", n, t, f, m)
				}
			}
			if obs == 0 {
				continue // padding, or a time with nothing measured
			}
			tm := row[W-1]
			if !isFinite(tm) || tm < 0 {
				return nil, fmt.Errorf("record %d, time row %d: time %v, want a finite value >= 0", n, t, tm)
			}
			tmax = math.Max(tmax, float64(tm))
			counts[n] += obs
		}
		if counts[n] == 0 {
			return nil, fmt.Errorf("record %d has no observed value (every mask is 0)", n)
		}
	}
	scale := 1.0
	if tmax > 0 {
		scale = 1 / tmax
	}
	ds := &Dataset{Name: "physionet-" + name, C: 1, D: 2, Samples: make([]Sample, N)}
	for n := 0; n < N; n++ {
		s := Sample{
			ID:        fmt.Sprintf("%s-%06d", name, n),
			Values:    make([]float32, 0, counts[n]),
			Positions: make([]float32, 0, 2*counts[n]),
			Label:     -1,
		}
		for t := 0; t < T; t++ {
			row := arr.Data[(n*T+t)*W : (n*T+t+1)*W]
			tm := float32(float64(row[W-1]) * scale)
			for f := 0; f < F; f++ {
				if row[F+f] == 1 {
					s.Values = append(s.Values, row[f])
					s.Positions = append(s.Positions, tm, float32(f))
				}
			}
		}
		ds.Samples[n] = s
	}
	return ds, nil
}
