package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// MaxBodyBytes is the largest request body the simulator reads.
const MaxBodyBytes = 1 << 20

// Str returns v if it is a string, else "".
func Str(v any) string {
	s, _ := v.(string)
	return s
}

// TagsOf returns the tags of a core entity.
func TagsOf(obj map[string]any) []string {
	list, _ := obj["tags"].([]any)
	var out []string
	for _, t := range list {
		out = append(out, Str(t))
	}
	return out
}

// LabelsOf returns the labels of a control plane.
func LabelsOf(obj map[string]any) map[string]string {
	m, _ := obj["labels"].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = Str(v)
	}
	return out
}

// ParentOf returns the id in obj's reference field (e.g. a route's service.id, a credential's consumer.id).
func ParentOf(obj map[string]any, field string) string {
	if field == "" {
		return ""
	}
	ref, _ := obj[field].(map[string]any)
	return Str(ref["id"])
}

// DeepCopy copies decoded JSON values.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = DeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = DeepCopy(e)
		}
		return out
	default:
		return v
	}
}

// DecodeJSON decodes b into plain values where integral numbers are int64 and
// others float64, so stored objects compare and encode predictably.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			if i, err := t.Int64(); err == nil {
				return i
			}
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fixNumbers(e)
		}
	}
	return v
}

// normalizeJSON turns any Go value into the plain decoded JSON form.
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(b)
}

// ReadObject reads a JSON object request body (an empty body is an empty object).
func ReadObject(r *http.Request) (map[string]any, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return object{}, nil
	}
	v, err := DecodeJSON(b)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(object)
	if !ok {
		return nil, fmt.Errorf("request body must be a JSON object")
	}
	return obj, nil
}

// WriteJSON answers status with v encoded as JSON, of contentType.
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// InvalidField is one field of a request that Kong's OpenAPI document rejects.
type InvalidField struct {
	// Field is the parameter or the body's field ("labels.env"); Source "body", "query", "path" or "header".
	Field, Source string
	// Keyword is the schema rule broken ("required", "maxLength"...), Reason why.
	Keyword, Reason string
}

// MatchFilters applies the filter[field] and filter[field][op] parameters of q (ops eq, the default, neq, contains
// and oeq, a comma-separated list) to fields, a string value per field that may be filtered; a filter of another
// field is ignored.
func MatchFilters(fields map[string]string, q map[string][]string) bool {
	for key, values := range q {
		rest, ok := strings.CutPrefix(key, "filter[")
		if !ok || len(values) == 0 {
			continue
		}
		field, op, _ := strings.Cut(rest, "]")
		got, known := fields[field]
		if !known {
			continue
		}
		want := values[0]
		switch strings.Trim(op, "[]") {
		case "", "eq":
			if got != want {
				return false
			}
		case "neq":
			if got == want {
				return false
			}
		case "contains":
			if !strings.Contains(got, want) {
				return false
			}
		case "oeq":
			if !slices.Contains(strings.Split(want, ","), got) {
				return false
			}
		}
	}
	return true
}
