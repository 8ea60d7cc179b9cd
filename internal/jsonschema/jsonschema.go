// Package jsonschema validates JSON documents against the subset of JSON
// Schema (draft-07) that docs/plan-report.schema.json uses: type, const,
// enum, properties, required, additionalProperties (false or a schema),
// items, minimum, maximum, pattern and local $ref "#/definitions/NAME".
// Any other keyword is an error, so the schema cannot silently outgrow the
// validator. It exists for tests.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Schema is a parsed schema document.
type Schema struct {
	root map[string]any
}

var known = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "definitions": true,
	"type": true, "const": true, "enum": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "minimum": true, "maximum": true,
	"pattern": true, "$ref": true,
}

// Parse reads a schema.
func Parse(b []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("jsonschema: %w", err)
	}
	return &Schema{root: root}, nil
}

// Load reads and parses the schema file path, failing tb when it cannot.
func Load(tb testing.TB, path string) *Schema {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := Parse(raw)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return s
}

// Validate checks doc (JSON text) and returns every violation, each
// naming the JSON pointer of the value.
func (s *Schema) Validate(doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var errs []string
	s.check(s.root, v, "", &errs)
	return errs
}

func (s *Schema) check(sch map[string]any, v any, path string, errs *[]string) {
	fail := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "/"
		}
		*errs = append(*errs, p+": "+fmt.Sprintf(format, args...))
	}
	keys := make([]string, 0, len(sch))
	for k := range sch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			fail("schema keyword %q is not supported by this validator", k)
		}
	}
	if ref, ok := sch["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/definitions/")
		defs, _ := s.root["definitions"].(map[string]any)
		d, ok := defs[name].(map[string]any)
		if !found || !ok {
			fail("unresolved $ref %q", ref)
			return
		}
		s.check(d, v, path, errs)
	}
	if t, ok := sch["type"].(string); ok && !hasType(v, t) {
		fail("%s expected, got %s", t, typeOf(v))
		return
	}
	if c, ok := sch["const"]; ok && !equal(c, v) {
		fail("must be %v, got %v", c, v)
	}
	if e, ok := sch["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || equal(x, v)
		}
		if !found {
			fail("%v is not one of %v", v, e)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := sch["minimum"].(float64); ok && f < m {
			fail("%v is below the minimum %v", f, m)
		}
		if m, ok := sch["maximum"].(float64); ok && f > m {
			fail("%v is above the maximum %v", f, m)
		}
	}
	if p, ok := sch["pattern"].(string); ok {
		if str, ok := v.(string); ok && !regexp.MustCompile(p).MatchString(str) {
			fail("%q does not match %s", str, p)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := sch["properties"].(map[string]any)
		if req, ok := sch["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("required property %q missing", r)
				}
			}
		}
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if ps, ok := props[k].(map[string]any); ok {
				s.check(ps, obj[k], path+"/"+k, errs)
				continue
			}
			switch ap := sch["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("unexpected property %q", k)
				}
			case map[string]any:
				s.check(ap, obj[k], path+"/"+k, errs)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := sch["items"].(map[string]any); ok {
			for i, x := range arr {
				s.check(items, x, fmt.Sprintf("%s/%d", path, i), errs)
			}
		}
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return typeOf(v) == t
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func equal(schemaVal, v any) bool {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		sf, ok := schemaVal.(float64)
		return ok && sf == f
	}
	return reflect.DeepEqual(schemaVal, v)
}
