package analysis

import (
	"testing"

	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func TestConfigRulers(t *testing.T) {
	var zero Config
	rs, err := zero.Rulers(tokens.GenClaude3)
	if err != nil || len(rs) != len(tokens.DefaultNames()) {
		t.Fatalf("zero config rulers: %v %v", rs, err)
	}
	if m, err := zero.MetricRuler(tokens.GenClaude3); err != nil || m.Name() != tokens.Calibrated {
		t.Errorf("zero config metric ruler: %v %v", m, err)
	}
	if a, err := zero.Anchoring(); err != nil || a != tokens.AnchorSegments {
		t.Errorf("zero config anchoring: %v %v", a, err)
	}
	f := &tokens.Factors{Prose: 1}
	c := Config{RulerNames: []string{tokens.Calibrated}, Calibration: &tokens.FactorSet{Generations: map[string]*tokens.Factors{tokens.GenClaude3: f}}, Overhead: "first"}
	b := transcript.Block{Kind: transcript.BlockText, Text: "abcd"}
	// Each generation counts with its own factors; one the file lacks
	// derives from the reference generation's (claude-4.7: × 1.46).
	for gen, want := range map[string]int{tokens.GenClaude3: 4, tokens.GenClaude47: 6} {
		rs, _ = c.Rulers(gen)
		if got := rs[0].Uncached().Block(&b); got != want {
			t.Errorf("%s: calibration not applied: %d, want %d", gen, got, want)
		}
	}
	if _, err := (&Config{RulerNames: []string{"x"}}).Rulers(""); err == nil {
		t.Error("unknown ruler accepted")
	}
	if _, err := (&Config{Overhead: "x"}).Anchoring(); err == nil {
		t.Error("unknown anchoring accepted")
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
	r := Analyze(tr, &Config{RulerNames: []string{tokens.Chars4}})
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
		cfg := &Config{Ruler: tc.metric}
		metric, err := cfg.MetricRuler(tokens.GenClaude3)
		if err != nil {
			t.Fatal(err)
		}
		r, err := cfg.strategyRulers(metric, tokens.GenClaude3)(tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.(*tokens.Ruler).Name(); got != tc.want {
			t.Errorf("metric %s, asked %s: got %s, want %s", tc.metric, tc.asked, got, tc.want)
		}
	}
}
