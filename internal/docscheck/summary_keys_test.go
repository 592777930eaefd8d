package docscheck

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/report"
)

var marshalerType = reflect.TypeFor[json.Marshaler]()

// summaryKey is a JSON key of summary.json with the path of the objects it
// sits in ("rulers.calibration"; "" at the top).
type summaryKey struct {
	path string
	key  string
}

// jsonTree lists every object key a type renders to, walked as
// encoding/json does: struct fields (embedded ones inlined), through
// pointers, slices and map values (map keys are data: strategy ids, ruler
// names, groups). A type with its own MarshalJSON is rendered from its
// zero value and its object's keys are listed, except Strategies, whose
// keys are the figure registry's (TestEveryColumnIsDefined).
func jsonTree(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]summaryKey) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		if t == reflect.TypeFor[report.Strategies]() {
			return
		}
		data, err := json.Marshal(reflect.New(t).Interface())
		var obj map[string]json.RawMessage
		if err == nil && json.Unmarshal(data, &obj) == nil {
			for k := range obj {
				*out = append(*out, summaryKey{path, k})
			}
		}
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "":
			jsonTree(f.Type, path, seen, out)
			continue
		case name == "":
			name = f.Name
		}
		*out = append(*out, summaryKey{path, name})
		jsonTree(f.Type, strings.TrimPrefix(path+"."+name, "."), seen, out)
	}
}

// TestEverySummaryKeyIsDefined fails when a key summary.json can hold (at
// any depth: meta, corpus, rulers, rereads, verdict, anchors, summarizer)
// has no definition in docs/metrics.md: add it where its block is
// described.
func TestEverySummaryKeyIsDefined(t *testing.T) {
	doc := readDoc(t, "metrics.md")
	var keys []summaryKey
	jsonTree(reflect.TypeFor[report.Summary](), "", map[reflect.Type]bool{}, &keys)
	top := map[string]bool{}
	for _, k := range keys {
		if k.path == "" {
			top[k.key] = true
		}
		if !documented(doc, k.key) {
			where := "the top level"
			if k.path != "" {
				where = "`" + k.path + "`"
			}
			t.Errorf("summary.json key %q (in %s) is not defined in docs/metrics.md", k.key, where)
		}
	}
	// The walk must reach the blocks this test exists for, and inside
	// the custom-rendered error statistics.
	for _, want := range []summaryKey{{"", "rulers"}, {"", "verdict"}, {"verdict.ranked", "layer"}, {"rulers.errors.calls", "median_abs_err"}} {
		found := false
		for _, k := range keys {
			found = found || k == want
		}
		if !found {
			t.Errorf("the walk of summary.json's type did not reach %q in %q", want.key, want.path)
		}
	}
	if len(top) < 8 {
		t.Errorf("only %d top-level keys found: %v", len(top), top)
	}
}
