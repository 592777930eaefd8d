package anchors

import (
	"reflect"
	"sort"
	"testing"
)

// outcome is what one rule set did on one turn.
type outcome struct {
	fired   string   // rule that fired, "" for none
	matched []string // rules whose conditions held, in rule order
}

func outcomeOf(e *Evaluation, i int) outcome {
	var o outcome
	if r := e.Fired(i); r >= 0 {
		o.fired = e.Set.Rules[r].Name
	}
	for r, rule := range e.Set.Rules {
		if e.Matched(i, r) {
			o.matched = append(o.matched, rule.Name)
		}
	}
	return o
}

const cargoOK = "running 12 tests\ntest auth::tests::login_ok ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored"

// TestSeedRules reproduces every rule of seeds 000 (fspec) and 001 (codelet)
// on hand-built single turns: which rule fires (threshold 0.9) and which
// rules' conditions hold.
func TestSeedRules(t *testing.T) {
	cases := []struct {
		name    string
		turn    *tb
		codelet outcome
		fspec   outcome
	}{
		{
			name:    "task completion: Edit + tests passed",
			turn:    turn("fix it").run("Edit", "src/auth.rs", true, "ok").run("Bash", "cargo test", true, cargoOK),
			codelet: outcome{"task-completion", []string{"task-completion"}},
			fspec:   outcome{"task-completion", []string{"task-completion"}},
		},
		{
			name:    "error resolution: previous error + Write + tests passed",
			turn:    turn("try again").prevErr().run("Write", "a.go", true, "").run("Bash", "go test", true, "3 tests passed"),
			codelet: outcome{"error-resolution", []string{"error-resolution"}},
			fspec:   outcome{"error-resolution", []string{"error-resolution"}},
		},
		{
			name:    "case quirk: jest PASS does not count",
			turn:    turn("").run("Edit", "a.ts", true, "").run("Bash", "npx jest", true, "PASS src/a.test.ts\nTests: 3 PASSED"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "case quirk: go test ok does not count",
			turn:    turn("").run("Edit", "a.go", true, "").run("Bash", "go test ./...", true, "ok  \texample.com/a\t0.01s"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "case quirk: Success capitalised does not count, success does",
			turn:    turn("").run("Edit", "a.go", true, "").run("Bash", "t", true, "Test Success"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "success lower-case counts, and 'test' may be upper-case",
			turn:    turn("").run("Edit", "a.go", true, "").run("Bash", "t", true, "TEST run: success"),
			codelet: outcome{"task-completion", []string{"task-completion"}},
			fspec:   outcome{"task-completion", []string{"task-completion"}},
		},
		{
			name: "the test success must be one result: test and pass in different results do not count",
			turn: turn("").run("Edit", "a.go", true, "").run("Bash", "a", true, "test suite starting").
				run("Bash", "b", true, "all pass"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "a failed result mentioning passing tests does not count",
			turn:    turn("").run("Edit", "a.go", true, "").run("Bash", "t", false, "Exit code 1\n2 tests passed, 1 failed"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "MultiEdit is not a file modification for the seeds",
			turn:    turn("").run("MultiEdit", "a.go", true, "").run("Bash", "t", true, "all tests passed"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "tests passed without a modification",
			turn:    turn("").run("Bash", "go test", true, "all tests passed"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "the modification may come after the test run",
			turn:    turn("").run("Bash", "t", true, "tests passed").run("Write", "notes.md", true, ""),
			codelet: outcome{"task-completion", []string{"task-completion"}},
			fspec:   outcome{"task-completion", []string{"task-completion"}},
		},
		{
			name: "web search with synthesis (fspec; confidence 0.85 < 0.9: matches, never fires)",
			turn: turn("What is the Brisbane job market like?").
				run("WebSearch", "", true, repeat("Brisbane software jobs grew 8% in 2024. ", 4)).
				say("Based on the search results, demand is strong."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"web-search"}},
		},
		{
			name:    "web search: lower-case tool name web_search counts",
			turn:    turn("q").run("web_search", "", true, repeat("x", 101)).say("According to the results, yes."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"web-search"}},
		},
		{
			name:    "web search: a result of 100 bytes is not over 100",
			turn:    turn("q").run("WebSearch", "", true, repeat("x", 100)).say("Based on this, yes."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "web search: synthesis phrase is case-sensitive",
			turn:    turn("q").run("WebSearch", "", true, repeat("x", 200)).say("based on this, yes."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "web search: the long successful result need not be the search's",
			turn:    turn("q").run("WebSearch", "", false, "rate limited").run("Read", "a.md", true, repeat("y", 150)).say("The search results show little."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"web-search"}},
		},
		{
			name:    "bash milestone: npm install reporting installed",
			turn:    turn("set up").run("Bash", "npm install", true, "Successfully installed 12 packages"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"bash-milestone"}},
		},
		{
			name:    "bash milestone: milestone word may sit in a failed result",
			turn:    turn("").run("Bash", "make", true, "").run("Bash", "make install", false, "Build failed: compiled 3 of 4"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"bash-milestone"}},
		},
		{
			name:    "bash milestone: needs some successful result",
			turn:    turn("").run("Bash", "make", false, "compiled with errors"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name: "information synthesis: lookups only and a summarising answer",
			turn: turn("how does the cache work?").run("Read", "cache.go", true, "package cache").
				run("Grep", "", true, "cache.go:12").say("In summary, " + repeat("the cache keeps entries per key. ", 12)),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"information-synthesis"}},
		},
		{
			name: "information synthesis: not when a file was modified",
			turn: turn("").run("Read", "cache.go", true, "package cache").run("Edit", "cache.go", true, "").
				say("In summary, " + repeat("changed. ", 60)),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
		{
			name:    "user checkpoint: explicit direction change",
			turn:    turn("ok now let's work on the billing page"),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"user-direction-change"}},
		},
		{
			name:    "feature milestone: scope shift",
			turn:    turn("Auth works. Next, the database layer."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", []string{"scope-shift"}},
		},
		{
			name:    "plain question: nothing",
			turn:    turn("what does this function do?").run("Read", "a.go", true, "func a() {}").say("It returns nothing."),
			codelet: outcome{"", nil},
			fspec:   outcome{"", nil},
		},
	}
	codelet, fspec := mustBuiltin(t, "codelet"), mustBuiltin(t, "fspec")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := one(c.turn)
			if got := outcomeOf(codelet.Evaluate(ts), 0); !reflect.DeepEqual(got, c.codelet) {
				t.Errorf("codelet: got %+v, want %+v", got, c.codelet)
			}
			if got := outcomeOf(fspec.Evaluate(ts), 0); !reflect.DeepEqual(got, c.fspec) {
				t.Errorf("fspec: got %+v, want %+v", got, c.fspec)
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}

// TestFSpecBelowThreshold: with BR-001's 0.9 threshold every fspec rule added
// to codelet's is below threshold; lowering the threshold lets each fire.
func TestFSpecBelowThreshold(t *testing.T) {
	fspec := mustBuiltin(t, "fspec")
	var below []string
	for _, r := range fspec.Rules {
		if r.BelowThreshold(fspec) {
			below = append(below, r.Name)
		}
	}
	want := []string{"web-search", "bash-milestone", "information-synthesis", "user-direction-change", "scope-shift"}
	if !reflect.DeepEqual(below, want) {
		t.Fatalf("below threshold: %v, want %v", below, want)
	}
	lowered := withThreshold(t, "fspec", 0.7)
	ts := turns(
		turn("What about Brisbane?").run("WebSearch", "", true, repeat("x", 200)).say("Based on the results, fine."),
		turn("set up").run("Bash", "pip install x", true, "Successfully installed x-1.0"),
		turn("ok now let's work on billing"),
		turn("Auth works, now the database."),
	)
	e := lowered.Evaluate(ts)
	got := []string{}
	for i := range ts {
		got = append(got, outcomeOf(e, i).fired)
	}
	if want := []string{"web-search", "bash-milestone", "user-direction-change", "scope-shift"}; !reflect.DeepEqual(got, want) {
		t.Errorf("fired with threshold 0.7: %v, want %v", got, want)
	}
	// At 0.9 none of them fires, and fspec falls back to the synthetic anchor.
	f := fspec.Flow(ts)
	if len(f.Natural()) != 0 || f.Synthetic == nil {
		t.Fatalf("fspec at 0.9: %+v", f.Anchors)
	}
}

// TestPriority: the first rule that fires wins; later matching rules are
// still reported as matched.
func TestPriority(t *testing.T) {
	fspec := withThreshold(t, "fspec", 0.8)
	ts := one(turn("").run("Edit", "a.go", true, "").run("Bash", "go test", true, "all tests passed, build completed"))
	got := outcomeOf(fspec.Evaluate(ts), 0)
	want := outcome{"task-completion", []string{"task-completion", "bash-milestone"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestSynthetic covers BR-004 and seed 000's synthetic anchor.
func TestSynthetic(t *testing.T) {
	fspec, codelet := mustBuiltin(t, "fspec"), mustBuiltin(t, "codelet")
	ts := turns(turn("hi"), turn("more").at("2025-01-01T00:00:01Z"), turn("last").at("2025-01-01T00:00:02Z"))
	f := fspec.Flow(ts)
	want := Anchor{Turn: 2, Type: UserCheckpoint, Rule: SyntheticRule, Weight: 0.7, Confidence: 0.8,
		Description: "Synthetic anchor at conversation end", Synthetic: true}
	if f.Synthetic == nil || *f.Synthetic != want || len(f.Anchors) != 1 || f.Anchors[0] != want {
		t.Fatalf("fspec synthetic: %+v", f.Anchors)
	}
	if f := codelet.Flow(ts); f.Synthetic != nil || len(f.Anchors) != 0 {
		t.Fatalf("codelet has no fallback: %+v", f.Anchors)
	}
	if f := fspec.Flow(nil); f.Synthetic != nil || len(f.Anchors) != 0 {
		t.Fatalf("no turns, no synthetic: %+v", f.Anchors)
	}
	// A natural anchor anywhere means no synthetic one.
	ts = turns(turn("a").run("Edit", "x", true, "").run("Bash", "t", true, "tests passed"), turn("b"))
	f = fspec.Flow(ts)
	if f.Synthetic != nil || len(f.Anchors) != 1 || f.Anchors[0].Turn != 0 || f.Anchors[0].Description != "File changes implemented in x and tests pass" {
		t.Fatalf("natural: %+v", f.Anchors)
	}
	// A window without the natural anchor gets its own synthetic anchor, at
	// the window's last turn, relative to the window.
	e := fspec.Evaluate(ts)
	if w := e.Flow(1, 2); w.Synthetic == nil || w.Synthetic.Turn != 0 {
		t.Fatalf("window: %+v", w.Anchors)
	}
}

// TestSuiteMatchesSingle: evaluating sets together gives what each gives
// alone.
func TestSuiteMatchesSingle(t *testing.T) {
	ts := turns(
		turn("please fix").run("Edit", "a.go", true, "").run("Bash", "go test ./...", true, "ok  \tx\t0.1s\nPASS"),
		turn("again").prevErr().run("Write", "b.go", true, "").run("Bash", "go test", true, "tests passed"),
		turn("search").run("WebSearch", "", true, repeat("z", 300)).say("Based on it, ok."),
	)
	var sets []*RuleSet
	for _, n := range BuiltinNames() {
		sets = append(sets, mustBuiltin(t, n))
	}
	evs := NewSuite(sets...).Evaluate(ts)
	for k, s := range sets {
		single := s.Evaluate(ts)
		for i := range ts {
			if a, b := outcomeOf(evs[k], i), outcomeOf(single, i); !reflect.DeepEqual(a, b) {
				t.Errorf("%s turn %d: suite %+v, alone %+v", s.Name, i, a, b)
			}
		}
	}
}

func TestBuiltinsParse(t *testing.T) {
	names := BuiltinNames()
	if !sort.StringsAreSorted(names) || len(names) < 3 {
		t.Fatalf("builtins: %v", names)
	}
	for _, n := range DefaultSets {
		s := mustBuiltin(t, n)
		if s.Origin != "builtin:"+n || len(s.Source) == 0 || len(s.Rules) == 0 {
			t.Errorf("%s: origin %q, %d rules", n, s.Origin, len(s.Rules))
		}
	}
}
