package aggregate

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/figures"
)

func f(v float64) *float64 { return &v }

// TestVerdictRanking: fitting strategies are ranked by Pareto layer on
// (compression, need recall), then need recall, then cost; the others carry
// their reasons.
func TestVerdictRanking(t *testing.T) {
	fit := func(comp, need, cost float64) *StrategyStats {
		return statsOf(map[string]*float64{figures.Runs: fp(4), figures.FitRuns: fp(4), figures.Compactions: fp(10), figures.MedianCompression: f(comp), figures.NeedRecall: f(need), figures.CostRatio: f(cost)})
	}
	s := &Summary{Strategies: Strategies{
		"truncate":    fit(0.5, 0.9, 0.9),  // layer 1 (best recall)
		"structured":  fit(0.99, 0.1, 0.8), // layer 1 (best compression)
		"prune":       fit(0.98, 0.1, 0.7), // dominated by structured: layer 2
		"codex":       fit(0.98, 0.1, 0.6), // same figures as prune, cheaper
		"window":      fit(0.6, 0.5, 1.0),  // layer 1
		"mask":        statsOf(map[string]*float64{figures.Runs: fp(4), figures.FitRuns: fp(3), figures.OverflowRuns: fp(1), figures.Overflows: fp(7), figures.Compactions: fp(100), figures.FreedUnder1Pct: fp(95), figures.MedianCompression: f(0.01), figures.NeedRecall: f(0.6)}),
		"codelet":     statsOf(map[string]*float64{figures.Runs: fp(4), figures.FitRuns: fp(2), figures.OverflowRuns: fp(2), figures.Overflows: fp(9), figures.ReachedWindowRuns: fp(2), figures.NeverFiredRuns: fp(2), figures.MedianTriggerPeak: f(0.16)}),
		"codelet-raw": statsOf(map[string]*float64{figures.Runs: fp(4), figures.FitRuns: fp(3), figures.OverflowRuns: fp(1), figures.Overflows: fp(3), figures.ReachedWindowRuns: fp(2), figures.NothingToDropRuns: fp(1), figures.Compactions: fp(4), figures.KeptEverything: fp(3)}),
		"fspec":       statsOf(map[string]*float64{figures.Runs: fp(4), figures.FitRuns: fp(4), figures.Compactions: fp(2), figures.OrphanResults: fp(1), figures.MedianCompression: f(0.9), figures.NeedRecall: f(0.9)}),
	}}
	v := computeVerdict(s)
	var got []string
	for _, l := range v.Ranked {
		got = append(got, l.Strategy)
	}
	if want := "truncate window structured codex prune"; strings.Join(got, " ") != want {
		t.Errorf("ranked %q, want %q", strings.Join(got, " "), want)
	}
	if v.Ranked[0].Layer != 1 || v.Ranked[3].Layer != 2 {
		t.Errorf("layers %+v", v.Ranked)
	}
	reasons := map[string][]string{
		"mask":        {"overflowed in 1/4 sessions (7 calls over the window)", "thrash: 95% of its 100 compactions freed < 1% of the window"},
		"codelet":     {"never compacted: its trigger stayed below its limit in 2 of the 2 sessions", "median 16% of the limit", "overflowed in 2/4"},
		"codelet-raw": {"found nothing to compact", "in 1 of the 2 sessions", "75% of its 4 compactions kept every recorded message"},
		"fspec":       {"1 invalid requests"},
	}
	if len(v.Others) != len(reasons) {
		t.Errorf("others: %+v", v.Others)
	}
	for _, l := range v.Others {
		for _, want := range reasons[l.Strategy] {
			if !strings.Contains(l.Why, want) {
				t.Errorf("%s: %q lacks %q", l.Strategy, l.Why, want)
			}
		}
	}
	if v.Note != "" {
		t.Errorf("note %q", v.Note)
	}
	// Nothing reached the window: nothing to decide.
	idle := computeVerdict(&Summary{Strategies: Strategies{"truncate": statsOf(map[string]*float64{figures.Runs: fp(2), figures.FitRuns: fp(2)}), "mask": statsOf(map[string]*float64{figures.Runs: fp(2), figures.FitRuns: fp(2)})}})
	if idle.Note == "" || len(idle.Ranked) != 2 {
		t.Errorf("idle verdict %+v", idle)
	}
}
