package analysis

import (
	"testing"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// rulerSet resolves a ruler spec for a test.
func rulerSet(t testing.TB, spec tokens.RulerSpec) *tokens.RulerSet {
	t.Helper()
	s, err := tokens.NewRulerSet(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConfigRulers(t *testing.T) {
	var zero Config
	rs := zero.rulers()
	if gr := rs.ForModel("claude-sonnet-4-5"); len(gr.Measured) != len(tokens.DefaultNames()) || gr.Metric.Name() != tokens.Calibrated {
		t.Fatalf("zero config rulers: %v metric %v", gr.Measured, gr.Metric)
	}
	if a := rs.Overhead(); a != tokens.AnchorSegments {
		t.Errorf("zero config anchoring: %v", a)
	}
	f := &tokens.Factors{Prose: 1}
	c := Config{Rulers: rulerSet(t, tokens.RulerSpec{Measured: []tokens.RulerID{tokens.RulerCalibrated}, Metric: tokens.RulerCalibrated,
		Calibration: &tokens.FactorSet{Generations: map[string]*tokens.Factors{tokens.GenClaude3: f}}})}
	b := transcript.Block{Kind: transcript.BlockText, Text: "abcd"}
	// Each generation counts with its own factors; one the file lacks
	// derives from the reference generation's (claude-4.7: × 1.46).
	for model, want := range map[string]int{"claude-sonnet-4-5": 4, "claude-opus-4-7": 6} {
		gr := c.rulers().ForModel(model)
		if got := gr.Measured[0].Uncached().Block(&b); got != want {
			t.Errorf("%s (%s): calibration not applied: %d, want %d", model, gr.Name, got, want)
		}
	}
}

func TestAnalyzeCallRows(t *testing.T) {
	tr := &transcript.Transcript{Path: "p", ID: "id", Messages: []transcript.Message{
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "abcdefgh"}}},
		{Role: transcript.RoleAssistant, ID: "m1", Model: "x", Line: 2, Usage: &transcript.Usage{Input: 100},
			Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "abcd"}}},
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "abcd"}}},
		{Role: transcript.RoleAssistant, ID: "m2", Model: "x", Line: 4, Usage: &transcript.Usage{Input: 50, CacheRead: 60}},
	}, Compactions: []transcript.Compaction{{Kind: transcript.CompactMicro, MessageIndex: 4, PreTokens: 110}}}
	r := Analyze(tr, &Config{RulerNames: []string{tokens.Chars4},
		Rulers: rulerSet(t, tokens.RulerSpec{Measured: []tokens.RulerID{tokens.RulerChars4}, Metric: tokens.RulerCalibrated, Overhead: tokens.AnchorSegments})})
	if len(r.Calls) != 2 || len(r.Boundaries) != 1 {
		t.Fatalf("%d calls, %d boundaries", len(r.Calls), len(r.Boundaries))
	}
	a, b := r.Calls[0], r.Calls[1]
	if !a.Anchor || a.ErrChars4 != nil || *a.EstChars4 != 100 || a.EstCalibrated != nil {
		t.Errorf("anchor row %+v", a)
	}
	// overhead 100 − 2; call 1 prompt 2 + 1 + 1 = 4 → 102 against 110.
	if b.Anchor || *b.EstChars4 != 102 || *b.ErrChars4 != (102.0-110)/110 || b.MessageID != "m2" || *b.RealContext != 110 {
		t.Errorf("row %+v est %d", b, *b.EstChars4)
	}
	bd := r.Boundaries[0]
	if bd.Kind != "microcompact" || *bd.LastCallIndex != 1 || *bd.EstChars4 != 102 || *bd.ErrChars4 != (102.0-110)/110 {
		t.Errorf("boundary %+v", bd)
	}
}

// TestStrategyRulers: a strategy's ruler parameter names the ruler it gets,
// whatever the metric ruler is.
func TestStrategyRulers(t *testing.T) {
	for _, tc := range []struct{ metric, asked, want string }{
		{tokens.Chars4, tokens.Calibrated, tokens.Calibrated},
		{tokens.Chars4, "metric", tokens.Chars4},
		{tokens.Calibrated, tokens.Calibrated, tokens.Calibrated},
		{tokens.Calibrated, tokens.Chars4Msg, tokens.Chars4Msg},
	} {
		metric, _ := tokens.ParseRuler(tc.metric)
		gr := rulerSet(t, tokens.RulerSpec{Metric: metric}).ForModel("claude-sonnet-4-5")
		r, err := strategyRulers(gr)(tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.(*tokens.Ruler).Name(); got != tc.want {
			t.Errorf("metric %s, asked %s: got %s, want %s", tc.metric, tc.asked, got, tc.want)
		}
	}
	if _, err := strategyRulers(tokens.DefaultRulerSet().Of(0))("yardstick"); err == nil {
		t.Error("unknown ruler accepted")
	}
}
