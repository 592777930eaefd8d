package anchors

import (
	"fmt"
	"strings"
	"testing"
)

const minimal = `name: mine
threshold: 0.5
rules:
  - name: r
    type: task-completion
    weight: 0.8
    confidence: 0.9
    when:
      - call: {tool: Edit}
`

func TestParseMinimal(t *testing.T) {
	s, err := Parse([]byte(minimal), "mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mine" || s.Threshold != 0.5 || s.Synthetic != nil || len(s.Rules) != 1 {
		t.Fatalf("%+v", s)
	}
	r := s.Rules[0]
	if r.Name != "r" || r.Type != TaskCompletion || r.Weight != 0.8 || r.Confidence != 0.9 || r.Line != 4 ||
		len(r.When) != 1 || r.When[0].Kind != CondCall || r.When[0].Call.Tools[0] != "Edit" {
		t.Fatalf("%+v", r)
	}
}

// TestParseErrors: strict decoding names the file and the line of each
// mistake.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top key", "name: a\nthreshhold: 0.9\nrules: []\n",
			[]string{`x.yaml:2: rule set: unknown key "threshhold"`, `x.yaml:1: rule set: missing "threshold"`}},
		{"unknown rule key", strings.Replace(minimal, "    weight: 0.8", "    wieght: 0.8", 1),
			[]string{`x.yaml:6: rule: unknown key "wieght"`, `missing "weight"`}},
		{"contains without case", strings.Replace(minimal, "call: {tool: Edit}", "user: {contains: done}", 1),
			[]string{"x.yaml:9: user: contains needs `case: sensitive` or `case: insensitive`"}},
		{"bad case value", strings.Replace(minimal, "call: {tool: Edit}", "user: {contains: done, case: lower}", 1),
			[]string{`x.yaml:9: case must be sensitive or insensitive, got "lower"`}},
		{"case on longer_than", strings.Replace(minimal, "call: {tool: Edit}", "user: {longer_than: 3, case: sensitive}", 1),
			[]string{"x.yaml:9: user: case applies to contains and regex only"}},
		{"bad regex", strings.Replace(minimal, "call: {tool: Edit}", "response: {regex: 'a(b', case: sensitive}", 1),
			[]string{"x.yaml:9: regex: error parsing regexp"}},
		{"unknown type", strings.Replace(minimal, "task-completion", "task-complete", 1),
			[]string{`x.yaml:5: unknown anchor type "task-complete"`}},
		{"confidence out of range", strings.Replace(minimal, "confidence: 0.9", "confidence: 90", 1),
			[]string{"x.yaml:7: confidence must be a number between 0 and 1"}},
		{"two condition keys in one item", strings.Replace(minimal, "call: {tool: Edit}", "{call: {tool: Edit}, previous_error: true}", 1),
			[]string{"x.yaml:9: condition has 2 keys"}},
		{"unknown condition", strings.Replace(minimal, "call: {tool: Edit}", "tool: Edit", 1),
			[]string{`x.yaml:9: condition: unknown key "tool"`}},
		{"unknown call key", strings.Replace(minimal, "call: {tool: Edit}", "call: {name: Edit}", 1),
			[]string{`x.yaml:9: call: unknown key "name"`}},
		{"previous_error not bool", strings.Replace(minimal, "call: {tool: Edit}", "previous_error: yes please", 1),
			[]string{"x.yaml:9: previous_error must be true or false"}},
		{"duplicate rule", minimal + "  - name: r\n    type: task-completion\n    weight: 0.8\n    confidence: 0.9\n    when: {previous_error: true}\n",
			[]string{`x.yaml:10: rule "r" already defined on line 4`}},
		{"duplicate key", strings.Replace(minimal, "    weight: 0.8", "    weight: 0.8\n    weight: 0.7", 1),
			[]string{`x.yaml:7: rule: key "weight" given twice`}},
		{"two operators in one matcher", strings.Replace(minimal, "call: {tool: Edit}", "user: {contains: a, regex: b, case: sensitive}", 1),
			[]string{`x.yaml:9: user: "contains" and "regex" in one matcher; use all: or any:`}},
		{"synthetic incomplete", strings.Replace(minimal, "rules:", "synthetic: {type: user-checkpoint}\nrules:", 1),
			[]string{`x.yaml:3: synthetic: missing "weight"`}},
		{"empty regex", strings.Replace(minimal, "call: {tool: Edit}", "user: {regex: '', case: sensitive}", 1),
			[]string{"x.yaml:9: regex: empty pattern"}},
		{"empty regex, insensitive, nested", strings.Replace(minimal, "call: {tool: Edit}", "response: {not: {any: [{regex: \"\", case: insensitive}]}}", 1),
			[]string{"x.yaml:9: regex: empty pattern"}},
		{"empty regex without case", strings.Replace(minimal, "call: {tool: Edit}", "result: {output: {regex: ''}}", 1),
			[]string{"x.yaml:9: regex: empty pattern"}},
		{"null regex", strings.Replace(minimal, "call: {tool: Edit}", "user: {regex: null, case: sensitive}", 1),
			[]string{"x.yaml:9:"}},
		{"empty when", strings.Replace(minimal, "      - call: {tool: Edit}\n", "", 1) + "    when: []\n",
			[]string{"x.yaml:"}},
		{"empty any", strings.Replace(minimal, "call: {tool: Edit}", "user: {any: []}", 1),
			[]string{"x.yaml:9:"}},
		{"yaml syntax", "name: [a\n", []string{"x.yaml: yaml:"}},
		{"not a mapping", "- a\n- b\n", []string{"x.yaml:1: rule set must be a mapping"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "x.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseForms(t *testing.T) {
	y := `name: forms
threshold: 0.9
synthetic: none
rules:
  - name: r
    type: user-checkpoint
    weight: 0.7
    confidence: 0.95
    when:
      any:
        - user: [{contains: [a, b], case: insensitive}, {shorter_than: 10}]
        - result: {tool: [Bash, "mcp__*"], success: false, last: true, command: {regex: "^make", case: sensitive}}
        - not: {previous_error: true}
`
	s, err := Parse([]byte(y), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Rules[0].When[0]
	if c.Kind != CondAny || len(c.Kids) != 3 {
		t.Fatalf("%+v", c)
	}
	u := c.Kids[0].Text
	if u.Op != TextAll || len(u.Kids) != 2 || !u.Kids[0].Fold || u.Kids[0].Needles[1] != "b" || u.Kids[1].Op != TextShorterThan {
		t.Fatalf("user: %+v", u)
	}
	r := c.Kids[1].Result
	if *r.Success || !r.Last || r.Command.re == nil || r.Tools[1] != "mcp__*" {
		t.Fatalf("result: %+v", r)
	}
	ts := turns(turn("ABC").run("Bash", "ls", true, ""), turn("a long message here").run("mcp__x__y", "", false, ""))
	ts[1].ToolCalls[0].Command = "make all"
	e := s.Evaluate(ts)
	if !e.Matched(0, 0) || !e.Matched(1, 0) {
		t.Fatal("any: both turns should match")
	}
}

func TestResolve(t *testing.T) {
	read := func(p string) ([]byte, error) {
		if p == "my/rules.yaml" {
			return []byte(minimal), nil
		}
		return nil, errNotFound
	}
	if s, err := Resolve("codelet", read); err != nil || s.Origin != "builtin:codelet" {
		t.Fatalf("builtin: %v %v", s, err)
	}
	if s, err := Resolve("my/rules.yaml", read); err != nil || s.Name != "mine" || s.Origin != "my/rules.yaml" {
		t.Fatalf("file: %v %v", s, err)
	}
	if _, err := Resolve("codlet", read); err == nil || !strings.Contains(err.Error(), "unknown rule set") {
		t.Fatalf("typo: %v", err)
	}
	if _, err := Resolve("no/such.yaml", read); err == nil {
		t.Fatal("missing file: no error")
	}
}

type notFound struct{}

func (notFound) Error() string { return "not found" }

var errNotFound = notFound{}

// TestParseAliasBomb: aliases that expand exponentially are refused quickly.
func TestParseAliasBomb(t *testing.T) {
	y := "name: bomb\nthreshold: 0.5\ndescription:\n  - &a0 {user: {shorter_than: 1}}\n"
	for i := 1; i < 30; i++ {
		y += fmt.Sprintf("  - &a%d {all: [*a%d, *a%d]}\n", i, i-1, i-1)
	}
	y += "rules:\n  - name: r\n    type: user-checkpoint\n    weight: 1\n    confidence: 1\n    when: [*a29]\n"
	_, err := Parse([]byte(y), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v", err)
	}
}

func TestASCIILower(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	cases := []string{"", "abc", "ABC", "Hello, WORLD! 123 [\\]^_`{|}~@", "ÉCOLE Über ĶELVIN \u212a", string(all), strings.Repeat("AbCdEfGhIjKlMnOpQrStUvWxYz@[`{", 5)}
	for _, s := range cases {
		want := []byte(s)
		for i, c := range want {
			if 'A' <= c && c <= 'Z' {
				want[i] = c + 32
			}
		}
		for off := 0; off < len(s) && off < 9; off++ {
			if got := asciiLower(s[off:]); got != string(want[off:]) {
				t.Errorf("asciiLower(%q) = %q", s[off:], got)
			}
		}
	}
}
