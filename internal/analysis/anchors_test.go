package analysis

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// analyzeDir analyses every transcript under dir with the default rule
// sets, the label files found there, and every evidence kind.
func analyzeDir(t testing.TB, dir string) []*Result {
	t.Helper()
	in, err := loader.Walk([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var labels []anchors.Label
	for _, f := range in.Labels {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := anchors.ParseLabels(data, f)
		if err != nil {
			t.Fatal(err)
		}
		labels = append(labels, ls...)
	}
	var set *anchors.LabelSet
	if len(labels) > 0 {
		set = anchors.NewLabelSet(labels, "")
	}
	ac, err := NewAnchorConfig(anchors.Defaults(), set, anchors.EvidenceKinds)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Anchors: ac}
	var out []*Result
	for _, f := range in.Files {
		err := loader.ReadFile(f.Path, loader.Options{}, func(tr *transcript.Transcript) error {
			out = append(out, Analyze(tr, cfg))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func tally(rs []*Result) map[string]*anchors.SetCounts {
	var t anchors.Tally
	for _, r := range rs {
		t.Add(r.AnchorCounts)
	}
	out := map[string]*anchors.SetCounts{}
	for _, c := range t.Sets {
		out[c.Set] = c
	}
	return out
}

// TestSeedCorpus: anchors, labels and counts on corpora/seeds against its
// gold labels, checked by hand (see internal/anchors TestSeedExamples for
// why each anchor is where it is).
func TestSeedCorpus(t *testing.T) {
	rs := analyzeDir(t, filepath.Join(testutil.RepoRoot(t), "corpora", "seeds"))
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	type key struct {
		file, set string
		turn      int64
	}
	got := map[key]AnchorRow{}
	for _, r := range rs {
		if len(r.Problems) != 0 {
			t.Errorf("%s: problems %v", r.Transcript.Path, r.Problems)
		}
		for _, a := range r.Anchors {
			got[key{filepath.Base(a.Path), a.RuleSet, a.Turn}] = a
			if !a.Labelled {
				t.Errorf("%s is labelled", a.Path)
			}
		}
	}
	want := map[key]string{ // rule, matched label
		{"000-ex1-auth-bug.jsonl", "codelet", 1}: "task-completion|task-completion",
		{"000-ex1-auth-bug.jsonl", "fspec", 1}:   "task-completion|task-completion",
		{"000-ex1-auth-bug.jsonl", "tuned", 1}:   "checks-pass|task-completion",
		{"000-ex2-web-search.jsonl", "fspec", 1}: "synthetic|task-completion",
		{"000-ex2-web-search.jsonl", "tuned", 0}: "research-answered|task-completion",
		{"000-ex2-web-search.jsonl", "tuned", 1}: "research-answered|task-completion",
		{"000-ex3-mixed.jsonl", "codelet", 1}:    "task-completion|",
		{"000-ex3-mixed.jsonl", "fspec", 1}:      "task-completion|",
		{"000-ex3-mixed.jsonl", "tuned", 0}:      "setup-done|task-completion",
		{"000-ex3-mixed.jsonl", "tuned", 2}:      "tests-green|task-completion",
		{"000-ex3-mixed.jsonl", "tuned", 3}:      "research-answered|",
	}
	if len(got) != len(want) {
		t.Errorf("%d anchors, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		a, ok := got[k]
		if !ok {
			t.Errorf("missing %v", k)
			continue
		}
		if g := a.Rule + "|" + a.MatchedLabel; g != w {
			t.Errorf("%v: %s, want %s", k, g, w)
		}
	}

	// Gold scores (5 labelled turns): codelet and fspec find 1 of them and
	// put 1 anchor elsewhere; tuned finds all 5 with 1 extra.
	sc := tally(rs)
	for set, w := range map[string]anchors.Score{
		"codelet": {TP: 1, FP: 1, FN: 4},
		"fspec":   {TP: 1, FP: 1, FN: 4},
		"tuned":   {TP: 5, FP: 1, FN: 0},
	} {
		c := sc[set]
		if c.All.Gold != w || c.GoldTranscripts != 3 || c.GoldTurns != 5 || c.EvidenceTranscripts != 0 || c.Turns != 9 {
			t.Errorf("%s: gold %+v (%d transcripts, %d turns)", set, c.All.Gold, c.GoldTranscripts, c.GoldTurns)
		}
	}
	// fspec's synthetic anchor (example 2, last turn) lands on a label.
	if s := sc["fspec"]; s.Synthetic != 1 || s.SyntheticScore.Gold.TP != 1 || s.NoNatural != 1 {
		t.Errorf("fspec synthetic: %+v", s)
	}
	// fspec's web-search rule matched three turns (example 2's two and
	// example 3's last) and, below threshold, never fired.
	fs := sc["fspec"]
	rows := RuleRows(&anchors.Tally{Sets: []*anchors.SetCounts{fs}})
	var ws RuleRow
	for _, r := range rows {
		if r.Scope == "rule" && r.Rule == "web-search" {
			ws = r
		}
	}
	if !ws.BelowThreshold || ws.Fires != 0 || ws.Matches == nil || *ws.Matches != 3 || ws.Precision != nil || ws.Recall == nil || *ws.Recall != 0 {
		t.Errorf("web-search row: %+v", ws)
	}
	// Labels table: 5 gold rows, no evidence.
	n := 0
	for _, r := range rs {
		for _, l := range r.Labels {
			n++
			if l.Source != "gold" {
				t.Errorf("label %+v", l)
			}
		}
	}
	if n != 5 {
		t.Errorf("%d label rows", n)
	}
}

// TestRuleRows checks the rows of one hand-made tally.
func TestRuleRows(t *testing.T) {
	codelet, _ := anchors.Builtin("codelet")
	c := &anchors.SetCounts{Set: "codelet", RuleSet: codelet, Transcripts: 2, WithTurns: 2, Turns: 10, MatchedTurns: 3,
		Anchors: 3, TypeAnchors: [4]int{1, 2, 0, 0}, GoldTranscripts: 1, GoldTurns: 4,
		All:   anchors.Scores{Gold: anchors.Score{TP: 2, FP: 1, FN: 2}},
		Rules: []anchors.RuleCounts{{Matches: 1, Fires: 1}, {Matches: 2, Fires: 2, Scores: anchors.Scores{Gold: anchors.Score{TP: 1, FP: 1, FN: 3}}}},
	}
	rows := RuleRows(&anchors.Tally{Sets: []*anchors.SetCounts{c}})
	if len(rows) != 1+4+2 { // set, 4 types, 2 rules, no synthetic
		t.Fatalf("%d rows", len(rows))
	}
	set := rows[0]
	if set.Scope != "set" || *set.Matches != 3 || set.Fires != 3 || set.TP != 2 || *set.Precision != 2.0/3 || *set.Recall != 0.5 ||
		math.Abs(*set.F1-4.0/7) > 1e-12 || set.EvidencePrec != nil || set.LabelledTurns != 4 || set.TurnsEvaluated != 10 {
		t.Errorf("set row: %+v", set)
	}
	tc := rows[6]
	if tc.Rule != "task-completion" || *tc.Weight != 0.8 || *tc.Confidence != 0.92 || tc.BelowThreshold || *tc.Precision != 0.5 || *tc.Recall != 0.25 {
		t.Errorf("rule row: %+v", tc)
	}
	if rows[1].Type != "error-resolution" || rows[1].Fires != 1 || rows[1].Matches != nil {
		t.Errorf("type row: %+v", rows[1])
	}
}

// TestTunedBeatsSeedsOnRealCorpus: on the shared real corpus, against
// evidence labels, tuned's F1 is strictly above codelet's and fspec's.
func TestTunedBeatsSeedsOnRealCorpus(t *testing.T) {
	sc := tally(analyzeDir(t, testutil.RealCorpus(t)))
	f1 := map[string]float64{}
	for _, set := range []string{"codelet", "fspec", "tuned"} {
		c := sc[set]
		if c.EvidenceTranscripts == 0 || c.EvidenceTurns == 0 {
			t.Fatalf("%s: no evidence scored", set)
		}
		v, ok := c.All.Evidence.F1()
		if !ok {
			t.Fatalf("%s: F1 undefined: %+v", set, c.All.Evidence)
		}
		p, _ := c.All.Evidence.Precision()
		r, _ := c.All.Evidence.Recall()
		t.Logf("%-8s evidence P %.3f R %.3f F1 %.3f (%+v, %d transcripts, %d labelled turns)", set, p, r, v, c.All.Evidence, c.EvidenceTranscripts, c.EvidenceTurns)
		f1[set] = v
	}
	if !(f1["tuned"] > f1["codelet"] && f1["tuned"] > f1["fspec"]) {
		t.Errorf("tuned F1 %.3f is not above codelet %.3f and fspec %.3f", f1["tuned"], f1["codelet"], f1["fspec"])
	}
}

// TestAnalyzeWithoutAnchors: a nil anchor configuration adds nothing.
func TestAnalyzeWithoutAnchors(t *testing.T) {
	tr := &transcript.Transcript{ID: "x", Messages: []transcript.Message{{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "hi"}}}}}
	r := Analyze(tr, &Config{})
	if r.Anchors != nil || r.Labels != nil || r.AnchorCounts != nil {
		t.Fatalf("%+v", r)
	}
	if !reflect.DeepEqual(r.Transcript.Turns, int64(1)) {
		t.Fatal(r.Transcript.Turns)
	}
}

func TestNewAnchorConfigDuplicateNames(t *testing.T) {
	c, _ := anchors.Builtin("codelet")
	if _, err := NewAnchorConfig([]*anchors.RuleSet{c, c}, nil, nil); err == nil {
		t.Fatal("duplicate set names accepted")
	}
}
