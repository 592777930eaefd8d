package analysis

import (
	"path/filepath"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestCallCountsAgree: on every transcript of the shipped corpora, the
// loader's fixtures and the real corpus (every folder of it, whatever is
// added), each table that counts API calls counts the calls of
// transcript.Transcript.Calls: the calls table has one row per call, every
// strategy's run replays that many (runs.calls), the cost model bills that
// many prompts (the series of each strategy), the recorded series has one
// point per call, and the rulers are judged on exactly the measured calls.
func TestCallCountsAgree(t *testing.T) {
	root := testutil.RepoRoot(t)
	sets := map[string]string{
		"corpora":  filepath.Join(root, "corpora"),
		"fixtures": filepath.Join(root, "internal", "loader", "testdata"),
	}
	if !testing.Short() {
		sets["real"] = testutil.RealCorpus(t)
	}
	for name, dir := range sets {
		t.Run(name, func(t *testing.T) {
			in, err := loader.Walk([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			n, replayed, withoutUsage := 0, 0, 0
			for _, f := range in.Files {
				if f.Problem != "" {
					continue
				}
				err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
					n++
					r := Analyze(tr, &Config{})
					if len(r.Runs) > 0 {
						replayed++
					}
					if checkCallCounts(t, tr, r) {
						withoutUsage++
					}
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
			}
			t.Logf("%d transcripts, %d replayed, %d with calls whose usage was not recorded", n, replayed, withoutUsage)
			if n == 0 {
				t.Errorf("no transcript under %s", dir)
			}
		})
	}
}

// checkCallCounts checks one transcript's tables against its calls and
// reports whether some call lacks usage.
func checkCallCounts(t *testing.T, tr *transcript.Transcript, r *Result) bool {
	t.Helper()
	calls := tr.Calls()
	want, measured := len(calls), 0
	for _, i := range calls {
		if tr.Messages[i].Measured() {
			measured++
		}
	}
	id := tr.Path + " " + tr.ID
	if len(r.Calls) != want {
		t.Errorf("%s: %d calls rows, want %d calls", id, len(r.Calls), want)
	}
	rows := 0
	for k := range r.Calls {
		c := &r.Calls[k]
		if c.CallIndex != int64(k) || c.Line != int64(tr.Messages[calls[min(k, want-1)]].Line) {
			t.Errorf("%s: calls row %d has call_index %d, line %d", id, k, c.CallIndex, c.Line)
		}
		if c.RealContext != nil {
			rows++
		}
	}
	if rows != measured {
		t.Errorf("%s: %d calls rows with a real context, want the %d measured calls", id, rows, measured)
	}
	chars4, err := tokens.ByName(tokens.Chars4)
	if err != nil {
		t.Fatal(err)
	}
	if est := tokens.EstimateCalls(tr, []*tokens.Ruler{chars4}, tokens.AnchorSegments, nil); len(est.Calls) != measured {
		t.Errorf("%s: the rulers measure %d calls, want %d", id, len(est.Calls), measured)
	}
	for _, run := range r.Runs {
		if run.Calls != int64(want) {
			t.Errorf("%s %s: runs.calls %d, want %d", id, run.Strategy, run.Calls, want)
		}
	}
	if s := r.Series; s != nil {
		if s.Calls() != want {
			t.Errorf("%s: series of %d calls, want %d", id, s.Calls(), want)
		}
		for _, st := range s.Strategies {
			if len(st.Prompt) != want {
				t.Errorf("%s %s: %d prompts billed, want %d", id, st.Strategy, len(st.Prompt), want)
			}
		}
	}
	if len(r.Runs) == 0 && want > 0 && (tr.Kind == transcript.KindSession || tr.Kind == transcript.KindSubagent) {
		t.Errorf("%s: %d calls but not replayed", id, want)
	}
	return measured < want
}
