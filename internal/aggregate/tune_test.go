package aggregate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/figures"
)

// TestMarkPareto: within a strategy, a setting is on the front unless
// another is at least as good on F1, compression and need recall and
// better on one; groups do not compete; a missing figure is the worst.
func TestMarkPareto(t *testing.T) {
	row := func(strategy string, f1, comp, need *float64) TuneRow {
		return TuneRow{Strategy: strategy, F1: f1, TuneFigures: TuneFigures{MedianCompression: comp, NeedRecall: need}}
	}
	rows := []TuneRow{
		row("codelet", fp(0.5), fp(0.9), fp(0.3)), // 0: front (best compression)
		row("codelet", fp(0.6), fp(0.8), fp(0.3)), // 1: front (best F1)
		row("codelet", fp(0.5), fp(0.8), fp(0.3)), // 2: dominated by 0 and 1
		row("codelet", fp(0.6), fp(0.8), fp(0.3)), // 3: equal to 1: both on the front
		row("codelet", nil, fp(0.95), fp(0.3)),    // 4: front: best compression, F1 missing
		row("mask", nil, fp(0.1), fp(0.9)),        // 5: alone in its group: front
		row("mask", nil, fp(0.1), nil),            // 6: dominated by 5 (missing need recall)
		{RuleSet: "tuned", F1: fp(0.1)},           // 7: rule-set group of its own
	}
	MarkPareto(rows)
	want := []bool{true, true, false, true, true, true, false, true}
	for i, r := range rows {
		if r.Pareto != want[i] {
			t.Errorf("row %d: pareto %v, want %v", i, r.Pareto, want[i])
		}
	}
}

func TestTuneRows(t *testing.T) {
	s := &Summary{Strategies: Strategies{
		"codelet": statsOf(map[string]*float64{figures.Compactions: fp(3), figures.OrphanResults: fp(1), figures.DanglingCalls: fp(2), figures.MedianCompression: fp(0.7)}),
		"mask":    statsOf(map[string]*float64{figures.Compactions: fp(9)}),
	}, Anchors: []RuleSetSummary{
		{Name: "codelet", Threshold: 0.8, Anchors: 4, Gold: &LabelScores{LabelledTurns: 10, F1: fp(0.5)}, Evidence: &LabelScores{F1: fp(0.2)}},
		{Name: "tuned", Threshold: 0.7, SyntheticRate: fp(0.25), Evidence: &LabelScores{LabelledTurns: 3, Precision: fp(1), F1: fp(0.4)}},
	}}
	rows := TuneRows(2, func(string, string) string { return "anchors.threshold=0.8" }, s, map[string]string{"codelet": "codelet", "mask": ""})
	if len(rows) != 3 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	c, m, tu := rows[0], rows[1], rows[2]
	if c.Strategy != "codelet" || c.RuleSet != "codelet" || *c.Threshold != 0.8 || c.Labels != "gold" || *c.F1 != 0.5 ||
		c.InvalidContexts != 3 || *c.Anchors != 4 || c.Setting != 2 || c.Params != "anchors.threshold=0.8" {
		t.Errorf("codelet row %+v", c)
	}
	if m.Strategy != "mask" || m.RuleSet != "" || m.Labels != "" || m.F1 != nil || m.Compactions != 9 {
		t.Errorf("mask row %+v", m)
	}
	if tu.Strategy != "" || tu.RuleSet != "tuned" || tu.Labels != "evidence" || *tu.F1 != 0.4 || *tu.SetSyntheticRate != 0.25 {
		t.Errorf("rule-set row %+v", tu)
	}
	sorted := SortTune(append(TuneRows(1, func(string, string) string { return "a" }, s, map[string]string{"codelet": "codelet"}), rows...))
	var order []string
	for _, r := range sorted {
		order = append(order, r.Strategy+"/"+r.RuleSet+"/"+r.Params)
	}
	want := []string{"codelet/codelet/a", "codelet/codelet/anchors.threshold=0.8", "mask//a", "mask//anchors.threshold=0.8", "/tuned/a", "/tuned/anchors.threshold=0.8"}
	for i := range want {
		if order[i] != want[i] {
			t.Errorf("order %v, want %v", order, want)
			break
		}
	}
}

// TestDedupTune: a strategy the sweep does not touch (its params are the
// same in every setting) keeps one row.
func TestDedupTune(t *testing.T) {
	s := &Summary{Strategies: Strategies{"mask": statsOf(map[string]*float64{figures.Compactions: fp(9)}), "codelet": &StrategyStats{}}}
	var rows []TuneRow
	for i, keep := range []string{"mask.keep=2", "mask.keep=5", "mask.keep=2"} {
		rows = append(rows, TuneRows(i+1, func(strategy, _ string) string {
			if strategy == "mask" {
				return keep
			}
			return ""
		}, s, nil)...)
	}
	var got []string
	for _, r := range SortTune(DedupTune(rows)) {
		got = append(got, fmt.Sprintf("%s:%d:%s", r.Strategy, r.Setting, r.Params))
	}
	if want := "codelet:1: mask:1:mask.keep=2 mask:2:mask.keep=5"; strings.Join(got, " ") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, " "), want)
	}
}
