package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"romae/model"
)

// spec is openapi.yaml parsed.
type spec struct{ doc map[string]any }

func loadSpec(t *testing.T) spec {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return spec{doc}
}

// resolve follows a $ref ("#/components/...").
func (s spec) resolve(t *testing.T, node map[string]any) map[string]any {
	t.Helper()
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		var cur any = s.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("bad $ref %s", ref)
			}
			cur = m[part]
		}
		if node, ok = cur.(map[string]any); !ok {
			t.Fatalf("$ref %s resolves to nothing", ref)
		}
	}
}

func (s spec) get(t *testing.T, node map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		next, ok := s.resolve(t, node)[p].(map[string]any)
		if !ok {
			t.Fatalf("openapi.yaml: no %s under %v", p, path)
		}
		node = next
	}
	return s.resolve(t, node)
}

// validate checks a JSON value against a schema (type, required,
// properties, additionalProperties, items, enum, minItems): the subset
// openapi.yaml uses.
func (s spec) validate(t *testing.T, schema map[string]any, v any, where string) {
	t.Helper()
	schema = s.resolve(t, schema)
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		t.Errorf("%s: %v is not one of %v", where, v, enum)
	}
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: %v is not an object", where, v)
			return
		}
		for _, r := range asList(schema["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				t.Errorf("%s: required %q missing from %v", where, r, obj)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, val := range obj {
			if p, ok := props[k].(map[string]any); ok {
				s.validate(t, p, val, where+"."+k)
				continue
			}
			switch extra := schema["additionalProperties"].(type) {
			case map[string]any:
				s.validate(t, extra, val, where+"."+k)
			case bool:
				if !extra {
					t.Errorf("%s: property %q is not in the schema", where, k)
				}
			default:
				if props != nil {
					t.Errorf("%s: property %q is not in the schema", where, k)
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			t.Errorf("%s: %v is not an array", where, v)
			return
		}
		if min, ok := schema["minItems"].(int); ok && len(arr) < min {
			t.Errorf("%s: %d items, schema wants ≥ %d", where, len(arr), min)
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range arr {
				s.validate(t, items, x, fmt.Sprintf("%s[%d]", where, i))
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			t.Errorf("%s: %v is not a string", where, v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			t.Errorf("%s: %v is not a number", where, v)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			t.Errorf("%s: %v is not an integer", where, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			t.Errorf("%s: %v is not a boolean", where, v)
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }

// openapi.yaml describes exactly the server's routes and methods, the
// request fields the decoder takes, and the answers the handlers give:
// each endpoint's example request is sent to a live server and its
// answer, like the error answers, checked against the schema.
func TestOpenAPIMatchesHandlers(t *testing.T) {
	sp := loadSpec(t)
	dir := t.TempDir()
	servers := map[string]*testServer{
		model.TaskClassify: startServer(t, saveTiny(t, dir, model.TaskClassify, 1), Config{}),
		model.TaskPretrain: startServer(t, saveTiny(t, dir, model.TaskPretrain, 2), Config{}),
	}
	paths := sp.doc["paths"].(map[string]any)
	var routed []string
	for _, rt := range servers[model.TaskClassify].routes() {
		routed = append(routed, rt.path)
		item, ok := paths[rt.path].(map[string]any)
		if !ok {
			t.Errorf("route %s is not in openapi.yaml", rt.path)
			continue
		}
		var want []string
		for _, m := range rt.methods {
			if m != http.MethodHead {
				want = append(want, strings.ToLower(m))
			}
		}
		if got := keys(item); !slices.Equal(got, sorted(want)) {
			t.Errorf("%s: openapi.yaml has methods %v, the server answers %v", rt.path, got, want)
		}
	}
	if got, want := keys(paths), sorted(routed); !slices.Equal(got, want) {
		t.Errorf("openapi.yaml paths %v, server routes %v", got, want)
	}

	for _, ep := range []string{epPredict, epEmbed, epInterpolate, epReconstruct} {
		op := sp.get(t, paths, "/v1/"+ep, "post")
		media := sp.get(t, op, "requestBody", "content", "application/json")
		req := sp.resolve(t, media["schema"].(map[string]any))
		if got := keys(req["properties"].(map[string]any)); !slices.Equal(got, sorted(rootFields(ep))) {
			t.Errorf("%s request fields %v, the decoder takes %v", ep, got, rootFields(ep))
		}
		sample := sp.get(t, req, "properties", "samples", "items")
		if got := keys(sample["properties"].(map[string]any)); !slices.Equal(got, sorted(sampleFields(ep))) {
			t.Errorf("%s sample fields %v, the decoder takes %v", ep, got, sampleFields(ep))
		}
		token := sp.get(t, sample, "properties", "tokens", "items")
		if got := keys(token["properties"].(map[string]any)); !slices.Equal(got, sorted(tokenFields(ep))) {
			t.Errorf("%s token fields %v, the decoder takes %v", ep, got, tokenFields(ep))
		}
		example, err := json.Marshal(media["example"])
		if err != nil {
			t.Fatal(err)
		}
		sp.validate(t, req, decodeJSON(t, example), ep+" example")
		ts := servers[model.TaskClassify]
		if ep == epInterpolate || ep == epReconstruct {
			ts = servers[model.TaskPretrain]
		}
		code, body := rawPost(t, ts, "/v1/"+ep, string(example))
		if code != http.StatusOK {
			t.Errorf("%s example: %d %s", ep, code, body)
			continue
		}
		sp.validate(t, sp.get(t, op, "responses", "200", "content", "application/json", "schema"), decodeJSON(t, body), ep+" answer")
		code, body = rawPost(t, ts, "/v1/"+ep, `{"samples":[{"tokens":[{"values":[1],"position":[0,1]}]}]}`)
		if code != http.StatusBadRequest {
			t.Errorf("%s bad request: %d", ep, code)
		}
		sp.validate(t, sp.get(t, op, "responses", "400", "content", "application/json", "schema"), decodeJSON(t, body), ep+" 400")
		if _, ok := op["responses"].(map[string]any)["429"]; !ok {
			t.Errorf("%s: openapi.yaml lacks the 429 answer", ep)
		}
	}
	for _, p := range []string{"/v1/model", "/healthz", "/readyz"} {
		resp, err := servers[model.TaskClassify].client.Get(servers[model.TaskClassify].url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sp.validate(t, sp.get(t, paths, p, "get", "responses", "200", "content", "application/json", "schema"), decodeJSON(t, body), p)
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func rawPost(t *testing.T, ts *testServer, path, body string) (int, []byte) {
	t.Helper()
	resp, err := ts.client.Post(ts.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
