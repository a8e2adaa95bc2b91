package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"romae/data"
	"romae/model"
)

// Limits bound what one request may ask for. Each is checked while the
// body is decoded, before anything it bounds is allocated beyond it, and a
// violation is a 400 (413 for the body) naming the sample, the token and
// the limit.
type Limits struct {
	MaxBodyBytes   int64   `json:"max_body_bytes"`   // request body
	MaxSamples     int     `json:"max_samples"`      // samples per request
	MaxTokens      int     `json:"max_tokens"`       // tokens per sample
	MaxQueries     int     `json:"max_queries"`      // query positions per sample (interpolate)
	MaxAbsValue    float64 `json:"max_abs_value"`    // |value| of a token, in data units
	MaxAbsPosition float64 `json:"max_abs_position"` // |coordinate| of a position or query
}

// DefaultLimits are far above a light curve or a sensor window (hundreds
// of observations) and small enough that a full queue of requests at the
// limits fits a laptop's memory.
func DefaultLimits() Limits {
	return Limits{MaxBodyBytes: 8 << 20, MaxSamples: 64, MaxTokens: 2048, MaxQueries: 4096, MaxAbsValue: 1e9, MaxAbsPosition: 1e9}
}

func (l Limits) check() error {
	switch {
	case l.MaxBodyBytes < 64:
		return fmt.Errorf("max body bytes %d: want ≥ 64", l.MaxBodyBytes)
	case l.MaxSamples < 1, l.MaxTokens < 1, l.MaxQueries < 1:
		return fmt.Errorf("max samples %d, tokens %d, queries %d: want ≥ 1 each", l.MaxSamples, l.MaxTokens, l.MaxQueries)
	case !(l.MaxAbsValue > 0) || !(l.MaxAbsPosition > 0) || l.MaxAbsValue > math.MaxFloat32 || l.MaxAbsPosition > math.MaxFloat32:
		return fmt.Errorf("max |value| %v and |position| %v: want positive float32 numbers", l.MaxAbsValue, l.MaxAbsPosition)
	}
	return nil
}

// maxIDBytes bounds a sample's id, echoed in the response.
const maxIDBytes = 256

// Endpoints of the API (POST /v1/<name>).
const (
	epPredict     = "predict"
	epEmbed       = "embed"
	epInterpolate = "interpolate"
	epReconstruct = "reconstruct"
)

// request is a decoded, validated body: samples in data units, as the
// loaders produce them (Values [n·C], Positions [n·D] per sample).
type request struct {
	samples []data.Sample
	queries [][]float32 // interpolate: [n_q·D] per sample
	masks   [][]bool    // reconstruct: one flag per token
	pool    string      // embed: cls or mean ("" : the model's default)
}

// shape is what each token must carry: values per token and position axes.
type shape struct{ values, axes int }

// decodeRequest reads a request body for endpoint ep:
//
//	{"samples": [{"id": "a", "tokens": [{"values": [..], "position": [..]}, ...],
//	              "queries": [[..], ...]}],            // interpolate only
//	 "pool": "cls"}                                     // embed only
//
// with "masked": true on the tokens /v1/reconstruct should hide. It is
// strict: unknown or repeated keys, a key another endpoint takes, null, a
// wrong type, NaN/Infinity (not JSON, but what some encoders write), a
// number outside the limits, a token of the wrong width, or data after the
// object are refused with an error naming the sample and token. It walks
// the tokens of encoding/json's Decoder rather than unmarshalling, so every
// count is checked before it allocates and every error knows where it is.
func decodeRequest(body []byte, ep string, sh shape, lim Limits) (*request, error) {
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(body)), ep: ep, sh: sh, lim: lim, req: &request{}}
	if err := d.root(); err != nil {
		return nil, err
	}
	return d.req, nil
}

type decoder struct {
	dec *json.Decoder
	ep  string
	sh  shape
	lim Limits
	req *request
}

// badRequest is a client error: the message says where and what.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func bad(where, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	return &badRequest{msg}
}

// token reads the next JSON token; a syntax error says where it was met.
func (d *decoder) token(where string) (json.Token, error) {
	t, err := d.dec.Token()
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, bad(where, "body ends early (truncated JSON)")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && (strings.Contains(se.Error(), "'N'") || strings.Contains(se.Error(), "'I'") || strings.Contains(se.Error(), "'n'")) {
		return nil, bad(where, "%v (NaN and Infinity are not numbers in JSON: every value must be finite)", err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) { // a number literal too large for float64
		return nil, bad(where, "%s is not a finite number", te.Value)
	}
	return nil, bad(where, "%v", strings.TrimPrefix(err.Error(), "json: "))
}

func (d *decoder) delim(where string, want json.Delim, what string) error {
	t, err := d.token(where)
	if err != nil {
		return err
	}
	if t != want {
		return bad(where, "want %s, found %s", what, describe(t))
	}
	return nil
}

// describe names a token in an error.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return string(v)
	case string:
		if len(v) > 32 {
			v = v[:32] + "…"
		}
		return strconv.Quote(v)
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(t)
}

// object reads {"key": value, ...}, calling field for each key, which
// must be one of keys (each at most once) and must read its value.
func (d *decoder) object(where string, keys []string, field func(key string) error) error {
	if err := d.delim(where, '{', "an object"); err != nil {
		return err
	}
	seen := make([]bool, len(keys))
	for d.dec.More() {
		t, err := d.token(where)
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok { // the decoder yields only string keys here; never trust it to
			return bad(where, "want a field name, found %s", describe(t))
		}
		k := indexOf(keys, key)
		switch {
		case k < 0:
			return bad(where, "unknown field %s (%s)", describe(key), d.fieldsHint(keys))
		case seen[k]:
			return bad(where, "field %q given twice", key)
		}
		seen[k] = true
		if err := field(key); err != nil {
			return err
		}
	}
	return d.delim(where, '}', "the end of the object")
}

func (d *decoder) fieldsHint(keys []string) string {
	return fmt.Sprintf("/v1/%s takes %s here", d.ep, strings.Join(keys, ", "))
}

func indexOf(keys []string, k string) int {
	for i, s := range keys {
		if s == k {
			return i
		}
	}
	return -1
}

// array reads [elem, ...], calling elem(i) for the i-th element; it
// refuses an element beyond max (what names it in the error).
func (d *decoder) array(where string, max int, what string, elem func(i int) error) (int, error) {
	if err := d.delim(where, '[', "an array"); err != nil {
		return 0, err
	}
	n := 0
	for ; d.dec.More(); n++ {
		if n == max {
			return n, bad(where, "more than %d %s (the server's limit)", max, what)
		}
		if err := elem(n); err != nil {
			return n, err
		}
	}
	return n, d.delim(where, ']', "the end of the array")
}

// numbers appends a JSON array of exactly want numbers, each within ±lim,
// to dst.
func (d *decoder) numbers(dst []float32, where, field string, want int, lim float64) ([]float32, error) {
	n, err := d.array(where, want, fmt.Sprintf("numbers in %s (the model takes %d)", field, want), func(i int) error {
		t, err := d.token(fmt.Sprintf("%s %s[%d]", where, field, i))
		if err != nil {
			return err
		}
		v, ok := t.(float64)
		if !ok {
			return bad(where, "%s[%d] is %s, want a number", field, i, describe(t))
		}
		if math.Abs(v) > lim {
			return bad(where, "%s[%d] = %g is outside ±%g (the server's limit)", field, i, v, lim)
		}
		dst = append(dst, float32(v))
		return nil
	})
	if err == nil && n != want {
		err = bad(where, "%s has %d numbers, the model takes %d", field, n, want)
	}
	return dst, err
}

// The fields each endpoint takes (openapi_test.go checks the API
// description against them).
func rootFields(ep string) []string {
	if ep == epEmbed {
		return []string{"samples", "pool"}
	}
	return []string{"samples"}
}

func sampleFields(ep string) []string {
	if ep == epInterpolate {
		return []string{"id", "tokens", "queries"}
	}
	return []string{"id", "tokens"}
}

func tokenFields(ep string) []string {
	if ep == epReconstruct {
		return []string{"values", "position", "masked"}
	}
	return []string{"values", "position"}
}

func (d *decoder) root() error {
	keys := rootFields(d.ep)
	sawSamples := false
	err := d.object("body", keys, func(key string) error {
		if key == "pool" {
			t, err := d.token("pool")
			if err != nil {
				return err
			}
			if p, ok := t.(string); !ok || (p != model.PoolCLS && p != model.PoolMean) {
				return bad("pool", "%s: want \"cls\" or \"mean\"", describe(t))
			}
			d.req.pool = t.(string)
			return nil
		}
		sawSamples = true
		n, err := d.array("samples", d.lim.MaxSamples, "samples in one request", d.sample)
		if err == nil && n == 0 {
			err = bad("samples", "empty: want at least one sample")
		}
		return err
	})
	if err != nil {
		return err
	}
	if !sawSamples {
		return bad("body", "no \"samples\" field")
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return bad("body", "data after the JSON object")
	}
	return nil
}

func (d *decoder) sample(i int) error {
	where := fmt.Sprintf("sample %d", i)
	keys := sampleFields(d.ep)
	s := data.Sample{ID: strconv.Itoa(i), Label: -1}
	var queries []float32
	var mask []bool
	sawTokens, sawQueries := false, false
	err := d.object(where, keys, func(key string) error {
		switch key {
		case "id":
			t, err := d.token(where + " id")
			if err != nil {
				return err
			}
			id, ok := t.(string)
			if !ok || len(id) > maxIDBytes {
				return bad(where, "id is %s, want a string of at most %d bytes", describe(t), maxIDBytes)
			}
			s.ID = id
		case "tokens":
			sawTokens = true
			n, err := d.array(where+" tokens", d.lim.MaxTokens, "tokens in one sample", func(j int) error {
				hidden, err := d.token1(&s, where, j)
				if d.ep == epReconstruct {
					mask = append(mask, hidden)
				}
				return err
			})
			if err == nil && n == 0 {
				err = bad(where, "no tokens: want at least one")
			}
			return err
		case "queries":
			sawQueries = true
			n, err := d.array(where+" queries", d.lim.MaxQueries, "queries in one sample", func(q int) error {
				var err error
				queries, err = d.numbers(queries, fmt.Sprintf("%s query %d", where, q), "position", d.sh.axes, d.lim.MaxAbsPosition)
				return err
			})
			if err == nil && n == 0 {
				err = bad(where, "no queries: want at least one position to interpolate at")
			}
			return err
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case !sawTokens:
		return bad(where, "no \"tokens\" field")
	case d.ep == epInterpolate && !sawQueries:
		return bad(where, "no \"queries\" field: /v1/interpolate needs the positions to predict")
	}
	if d.ep == epReconstruct {
		hidden := 0
		for _, h := range mask {
			if h {
				hidden++
			}
		}
		if hidden == 0 || hidden == len(mask) {
			return bad(where, "%d of %d tokens masked: /v1/reconstruct needs at least one masked (\"masked\": true) and one visible token", hidden, len(mask))
		}
		d.req.masks = append(d.req.masks, mask)
	}
	d.req.samples = append(d.req.samples, s)
	if d.ep == epInterpolate {
		d.req.queries = append(d.req.queries, queries)
	}
	return nil
}

// token1 reads token j of a sample into s and reports its "masked" flag.
func (d *decoder) token1(s *data.Sample, sampleWhere string, j int) (bool, error) {
	where := fmt.Sprintf("%s token %d", sampleWhere, j)
	keys := tokenFields(d.ep)
	hidden, sawValues, sawPosition := false, false, false
	err := d.object(where, keys, func(key string) error {
		var err error
		switch key {
		case "values":
			sawValues = true
			s.Values, err = d.numbers(s.Values, where, "values", d.sh.values, d.lim.MaxAbsValue)
		case "position":
			sawPosition = true
			s.Positions, err = d.numbers(s.Positions, where, "position", d.sh.axes, d.lim.MaxAbsPosition)
		case "masked":
			t, err := d.token(where + " masked")
			if err != nil {
				return err
			}
			b, ok := t.(bool)
			if !ok {
				return bad(where, "masked is %s, want true or false", describe(t))
			}
			hidden = b
		}
		return err
	})
	switch {
	case err != nil:
		return false, err
	case !sawValues:
		return false, bad(where, "no \"values\" field")
	case !sawPosition:
		return false, bad(where, "no \"position\" field")
	}
	return hidden, nil
}
