package anchors

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// WithThreshold returns a copy of the set whose threshold is t (what
// `compactbench tune` sweeps). The copy is parsed from the set's source with
// the threshold's value rewritten in place, so its Source, Hash and rules
// show say what it is; its origin notes the change. s is not modified.
func (s *RuleSet) WithThreshold(t float64) (*RuleSet, error) {
	if math.IsNaN(t) || t < 0 || t > 1 {
		return nil, fmt.Errorf("rule set %s: threshold must be between 0 and 1, got %v", s.Name, t)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(s.Source, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("rule set %s: source does not parse: %v", s.Name, err)
	}
	root := deref(doc.Content[0])
	var val *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "threshold" {
			val = root.Content[i+1]
		}
	}
	if val == nil {
		return nil, fmt.Errorf("rule set %s: no threshold in its source", s.Name)
	}
	num := strconv.FormatFloat(t, 'f', -1, 64)
	if !bytes.Contains([]byte(num), []byte(".")) {
		num += ".0"
	}
	src, ok := replaceScalar(s.Source, val, num)
	if !ok { // an unusual spelling (a tag, an alias): re-encode the document
		val.Value, val.Tag, val.Style, val.Alias, val.Kind = num, "!!float", 0, nil, yaml.ScalarNode
		out, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("rule set %s: %w", s.Name, err)
		}
		src = out
	}
	c, err := Parse(src, s.Origin)
	if err != nil {
		return nil, err
	}
	c.Origin = fmt.Sprintf("%s (threshold %s)", s.Origin, num)
	return c, nil
}

// replaceScalar replaces the plain scalar n, found at its line and column,
// by v.
func replaceScalar(src []byte, n *yaml.Node, v string) ([]byte, bool) {
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Line < 1 || n.Column < 1 {
		return nil, false
	}
	off := 0
	for line := 1; line < n.Line; line++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return nil, false
		}
		off += i + 1
	}
	off += n.Column - 1
	if off+len(n.Value) > len(src) || string(src[off:off+len(n.Value)]) != n.Value {
		return nil, false
	}
	out := make([]byte, 0, len(src)+len(v))
	out = append(out, src[:off]...)
	out = append(out, v...)
	return append(out, src[off+len(n.Value):]...), true
}
