package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Time origins of Source.TimeOrigin.
const (
	// TimeOriginFile keeps the file's times as they are ("" too).
	TimeOriginFile = "file"
	// TimeOriginSeries starts every series' time axis at 0 at its earliest
	// time stamp, as step indices of a .ts file do and as the paper's
	// light curves count days since the first observation.
	TimeOriginSeries = "series"
)

// TimeMap turns the times a file holds into positions on the time axis:
//
//	position = float32(t − origin) / float32(Unit)
//
// origin is the series' earliest time stamp in the file (rows or steps with
// missing values included) when PerSeries, else 0; a Unit of 0 or 1 leaves
// the scale alone. The subtraction is done in float64 before rounding, so
// times such as Unix seconds (1.7e9, where float32 steps by 128 s) or MJD
// with minutes (60 000.0007, where it steps by 5.6 min) keep their spacing.
// The two steps are the same arithmetic whether a loader applies the whole
// map or Rescale applies the unit to positions already shifted, so both
// give identical positions.
type TimeMap struct {
	PerSeries bool
	Unit      float64
	// Origins, when set, give series (by ID) the origin to use instead of
	// their own earliest time: a file of held-out points of series observed
	// in another file (evaluate --hidden) is placed on the observed series'
	// axes. Series not listed use their own.
	Origins map[string]float64
}

// Identity reports whether m leaves times as read.
func (m TimeMap) Identity() bool { return !m.PerSeries && (m.Unit == 0 || m.Unit == 1) }

// Origin is the origin of the series id whose time stamps are times (in any
// order; NaN-free).
func (m TimeMap) Origin(id string, times ...[]float64) float64 {
	if !m.PerSeries {
		return 0
	}
	if o, ok := m.Origins[id]; ok {
		return o
	}
	o := math.Inf(1)
	for _, ts := range times {
		if len(ts) > 0 {
			o = min(o, slices.Min(ts))
		}
	}
	if math.IsInf(o, 1) {
		return 0
	}
	return o
}

// Position is the position of time t in a series whose origin is origin.
func (m TimeMap) Position(t, origin float64) float32 { return m.scale(float32(t - origin)) }

// scale is the second step of Position: a time already shifted and
// rounded, in units of Unit.
func (m TimeMap) scale(p float32) float32 {
	if m.Unit != 0 && m.Unit != 1 {
		p /= float32(m.Unit)
	}
	return p
}

// TimeMap is the map s describes.
func (s Source) TimeMap() TimeMap {
	return TimeMap{PerSeries: s.TimeOrigin == TimeOriginSeries, Unit: s.TimeUnit, Origins: s.origins}
}

// WithOrigins returns s reading series that ds also holds (by ID) on ds's
// time axes: their origins are ds's, not their own earliest time stamps.
func (s Source) WithOrigins(ds *Dataset) Source {
	if s.TimeOrigin != TimeOriginSeries {
		return s
	}
	s.origins = make(map[string]float64, len(ds.Samples))
	for _, smp := range ds.Samples {
		s.origins[smp.ID] = smp.TimeOrigin
	}
	return s
}

// applyTimeMap maps the time axis of every sample of ds, whose positions are
// the file's times rounded to float32 (array and dataset files; the .ts and
// CSV loaders map their float64 times themselves).
func applyTimeMap(ds *Dataset, m TimeMap) {
	if m.Identity() {
		return
	}
	d, ta := ds.D, ds.TimeAxis
	for i := range ds.Samples {
		s := &ds.Samples[i]
		times := make([]float64, 0, len(s.Positions)/d)
		for t := ta; t < len(s.Positions); t += d {
			times = append(times, float64(s.Positions[t]))
		}
		s.TimeOrigin = m.Origin(s.ID, times)
		for k, t := range times {
			s.Positions[k*d+ta] = m.Position(t, s.TimeOrigin)
		}
	}
}

// Rescale puts the time axis of every sample of an unpatched ds in units
// of unit, by TimeMap.Position's own second step: the training commands
// choose the unit from data already read with per-series origins and apply
// it here instead of reading the file again.
func Rescale(ds *Dataset, unit float64) {
	m := TimeMap{Unit: unit}
	for i := range ds.Samples {
		s := &ds.Samples[i]
		for t := ds.TimeAxis; t < len(s.Positions); t += ds.D {
			s.Positions[t] = m.scale(s.Positions[t])
		}
	}
}

// MedianSpacing is the median gap between consecutive distinct times of one
// channel of a series, over every channel of every sample of ds (channels
// are the tokens sharing the other position axes); 0 when no series has two
// distinct times.
func MedianSpacing(ds *Dataset) float64 {
	var gaps []float64
	d, ta := ds.D, ds.TimeAxis
	for i := range ds.Samples {
		s := &ds.Samples[i]
		byChannel := map[string][]float64{}
		var key []byte // the other axes' coordinates
		for t := 0; t*d < len(s.Positions); t++ {
			key = key[:0]
			for a := range d {
				if a != ta {
					key = binary.LittleEndian.AppendUint32(key, math.Float32bits(s.Positions[t*d+a]))
				}
			}
			byChannel[string(key)] = append(byChannel[string(key)], float64(s.Positions[t*d+ta]))
		}
		for _, ts := range byChannel {
			slices.Sort(ts)
			for k := 1; k < len(ts); k++ {
				if g := ts[k] - ts[k-1]; g > 0 {
					gaps = append(gaps, g)
				}
			}
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// checkTimeMap validates Source.TimeOrigin and Source.TimeUnit.
func checkTimeMap(origin string, unit float64) error {
	switch origin {
	case "", TimeOriginFile, TimeOriginSeries:
	default:
		return fmt.Errorf("data.time_origin %q: want %s (times as read) or %s (each series' time axis starts at 0 at its first time stamp)", origin, TimeOriginFile, TimeOriginSeries)
	}
	if !(unit >= 0) || unit > math.MaxFloat32 || (unit > 0 && float32(unit) == 0) {
		return fmt.Errorf("data.time_unit %v: want a positive float32 number of file time units per position unit (0: as read)", unit)
	}
	return nil
}
