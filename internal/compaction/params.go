package compaction

import (
	"reflect"
	"strings"
)

// RuleSetOf returns the rule set a strategy's parameters name (their
// `rules` parameter), or "" for strategies without anchors.
func RuleSetOf(params any) string {
	v := reflect.ValueOf(params)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == "rules" && f.Type.Kind() == reflect.String {
			return v.Field(i).String()
		}
	}
	return ""
}
