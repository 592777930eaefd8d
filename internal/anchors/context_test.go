package anchors

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

func TestExtractContext(t *testing.T) {
	long := strings.Repeat("é", 120) // 120 code points, 240 bytes
	ts := turns(
		turn("Please help me fix the login bug. It fails on empty passwords.").
			run("Read", "src/auth.rs", true, "fn login() {}").
			run("Grep", "src", true, "src/auth.rs:1").
			run("Bash", "cargo test", false, "error[E0308]: mismatched types\n --> src/auth.rs:3").
			run("Bash", "cargo test", false, "").
			run("Bash", "cargo build", false, "\r\nsecond line"),
		turn("I want to also update the docs").
			run("Edit", "src/auth.rs", true, "").
			run("Edit", "README.md", true, "").
			run("Bash", "cargo test", true, "test result: ok. 3 passed"),
		turn("please "+long).run("Bash", "x", true, "tests FAILED"),
		turn("I need to ship. Today."),
		turn("Please help me fix the login bug. Another sentence."),
		turn("help me with "+long),
	)
	got := ExtractContext(ts)
	want := PreservationContext{
		ActiveFiles: []string{"src/auth.rs", "README.md"},
		// Goals in order, the duplicate of turn 0 dropped, the last 3 kept.
		CurrentGoals: []string{"please " + long[:2*93], "I need to ship", "help me with " + long[:2*87]},
		ErrorStates:  []string{"error[E0308]: mismatched types", ""},
		// turn 2's "tests FAILED" lower-cases to "tests failed": failing.
		BuildStatus:    BuildFailing,
		LastUserIntent: transcript.FirstRunes("help me with "+long, 200),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	if n := len([]rune(got.LastUserIntent)); n != 133 {
		t.Fatalf("intent runes: %d", n)
	}
	if got := ExtractContext(nil); got.LastUserIntent != "Continue conversation" || got.BuildStatus != BuildUnknown {
		t.Fatalf("empty: %#v", got)
	}
}

func TestBuildStatus(t *testing.T) {
	cases := []struct {
		outs []string
		want BuildStatus
	}{
		{[]string{"all good"}, BuildUnknown},
		{[]string{"Test PASS"}, BuildPassing},                        // lower-cased here, unlike detection
		{[]string{"tests failed", "no tests matched"}, BuildFailing}, // second has "test" but no verdict
		{[]string{"test error", "test success"}, BuildPassing},
		{[]string{"test passed", "pytest: 1 error"}, BuildFailing},
		{[]string{"test passed", "fail"}, BuildPassing}, // "fail" without "test" is ignored
	}
	for _, c := range cases {
		b := turn("")
		for _, o := range c.outs {
			b.run("Bash", "x", true, o)
		}
		if got := ExtractContext(one(b)).BuildStatus; got != c.want {
			t.Errorf("%q: got %s, want %s", c.outs, got, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	c := PreservationContext{ActiveFiles: []string{"auth.rs", "login.ts"}, CurrentGoals: []string{"Implement OAuth"}, BuildStatus: BuildPassing}
	if got, want := c.Format(), "Active files: auth.rs, login.ts\nGoals: Implement OAuth\nBuild: passing"; got != want {
		t.Errorf("Format: %q", got)
	}
	e := PreservationContext{BuildStatus: BuildUnknown}
	if got, want := e.Format(), "Active files: None\nGoals: Continue conversation\nBuild: unknown"; got != want {
		t.Errorf("Format empty: %q", got)
	}
	if got, want := e.FormatCodelet(), "Active files: \nGoals: \nBuild: unknown"; got != want {
		t.Errorf("FormatCodelet empty: %q", got)
	}
}

func TestWeightedSummary(t *testing.T) {
	ts := turns(
		turn("Please fix the auth bug").at("t0").run("Read", "src/auth.rs", true, "").say("The token check is inverted. I will fix it."),
		turn("go ahead").at("t1").run("Edit", "src/auth.rs", true, "").run("Bash", "cargo test", true, cargoOK).
			say("Fixed the inverted check in src/auth.rs; all 12 tests pass."),
		turn("thanks").at("t2").say("You're welcome. Anything else?"),
	)
	codelet := mustBuiltin(t, "codelet")
	f := codelet.Flow(ts)
	if len(f.Anchors) != 1 || f.Anchors[0].Turn != 1 || f.Anchors[0].Timestamp != "t1" {
		t.Fatalf("anchors: %+v", f.Anchors)
	}
	got := WeightedSummary(ts, f.Anchors, &f.Context, StyleFSpec)
	want := "Active files: src/auth.rs\nGoals: Please fix the auth bug\nBuild: passing\n\nKey outcomes:\n" +
		"✓ Modified src/auth.rs: The token check is inverted\n" +
		"[ANCHOR] Fixed the inverted check in src/auth.rs; all 12 tests pass.\n" +
		"✗ You're welcome"
	if got != want {
		t.Errorf("fspec style:\n%s\nwant:\n%s", got, want)
	}
	// Timestamp matching: a turn sharing the anchor's timestamp renders as
	// an anchor too (the seeds' fragility, reproduced).
	ts[2].Timestamp = "t1"
	if o := TurnOutcome(&ts[2], f.Anchors, StyleCodelet); o != "[ANCHOR] You're welcome. Anything else?" {
		t.Errorf("timestamp collision: %q", o)
	}
	// The synthetic anchor never matches.
	syn := []Anchor{{Synthetic: true, Timestamp: "t0"}}
	if o := TurnOutcome(&ts[0], syn, StyleCodelet); !strings.HasPrefix(o, "✓ Modified") {
		t.Errorf("synthetic: %q", o)
	}
	// Cuts: 500 code points for anchors and 150 for first sentences (fspec);
	// none for codelet.
	longResp := strings.Repeat("ü", 600)
	ts[1].AssistantResponse = longResp
	if o := TurnOutcome(&ts[1], f.Anchors, StyleFSpec); o != "[ANCHOR] "+strings.Repeat("ü", 500) {
		t.Errorf("fspec anchor cut: %d", len([]rune(o)))
	}
	if o := TurnOutcome(&ts[1], f.Anchors, StyleCodelet); o != "[ANCHOR] "+longResp {
		t.Error("codelet anchor uncut")
	}
	ts[0].AssistantResponse = longResp
	if o := TurnOutcome(&ts[0], nil, StyleFSpec); o != "✓ Modified src/auth.rs: "+strings.Repeat("ü", 150) {
		t.Errorf("fspec sentence cut: %q", o)
	}
}

// TestWindowsOnRealCorpus: on every real transcript, Flow over any window of
// an evaluation equals a fresh evaluation of the window's turns (previous_
// error aside, which the window keeps from the full list), and the suite
// agrees with single-set evaluation.
func TestWindowsOnRealCorpus(t *testing.T) {
	dir := testutil.RealCorpus(t)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var sets []*RuleSet
	for _, n := range BuiltinNames() {
		sets = append(sets, mustBuiltin(t, n))
	}
	suite := NewSuite(sets...)
	checked := 0
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			ts := tr.Turns()
			evs := suite.Evaluate(ts)
			for k, s := range sets {
				single := s.Evaluate(ts)
				for i := range ts {
					if a, b := outcomeOf(evs[k], i), outcomeOf(single, i); !reflect.DeepEqual(a, b) {
						t.Errorf("%s %s turn %d: suite %+v, alone %+v", f.Path, s.Name, i, a, b)
					}
				}
				n := len(ts)
				for _, w := range [][2]int{{0, n}, {n / 2, n}, {0, n / 2}, {n / 3, 2 * n / 3}} {
					got := evs[k].Flow(w[0], w[1])
					want := s.Flow(ts[w[0]:w[1]])
					if !reflect.DeepEqual(got.Context, want.Context) {
						t.Errorf("%s %s window %v: context differs", f.Path, s.Name, w)
					}
					if !reflect.DeepEqual(got.Anchors, want.Anchors) && (w[0] == 0 || !ts[w[0]].PreviousError) {
						t.Errorf("%s %s window %v: anchors %+v, fresh %+v", f.Path, s.Name, w, got.Anchors, want.Anchors)
					}
					checked++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no transcripts checked")
	}
}

// TestLowerForASCII: lowerInto answers ASCII look-ups as
// strings.ToLower does, which rests on U+0130 and U+212A being the only
// non-ASCII runes that lower-case to ASCII.
func TestLowerForASCII(t *testing.T) {
	var toASCII []rune
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < 0x80 {
			toASCII = append(toASCII, r)
		}
	}
	if want := []rune{'\u0130', '\u212a'}; !reflect.DeepEqual(toASCII, want) {
		t.Fatalf("non-ASCII runes lower-casing to ASCII: %U, want %U", toASCII, want)
	}
	needles := append([]string{"test", "pass", "success", "fail", "error", "k", "ok"}, goalMarkers...)
	texts := []string{
		"", "Tests PASSED", "FA\u0130L", "\u0130 want to go", "O\u212a", "ö\u212aay", "TEST \xff\xfeFAIL", "Pleaſe",
		"ÜBER TEST: SUCCESS ✓", "\u0130 NEED TO", "error\u0130", "te\xc4st",
	}
	var buf []byte
	for _, s := range texts {
		for _, n := range needles {
			if got, want := strings.Contains(lowerInto(&buf, s), n), strings.Contains(strings.ToLower(s), n); got != want {
				t.Errorf("%q contains %q: %v, strings.ToLower says %v", s, n, got, want)
			}
		}
	}
}
