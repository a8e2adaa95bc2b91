package data

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestStats(t *testing.T) {
	ds := &Dataset{C: 2, D: 1, Samples: []Sample{
		{Values: []float32{1, 5, 3, 5}, Positions: []float32{0, 1}},
		{Values: []float32{5, 5}, Positions: []float32{0}},
	}}
	st := ComputeStats(ds)
	// Slot 0: 1, 3, 5 → mean 3, std sqrt(8/3). Slot 1 is constant → std 1.
	if st.Mean[0] != 3 || math.Abs(st.Std[0]-math.Sqrt(8.0/3)) > 1e-12 || st.Mean[1] != 5 || st.Std[1] != 1 {
		t.Fatalf("stats %+v", st)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Apply(ds); err != nil {
		t.Fatal(err)
	}
	if after := ComputeStats(ds); math.Abs(after.Mean[0]) > 1e-6 || math.Abs(after.Std[0]-1) > 1e-6 || after.Mean[1] != 0 {
		t.Errorf("after Apply: %+v", after)
	}
	v := append([]float32(nil), ds.Samples[0].Values...)
	if err := back.Invert(v, nil, 0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 5, 3, 5} {
		if math.Abs(float64(v[i]-want)) > 1e-6 {
			t.Errorf("Invert: value %d = %v, want %v", i, v[i], want)
		}
	}
	wantErr(t, Stats{Mean: []float64{0}, Std: []float64{1}}.Apply(ds), "1 means and 1 stds for 2 value slots")
	wantErr(t, Stats{Mean: []float64{0, 0}, Std: []float64{1, 0}}.Apply(ds), "slot 1")
	wantErr(t, back.Invert(make([]float32, 3), nil, 0), "not a multiple")
}

// A slot that is one value up to float32 rounding (a patch's time offset
// 2·1.0000006, as MJD minutes in units of 1/1440 give) is constant: its
// std is 1, not the rounding's 1e-7, which would turn the rounding into
// unit-sized noise. A small but real spread is kept.
func TestStatsRoundingIsConstant(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vals    []float32
		wantStd float64 // 0: the computed spread
	}{
		{"rounding of 2", []float32{2.0000012, 2.0000014, 2.0000012, 2.0000010}, 1},
		{"real spread", []float32{2.001, 2.002, 2.000, 2.003}, 0},
	} {
		ds := &Dataset{C: 1, D: 1, Samples: []Sample{{Values: tc.vals, Positions: []float32{0, 1, 2, 3}}}}
		st := ComputeStats(ds)
		if tc.wantStd != 0 && st.Std[0] != tc.wantStd || tc.wantStd == 0 && (st.Std[0] == 1 || st.Std[0] < 1e-4) {
			t.Errorf("%s: std %v", tc.name, st.Std[0])
		}
	}
}

// Bands on their own scales, as a token's values do not say its band: with
// channels on a position axis each channel is standardised on its own (a
// channel of one token, or one constant, falls back to the pooled
// constants); Invert and At map back with the token's channel; JSON keeps
// it; a per-slot dataset or one channel gives the pooled Stats only.
func TestStatsPerChannel(t *testing.T) {
	// Positions (channel, time); 2 values a token. Channel 0: slot 0 is
	// 1, 3 (mean 2, std 1), slot 1 is 7, 7 (constant). Channel 1: 100, 104,
	// 108 and 0, 1, 2. Channel 3: one token. Channel 2: none.
	ds := &Dataset{C: 2, D: 2, TimeAxis: 1, ChannelAxes: true, Samples: []Sample{
		{Values: []float32{1, 7, 100, 0, 3, 7}, Positions: []float32{0, 0, 1, 0, 0, 1}},
		{Values: []float32{104, 1, 108, 2, 50, 5}, Positions: []float32{1, 0.5, 1, 2, 3, 9}},
	}}
	st := ComputeStats(ds)
	pooled := ComputeStats(&Dataset{C: 2, D: 2, TimeAxis: 1, Samples: ds.Samples})
	if pooled.PerChannel() || !slices.Equal(pooled.Mean, st.Mean) || !slices.Equal(pooled.Std, st.Std) {
		t.Fatalf("pooled %+v, per channel %+v: want the same pooled constants and none per channel without ChannelAxes", pooled, st)
	}
	sd1 := math.Sqrt(32.0 / 3)
	for _, tc := range []struct {
		ch        int
		mean, std [2]float64
	}{
		{0, [2]float64{2, 7}, [2]float64{1, st.Std[1]}}, // constant slot: the pooled std
		{1, [2]float64{104, 1}, [2]float64{sd1, math.Sqrt(2.0 / 3)}},
		{2, [2]float64{st.Mean[0], st.Mean[1]}, [2]float64{st.Std[0], st.Std[1]}}, // no token
		{3, [2]float64{st.Mean[0], st.Mean[1]}, [2]float64{st.Std[0], st.Std[1]}}, // one token
	} {
		for j := range 2 {
			m, sd := st.At(j, []float32{float32(tc.ch), 0})
			if math.Abs(m-tc.mean[j]) > 1e-9 || math.Abs(sd-tc.std[j]) > 1e-9 {
				t.Errorf("channel %d slot %d: mean %v std %v, want %v, %v", tc.ch, j, m, sd, tc.mean[j], tc.std[j])
			}
		}
	}
	// Tokens off the channel grid take the pooled constants.
	for _, pos := range [][]float32{{7, 0}, {0.5, 0}, {-1, 0}, nil} {
		if m, sd := st.At(0, pos); m != st.Mean[0] || sd != st.Std[0] {
			t.Errorf("position %v: %v, %v, want the pooled %v, %v", pos, m, sd, st.Mean[0], st.Std[0])
		}
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("JSON %s read back as %+v (%v)", raw, back, err)
	}
	orig := slices.Clone(ds.Samples[1].Values)
	if err := back.Apply(ds); err != nil {
		t.Fatal(err)
	}
	if got := ds.Samples[0].Values[0]; math.Abs(float64(got)+1) > 1e-6 {
		t.Errorf("channel 0's 1 standardised to %v, want -1", got)
	}
	if got := ds.Samples[1].Values[0]; math.Abs(float64(got)) > 1e-6 {
		t.Errorf("channel 1's 104 standardised to %v, want 0", got)
	}
	v := slices.Clone(ds.Samples[1].Values)
	if err := back.Invert(v, ds.Samples[1].Positions, 2); err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if math.Abs(float64(v[i]-orig[i])) > 1e-4 {
			t.Errorf("Invert: value %d = %v, want %v", i, v[i], orig[i])
		}
	}
	wantErr(t, back.Invert(v, nil, 2), "need each of the 3 tokens' positions")
	wantErr(t, back.Apply(&Dataset{C: 2, D: 1, Samples: ds.Samples}), "for data of 1 position axes, without a channel axis")
	bad := back
	bad.ChannelStd = slices.Clone(back.ChannelStd)
	bad.ChannelStd[3] = 0
	wantErr(t, bad.Apply(ds), "channel 1 slot 1 has mean")
	bad.ChannelStd = bad.ChannelStd[:3]
	wantErr(t, bad.Apply(ds), "8 channel means and 3 channel stds")

	// One channel only: the pooled constants, as before per-channel stats.
	one := &Dataset{C: 1, D: 2, TimeAxis: 1, ChannelAxes: true, Samples: []Sample{{Values: []float32{1, 2, 4}, Positions: []float32{0, 0, 0, 1, 0, 2}}}}
	if st := ComputeStats(one); st.PerChannel() {
		t.Errorf("one channel: per-channel constants %+v", st)
	}
}

// Loaders mark the layouts whose channels are a position axis, and a
// dataset file keeps the mark: ComputeStats standardises per channel on
// exactly those.
func TestChannelAxesFromLoaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		load func() (*Dataset, error)
		want bool
	}{
		{"csv axis", func() (*Dataset, error) {
			return LoadLongCSV(filepath.Join("testdata", "lightcurves.csv"), lightCurveOpt)
		}, true},
		{"csv slot", func() (*Dataset, error) {
			return LoadLongCSV(filepath.Join("testdata", "slot.csv"), CSVOptions{ChannelMode: ChannelSlot, LabelColumn: "label"})
		}, false},
		{"csv one channel", func() (*Dataset, error) {
			return LoadLongCSV(filepath.Join("testdata", "lightcurves.csv"), CSVOptions{IDColumn: "object_id", TimeColumn: "mjd", ValueColumns: []string{"flux"}})
		}, false},
		{"ts channel-axis", func() (*Dataset, error) {
			return LoadTS(filepath.Join("testdata", "missing.ts"), TSOptions{Missing: MissingChannelAxis})
		}, true},
		{"ts drop-step", func() (*Dataset, error) { return LoadTS(filepath.Join("testdata", "missing.ts"), TSOptions{}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := tc.load()
			if err != nil {
				t.Fatal(err)
			}
			if ds.ChannelAxes != tc.want {
				t.Fatalf("ChannelAxes %v, want %v", ds.ChannelAxes, tc.want)
			}
			if got := ComputeStats(ds).PerChannel(); got != tc.want {
				t.Errorf("per-channel stats %v, want %v", got, tc.want)
			}
			path := filepath.Join(t.TempDir(), "ds.safetensors")
			if err := SaveDataset(path, ds); err != nil {
				t.Fatal(err)
			}
			back, err := LoadDataset(path)
			if err != nil {
				t.Fatal(err)
			}
			if back.ChannelAxes != tc.want {
				t.Errorf("read back from a dataset file: ChannelAxes %v, want %v", back.ChannelAxes, tc.want)
			}
		})
	}
}

// SeriesScaleSpread finds the slot and channel whose series' own stds are
// farthest apart, over series of 3 or more values that are not constant,
// and says nothing with fewer than 10 such series.
func TestSeriesScaleSpread(t *testing.T) {
	// series i: channel 0 holds amplitude scale[i] (3 values), channel 1
	// amplitude 1 (3 values); a 4th series kind is constant in channel 0.
	build := func(n int, scale func(i int) float64, constant int) *Dataset {
		ds := &Dataset{C: 1, D: 2, TimeAxis: 1, ChannelAxes: true}
		for i := range n + constant {
			s := Sample{ID: fmt.Sprint(i)}
			for tm, z := range []float64{-1, 0, 1} {
				a := 0.0
				if i < n {
					a = scale(i)
				}
				s.Values = append(s.Values, float32(7+a*z), float32(3+z))
				s.Positions = append(s.Positions, 0, float32(tm), 1, float32(tm))
			}
			ds.Samples = append(ds.Samples, s)
		}
		return ds
	}
	for _, tc := range []struct {
		name      string
		ds        *Dataset
		ok        bool
		channel   int
		low, high float64 // stds: amplitude × sqrt(2/3)
	}{
		{"decades apart in channel 0", build(20, func(i int) float64 { return math.Pow(10, float64(i)/5) }, 0), true, 0, math.Pow(10, 0.4), math.Pow(10, 3.6)},
		{"constant series left out", build(20, func(i int) float64 { return math.Pow(10, float64(i)/5) }, 30), true, 0, math.Pow(10, 0.4), math.Pow(10, 3.6)},
		{"one scale: ratio 1", build(12, func(int) float64 { return 2 }, 0), true, 0, 2, 2},
		{"9 series: nothing to say", build(9, func(i int) float64 { return float64(i + 1) }, 0), false, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, ok := SeriesScaleSpread(tc.ds)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%+v)", ok, tc.ok, sp)
			}
			if !ok {
				return
			}
			f := math.Sqrt(2.0 / 3)
			if sp.Channel != tc.channel || sp.Slot != 0 || math.Abs(sp.Low/(tc.low*f)-1) > 1e-5 || math.Abs(sp.High/(tc.high*f)-1) > 1e-5 {
				t.Errorf("spread %+v, want channel %d, stds %v and %v", sp, tc.channel, tc.low*f, tc.high*f)
			}
		})
	}
	// Without a channel axis the series are compared whole.
	ds := build(20, func(i int) float64 { return math.Pow(10, float64(i)/5) }, 0)
	ds.ChannelAxes = false
	if sp, ok := SeriesScaleSpread(ds); !ok || sp.Channel != -1 || !(sp.Ratio() > 100) {
		t.Errorf("no channel axis: %+v, %v; want channel -1 and a ratio over 100", sp, ok)
	}
}

// StandardiseSeries gives each series, per channel and slot, mean 0 and
// std 1 (a constant channel only centred, a lone value 0), whatever its
// scale; Source.NormalizeSeries applies it on load.
func TestStandardiseSeries(t *testing.T) {
	ds := &Dataset{C: 1, D: 2, TimeAxis: 1, ChannelAxes: true, Samples: []Sample{
		// channel 0: 1000, 3000 (→ −1, 1); channel 1: 5, 5 (constant → 0, 0); channel 2: 7 (lone → 0)
		{Values: []float32{1000, 5, 3000, 5, 7}, Positions: []float32{0, 0, 1, 0, 0, 1, 1, 1, 2, 0}},
		// channel 0: 0.01, 0.02, 0.03 (→ −1.2247, 0, 1.2247)
		{Values: []float32{0.01, 0.02, 0.03}, Positions: []float32{0, 0, 0, 1, 0, 2}},
	}}
	StandardiseSeries(ds)
	r := math.Sqrt(1.5)
	for i, want := range [][]float64{{-1, 0, 1, 0, 0}, {-r, 0, r}} {
		for j, w := range want {
			if got := float64(ds.Samples[i].Values[j]); math.Abs(got-w) > 1e-5 {
				t.Errorf("series %d value %d: %v, want %v", i, j, got, w)
			}
		}
	}
	// Without a channel axis a series is standardised whole.
	whole := &Dataset{C: 1, D: 2, TimeAxis: 1, Samples: []Sample{{Values: []float32{1, 3, 100, 102}, Positions: []float32{0, 0, 0, 1, 1, 0, 1, 1}}}}
	StandardiseSeries(whole)
	if v := whole.Samples[0].Values; !(v[0] < -0.9 && v[1] < -0.9 && v[2] > 0.9 && v[3] > 0.9) {
		t.Errorf("whole series: %v, want the two channels' levels apart", v)
	}
	src := Source{Format: "auto", NormalizeSeries: true, IDColumn: "object_id", TimeColumn: "mjd", ChannelColumn: "band", ValueColumns: []string{"flux"}}
	loaded, err := src.Load(filepath.Join("testdata", "lightcurves.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range loaded.Samples {
		sum := map[float32]float64{}
		for k, v := range s.Values {
			sum[s.Positions[k*2]] += float64(v)
		}
		for ch, x := range sum {
			if math.Abs(x) > 1e-5 {
				t.Errorf("%s channel %v: values sum to %v after Load with NormalizeSeries, want 0", s.ID, ch, x)
			}
		}
	}
}
