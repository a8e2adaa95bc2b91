package data

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// Source says how to read a data file. Checkpoints keep the Source they
// were trained with, so evaluation and prediction read new files the same
// way without repeating every option.
type Source struct {
	Format string `json:"format" yaml:"format" help:"auto (by extension), ts, csv, npy, npz, or dataset (.safetensors written by romae)"`
	// NaN is the missing-value policy of every format: NaNMissing ("" too),
	// NaNDrop or NaNError.
	NaN string `json:"nan,omitempty" yaml:"nan" help:"missing values (NaN; '?' in .ts; empty CSV value cells; CSV slots without a row), every format: missing (the token holding one is left out), drop (the series holding one is left out) or error"`
	// .ts
	Missing string `json:"missing" yaml:"missing" help:".ts token layout: drop-step (one token per time step holding every dimension, so a missing value drops its step) or channel-axis (one token per observed value, dimension as a 2nd position axis)"`
	// long CSV
	IDColumn      string   `json:"id_column" yaml:"id_column" help:"CSV: object id column"`
	TimeColumn    string   `json:"time_column" yaml:"time_column" help:"CSV: time column"`
	ChannelColumn string   `json:"channel_column" yaml:"channel_column" help:"CSV: channel/band column (empty: 'channel' if present)"`
	ValueColumns  []string `json:"value_columns" yaml:"value_columns" help:"CSV: value columns, comma-separated (e.g. flux,flux_err)"`
	ChannelMode   string   `json:"channel_mode" yaml:"channel_mode" help:"CSV: axis (channel is a position axis) or slot (channels are value slots)"`
	// Channels fixes the channel names' indices; a checkpoint records its
	// training file's, so a new file with a band missing keeps the others'
	// indices and a band the model never saw is refused, not given the
	// index of another.
	Channels      []string `json:"channels,omitempty" yaml:"channels" help:"CSV: channel names in index order, comma-separated (empty: the file's, sorted; training records them in the checkpoint, and files read for it must use no others)"`
	LabelColumn   string   `json:"label_column" yaml:"label_column" help:"CSV: per-object label column"`
	LabelsFile    string   `json:"labels_file" yaml:"labels_file" help:"CSV: separate id,label file"`
	TargetColumns []string `json:"target_columns" yaml:"target_columns" help:"CSV: per-object regression target columns"`
	// npy / npz
	ArrayKey string `json:"array_key" yaml:"array_key" help:"npz: array with the data, [N,T,C] series or [N,H,W(,C)] images (default x)"`
	LabelKey string `json:"label_key" yaml:"label_key" help:"npz: array with integer labels (default y, optional; - : none)"`
	Patch    [2]int `json:"patch" yaml:"patch" help:"npy/npz images: patch height,width (0,0: treat as series)"`
	// time axis
	TimeOrigin string  `json:"time_origin,omitempty" yaml:"time_origin" help:"series: each series' time axis starts at 0 at its first time stamp (in float64, so absolute times such as Unix seconds or MJD keep their spacing); file or empty: times as read"`
	TimeUnit   float64 `json:"time_unit,omitempty" yaml:"time_unit" help:"file time units per position unit on the time axis (0: as read); the default recipe picks the median spacing of the training file's time stamps"`
	// origins: see WithOrigins (not part of a checkpoint's spec).
	origins map[string]float64
	// values
	NormalizeSeries bool `json:"normalize_series,omitempty" yaml:"normalize_series" help:"fine-tuning: standardise each series on its own (per value column, and per channel when channels are a position axis: subtract the series' mean, divide by its std) before the training set's scaling, for series on scales orders of magnitude apart whose shapes, not levels, matter; the model then no longer sees the levels. The default recipe turns it on when fine-tuning from scratch on series whose own stds are over 2 decades apart"`
	// series
	SeriesPatch int `json:"series_patch,omitempty" yaml:"series_patch" help:"series: observations per token along time (0 or 1: one token per observation); a token holds P consecutive observations of one channel and their time offsets"`
	// protocol
	DropFraction float64 `json:"drop_fraction" yaml:"drop_fraction" help:"drop this fraction of each series' time steps at random (the paper's UEA protocol uses 0.3)"`
	DropSeed     uint64  `json:"drop_seed" yaml:"drop_seed" help:"seed of the random step dropping"`
}

// Check validates the options on their own and, for path, those that
// apply to one format only: an option that cannot apply is an error rather
// than silently ignored.
func (s Source) Check(path string) error {
	if err := checkNaNPolicy(s.NaN); err != nil {
		return err
	}
	if err := checkTimeMap(s.TimeOrigin, s.TimeUnit); err != nil {
		return err
	}
	switch {
	case s.Missing != "" && s.Missing != MissingDropStep && s.Missing != MissingChannelAxis:
		return fmt.Errorf("data.missing %q: want %s or %s", s.Missing, MissingDropStep, MissingChannelAxis)
	case s.ChannelMode != "" && s.ChannelMode != ChannelAxis && s.ChannelMode != ChannelSlot:
		return fmt.Errorf("data.channel_mode %q: want %s or %s", s.ChannelMode, ChannelAxis, ChannelSlot)
	case s.Patch[0] < 0 || s.Patch[1] < 0 || (s.Patch[0] == 0) != (s.Patch[1] == 0):
		return fmt.Errorf("data.patch %d,%d: want two positive sizes (or 0,0 for series)", s.Patch[0], s.Patch[1])
	case s.SeriesPatch < 0:
		return fmt.Errorf("data.series_patch %d: want ≥ 0", s.SeriesPatch)
	case !(s.DropFraction >= 0 && s.DropFraction < 1):
		return fmt.Errorf("data.drop_fraction %v: want 0 ≤ f < 1", s.DropFraction)
	}
	if path == "" {
		return nil
	}
	format, err := s.FormatOf(path)
	if err != nil {
		return err
	}
	switch format {
	case "ts", "csv", "npy", "npz", "dataset":
	default:
		return fmt.Errorf("data.format %q: want auto, ts, csv, npy, npz or dataset (a romae .safetensors dataset file)", format)
	}
	if len(s.Channels) > 0 && format != "csv" {
		return fmt.Errorf("data.channels %s: channel names apply to long CSV files, not to %s (%s data)", strings.Join(s.Channels, ","), path, format)
	}
	if s.Patch != [2]int{} && format != "npy" && format != "npz" {
		return fmt.Errorf("data.patch %d,%d: image patches apply to .npy/.npz image arrays, not to %s (%s data); for series use data.series_patch",
			s.Patch[0], s.Patch[1], path, format)
	}
	return nil
}

// Load reads path as s describes.
func (s Source) Load(path string) (*Dataset, error) {
	if err := s.Check(path); err != nil {
		return nil, err
	}
	format, err := s.FormatOf(path)
	if err != nil {
		return nil, err
	}
	var ds *Dataset
	switch format {
	case "ts":
		ds, err = LoadTS(path, TSOptions{Missing: s.Missing, NaN: s.NaN, Time: s.TimeMap()})
	case "csv":
		ds, err = s.loadCSV(path)
	case "npy", "npz":
		ds, err = s.loadArrays(path, format)
	case "dataset":
		ds, err = LoadDataset(path)
	}
	if err != nil {
		return nil, err
	}
	if format != "ts" && format != "csv" {
		applyTimeMap(ds, s.TimeMap())
	}
	if s.DropFraction > 0 {
		ds, err = DropRandomSteps(ds, s.DropFraction, ds.TimeAxis, s.DropSeed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.NormalizeSeries {
		StandardiseSeries(ds)
	}
	if s.SeriesPatch > 1 {
		if ds, err = PatchSeries(ds, s.SeriesPatch); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if ds.Name == "" || format == "npy" || format == "npz" { // arrays name no dataset: the file does
		ds.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return ds, nil
}

// FormatOf is the format path is read as: Format, or when that is "auto"
// (or empty) the one its extension names.
func (s Source) FormatOf(path string) (string, error) {
	if s.Format != "" && s.Format != "auto" {
		return s.Format, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ts":
		return "ts", nil
	case ".csv":
		return "csv", nil
	case ".npy":
		return "npy", nil
	case ".npz":
		return "npz", nil
	case ".safetensors":
		return "dataset", nil
	}
	return "", fmt.Errorf("%s: cannot tell the format from the extension; set data.format (ts, csv, npy, npz, dataset)", path)
}

func (s Source) loadCSV(path string) (*Dataset, error) {
	opt := CSVOptions{IDColumn: s.IDColumn, TimeColumn: s.TimeColumn, ChannelColumn: s.ChannelColumn,
		ValueColumns: s.ValueColumns, Channels: s.Channels, ChannelMode: s.ChannelMode, LabelColumn: s.LabelColumn, TargetColumns: s.TargetColumns, NaN: s.NaN, Time: s.TimeMap()}
	ds, err := LoadLongCSV(path, opt)
	if ce := (*ColumnError)(nil); errors.As(err, &ce) {
		return nil, fmt.Errorf("%w; set data.%s to the file's %s", err, ce.Option, ce.Role)
	}
	if err != nil {
		return nil, err
	}
	if s.LabelsFile == "" {
		return ds, nil
	}
	labels, err := LoadLabelsCSV(s.LabelsFile, "id", "label")
	if err != nil {
		return nil, err
	}
	if err := AttachLabels(ds, labels, nil); err != nil {
		return nil, fmt.Errorf("%s with labels %s: %w", path, s.LabelsFile, err)
	}
	return ds, nil
}

func (s Source) loadArrays(path, format string) (*Dataset, error) {
	var x *Array
	var labels []int
	if format == "npy" {
		a, err := LoadNPY(path)
		if err != nil {
			return nil, err
		}
		x = a
	} else {
		arrs, err := LoadNPZ(path)
		if err != nil {
			return nil, err
		}
		xk, yk := s.ArrayKey, s.LabelKey
		if xk == "" {
			xk = "x"
		}
		if yk == "" {
			yk = "y"
		}
		if x = arrs[xk]; x == nil {
			return nil, fmt.Errorf("%s: no array %q (set data.array_key)", path, xk)
		}
		if y := arrs[yk]; y != nil {
			if labels, err = y.Ints(); err != nil {
				return nil, fmt.Errorf("%s: array %q: %w", path, yk, err)
			}
			for i, l := range labels {
				if l < -1 {
					return nil, fmt.Errorf("%s: array %q: element %d = %d is not a class index (want ≥ 0, or −1 for a sample without a label)", path, yk, i, l)
				}
			}
		}
	}
	if s.Patch != [2]int{} {
		ds, err := DenseImages(x, labels, s.Patch) // NaN pixels are errors whatever the policy
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return ds, nil
	}
	all := x
	x, labels, kept, missing, err := denseNaN(x, labels, s.NaN)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ds, err := DenseSeries(x, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ds.MissingValues = missing
	if kept != nil { // ids stay the samples' indices in the file
		ds.DroppedSamples = all.Shape[0] - len(kept)
		for j, i := range kept {
			ds.Samples[j].ID = strconv.Itoa(i)
		}
	}
	return ds, nil
}

// MatchClasses relabels ds so that its class indices follow names (the
// classes a model was trained with), by name. A class ds has that the
// model does not know is an error naming it.
func MatchClasses(ds *Dataset, names []string) error {
	if len(ds.Classes) == 0 {
		return nil
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	remap := make([]int, len(ds.Classes))
	for i, n := range ds.Classes {
		j, ok := index[n]
		if !ok {
			return fmt.Errorf("dataset %q has class %q, which the model was not trained on (it knows %s)", ds.Name, n, strings.Join(names, ", "))
		}
		remap[i] = j
	}
	for i := range ds.Samples {
		if l := ds.Samples[i].Label; l >= 0 {
			ds.Samples[i].Label = remap[l]
		}
	}
	ds.Classes = append([]string(nil), names...)
	return nil
}

// Unlabelled is s without the options that read labels or regression
// targets, for files that have none: scoring new data must not need them.
func (s Source) Unlabelled() Source {
	s.LabelColumn, s.LabelsFile, s.TargetColumns, s.LabelKey = "", "", nil, "-"
	return s
}

// IsChannelIndex reports whether c, a position's channel coordinate, is
// one of n channels' indices 0..n−1. Commands and the server refuse any
// other (7, −1, 0.5, NaN): the encoder never saw a channel there, and its
// answer would be confident and meaningless.
func IsChannelIndex(c float64, n int) bool {
	return c >= 0 && c < float64(n) && c == math.Trunc(c)
}
