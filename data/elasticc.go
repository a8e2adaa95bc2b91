package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ElasticcBands are the LSST passbands in wavelength order; a band's index
// here is its position coordinate in LoadElasticcCSV's datasets.
var ElasticcBands = []string{"u", "g", "r", "i", "z", "Y"}

// ELAsTiCC column names, as in the SNANA photometry tables (PHOT) of the
// ELAsTiCC training set that ATAT reads: object id, time (MJD), band,
// calibrated flux and its 1σ error (both in SNANA's FLUXCAL units).
const (
	ElasticcIDColumn      = "SNID"
	ElasticcTimeColumn    = "MJD"
	ElasticcBandColumn    = "BAND"
	ElasticcFluxColumn    = "FLUXCAL"
	ElasticcFluxErrColumn = "FLUXCALERR"
	// ElasticcClassColumn is the class column of the labels file.
	ElasticcClassColumn = "CLASS"
)

// LoadElasticcCSV reads ELAsTiCC light curves exported to the long CSV layout
// (one observation per row) and returns the paper's Table 4 token layout:
// one token per (band, time) observation carrying C = 2 values (flux, flux
// variance) at D = 2 positions (band index 0..5, time in days since the
// object's first observation) — positions (band, time) as in the paper.
//
// The paper's data is ATAT's HDF5 export, which is not available here; this
// loader assumes the SNANA photometry columns SNID, MJD, BAND, FLUXCAL and
// FLUXCALERR (other columns, e.g. PHOTFLAG, are ignored), one row per
// observation, bands named u g r i z Y (ElasticcBands; anything else is an
// error naming the line). The flux variance is FLUXCALERR², so a negative
// FLUXCALERR is an error. SNANA's FITS tables separate light curves with
// MJD = -777 rows; a CSV export is expected to have dropped them (they
// would be read as observations). Days since the first observation are
// taken in float64 before rounding to float32 (data.TimeMap), so they keep
// the survey's spacing exactly. Values are not normalised (see ComputeStats).
//
// labels is the path of a per-object CSV with columns SNID and CLASS
// (LoadLabelsCSV); the classes are the distinct names sorted (natural
// order) and every object needs exactly one label. An empty labels gives
// an unlabelled dataset (for pre-training). Errors read "file:line: ...".
// ElasticcClassWeights gives the paper's class weights.
func LoadElasticcCSV(path, labels string) (*Dataset, error) {
	if err := checkNonNegativeColumn(path, ElasticcFluxErrColumn); err != nil {
		return nil, err
	}
	ds, err := LoadLongCSV(path, CSVOptions{
		IDColumn:      ElasticcIDColumn,
		TimeColumn:    ElasticcTimeColumn,
		ChannelColumn: ElasticcBandColumn,
		Channels:      ElasticcBands,
		NaN:           NaNError, // the alerts have no missing fluxes: a NaN is a broken file
		ValueColumns:  []string{ElasticcFluxColumn, ElasticcFluxErrColumn},
		ChannelMode:   ChannelAxis,
		Time:          TimeMap{PerSeries: true},
	})
	if err != nil {
		return nil, err
	}
	ds.Name = "elasticc-" + ds.Name
	for i := range ds.Samples {
		s := &ds.Samples[i]
		for j := 1; j < len(s.Values); j += 2 {
			s.Values[j] *= s.Values[j] // FLUXCALERR → variance
			if !isFinite(s.Values[j]) {
				return nil, fmt.Errorf("%s: object %q: squared %s overflows float32", path, s.ID, ElasticcFluxErrColumn)
			}
		}
	}
	if labels != "" {
		lab, err := LoadLabelsCSV(labels, ElasticcIDColumn, ElasticcClassColumn)
		if err != nil {
			return nil, err
		}
		if err := AttachLabels(ds, lab, nil); err != nil {
			return nil, fmt.Errorf("%s and %s: %w", path, labels, err)
		}
	}
	return ds, nil
}

// checkNonNegativeColumn scans path once and reports the first row whose
// column col parses as a negative number, as "file:line: ...". Rows that do
// not parse are left to LoadLongCSV's own checks.
func checkNonNegativeColumn(path, col string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := newCSVReader(f)
	header, err := r.Read()
	if err != nil {
		return nil // LoadLongCSV reports empty or malformed headers
	}
	k := slices.Index(header, col)
	if k < 0 {
		return nil // LoadLongCSV reports the missing column
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil || k >= len(rec) {
			return nil
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rec[k]), 64); err == nil && v < 0 {
			line, _ := r.FieldPos(k)
			return fmt.Errorf("%s:%d: column %q: %v is negative, want an error >= 0", path, line, col, rec[k])
		}
	}
}

// ElasticcClassWeights returns per-class weights for the class-weighted
// cross-entropy the paper trains ELAsTiCC with: sklearn's "balanced" rule
// n / (K · count_k) over the labelled samples of ds, the same rule as
// train.Config.ClassWeights = "balanced". The paper does not say which
// weighting it used; "balanced" is the usual choice (ATAT's). A class with
// no sample gets weight 0 (it never appears in the loss); a dataset with no
// classes or no labelled sample is an error.
func ElasticcClassWeights(ds *Dataset) ([]float64, error) {
	K := len(ds.Classes)
	if K == 0 {
		return nil, fmt.Errorf("dataset %q has no classes", ds.Name)
	}
	counts := make([]int, K)
	n := 0
	for i, s := range ds.Samples {
		if s.Label < 0 {
			continue
		}
		if s.Label >= K {
			return nil, fmt.Errorf("dataset %q: sample %d (id %q) has label %d, only %d classes", ds.Name, i, s.ID, s.Label, K)
		}
		counts[s.Label]++
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("dataset %q has no labelled sample", ds.Name)
	}
	w := make([]float64, K)
	for k, c := range counts {
		if c > 0 {
			w[k] = float64(n) / (float64(K) * float64(c))
		}
	}
	return w, nil
}
