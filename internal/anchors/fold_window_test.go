package anchors

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// refContext is the PreservationContext of turns computed the plain way:
// one pass over the window's turns, as the seeds' extract_from_turns does.
// The indexed fold must agree with it on every window.
func refContext(turns []transcript.Turn) PreservationContext {
	pc := PreservationContext{BuildStatus: BuildUnknown, ActiveFiles: []string{}, CurrentGoals: []string{}, ErrorStates: []string{}}
	seen := map[string]bool{}
	var buf []byte
	for i := range turns {
		c := contextOf(&turns[i], &buf)
		for _, f := range c.files {
			if !seen[f] {
				seen[f] = true
				pc.ActiveFiles = append(pc.ActiveFiles, f)
			}
		}
		pc.ErrorStates = append(pc.ErrorStates, c.errors...)
		if c.build != BuildUnknown {
			pc.BuildStatus = c.build
		}
		if c.isGoal {
			dup := false
			for _, g := range pc.CurrentGoals {
				dup = dup || g == c.goal
			}
			if !dup {
				pc.CurrentGoals = append(pc.CurrentGoals, c.goal)
			}
		}
	}
	if n := len(pc.CurrentGoals); n > 3 {
		pc.CurrentGoals = pc.CurrentGoals[n-3:]
	}
	pc.LastUserIntent = "Continue conversation"
	if len(turns) > 0 {
		pc.LastUserIntent = transcript.FirstRunes(turns[len(turns)-1].UserMessage, 200)
	}
	return pc
}

// checkWindows compares the indexed fold with refContext on windows of
// turns: every window when there are few turns, else random ones and the
// growing and shrinking windows replay asks for.
func checkWindows(t *testing.T, name string, turns []transcript.Turn, rng *rand.Rand) int {
	t.Helper()
	c := &contexts{turns: turns}
	n := len(turns)
	var ws [][2]int
	if n <= 30 {
		for from := 0; from <= n; from++ {
			for to := from; to <= n; to++ {
				ws = append(ws, [2]int{from, to})
			}
		}
	} else {
		for k := 0; k < 100; k++ {
			a, b := rng.IntN(n+1), rng.IntN(n+1)
			ws = append(ws, [2]int{min(a, b), max(a, b)})
		}
		for k := 0; k <= n; k += 1 + n/20 {
			ws = append(ws, [2]int{0, k}, [2]int{k, n})
		}
	}
	for _, w := range ws {
		got, want := c.fold(w[0], w[1]), refContext(turns[w[0]:w[1]])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s window %v:\n got %#v\nwant %#v", name, w, got, want)
			return len(ws)
		}
	}
	return len(ws)
}

// TestFoldWindows: the PreservationContext of a window, answered from the
// per-transcript index, equals a plain pass over the window's turns, on
// hand-made turns with repeated files, goals and verdicts and on every real
// transcript.
func TestFoldWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var hand []*tb
	users := []string{"please fix a. b", "I want to go", "please fix a. c", "help me", "ok", "I need to x", "please fix a. b", "Please"}
	outs := []string{"test PASSED", "Error: x\nmore", "", "tests fail", "nothing", "\u0130 test error"}
	files := []string{"a.go", "b.go", "a.go", "c.go", "A.GO"}
	for i := 0; i < 25; i++ {
		b := turn(users[rng.IntN(len(users))])
		for k := rng.IntN(4); k > 0; k-- {
			b.run("Edit", files[rng.IntN(len(files))], rng.IntN(2) == 0, outs[rng.IntN(len(outs))])
		}
		if rng.IntN(3) == 0 {
			b.run("Grep", "src", true, "test ok")
		}
		hand = append(hand, b)
	}
	checkWindows(t, "hand-made", turns(hand...), rng)

	dir := testutil.RealCorpus(t)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			checked += checkWindows(t, f.Path, tr.Turns(), rng)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no windows checked")
	}
}
