package anchors

import (
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestBuiltinLazy checks the embedded rule sets parsed on first use: each
// is the set Parse makes of its file (the oracle: parsing every file up
// front, as before), the same *RuleSet on every call, also when first
// asked for by several goroutines at once.
func TestBuiltinLazy(t *testing.T) {
	names := BuiltinNames()
	if len(names) < len(DefaultSets)+2 {
		t.Fatalf("embedded rule sets: %v", names)
	}
	got := make([][]*RuleSet, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, n := range names {
				s, err := Builtin(n)
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], s)
			}
		})
	}
	wg.Wait()
	for i, n := range names {
		data, err := builtinFS.ReadFile("rulesets/" + n + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(data, "builtin:"+n)
		if err != nil {
			t.Fatal(err)
		}
		for g := range got {
			if got[g][i] != got[0][i] {
				t.Errorf("%s: goroutine %d got another *RuleSet", n, g)
			}
		}
		if !reflect.DeepEqual(got[0][i], want) {
			t.Errorf("%s: the built-in set differs from Parse of its file", n)
		}
	}
	for i, s := range Defaults() {
		if s.Name != DefaultSets[i] {
			t.Errorf("Defaults()[%d] = %s, want %s", i, s.Name, DefaultSets[i])
		}
	}
	if _, err := Builtin("no-such-set"); err == nil || !strings.Contains(err.Error(), "codelet") {
		t.Errorf("unknown set: %v", err)
	}
}
