package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// limits fits a laptop's memory; positions reach Unix times in
// milliseconds (1.7e12), which a model trained on them maps to its time
// axis (data.time_origin, data.time_unit).
func DefaultLimits() Limits {
	return Limits{MaxBodyBytes: 8 << 20, MaxSamples: 64, MaxTokens: 2048, MaxQueries: 4096, MaxAbsValue: 1e9, MaxAbsPosition: 1e13}
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
	// times and queryTimes are the time coordinates of each sample's tokens
	// and queries as sent, in float64, when the model maps times
	// (shape.keepTime): float32 would round Unix seconds to 128 s.
	times, queryTimes [][]float64
	masks             [][]bool // reconstruct: one flag per token
	pool              string   // embed: cls or mean ("" : the model's default)
}

// shape is what each token must carry: values per token and position
// axes; with keepTime, the coordinates on axis time are also kept in
// float64 (request.times).
type shape struct {
	values, axes, time int
	keepTime           bool
}

// decodeRequest reads a request body for endpoint ep:
//
//	{"samples": [{"id": "a", "tokens": [{"values": [..], "position": [..]}, ...],
//	              "queries": [[..], ...]}],            // interpolate only
//	 "pool": "cls"}                                     // embed only
//
// with "masked": true on the tokens /v1/reconstruct should hide. It is
// strict: unknown or repeated fields, a field another endpoint takes,
// null, a wrong type, NaN/Infinity (not JSON, but what some encoders
// write), a number outside the limits, a token of the wrong width, or data
// after the object are refused with an error naming the sample, the token
// and the field.
//
// It is a scanner for this one schema rather than encoding/json, because
// measured on a 200-token sample (BenchmarkDecode200Tokens) Unmarshal took
// ~5× and Decoder.Token ~30× longer, a fifth to most of a small model's
// forward pass per sample; because Unmarshal allocates what the body
// declares before any limit can be checked; and because neither can say
// which sample and token a syntax error is in. Its acceptance is checked
// against encoding/json's by FuzzDecodeRequest: whatever it accepts is
// valid JSON that Unmarshal reads to the same numbers.
func decodeRequest(body []byte, ep string, sh shape, lim Limits) (*request, error) {
	d := &decoder{b: body, ep: ep, sh: sh, lim: lim, req: &request{}, at: loc{top: "body", smp: -1}}
	if err := d.root(); err != nil {
		return nil, err
	}
	return d.req, nil
}

type decoder struct {
	b   []byte
	i   int // next byte
	ep  string
	sh  shape
	lim Limits
	req *request
	at  loc // where the decoder is, for errors
}

// loc is a place in the request, formatted only for an error.
type loc struct {
	top           string // outside the samples: "body", "samples", "pool"
	smp, tok, qry int    // sample, and token or query within it; -1: none
	field         string // the number array being read ("values", "position")
	idx           int    // the number within it
}

func (l loc) String(elem bool) string {
	if l.smp < 0 {
		return l.top
	}
	s := "sample " + strconv.Itoa(l.smp)
	switch {
	case l.tok >= 0:
		s += " token " + strconv.Itoa(l.tok)
	case l.qry >= 0:
		s += " query " + strconv.Itoa(l.qry)
	}
	if elem && l.field != "" {
		s += " " + l.field + "[" + strconv.Itoa(l.idx) + "]"
	}
	return s
}

// badRequest is a client error: the message says where and what.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// fail is a badRequest at the current place (with the number being read
// when elem).
func (d *decoder) fail(elem bool, format string, args ...any) error {
	return &badRequest{d.at.String(elem) + ": " + fmt.Sprintf(format, args...)}
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace, 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.i == len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// syntax is the error for the byte at d.i, which cannot start context.
func (d *decoder) syntax(context string) error {
	if d.i >= len(d.b) {
		return d.fail(true, "body ends early (truncated JSON)")
	}
	c := d.b[d.i]
	hint := ""
	switch c {
	case 'N', 'I', 'n', 'i':
		hint = " (NaN and Infinity are not numbers in JSON: every value must be finite)"
	}
	return d.fail(true, "invalid character %s %s at byte %d%s", quoteChar(c), context, d.i, hint)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= utf8.RuneSelf {
		s = fmt.Sprintf("%q", []byte{c})
	}
	return "'" + s[1:len(s)-1] + "'"
}

// describe names the value starting at d.i for a type error, without
// consuming it.
func (d *decoder) describe() (string, error) {
	switch c := d.peek(); {
	case c == '{':
		return "an object", nil
	case c == '[':
		return "an array", nil
	case c == '"':
		save := d.i
		s, err := d.str()
		d.i = save
		if err != nil {
			return "", err
		}
		if len(s) > 32 {
			s = s[:32] + "…"
		}
		return strconv.Quote(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		save := d.i
		lit, err := d.numberLiteral()
		d.i = save
		if err != nil {
			return "", err
		}
		return "the number " + string(lit), nil
	}
	for _, lit := range []string{"null", "true", "false"} {
		if bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
			return lit, nil
		}
	}
	return "", d.syntax("looking for beginning of value")
}

// want fails with "want what, found ..." for the value at d.i.
func (d *decoder) want(what string) error {
	found, err := d.describe()
	if err != nil {
		return err
	}
	return d.fail(false, "want %s, found %s", what, found)
}

// object reads {"key": value, ...}, calling field for each key, which
// must be one of keys (each at most once) and must read its value.
func (d *decoder) object(keys []string, field func(key string) error) error {
	if d.peek() != '{' {
		return d.want("an object")
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return nil
	}
	seen := make([]bool, len(keys))
	for {
		if d.peek() != '"' {
			return d.syntax("looking for beginning of object key string")
		}
		raw, err := d.strBytes()
		if err != nil {
			return err
		}
		k := slices.IndexFunc(keys, func(k string) bool { return k == string(raw) })
		switch {
		case k < 0:
			return d.fail(false, "unknown field %s (/v1/%s takes %s here)", strconv.Quote(string(raw)), d.ep, strings.Join(keys, ", "))
		case seen[k]:
			return d.fail(false, "field %q given twice", keys[k])
		}
		key := keys[k]
		seen[k] = true
		if d.peek() != ':' {
			return d.syntax("after object key")
		}
		d.i++
		if err := field(key); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.syntax("after object key:value pair")
		}
	}
}

// array reads [elem, ...], calling elem(i) for the i-th element; an
// element beyond max is the error tooMany.
func (d *decoder) array(max int, tooMany func() error, elem func(i int) error) (int, error) {
	if d.peek() != '[' {
		return 0, d.want("an array")
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return 0, nil
	}
	for n := 0; ; n++ {
		if n == max {
			return n, tooMany()
		}
		if err := elem(n); err != nil {
			return n, err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return n + 1, nil
		default:
			return n, d.syntax("after array element")
		}
	}
}

// str reads a string literal.
func (d *decoder) str() (string, error) {
	b, err := d.strBytes()
	return string(b), err
}

// strBytes reads a string literal. Plain ASCII is a view of the body;
// anything with escapes or other bytes is unquoted by encoding/json, which
// also decides what invalid UTF-8 and lone surrogates become.
func (d *decoder) strBytes() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.want("a string")
	}
	start := d.i
	d.i++
	plain := true
	for {
		if d.i >= len(d.b) {
			return nil, d.fail(true, "body ends early (truncated JSON)")
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if plain {
				return d.b[start+1 : d.i-1], nil
			}
			var s string
			if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
				return nil, d.fail(true, "string at byte %d: %v", start, strings.TrimPrefix(err.Error(), "json: "))
			}
			return []byte(s), nil
		case c < 0x20:
			return nil, d.syntax("in string literal")
		case c == '\\':
			plain = false
			d.i++
			if d.i >= len(d.b) {
				return nil, d.fail(true, "body ends early (truncated JSON)")
			}
			switch d.b[d.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if d.i+k >= len(d.b) || !isHex(d.b[d.i+k]) {
						d.i += k
						return nil, d.syntax("in \\u hexadecimal character escape")
					}
				}
				d.i += 4
			default:
				return nil, d.syntax("in string escape code")
			}
		case c >= utf8.RuneSelf:
			plain = false
		}
		d.i++
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numberLiteral reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *decoder) numberLiteral() ([]byte, error) {
	d.ws()
	start := d.i
	digits := func() bool {
		n := d.i
		for d.i < len(d.b) && isDigit(d.b[d.i]) {
			d.i++
		}
		return d.i > n
	}
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && isDigit(d.b[d.i]):
		digits()
	case d.i > start:
		return nil, d.syntax("in numeric literal")
	default:
		return nil, d.syntax("looking for beginning of value")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if !digits() {
			return nil, d.syntax("after decimal point in numeric literal")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return nil, d.syntax("in exponent of numeric literal")
		}
	}
	return d.b[start:d.i], nil
}

// numbers appends a JSON array of exactly want numbers, each within ±lim,
// to dst (as float32, rounded once, as encoding/json rounds).
func (d *decoder) numbers(dst []float32, field string, want int, lim float64) ([]float32, error) {
	return d.numbers64(dst, nil, field, want, lim)
}

// numbers64 is numbers that also appends the number at index d.sh.time to
// *time, unrounded, when time is not nil.
func (d *decoder) numbers64(dst []float32, time *[]float64, field string, want int, lim float64) ([]float32, error) {
	d.at.field = field
	defer func() { d.at.field = "" }()
	n, err := d.array(want, func() error {
		return d.fail(false, "more than %d numbers in %s (the model takes %d)", want, field, want)
	}, func(i int) error {
		d.at.idx = i
		if c := d.peek(); c != '-' && !isDigit(c) {
			found, err := d.describe()
			if err != nil {
				return err
			}
			return d.fail(false, "%s[%d] is %s, want a number", field, i, found)
		}
		lit, err := d.numberLiteral()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(string(lit), 32)
		if err != nil || math.Abs(v) > lim {
			return d.fail(false, "%s[%d] = %s is outside ±%g (the server's limit)", field, i, lit, lim)
		}
		if time != nil && i == d.sh.time {
			v64, _ := strconv.ParseFloat(string(lit), 64)
			*time = append(*time, v64)
		}
		dst = append(dst, float32(v))
		return nil
	})
	if err == nil && n != want {
		err = d.fail(false, "%s has %d numbers, the model takes %d", field, n, want)
	}
	return dst, err
}

// boolean reads true or false.
func (d *decoder) boolean(field string) (bool, error) {
	d.ws()
	for _, lit := range []string{"true", "false"} {
		if bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
			d.i += len(lit)
			return lit == "true", nil
		}
	}
	found, err := d.describe()
	if err != nil {
		return false, err
	}
	return false, d.fail(false, "%s is %s, want true or false", field, found)
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
	sawSamples := false
	err := d.object(rootFields(d.ep), func(key string) error {
		if key == "pool" {
			d.at.top = "pool"
			if d.peek() != '"' {
				return d.want(`"cls" or "mean"`)
			}
			p, err := d.str()
			if err != nil {
				return err
			}
			if p != model.PoolCLS && p != model.PoolMean {
				return d.fail(false, "%q: want \"cls\" or \"mean\"", p)
			}
			d.req.pool = p
			d.at.top = "body"
			return nil
		}
		sawSamples = true
		d.at.top = "samples"
		n, err := d.array(d.lim.MaxSamples, func() error {
			return d.fail(false, "more than %d samples in one request (the server's limit)", d.lim.MaxSamples)
		}, d.sample)
		if err == nil && n == 0 {
			err = d.fail(false, "empty: want at least one sample")
		}
		d.at = loc{top: "body", smp: -1}
		return err
	})
	if err != nil {
		return err
	}
	if !sawSamples {
		return d.fail(false, "no \"samples\" field")
	}
	if d.peek() != 0 {
		return d.fail(false, "data after the JSON object at byte %d", d.i)
	}
	return nil
}

func (d *decoder) sample(i int) error {
	d.at = loc{smp: i, tok: -1, qry: -1}
	defer func() { d.at = loc{top: "samples", smp: -1} }()
	s := data.Sample{ID: strconv.Itoa(i), Label: -1}
	var queries []float32
	var times, queryTimes *[]float64
	if d.sh.keepTime {
		times, queryTimes = new([]float64), new([]float64)
	}
	var mask []bool
	sawTokens, sawQueries := false, false
	err := d.object(sampleFields(d.ep), func(key string) error {
		switch key {
		case "id":
			if d.peek() != '"' {
				found, err := d.describe()
				if err != nil {
					return err
				}
				return d.fail(false, "id is %s, want a string", found)
			}
			id, err := d.str()
			if err != nil {
				return err
			}
			if len(id) > maxIDBytes {
				return d.fail(false, "id of %d bytes, want at most %d", len(id), maxIDBytes)
			}
			s.ID = id
		case "tokens":
			sawTokens = true
			n, err := d.array(d.lim.MaxTokens, func() error {
				d.at.tok = -1
				return d.fail(false, "more than %d tokens in one sample (the server's limit)", d.lim.MaxTokens)
			}, func(j int) error {
				d.at.tok = j
				hidden, err := d.token(&s, times)
				if d.ep == epReconstruct {
					mask = append(mask, hidden)
				}
				return err
			})
			if err == nil {
				d.at.tok = -1
				if n == 0 {
					err = d.fail(false, "no tokens: want at least one")
				}
			}
			return err
		case "queries":
			sawQueries = true
			n, err := d.array(d.lim.MaxQueries, func() error {
				d.at.qry = -1
				return d.fail(false, "more than %d queries in one sample (the server's limit)", d.lim.MaxQueries)
			}, func(q int) error {
				d.at.qry = q
				var err error
				queries, err = d.numbers64(queries, queryTimes, "position", d.sh.axes, d.lim.MaxAbsPosition)
				return err
			})
			if err == nil {
				d.at.qry = -1
				if n == 0 {
					err = d.fail(false, "no queries: want at least one position to interpolate at")
				}
			}
			return err
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case !sawTokens:
		return d.fail(false, "no \"tokens\" field")
	case d.ep == epInterpolate && !sawQueries:
		return d.fail(false, "no \"queries\" field: /v1/interpolate needs the positions to predict")
	}
	if d.ep == epReconstruct {
		hidden := 0
		for _, h := range mask {
			if h {
				hidden++
			}
		}
		if hidden == 0 || hidden == len(mask) {
			return d.fail(false, "%d of %d tokens masked: /v1/reconstruct needs at least one masked (\"masked\": true) and one visible token", hidden, len(mask))
		}
		d.req.masks = append(d.req.masks, mask)
	}
	d.req.samples = append(d.req.samples, s)
	if d.ep == epInterpolate {
		d.req.queries = append(d.req.queries, queries)
	}
	if times != nil {
		d.req.times, d.req.queryTimes = append(d.req.times, *times), append(d.req.queryTimes, *queryTimes)
	}
	return nil
}

// token reads the current token of a sample into s and reports its
// "masked" flag.
func (d *decoder) token(s *data.Sample, times *[]float64) (bool, error) {
	hidden, sawValues, sawPosition := false, false, false
	err := d.object(tokenFields(d.ep), func(key string) error {
		var err error
		switch key {
		case "values":
			sawValues = true
			s.Values, err = d.numbers(s.Values, "values", d.sh.values, d.lim.MaxAbsValue)
		case "position":
			sawPosition = true
			s.Positions, err = d.numbers64(s.Positions, times, "position", d.sh.axes, d.lim.MaxAbsPosition)
		case "masked":
			hidden, err = d.boolean("masked")
		}
		return err
	})
	switch {
	case err != nil:
		return false, err
	case !sawValues:
		return false, d.fail(false, "no \"values\" field")
	case !sawPosition:
		return false, d.fail(false, "no \"position\" field")
	}
	return hidden, nil
}
