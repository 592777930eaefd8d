package anchors

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads a rule set from YAML. Decoding is strict: an unknown key, a
// missing required key, a wrong type, a bad regex or an out-of-range number
// is an error that names origin and the line; every such error in the file is
// reported, joined.
func Parse(data []byte, origin string) (*RuleSet, error) {
	p := &parser{origin: origin}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", origin, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty rule set", origin)
	}
	s := p.ruleSet(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	s.Origin = origin
	s.Source = append([]byte(nil), data...)
	return s, nil
}

// Resolve returns the built-in rule set named spec, or else parses the file
// at path spec read with read (os.ReadFile in the CLI).
func Resolve(spec string, read func(path string) ([]byte, error)) (*RuleSet, error) {
	if s, err := Builtin(spec); err == nil {
		return s, nil
	}
	if !strings.ContainsAny(spec, "/.\\") {
		return nil, fmt.Errorf("unknown rule set %q (built-in: %s; or give a YAML file path)", spec, strings.Join(BuiltinNames(), ", "))
	}
	data, err := read(spec)
	if err != nil {
		return nil, fmt.Errorf("rule set %s: %w", spec, err)
	}
	return Parse(data, spec)
}

type parser struct {
	origin string
	errs   []error
	// nodes counts the nodes walked; aliases can make a small file a huge
	// tree ("billion laughs"), so the walk is bounded.
	nodes int
}

// maxNodes bounds the nodes a rule set may expand to.
const maxNodes = 100000

const maxErrors = 20

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	if len(p.errs) == maxErrors {
		p.errs = append(p.errs, fmt.Errorf("%s: too many errors", p.origin))
	}
	if len(p.errs) > maxErrors {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.origin, line, fmt.Sprintf(format, args...)))
}

// field is one key of a mapping.
type field struct {
	key string
	k   *yaml.Node
	v   *yaml.Node
}

// fields returns the pairs of a mapping node, reporting duplicate keys and
// keys outside allowed. It reports and returns nil for a non-mapping.
func (p *parser) fields(n *yaml.Node, what string, allowed ...string) []field {
	n = deref(n)
	if !p.visit(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping, got %s", what, kindName(n))
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if k.Kind != yaml.ScalarNode {
			p.errf(k, "%s: keys must be plain names", what)
			continue
		}
		if seen[key] {
			p.errf(k, "%s: key %q given twice", what, key)
			continue
		}
		seen[key] = true
		ok := false
		for _, a := range allowed {
			if a == key {
				ok = true
				break
			}
		}
		if !ok {
			p.errf(k, "%s: unknown key %q (allowed: %s)", what, key, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, field{key, k, v})
	}
	return out
}

// visit counts a node and its children against maxNodes; it reports false
// (once, with an error) when the bound is passed.
func (p *parser) visit(n *yaml.Node) bool {
	before := p.nodes
	p.nodes += len(n.Content) + 1
	if p.nodes > maxNodes {
		if before <= maxNodes {
			p.errf(n, "rule set expands to more than %d YAML nodes (aliases?)", maxNodes)
		}
		return false
	}
	return true
}

// deref follows YAML aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func (p *parser) str(n *yaml.Node, what string) string {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errf(n, "%s must be a string, got %s", what, kindName(n))
		return ""
	}
	return n.Value
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err == nil {
			return b
		}
	}
	p.errf(n, "%s must be true or false, got %s", what, kindName(n))
	return false
}

func (p *parser) integer(n *yaml.Node, what string) int {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.Atoi(n.Value)
		if err == nil && v >= 0 {
			return v
		}
	}
	p.errf(n, "%s must be a non-negative integer, got %s", what, kindName(n))
	return 0
}

// unit reads a number in [0, 1].
func (p *parser) unit(n *yaml.Node, what string) float64 {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!float" || n.Tag == "!!int") {
		v, err := strconv.ParseFloat(n.Value, 64)
		if err == nil && !math.IsNaN(v) && v >= 0 && v <= 1 {
			return v
		}
	}
	p.errf(n, "%s must be a number between 0 and 1, got %s", what, kindName(n))
	return 0
}

// strs reads a string or a list of strings.
func (p *parser) strs(n *yaml.Node, what string) []string {
	n = deref(n)
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) == 0 {
			p.errf(n, "%s: empty list", what)
		}
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, p.str(c, what))
		}
		return out
	}
	return []string{p.str(n, what)}
}

var nameRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (p *parser) name(n *yaml.Node, what string) string {
	s := p.str(n, what)
	if s != "" && !nameRE.MatchString(s) {
		p.errf(n, "%s %q: use letters, digits, '-', '_' and '.'", what, s)
	}
	return s
}

func (p *parser) anchorType(n *yaml.Node) Type {
	s := p.str(n, "type")
	t, ok := ParseType(s)
	if !ok && s != "" {
		p.errf(n, "unknown anchor type %q (known: %s)", s, typeNames())
	}
	return t
}

func (p *parser) ruleSet(n *yaml.Node) *RuleSet {
	s := &RuleSet{}
	var have = map[string]bool{}
	for _, f := range p.fields(n, "rule set", "name", "description", "threshold", "synthetic", "rules") {
		have[f.key] = true
		switch f.key {
		case "name":
			s.Name = p.name(f.v, "name")
		case "description":
			s.Description = p.str(f.v, "description")
		case "threshold":
			s.Threshold = p.unit(f.v, "threshold")
		case "synthetic":
			s.Synthetic = p.synthetic(f.v)
		case "rules":
			s.Rules = p.rules(f.v)
		}
	}
	for _, k := range []string{"name", "threshold", "rules"} {
		if !have[k] && deref(n).Kind == yaml.MappingNode {
			p.errf(n, "rule set: missing %q", k)
		}
	}
	return s
}

func (p *parser) synthetic(n *yaml.Node) *SyntheticSpec {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "none") {
		return nil
	}
	sp := &SyntheticSpec{}
	have := map[string]bool{}
	for _, f := range p.fields(n, "synthetic", "type", "weight", "confidence", "description") {
		have[f.key] = true
		switch f.key {
		case "type":
			sp.Type = p.anchorType(f.v)
		case "weight":
			sp.Weight = p.unit(f.v, "weight")
		case "confidence":
			sp.Confidence = p.unit(f.v, "confidence")
		case "description":
			sp.Description = p.str(f.v, "description")
		}
	}
	for _, k := range []string{"type", "weight", "confidence"} {
		if !have[k] && n.Kind == yaml.MappingNode {
			p.errf(n, "synthetic: missing %q (or write `synthetic: none`)", k)
		}
	}
	return sp
}

func (p *parser) rules(n *yaml.Node) []*Rule {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "rules must be a list, got %s", kindName(n))
		return nil
	}
	var out []*Rule
	names := map[string]int{}
	for _, c := range n.Content {
		r := p.rule(c)
		if r.Name != "" {
			if line, dup := names[r.Name]; dup {
				p.errf(c, "rule %q already defined on line %d", r.Name, line)
			}
			names[r.Name] = r.Line
		}
		out = append(out, r)
	}
	return out
}

func (p *parser) rule(n *yaml.Node) *Rule {
	r := &Rule{Line: deref(n).Line}
	have := map[string]bool{}
	for _, f := range p.fields(n, "rule", "name", "type", "weight", "confidence", "description", "when") {
		have[f.key] = true
		switch f.key {
		case "name":
			r.Name = p.name(f.v, "rule name")
		case "type":
			r.Type = p.anchorType(f.v)
		case "weight":
			r.Weight = p.unit(f.v, "weight")
		case "confidence":
			r.Confidence = p.unit(f.v, "confidence")
		case "description":
			r.Description = p.str(f.v, "description")
		case "when":
			r.When = p.condList(f.v, "when")
		}
	}
	for _, k := range []string{"name", "type", "weight", "confidence", "when"} {
		if !have[k] && deref(n).Kind == yaml.MappingNode {
			p.errf(n, "rule %q: missing %q", r.Name, k)
		}
	}
	return r
}

// condList reads a list of conditions, or a single condition mapping.
func (p *parser) condList(n *yaml.Node, what string) []*Cond {
	n = deref(n)
	if n.Kind == yaml.SequenceNode {
		if !p.visit(n) {
			return nil
		}
		if len(n.Content) == 0 {
			p.errf(n, "%s: empty list of conditions", what)
		}
		out := make([]*Cond, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, p.cond(c))
		}
		return out
	}
	return []*Cond{p.cond(n)}
}

var condKeys = condNames[:]

// cond reads one condition: a mapping with exactly one condition key.
func (p *parser) cond(n *yaml.Node) *Cond {
	n = deref(n)
	c := &Cond{}
	fs := p.fields(n, "condition", condKeys...)
	if len(fs) != 1 {
		if len(fs) > 1 {
			p.errf(n, "condition has %d keys; give one per list item (a list means all of them)", len(fs))
		} else if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
			p.errf(n, "empty condition")
		}
		return c
	}
	f := fs[0]
	c.Kind = CondKind(slices.Index(condKeys, f.key))
	switch c.Kind {
	case CondAll, CondAny:
		c.Kids = p.condList(f.v, f.key)
	case CondNot:
		c.Kids = []*Cond{p.cond(f.v)}
	case CondPreviousError, CondChanged, CondChecked, CondFailThenPass, CondFixedInTurn, CondPassesAgain, CondExercised:
		c.Bool = p.boolean(f.v, f.key)
	case CondCall:
		c.Call = p.callTest(f.v)
	case CondResult:
		c.Result = p.resultTest(f.v)
	case CondUser, CondResponse, CondNextUser:
		c.Text = p.text(f.v, f.key)
	case CondGit:
		c.Git = p.strs(f.v, "git")
		for _, g := range c.Git {
			if !slices.Contains(GitKinds, g) {
				p.errf(f.v, "git: unknown milestone %q (known: %s)", g, strings.Join(GitKinds, ", "))
			}
		}
	}
	return c
}

func (p *parser) callTest(n *yaml.Node) *CallTest {
	t := &CallTest{Min: 1}
	fs := p.fields(n, "call", "tool", "command", "path", "input", "min")
	if len(fs) == 0 && deref(n).Kind == yaml.MappingNode {
		p.errf(n, "call: give at least one of tool, command, path, input, min")
	}
	for _, f := range fs {
		switch f.key {
		case "tool":
			t.Tools = p.strs(f.v, "tool")
		case "command":
			t.Command = p.text(f.v, "command")
		case "path":
			t.Path = p.text(f.v, "path")
		case "input":
			t.Input = p.text(f.v, "input")
		case "min":
			t.Min = p.count(f.v)
		}
	}
	return t
}

func (p *parser) resultTest(n *yaml.Node) *ResultTest {
	t := &ResultTest{Min: 1}
	fs := p.fields(n, "result", "tool", "success", "last", "output", "command", "min")
	if len(fs) == 0 && deref(n).Kind == yaml.MappingNode {
		p.errf(n, "result: give at least one of tool, success, last, output, command, min")
	}
	for _, f := range fs {
		switch f.key {
		case "tool":
			t.Tools = p.strs(f.v, "tool")
		case "success":
			b := p.boolean(f.v, "success")
			t.Success = &b
		case "last":
			t.Last = p.boolean(f.v, "last")
		case "output":
			t.Output = p.text(f.v, "output")
		case "command":
			t.Command = p.text(f.v, "command")
		case "min":
			t.Min = p.count(f.v)
		}
	}
	if t.Last && t.Min > 1 {
		p.errf(n, "result: last and min > 1 cannot both hold")
	}
	return t
}

// count reads a `min` count: an integer of at least 1.
func (p *parser) count(n *yaml.Node) int {
	v := p.integer(n, "min")
	if v < 1 {
		p.errf(n, "min must be at least 1")
		return 1
	}
	return v
}

// text reads a text matcher: a mapping with one operator (plus `case` for
// contains and regex), or a list meaning all of its items.
func (p *parser) text(n *yaml.Node, what string) *Text {
	n = deref(n)
	t := &Text{}
	if n.Kind == yaml.SequenceNode {
		t.Op = TextAll
		t.Kids = p.textList(n, what)
		return t
	}
	fs := p.fields(n, what, "contains", "regex", "case", "longer_than", "shorter_than", "all", "any", "not", "says")
	var op *field
	var caseF *field
	for i := range fs {
		if fs[i].key == "case" {
			caseF = &fs[i]
			continue
		}
		if op != nil {
			p.errf(fs[i].k, "%s: %q and %q in one matcher; use all: or any:", what, op.key, fs[i].key)
			continue
		}
		op = &fs[i]
	}
	if op == nil {
		if n.Kind == yaml.MappingNode {
			p.errf(n, "%s: no matcher (contains, regex, says, longer_than, shorter_than, all, any, not)", what)
		}
		return t
	}
	switch op.key {
	case "contains":
		t.Op = TextContains
		t.Needles = p.strs(op.v, "contains")
		for _, s := range t.Needles {
			if s == "" {
				p.errf(op.v, "contains: empty string")
			}
		}
	case "regex":
		t.Op = TextRegex
		t.Pattern = p.str(op.v, "regex")
		if t.Pattern == "" {
			p.errf(op.v, "regex: empty pattern (it would match every text; write contains or drop the condition)")
		}
	case "longer_than":
		t.Op = TextLongerThan
		t.N = p.integer(op.v, "longer_than")
	case "shorter_than":
		t.Op = TextShorterThan
		t.N = p.integer(op.v, "shorter_than")
	case "all", "any":
		t.Op = TextAll
		if op.key == "any" {
			t.Op = TextAny
		}
		v := deref(op.v)
		if v.Kind != yaml.SequenceNode {
			p.errf(v, "%s: %s needs a list", what, op.key)
			return t
		}
		t.Kids = p.textList(v, what)
	case "not":
		t.Op = TextNot
		t.Kids = []*Text{p.text(op.v, what)}
	case "says":
		t.Op = TextSays
		t.Lexicons = p.strs(op.v, "says")
		for _, l := range t.Lexicons {
			if _, ok := lexicons[l]; !ok {
				p.errf(op.v, "says: unknown lexicon %q (known: %s)", l, strings.Join(LexiconNames(), ", "))
			}
		}
	}
	needsCase := t.Op == TextContains || t.Op == TextRegex
	switch {
	case needsCase && caseF == nil:
		p.errf(op.k, "%s: %s needs `case: sensitive` or `case: insensitive`", what, op.key)
	case !needsCase && caseF != nil:
		p.errf(caseF.k, "%s: case applies to contains and regex only", what)
	case caseF != nil:
		switch v := p.str(caseF.v, "case"); v {
		case "sensitive":
		case "insensitive":
			t.Fold = true
		default:
			p.errf(caseF.v, "case must be sensitive or insensitive, got %q", v)
		}
	}
	if t.Op == TextRegex && t.Pattern != "" {
		pat := t.Pattern
		if t.Fold {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			p.errf(op.v, "regex: %v", err)
		}
		t.re = re
	}
	return t
}

func (p *parser) textList(n *yaml.Node, what string) []*Text {
	if !p.visit(n) {
		return nil
	}
	if len(n.Content) == 0 {
		p.errf(n, "%s: empty list", what)
	}
	out := make([]*Text, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, p.text(c, what))
	}
	return out
}
