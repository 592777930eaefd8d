package anchors

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// loadSeed reads one of the seed 000 worked examples in corpora/seeds.
func loadSeed(t *testing.T, name string) *transcript.Transcript {
	t.Helper()
	path := filepath.Join(testutil.RepoRoot(t), "corpora", "seeds", name)
	var got *transcript.Transcript
	err := loader.ReadFile(path, loader.Options{}, func(tr *transcript.Transcript) error {
		got = tr
		return nil
	})
	if err != nil || got == nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got.Format != loader.ClaudeCodeFormat || len(got.Problems) != 0 || got.Stats.BadLines != 0 {
		t.Fatalf("%s: format %s, problems %v", name, got.Format, got.Problems)
	}
	return got
}

// detected lists "turn:rule" of a flow's anchors.
func detected(f Flow) []string {
	var out []string
	for _, a := range f.Anchors {
		out = append(out, string(rune('0'+a.Turn))+":"+a.Rule)
	}
	return out
}

// TestSeedExamples runs the built-in sets on seed 000's worked examples
// as written in corpora/seeds. Where the outcome differs from the seed's
// narrative, the rules are followed (corpora/README.md lists why).
func TestSeedExamples(t *testing.T) {
	const home = "/home/dev/"
	cases := []struct {
		file                  string
		turns                 int
		codelet, fspec, tuned []string
		ctx                   PreservationContext
	}{
		{
			file: "000-ex1-auth-bug.jsonl", turns: 3,
			// Narrative turn 3 is rule turn 1: Edit + cargo test "6 passed".
			codelet: []string{"1:task-completion"},
			fspec:   []string{"1:task-completion"},
			tuned:   []string{"1:checks-pass"},
			ctx: PreservationContext{
				ActiveFiles: []string{home + "authsvc/src/auth.rs", home + "authsvc/README.md"},
				// Goals are cut at the first '.': "src/auth.rs" ends the
				// first, and "Great." is the whole second.
				CurrentGoals:   []string{"Please fix the bug in src/auth", "Great"},
				ErrorStates:    []string{},
				BuildStatus:    BuildPassing,
				LastUserIntent: "Great. Please also update the documentation in README.md to say that empty passwords are rejected.",
			},
		},
		{
			file: "000-ex2-web-search.jsonl", turns: 2,
			// The web-search rule matches both turns but its confidence
			// (0.85) is under BR-001's 0.9: fspec falls back to the
			// synthetic anchor at the last turn.
			codelet: nil,
			fspec:   []string{"1:synthetic"},
			tuned:   []string{"0:research-answered", "1:research-answered"},
			ctx: PreservationContext{
				ActiveFiles:    []string{},
				CurrentGoals:   []string{"I want to understand the job market for software engineers in Brisbane", "Please give me more details on salaries"},
				ErrorStates:    []string{},
				BuildStatus:    BuildUnknown,
				LastUserIntent: "Please give me more details on salaries.",
			},
		},
		{
			file: "000-ex3-mixed.jsonl", turns: 4,
			// codelet's "test success" fires on the turn that WRITES
			// src/index.test.ts: "File created successfully at: …index.test.ts"
			// holds "test" and "success". The test run (turn 2) modifies no
			// file, and npm's real output never says "installed".
			codelet: []string{"1:task-completion"},
			fspec:   []string{"1:task-completion"},
			tuned:   []string{"0:setup-done", "2:tests-green", "3:research-answered"},
			ctx: PreservationContext{
				ActiveFiles:  []string{home + "deploy-demo/src/index.ts", home + "deploy-demo/src/index.test.ts", home + "deploy-demo/tsconfig.json"},
				CurrentGoals: []string{"Please set up a new TypeScript project in this folder, with vitest for tests", "Please run the tests"},
				ErrorStates:  []string{},
				// npm init's package.json says "Error: no test specified"
				// (failing), later results say passing.
				BuildStatus:    BuildPassing,
				LastUserIntent: "What are my deployment options for this?",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tr := loadSeed(t, c.file)
			ts := tr.Turns()
			if len(ts) != c.turns {
				t.Fatalf("%d turns, want %d", len(ts), c.turns)
			}
			for _, s := range []struct {
				name string
				want []string
			}{{"codelet", c.codelet}, {"fspec", c.fspec}, {"tuned", c.tuned}} {
				f := mustBuiltin(t, s.name).Flow(ts)
				if got := detected(f); !reflect.DeepEqual(got, s.want) {
					t.Errorf("%s: anchors %v, want %v", s.name, got, s.want)
				}
				if !reflect.DeepEqual(f.Context, c.ctx) {
					t.Errorf("%s: context\n got %#v\nwant %#v", s.name, f.Context, c.ctx)
				}
			}
			if len(DeriveEvidence(tr, ts, EvidenceKinds)) != 0 {
				t.Error("seed examples carry no evidence labels")
			}
		})
	}
}

// TestSeedLabels: the gold labels of corpora/seeds parse and name the three
// examples by path.
func TestSeedLabels(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(t), "corpora", "seeds")
	data, err := os.ReadFile(filepath.Join(dir, "labels.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := ParseLabels(data, "corpora/seeds/labels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	set := NewLabelSet(ls, "")
	want := map[string][]int{"000-ex1-auth-bug.jsonl": {1}, "000-ex2-web-search.jsonl": {0, 1}, "000-ex3-mixed.jsonl": {0, 2}}
	for file, turns := range want {
		got, ok := set.For("x", "corpora/seeds/"+file)
		var idx []int
		for _, l := range got {
			idx = append(idx, l.Turn)
			if l.Type != TaskCompletion || !strings.Contains(l.Note, "seed 000") {
				t.Errorf("%s: %+v", file, l)
			}
		}
		if !ok || !reflect.DeepEqual(idx, turns) {
			t.Errorf("%s: turns %v, want %v", file, idx, turns)
		}
	}
}

// TestTunedAvoidsEvidenceSources guards against circularity: the tuned set
// may not look at what evidence labels are made of (TodoWrite, git commits,
// compactions).
func TestTunedAvoidsEvidenceSources(t *testing.T) {
	var words []string
	var text func(*Text)
	text = func(x *Text) {
		if x == nil {
			return
		}
		words = append(words, x.Needles...)
		words = append(words, x.Pattern)
		for _, k := range x.Kids {
			text(k)
		}
	}
	var cond func(*Cond)
	cond = func(c *Cond) {
		for _, k := range c.Kids {
			cond(k)
		}
		if c.Call != nil {
			words = append(words, c.Call.Tools...)
			text(c.Call.Command)
			text(c.Call.Path)
			text(c.Call.Input)
		}
		if c.Result != nil {
			words = append(words, c.Result.Tools...)
			text(c.Result.Output)
			text(c.Result.Command)
		}
		text(c.Text)
	}
	for _, r := range mustBuiltin(t, "tuned").Rules {
		for _, c := range r.When {
			cond(c)
		}
	}
	if len(words) < 20 {
		t.Fatalf("walked only %d words", len(words))
	}
	for _, w := range words {
		lw := strings.ToLower(w)
		for _, banned := range []string{"todo", "git", "commit", "compact"} {
			if strings.Contains(lw, banned) {
				t.Errorf("tuned mentions %q in %q", banned, w)
			}
		}
	}
}
