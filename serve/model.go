package serve

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"romae/data"
	"romae/eval"
	"romae/model"
)

// Model is a trained checkpoint ready to serve: the network and the data
// spec that turns a request's tokens into what it was trained on (series
// patching, value scaling) and its outputs back into data units and class
// names. Its forward passes run on the batcher's goroutine only.
type Model struct {
	Net  *model.Model[float32]
	Spec *data.Spec
	// Name is shown to clients (GET /v1/model): the checkpoint's file name,
	// never its full path.
	Name string

	values   int // values per token in a request (before series patching)
	patch    int // observations per model token (data.series_patch); 1: none
	timeAxis int // the position axis PatchSeries groups along, the blend interpolates along and timeMap maps
	timeMap  data.TimeMap
	channels []string // names of the channel indices on position axis 0 (a long CSV's channel axis); nil: no such axis
	// normalizeSeries: each request series is standardised on its own
	// (data.normalize_series), per channel when channelAxes.
	normalizeSeries, channelAxes bool
	blend                        *eval.Blend
	ws                           *model.Workspace[float32]

	generation int64 // set when the server installs it
	loadedAt   time.Time
}

// LoadModel reads a checkpoint as every romae command does (a run
// directory, a .safetensors file, or an authors' checkpoint directory)
// with the data spec eval.CheckpointSpec chooses.
func LoadModel(path string, c eval.SpecChoice) (*Model, error) {
	net, ck, err := model.Load[float32](path)
	if err != nil {
		return nil, err
	}
	spec, err := eval.CheckpointSpec(path, ck, c)
	if err != nil {
		return nil, err
	}
	if net.Cfg.Task == model.TaskClassify && len(spec.Classes) == 0 && (ck.File == nil || c.Raw) {
		// The authors' classifiers (and --raw) have no class names: a
		// request has no file to take them from, so they are the indices.
		for k := range net.Cfg.Outputs {
			spec.Classes = append(spec.Classes, strconv.Itoa(k))
		}
	}
	name := filepath.Base(ck.Path)
	m, err := NewModel(name, net, spec)
	if err != nil {
		return nil, err
	}
	b, err := eval.BlendFromMeta(ck.Meta, net.Cfg.Values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := m.SetBlend(b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// SetBlend makes interpolate mix the model's values with linear and
// spline interpolation in time as b says (nil: the model alone), as the romae
// interpolate command does with the blend pretrain stored (LoadModel sets
// it from the checkpoint).
func (m *Model) SetBlend(b *eval.Blend) error {
	if b != nil && (len(b.Model) != m.Net.Cfg.Values || len(b.Spline) != m.Net.Cfg.Values) {
		return fmt.Errorf("blend with %d model and %d spline weights for a model with %d values per token", len(b.Model), len(b.Spline), m.Net.Cfg.Values)
	}
	if b != nil && m.patch == 1 && m.Net.Cfg.PosDims > 1 {
		axis, err := timeAxis(m.Spec, m.Net.Cfg.PosDims)
		if err != nil {
			return fmt.Errorf("its interpolation blend needs the time axis: %w", err)
		}
		m.timeAxis = axis
	}
	m.blend = b
	return nil
}

// NewModel checks that spec fits net and prepares them for serving.
func NewModel(name string, net *model.Model[float32], spec *data.Spec) (*Model, error) {
	classes, targets := 0, 0
	switch net.Cfg.Task {
	case model.TaskClassify:
		classes = net.Cfg.Outputs
	case model.TaskRegress:
		targets = net.Cfg.Outputs
	}
	if err := spec.CheckModel(net.Cfg.Values, classes, targets); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	net.PackWeights() // a served model only runs inference
	m := &Model{Net: net, Spec: spec, Name: name, values: net.Cfg.Values, patch: 1, ws: net.NewWorkspace(), timeMap: spec.Source.TimeMap()}
	if !m.timeMap.Identity() {
		axis, err := timeAxis(spec, net.Cfg.PosDims)
		if err != nil {
			return nil, fmt.Errorf("%s: its time axis is mapped (data.time_origin, data.time_unit): %w", name, err)
		}
		m.timeAxis = axis
	}
	if len(spec.Source.Channels) > 0 && net.Cfg.PosDims == 2 && spec.Source.ChannelMode != data.ChannelSlot {
		m.channels = spec.Source.Channels
	}
	if spec.Source.NormalizeSeries {
		axis, err := timeAxis(spec, net.Cfg.PosDims)
		if err != nil {
			return nil, fmt.Errorf("%s: each series standardised on its own (data.normalize_series): %w", name, err)
		}
		m.timeAxis, m.normalizeSeries = axis, true
		m.channelAxes = net.Cfg.PosDims == 2 && (m.channels != nil || spec.Source.Missing == data.MissingChannelAxis)
	}
	if p := spec.Source.SeriesPatch; p > 1 {
		// A token of a patched model holds P observations' values and their
		// P time offsets (data.PatchSeries): Values = P·c + P.
		if net.Cfg.Values%p != 0 || net.Cfg.Values/p < 2 {
			return nil, fmt.Errorf("%s: %d values per token cannot be patches of %d observations (data.series_patch)", name, net.Cfg.Values, p)
		}
		m.patch, m.values = p, net.Cfg.Values/p-1
		axis, err := timeAxis(spec, net.Cfg.PosDims)
		if err != nil {
			return nil, fmt.Errorf("%s: patches of observations (data.series_patch %d): %w", name, p, err)
		}
		m.timeAxis = axis
	}
	return m, nil
}

// timeAxis is the position axis that is time for data read as spec says
// (data.Dataset.TimeAxis): the last for long CSV ((channel, time)), the
// first for .ts and arrays ((step[, channel])).
func timeAxis(spec *data.Spec, posDims int) (int, error) {
	if posDims == 1 {
		return 0, nil
	}
	format, err := spec.Source.FormatOf(spec.Train)
	if err != nil {
		return 0, fmt.Errorf("a model with %d position axes, trained on data whose format the spec does not name: cannot tell which axis is time", posDims)
	}
	switch format {
	case "csv":
		return posDims - 1, nil
	case "ts", "npy", "npz":
		return 0, nil
	}
	return 0, fmt.Errorf("a model trained on a %s file: cannot tell which position axis is time", format)
}

// endpoints lists what the model can do, in the API's names.
func (m *Model) endpoints() []string {
	if m.Net.Cfg.Task == model.TaskPretrain {
		if m.patch > 1 {
			return []string{"embed"} // its queries would be patches, not positions
		}
		return []string{"embed", "interpolate", "reconstruct"}
	}
	return []string{"predict", "embed"}
}

func (m *Model) can(endpoint string) bool {
	for _, e := range m.endpoints() {
		if e == endpoint {
			return true
		}
	}
	return false
}

// defaultPool is the embedding pool when a request names none: [CLS]
// when the model has it.
func (m *Model) defaultPool() string {
	if m.Net.Cfg.UseCLS {
		return model.PoolCLS
	}
	return model.PoolMean
}

// ModelInfo is GET /v1/model: what a client needs to build requests.
type ModelInfo struct {
	Name           string    `json:"name"`
	Generation     int64     `json:"generation"`
	LoadedAt       time.Time `json:"loaded_at"`
	Task           string    `json:"task"`
	Endpoints      []string  `json:"endpoints"`
	ValuesPerToken int       `json:"values_per_token"`
	PositionAxes   int       `json:"position_axes"`
	Classes        []string  `json:"classes,omitempty"`
	// Channels names the channel indices a position's first coordinate
	// holds (a model trained on a long CSV with a channel column): channel
	// Channels[i] is coordinate i, and other coordinates are refused.
	Channels []string `json:"channels,omitempty"`
	Outputs  int      `json:"outputs,omitempty"`
	// Targets names a regressor's outputs, a prediction's entries in
	// order, when it was trained on a CSV's target columns.
	Targets      []string `json:"targets,omitempty"`
	PerToken     bool     `json:"per_token,omitempty"`
	EmbeddingDim int      `json:"embedding_dim"`
	DefaultPool  string   `json:"default_pool"`
	SeriesPatch  int      `json:"series_patch,omitempty"`
	Normalized   bool     `json:"normalized"`
	Limits       Limits   `json:"limits"`
	// InterpBlend is interpolate's mix of the model with linear and
	// spline interpolation in time (absent: the model alone).
	InterpBlend *eval.Blend `json:"interp_blend,omitempty"`
}

func (m *Model) info(lim Limits) ModelInfo {
	c := m.Net.Cfg
	in := ModelInfo{Name: m.Name, Generation: m.generation, LoadedAt: m.loadedAt, Task: c.Task, Endpoints: m.endpoints(),
		ValuesPerToken: m.values, PositionAxes: c.PosDims, Classes: m.Spec.Classes, EmbeddingDim: c.Encoder.DModel,
		DefaultPool: m.defaultPool(), Normalized: m.Spec.Stats != nil, Limits: lim, Channels: m.channels}
	if c.Task != model.TaskPretrain {
		in.Outputs, in.PerToken = c.Outputs, c.Pool == model.PoolToken
	}
	if t := m.Spec.Source.TargetColumns; c.Task == model.TaskRegress && len(t) == c.Outputs {
		in.Targets = t
	}
	if m.patch > 1 {
		in.SeriesPatch = m.patch
	}
	in.InterpBlend = m.blend
	return in
}

// decode reads a request body for endpoint ep into the model's positions.
func (m *Model) decode(body []byte, ep string, lim Limits) (*request, error) {
	req, err := decodeRequest(body, ep, shape{m.values, m.Net.Cfg.PosDims, m.timeAxis, !m.timeMap.Identity()}, lim)
	if err != nil {
		return nil, err
	}
	if err := m.checkChannels(req); err != nil {
		return nil, err
	}
	m.mapTimes(req)
	return req, nil
}

// checkChannels refuses a token or query whose channel coordinate is not
// one of the model's channel indices: the encoder never saw a band at 99,
// −3 or 0.5, and its answer there would be confident and meaningless.
func (m *Model) checkChannels(req *request) error {
	if m.channels == nil {
		return nil
	}
	D, n := m.Net.Cfg.PosDims, len(m.channels)
	check := func(pos []float32, field string, i int) error {
		for k := 0; k < len(pos); k += D {
			if c := pos[k]; !data.IsChannelIndex(float64(c), n) {
				return &badRequest{fmt.Sprintf("samples[%d].%s[%d].position[0]: %v is not a channel index: the model's channels are %s",
					i, field, k/D, c, channelList(m.channels))}
			}
		}
		return nil
	}
	for i := range req.samples {
		if err := check(req.samples[i].Positions, "tokens", i); err != nil {
			return err
		}
		if i < len(req.queries) {
			if err := check(req.queries[i], "queries", i); err != nil {
				return err
			}
		}
	}
	return nil
}

// channelList is "0 g, 1 i, 2 r".
func channelList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d %s", i, n)
	}
	return strings.Join(parts, ", ")
}

// mapTimes puts the time coordinates of req's tokens and queries on the
// model's time axis as the data loaders do for files (data.TimeMap): from
// the float64 times sent, each sample's origin its earliest token.
func (m *Model) mapTimes(req *request) {
	if req.times == nil {
		return
	}
	D, ta := m.Net.Cfg.PosDims, m.timeAxis
	for i := range req.samples {
		s := &req.samples[i]
		s.TimeOrigin = m.timeMap.Origin(s.ID, req.times[i])
		for k, t := range req.times[i] {
			s.Positions[k*D+ta] = m.timeMap.Position(t, s.TimeOrigin)
		}
		if i < len(req.queries) {
			for k, t := range req.queryTimes[i] {
				req.queries[i][k*D+ta] = m.timeMap.Position(t, s.TimeOrigin)
			}
		}
	}
}

// prepare turns decoded samples into the model's data: tokens patched as
// in training, values scaled with the spec's statistics. The result is
// validated (finite, consistent) like any loaded dataset.
func (m *Model) prepare(samples []data.Sample) (*data.Dataset, error) {
	ds := &data.Dataset{Name: "request", C: m.values, D: m.Net.Cfg.PosDims, TimeAxis: m.timeAxis, ChannelAxes: m.channelAxes, Samples: samples}
	if m.normalizeSeries {
		data.StandardiseSeries(ds)
	}
	if m.patch > 1 {
		var err error
		if ds, err = data.PatchSeries(ds, m.patch); err != nil {
			return nil, err
		}
	}
	read := data.Spec{Stats: m.Spec.Stats}
	if err := read.Prepare(ds, "request"); err != nil {
		return nil, err
	}
	return ds, nil
}

// ─── forward passes (batcher goroutine only) ──────────────────────────────

// predict returns each sample's head output: class probabilities or
// regression outputs in training units.
func (m *Model) predict(ds *data.Dataset) ([][]float64, error) {
	return eval.Predict(m.Net, m.ws, ds, len(ds.Samples))
}

// embed returns [N·d_model] pooled encoder outputs.
func (m *Model) embed(ds *data.Dataset, pool string) ([]float32, error) {
	return eval.Embed(m.Net, m.ws, ds, pool, len(ds.Samples))
}

// interpolate returns values (model units) at each sample's queries.
func (m *Model) interpolate(ds *data.Dataset, queries [][]float32) ([][]float32, error) {
	vals, err := eval.Interpolate(m.Net, m.ws, ds, queries, len(ds.Samples))
	if err != nil || m.blend == nil {
		return vals, err
	}
	return vals, m.blend.Mix(ds, queries, vals)
}

// reconstruct runs the masked autoencoder with masks[i] (one flag per
// token of sample i) hiding tokens from the encoder, and returns each
// sample's reconstruction of its masked tokens, in token order ([n_i·C],
// model units; per-token normalised for a normalize_targets model).
func (m *Model) reconstruct(ds *data.Dataset, masks [][]bool) ([][]float32, error) {
	idx := make([]int, len(ds.Samples))
	for i := range idx {
		idx[i] = i
	}
	bt := data.Collate(nil, ds, idx)
	masked := make([]bool, bt.B*bt.L)
	for b, mk := range masks {
		copy(masked[b*bt.L:], mk)
	}
	if _, err := m.Net.ForwardPretrain(m.ws, bt, masked, false, nil); err != nil {
		return nil, err
	}
	rec, Lq, C := m.ws.Reconstruction(), m.ws.QueriesPerSample(), m.Net.Cfg.Values
	out := make([][]float32, bt.B)
	for b, mk := range masks {
		n := 0
		for _, h := range mk {
			if h {
				n++
			}
		}
		out[b] = append([]float32(nil), rec[b*Lq*C:(b*Lq+n)*C]...)
	}
	return out, nil
}
