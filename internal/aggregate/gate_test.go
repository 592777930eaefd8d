package aggregate

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/tokens"
)

func fp(v float64) *float64 { return &v }

// stats is a strategy aggregate with the given figures set.
func stats(vals map[string]float64) *StrategyStats {
	st := &StrategyStats{}
	for k, v := range vals {
		st.Set(k, fp(v))
	}
	return st
}

// gateSummary is a small summary with one strategy, one ruler and one rule
// set.
func gateSummary() *Summary {
	return &Summary{SchemaVersion: SchemaVersion, Meta: Meta{Tool: "compactbench", ConfigHash: "h1", Inputs: []string{"corpora/"}},
		Corpus: Corpus{Totals: Totals{Transcripts: 3, Lines: 10}},
		Strategies: Strategies{"window": stats(map[string]float64{figures.NeedRecall: 0.50, figures.MedianCompression: 0.80,
			figures.LowCompressionShare: 0.10, figures.IntentKeptShare: 1, figures.CostRatio: 0.9, figures.Overflows: 2})},
		Rulers: &Rulers{Measured: map[string]*RulerErrors{"calibrated": {Calls: tokens.ErrStats{N: 5, Median: 0.02, P95: 0.1}}}},
		Anchors: []RuleSetSummary{{Name: "tuned", Hash: "a", Gold: &LabelScores{F1: fp(0.8)},
			Evidence: &LabelScores{F1: fp(0.6)}}},
	}
}

func find(g *GateResult, figure, of string) *GateCheck {
	for i := range g.Checks {
		if g.Checks[i].Figure.Name == figure && g.Checks[i].Of == of {
			return &g.Checks[i]
		}
	}
	return nil
}

func TestGateSameIsPass(t *testing.T) {
	g := Gate(gateSummary(), gateSummary(), DefaultTolerances())
	if g.Failures() != 0 || len(g.Notes) != 0 {
		t.Fatalf("failures %d notes %v", g.Failures(), g.Notes)
	}
	// One strategy, one ruler, one rule set and the corpus: one check per
	// gated figure.
	if len(g.Checks) != len(figures.Gated()) {
		t.Errorf("%d checks, want %d", len(g.Checks), len(figures.Gated()))
	}
}

// TestGateTolerances: each figure fails exactly past its tolerance, in its
// own direction.
func TestGateTolerances(t *testing.T) {
	cases := []struct {
		figure, of string
		change     func(s *Summary)
		pass       bool
	}{
		{"need_recall", "window", func(s *Summary) { s.Strategies["window"].Set(figures.NeedRecall, fp(0.48)) }, true}, // drop 0.02: allowed
		{"need_recall", "window", func(s *Summary) { s.Strategies["window"].Set(figures.NeedRecall, fp(0.47)) }, false},
		{"need_recall", "window", func(s *Summary) { s.Strategies["window"].Set(figures.NeedRecall, fp(0.99)) }, true}, // better
		{"low_compression_share", "window", func(s *Summary) { s.Strategies["window"].Set(figures.LowCompressionShare, fp(0.15)) }, true},
		{"low_compression_share", "window", func(s *Summary) { s.Strategies["window"].Set(figures.LowCompressionShare, fp(0.16)) }, false},
		{"low_compression_share", "window", func(s *Summary) { s.Strategies["window"].Set(figures.LowCompressionShare, fp(0)) }, true},
		{"orphan_results", "window", func(s *Summary) { s.Strategies["window"].Set(figures.OrphanResults, fp(1)) }, false},
		{"dangling_calls", "window", func(s *Summary) { s.Strategies["window"].Set(figures.DanglingCalls, fp(1)) }, false},
		{"overflows", "window", func(s *Summary) { s.Strategies["window"].Set(figures.Overflows, fp(3)) }, false},
		{"overflows", "window", func(s *Summary) { s.Strategies["window"].Set(figures.Overflows, fp(1)) }, true},
		{"cost_ratio", "window", func(s *Summary) { s.Strategies["window"].Set(figures.CostRatio, fp(0.96)) }, false},
		{"need_recall", "window", func(s *Summary) { s.Strategies["window"].Set(figures.NeedRecall, nil) }, false}, // lost
		{"ruler_median_error", "calibrated", func(s *Summary) { s.Rulers.Measured["calibrated"].Calls.Median = 0.03 }, true},
		{"ruler_median_error", "calibrated", func(s *Summary) { s.Rulers.Measured["calibrated"].Calls.Median = 0.031 }, false},
		{"gold_f1", "tuned", func(s *Summary) { s.Anchors[0].Gold.F1 = fp(0.779) }, false},
		{"evidence_f1", "tuned", func(s *Summary) { s.Anchors[0].Evidence.F1 = fp(0.58) }, true},
		{"problems", "", func(s *Summary) { s.Corpus.Problems = 1 }, false},
	}
	for _, c := range cases {
		cur := gateSummary()
		c.change(cur)
		g := Gate(gateSummary(), cur, DefaultTolerances())
		ch := find(g, c.figure, c.of)
		if ch == nil {
			t.Fatalf("%s of %s not checked", c.figure, c.of)
		}
		if ch.Pass != c.pass || (g.Failures() == 0) != c.pass {
			t.Errorf("%s of %s: pass %v (failures %d), want %v", c.figure, c.of, ch.Pass, g.Failures(), c.pass)
		}
	}
}

func TestGateMissingAndNew(t *testing.T) {
	cur := gateSummary()
	delete(cur.Strategies, "window")
	cur.Strategies["mask"] = &StrategyStats{}
	cur.Anchors[0].Name = "other"
	cur.Rulers.Measured = map[string]*RulerErrors{}
	cur.Meta.ConfigHash = "h2"
	g := Gate(gateSummary(), cur, DefaultTolerances())
	for _, want := range [][2]string{{"strategy", "window"}, {"rule set", "tuned"}, {"ruler", "calibrated"}} {
		if c := find(g, want[0], want[1]); c == nil || c.Pass || !c.Missing {
			t.Errorf("missing %s %s: %+v", want[0], want[1], c)
		}
	}
	notes := strings.Join(g.Notes, "\n")
	for _, want := range []string{"strategy mask is new", "rule set other is new", "config hash differs"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// A figure null in the baseline and set now is new, not a regression.
	base := gateSummary()
	base.Strategies["window"].Set(figures.SyntheticAnchorRate, nil)
	cur = gateSummary()
	cur.Strategies["window"].Set(figures.SyntheticAnchorRate, fp(1))
	if c := find(Gate(base, cur, DefaultTolerances()), "synthetic_anchor_rate", "window"); !c.Pass || c.Note != "new" {
		t.Errorf("new figure: %+v", c)
	}
}

func TestToleranceOverrides(t *testing.T) {
	tol := DefaultTolerances()
	if err := tol.Set("need_recall", "0.1"); err != nil {
		t.Fatal(err)
	}
	if err := tol.Set("window.overflows", "off"); err != nil {
		t.Fatal(err)
	}
	cur := gateSummary()
	cur.Strategies["window"].Set(figures.NeedRecall, fp(0.41))
	cur.Strategies["window"].Set(figures.Overflows, fp(50))
	g := Gate(gateSummary(), cur, tol)
	if g.Failures() != 0 || find(g, "overflows", "window") != nil {
		t.Errorf("overrides ignored: %d failures", g.Failures())
	}
	for _, bad := range [][2]string{{"nope", "1"}, {"need_recall", "-1"}, {"need_recall", "x"}, {"window.gold_f1", "0"}, {"nostrategy.overflows", "0"}} {
		if err := tol.Set(bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		}
	}
}

func TestParseTolerances(t *testing.T) {
	src := "# tolerances\nneed_recall: 0.05\nevidence_f1: off\nstrategies:\n  mask:\n    low_compression_share: off\n    overflows: 3\n"
	tol, err := ParseTolerances([]byte(src), "tol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if v, on := tol.For("window", "need_recall"); v != 0.05 || !on {
		t.Errorf("need_recall %v %v", v, on)
	}
	if _, on := tol.For("", "evidence_f1"); on {
		t.Errorf("evidence_f1 is off")
	}
	if _, on := tol.For("mask", "low_compression_share"); on {
		t.Errorf("mask low_compression_share is off")
	}
	if v, _ := tol.For("mask", "overflows"); v != 3 {
		t.Errorf("mask overflows %v", v)
	}
	if v, _ := tol.For("window", "overflows"); v != 0 {
		t.Errorf("window overflows %v", v)
	}
	bad := "need_recall: 0.05\nneed_recal: 0.1\nstrategies:\n  mask:\n    overflows: lots\n  nope: {overflows: 1}\n"
	_, err = ParseTolerances([]byte(bad), "bad.yaml")
	if err == nil {
		t.Fatal("bad file accepted")
	}
	for _, want := range []string{"bad.yaml:2:", "need_recal", "bad.yaml:5:", "lots", "bad.yaml:6:", "nope"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := ParseTolerances([]byte("- a\n- b\n"), "list.yaml"); err == nil || !strings.Contains(err.Error(), "list.yaml:1") {
		t.Errorf("a list: %v", err)
	}
}

func TestReadSummary(t *testing.T) {
	if _, err := ReadSummary([]byte(`{"schema_version": 1, "meta": {"tool": "compactbench"}}`), "ok.json"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{`, `[]`, `{"schema_version": 1}`, `{"schema_version": 99, "meta": {"tool": "compactbench"}}`} {
		if _, err := ReadSummary([]byte(bad), "bad.json"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// statsOf is a strategy aggregate with the given figures set (nil:
// undefined).
func statsOf(vals map[string]*float64) *StrategyStats {
	st := &StrategyStats{}
	for k, v := range vals {
		st.Set(k, v)
	}
	return st
}
