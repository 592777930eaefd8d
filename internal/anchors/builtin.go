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

var builtins struct {
	once  sync.Once
	sets  map[string]*RuleSet
	names []string
}

func loadBuiltins() {
	builtins.sets = map[string]*RuleSet{}
	entries, err := builtinFS.ReadDir("rulesets")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		data, err := builtinFS.ReadFile("rulesets/" + e.Name())
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(e.Name(), ".yaml")
		s, err := Parse(data, "builtin:"+name)
		if err != nil {
			panic(fmt.Sprintf("embedded rule set %s: %v", name, err))
		}
		if s.Name != name {
			panic(fmt.Sprintf("embedded rule set %s names itself %q", e.Name(), s.Name))
		}
		builtins.sets[name] = s
		builtins.names = append(builtins.names, name)
	}
	sort.Strings(builtins.names)
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
	s, ok := builtins.sets[name]
	if !ok {
		return nil, fmt.Errorf("unknown built-in rule set %q (known: %s)", name, strings.Join(builtins.names, ", "))
	}
	return s, nil
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
