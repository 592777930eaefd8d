package anchors

import (
	"embed"
	"fmt"
	"sort"
	"strings"
	"sync"
)

//go:embed rulesets/*.yaml
var builtinFS embed.FS

// builtins are the embedded rule sets, each parsed on first use: a run
// parses only the sets it evaluates (the default ones), not every
// embedded one (the gold pools, the baselines).
var builtins struct {
	once  sync.Once
	sets  map[string]func() *RuleSet
	names []string
}

func loadBuiltins() {
	builtins.sets = map[string]func() *RuleSet{}
	entries, err := builtinFS.ReadDir("rulesets")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		builtins.sets[name] = sync.OnceValue(func() *RuleSet { return parseBuiltin(e.Name(), name) })
		builtins.names = append(builtins.names, name)
	}
	sort.Strings(builtins.names)
}

// parseBuiltin parses the embedded rule set file, named name; it panics
// when the file is not a valid rule set of that name.
func parseBuiltin(file, name string) *RuleSet {
	data, err := builtinFS.ReadFile("rulesets/" + file)
	if err != nil {
		panic(err)
	}
	s, err := Parse(data, "builtin:"+name)
	if err != nil {
		panic(fmt.Sprintf("embedded rule set %s: %v", name, err))
	}
	if s.Name != name {
		panic(fmt.Sprintf("embedded rule set %s names itself %q", file, s.Name))
	}
	return s
}

// DefaultSets are the built-in sets a run evaluates by default, in order.
var DefaultSets = []string{"codelet", "fspec", "tuned"}

// BuiltinNames lists the embedded rule sets, sorted.
func BuiltinNames() []string {
	builtins.once.Do(loadBuiltins)
	return append([]string(nil), builtins.names...)
}

// Builtin returns the embedded rule set named name. The same *RuleSet is
// returned on every call.
func Builtin(name string) (*RuleSet, error) {
	builtins.once.Do(loadBuiltins)
	parse, ok := builtins.sets[name]
	if !ok {
		return nil, fmt.Errorf("unknown built-in rule set %q (known: %s)", name, strings.Join(builtins.names, ", "))
	}
	return parse(), nil
}

// Defaults returns the DefaultSets.
func Defaults() []*RuleSet {
	out := make([]*RuleSet, len(DefaultSets))
	for i, n := range DefaultSets {
		s, err := Builtin(n)
		if err != nil {
			panic(err)
		}
		out[i] = s
	}
	return out
}
