package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var testShape = shape{values: 2, axes: 2}

func testLimits() Limits {
	return Limits{MaxBodyBytes: 1 << 20, MaxSamples: 4, MaxTokens: 5, MaxQueries: 3, MaxAbsValue: 1000, MaxAbsPosition: 1e6}
}

func TestDecodeValid(t *testing.T) {
	body := `{"samples": [
		{"id": "a", "tokens": [{"values": [1, 2.5], "position": [0, 10]}, {"position": [1, 11], "values": [-1e2, 0]}]},
		{"tokens": [{"values": [3, 4], "position": [0, 12.25]}]}]}`
	req, err := decodeRequest([]byte(body), epPredict, testShape, testLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(req.samples) != 2 {
		t.Fatalf("%d samples", len(req.samples))
	}
	a, b := req.samples[0], req.samples[1]
	if a.ID != "a" || b.ID != "1" || a.Label != -1 {
		t.Errorf("ids %q %q (the default is the index), label %d", a.ID, b.ID, a.Label)
	}
	if !equal32(a.Values, 1, 2.5, -100, 0) || !equal32(a.Positions, 0, 10, 1, 11) || !equal32(b.Values, 3, 4) || !equal32(b.Positions, 0, 12.25) {
		t.Errorf("decoded %+v %+v", a, b)
	}

	req, err = decodeRequest([]byte(`{"samples":[{"tokens":[{"values":[1,2],"position":[0,1]}],"queries":[[0,1.5],[1,2]]}]}`), epInterpolate, testShape, testLimits())
	if err != nil || !equal32(req.queries[0], 0, 1.5, 1, 2) {
		t.Errorf("interpolate: %v %v", req, err)
	}
	req, err = decodeRequest([]byte(`{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"masked":true},{"values":[1,2],"position":[0,2],"masked":false}]}]}`), epReconstruct, testShape, testLimits())
	if err != nil || len(req.masks[0]) != 2 || !req.masks[0][0] || req.masks[0][1] {
		t.Errorf("reconstruct: %v %v", req, err)
	}
	req, err = decodeRequest([]byte(`{"pool":"mean","samples":[{"tokens":[{"values":[1,2],"position":[0,1]}]}]}`), epEmbed, testShape, testLimits())
	if err != nil || req.pool != "mean" {
		t.Errorf("embed: %v %v", req, err)
	}
}

func equal32(got []float32, want ...float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

const tok = `{"values":[1,2],"position":[0,1]}`

// Malformed bodies of every kind are refused with a message that says
// where (sample, token, field) and what.
func TestDecodeRefuses(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, c := range []struct {
		name, ep, body, want string
	}{
		{"empty", epPredict, ``, "body ends early"},
		{"whitespace", epPredict, "  \n", "body ends early"},
		{"not JSON", epPredict, `samples=1`, "invalid character"},
		{"array root", epPredict, `[1,2]`, "body: want an object, found an array"},
		{"null root", epPredict, `null`, "body: want an object, found null"},
		{"string root", epPredict, `"x"`, "want an object"},
		{"no samples", epPredict, `{}`, `no "samples" field`},
		{"samples null", epPredict, `{"samples":null}`, "samples: want an array, found null"},
		{"samples object", epPredict, `{"samples":{}}`, "want an array, found an object"},
		{"samples empty", epPredict, `{"samples":[]}`, "at least one sample"},
		{"too many samples", epPredict, `{"samples":[` + strings.Repeat(`{"tokens":[`+tok+`]},`, 4) + `{"tokens":[` + tok + `]}]}`, "more than 4 samples"},
		{"sample not object", epPredict, `{"samples":[1]}`, "sample 0: want an object, found the number 1"},
		{"unknown root field", epPredict, `{"samples":[{"tokens":[` + tok + `]}],"model":"x.safetensors"}`, `body: unknown field "model"`},
		{"pool on predict", epPredict, `{"pool":"cls","samples":[{"tokens":[` + tok + `]}]}`, `unknown field "pool"`},
		{"bad pool", epEmbed, `{"pool":"max","samples":[{"tokens":[` + tok + `]}]}`, `pool: "max": want "cls" or "mean"`},
		{"repeated field", epPredict, `{"samples":[{"tokens":[` + tok + `]}],"samples":[]}`, `field "samples" given twice`},
		{"unknown sample field", epPredict, `{"samples":[{"tokens":[` + tok + `]},{"tokens":[` + tok + `],"label":"x"}]}`, `sample 1: unknown field "label"`},
		{"queries on predict", epPredict, `{"samples":[{"tokens":[` + tok + `],"queries":[[0,1]]}]}`, `sample 0: unknown field "queries" (/v1/predict takes id, tokens here)`},
		{"no tokens", epPredict, `{"samples":[{"id":"x"}]}`, `sample 0: no "tokens" field`},
		{"empty tokens", epPredict, `{"samples":[{"tokens":[]}]}`, "sample 0: no tokens"},
		{"too many tokens", epPredict, `{"samples":[{"tokens":[` + strings.Repeat(tok+",", 5) + tok + `]}]}`, "sample 0: more than 5 tokens"},
		{"id number", epPredict, `{"samples":[{"id":7,"tokens":[` + tok + `]}]}`, "sample 0: id is the number 7, want a string"},
		{"id too long", epPredict, `{"samples":[{"id":"` + strings.Repeat("x", 300) + `","tokens":[` + tok + `]}]}`, "id of 300 bytes, want at most 256"},
		{"token not object", epPredict, `{"samples":[{"tokens":[[1,2]]}]}`, "sample 0 token 0: want an object, found an array"},
		{"token no values", epPredict, `{"samples":[{"tokens":[` + tok + `,{"position":[0,1]}]}]}`, `sample 0 token 1: no "values" field`},
		{"token no position", epPredict, `{"samples":[{"tokens":[{"values":[1,2]}]}]}`, `sample 0 token 0: no "position" field`},
		{"unknown token field", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"t":3}]}]}`, `sample 0 token 0: unknown field "t"`},
		{"masked on predict", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"masked":true}]}]}`, `unknown field "masked"`},
		{"too few values", epPredict, `{"samples":[{"tokens":[{"values":[1],"position":[0,1]}]}]}`, "sample 0 token 0: values has 1 numbers, the model takes 2"},
		{"too many values", epPredict, `{"samples":[{"tokens":[{"values":[1,2,3],"position":[0,1]}]}]}`, "sample 0 token 0: more than 2 numbers in values"},
		{"too many axes", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,1,2]}]}]}`, "sample 0 token 0: more than 2 numbers in position"},
		{"values not array", epPredict, `{"samples":[{"tokens":[{"values":1,"position":[0,1]}]}]}`, "sample 0 token 0: want an array, found the number 1"},
		{"string value", epPredict, `{"samples":[{"tokens":[{"values":["1",2],"position":[0,1]}]}]}`, `sample 0 token 0: values[0] is "1", want a number`},
		{"null value", epPredict, `{"samples":[{"tokens":[{"values":[null,2],"position":[0,1]}]}]}`, "values[0] is null, want a number"},
		{"bool value", epPredict, `{"samples":[{"tokens":[{"values":[true,2],"position":[0,1]}]}]}`, "values[0] is true"},
		{"NaN", epPredict, `{"samples":[{"tokens":[` + tok + `]},{"tokens":[` + tok + `,` + tok + `,{"values":[1,NaN],"position":[0,1]}]}]}`, "sample 1 token 2 values[1]: invalid character 'N'"},
		{"NaN hint", epPredict, `{"samples":[{"tokens":[{"values":[NaN,1],"position":[0,1]}]}]}`, "NaN and Infinity are not numbers in JSON"},
		{"Infinity", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"position":[Infinity,1]}]}]}`, "sample 0 token 0 position[0]: invalid character 'I'"},
		{"-Infinity", epPredict, `{"samples":[{"tokens":[{"values":[-Infinity,2],"position":[0,1]}]}]}`, "sample 0 token 0 values[0]: invalid character 'I' in numeric literal"},
		{"nan lower", epPredict, `{"samples":[{"tokens":[{"values":[nan,2],"position":[0,1]}]}]}`, "sample 0 token 0 values[0]: invalid character 'n' looking for beginning of value at byte 34 (NaN and Infinity"},
		{"float32 overflow", epPredict, `{"samples":[{"tokens":[{"values":[1e39,2],"position":[0,1]}]}]}`, "values[0] = 1e39 is outside"},
		{"overflow", epPredict, `{"samples":[{"tokens":[{"values":[1e999,2],"position":[0,1]}]}]}`, "sample 0 token 0: values[0] = 1e999 is outside ±1000"},
		{"value out of range", epPredict, `{"samples":[{"tokens":[` + tok + `,{"values":[1,2000],"position":[0,1]}]}]}`, "sample 0 token 1: values[1] = 2000 is outside ±1000"},
		{"position out of range", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,-2e6]}]}]}`, "sample 0 token 0: position[1] = -2e6 is outside ±1e+06"},
		{"hex number", epPredict, `{"samples":[{"tokens":[{"values":[0x10,2],"position":[0,1]}]}]}`, "invalid character 'x'"},
		{"leading zero", epPredict, `{"samples":[{"tokens":[{"values":[01,2],"position":[0,1]}]}]}`, "sample 0 token 0"},
		{"trailing comma", epPredict, `{"samples":[{"tokens":[{"values":[1,2,],"position":[0,1]}]}]}`, "sample 0 token 0"},
		{"missing comma", epPredict, `{"samples":[{"tokens":[{"values":[1 2],"position":[0,1]}]}]}`, "invalid character '2'"},
		{"single quotes", epPredict, `{'samples':[]}`, "invalid character '\\''"},
		{"comment", epPredict, `{"samples":[{"tokens":[` + tok + `]}]} // c`, "data after the JSON object"},
		{"trailing object", epPredict, `{"samples":[{"tokens":[` + tok + `]}]}{}`, "data after the JSON object"},
		{"truncated", epPredict, `{"samples":[{"tokens":[{"values":[1,2],"posi`, "sample 0 token 0: body ends early"},
		{"truncated number", epPredict, `{"samples":[{"tokens":[{"values":[1,2`, "body ends early"},
		{"byte order mark", epPredict, "\ufeff{\"samples\":[]}", "invalid character"},
		{"deep nesting", epPredict, deep, "want an object, found an array"},
		{"deep in values", epPredict, `{"samples":[{"tokens":[{"values":` + deep + `,"position":[0,1]}]}]}`, "values[0] is an array, want a number"},
		{"no queries", epInterpolate, `{"samples":[{"tokens":[` + tok + `]}]}`, `sample 0: no "queries" field`},
		{"empty queries", epInterpolate, `{"samples":[{"tokens":[` + tok + `],"queries":[]}]}`, "sample 0: no queries"},
		{"short query", epInterpolate, `{"samples":[{"tokens":[` + tok + `],"queries":[[0,1],[2]]}]}`, "sample 0 query 1: position has 1 numbers, the model takes 2"},
		{"too many queries", epInterpolate, `{"samples":[{"tokens":[` + tok + `],"queries":[[0,1],[0,1],[0,1],[0,1]]}]}`, "more than 3 queries"},
		{"query NaN", epInterpolate, `{"samples":[{"tokens":[` + tok + `],"queries":[[0,NaN]]}]}`, "sample 0 query 0 position[1]: invalid character 'N'"},
		{"nothing masked", epReconstruct, `{"samples":[{"tokens":[` + tok + `,` + tok + `]}]}`, "sample 0: 0 of 2 tokens masked"},
		{"all masked", epReconstruct, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"masked":true}]}]}`, "sample 0: 1 of 1 tokens masked"},
		{"masked not bool", epReconstruct, `{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"masked":1}]}]}`, "sample 0 token 0: masked is the number 1, want true or false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lim := testLimits()
			_, err := decodeRequest([]byte(c.body), c.ep, testShape, lim)
			var br *badRequest
			if !errors.As(err, &br) {
				t.Fatalf("error %v (%T), want a badRequest", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
			if json.Valid([]byte(c.body)) && strings.Contains(err.Error(), "invalid character") {
				t.Errorf("valid JSON refused as a syntax error: %v", err)
			}
		})
	}
}

// reference is the request schema for encoding/json.
type reference struct {
	Samples []struct {
		ID     *string `json:"id"`
		Tokens []struct {
			Values   []float32 `json:"values"`
			Position []float32 `json:"position"`
			Masked   bool      `json:"masked"`
		} `json:"tokens"`
		Queries [][]float32 `json:"queries"`
	} `json:"samples"`
	Pool string `json:"pool"`
}

// checkDecoded asserts what every accepted request satisfies: it is JSON
// that encoding/json reads to the same numbers, strings and flags, and it
// is within the limits.
func checkDecoded(t *testing.T, body []byte, ep string, req *request, lim Limits) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("accepted a body that is not JSON: %q", body)
	}
	var ref reference
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil {
		t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
	}
	if len(ref.Samples) != len(req.samples) || ref.Pool != req.pool {
		t.Fatalf("%d samples and pool %q, encoding/json reads %d and %q", len(req.samples), req.pool, len(ref.Samples), ref.Pool)
	}
	for i, rs := range ref.Samples {
		s := req.samples[i]
		if rs.ID != nil && *rs.ID != s.ID || rs.ID == nil && s.ID != strconv.Itoa(i) {
			t.Fatalf("sample %d: id %q, encoding/json reads %v", i, s.ID, rs.ID)
		}
		var vals, pos []float32
		var mask []bool
		for _, tk := range rs.Tokens {
			vals, pos, mask = append(vals, tk.Values...), append(pos, tk.Position...), append(mask, tk.Masked)
		}
		if !slices.Equal(vals, s.Values) || !slices.Equal(pos, s.Positions) {
			t.Fatalf("sample %d: values %v positions %v, encoding/json reads %v %v", i, s.Values, s.Positions, vals, pos)
		}
		if ep == epReconstruct && !slices.Equal(mask, req.masks[i]) {
			t.Fatalf("sample %d: mask %v, encoding/json reads %v", i, req.masks[i], mask)
		}
		if ep == epInterpolate && !slices.Equal(slices.Concat(rs.Queries...), req.queries[i]) {
			t.Fatalf("sample %d: queries %v, encoding/json reads %v", i, req.queries[i], rs.Queries)
		}
	}
	if n := len(req.samples); n < 1 || n > lim.MaxSamples {
		t.Fatalf("%d samples accepted", n)
	}
	for i, s := range req.samples {
		n := len(s.Values) / testShape.values
		if n < 1 || n > lim.MaxTokens || len(s.Values) != n*testShape.values || len(s.Positions) != n*testShape.axes || len(s.ID) > maxIDBytes {
			t.Fatalf("sample %d: %d values, %d positions, id of %d bytes", i, len(s.Values), len(s.Positions), len(s.ID))
		}
		for _, v := range s.Values {
			if math.IsNaN(float64(v)) || math.Abs(float64(v)) > lim.MaxAbsValue {
				t.Fatalf("sample %d: value %v accepted", i, v)
			}
		}
		for _, p := range s.Positions {
			if math.IsNaN(float64(p)) || math.Abs(float64(p)) > lim.MaxAbsPosition {
				t.Fatalf("sample %d: position %v accepted", i, p)
			}
		}
		switch ep {
		case epInterpolate:
			q := req.queries[i]
			if len(q) == 0 || len(q)%testShape.axes != 0 || len(q)/testShape.axes > lim.MaxQueries {
				t.Fatalf("sample %d: %d query coordinates", i, len(q))
			}
		case epReconstruct:
			if len(req.masks[i]) != n {
				t.Fatalf("sample %d: %d mask flags for %d tokens", i, len(req.masks[i]), n)
			}
		}
	}
}

// FuzzDecodeRequest: no body panics the decoder or gets past it with
// something the model cannot take; whatever it accepts is valid JSON that
// encoding/json reads the same way, within the limits. `go test` runs the seed corpus (testdata/fuzz and
// the f.Add seeds); `go test -fuzz FuzzDecodeRequest ./serve/` explores.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"samples":[{"id":"a","tokens":[{"values":[1,2],"position":[0,1]}]}]}`,
		`{"samples":[{"tokens":[{"values":[1,NaN],"position":[0,1]}]}]}`,
		`{"pool":"cls","samples":[{"tokens":[{"values":[1,2],"position":[0,1]}]}]}`,
		`{"samples":[{"tokens":[{"values":[1,2],"position":[0,1]}],"queries":[[0,1]]}]}`,
		`{"samples":[{"tokens":[{"values":[1,2],"position":[0,1],"masked":true},{"values":[1,2],"position":[0,2]}]}]}`,
		`{"samples":[{"tokens":[{"values":[1e999,2],"position":[0,1]}]}]}`,
		`[[[[[[]]]]]]`, `{"samples":[`, ``, `null`,
	} {
		for _, ep := range []string{epPredict, epEmbed, epInterpolate, epReconstruct} {
			f.Add([]byte(s), ep)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, ep string) {
		switch ep {
		case epPredict, epEmbed, epInterpolate, epReconstruct:
		default:
			ep = epPredict
		}
		lim := testLimits()
		req, err := decodeRequest(body, ep, testShape, lim)
		if err != nil {
			var br *badRequest
			if !errors.As(err, &br) || br.msg == "" {
				t.Fatalf("error %v (%T), want a badRequest with a message", err, err)
			}
			return
		}
		checkDecoded(t, body, ep, req, lim)
	})
}
