package figures

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
)

func fp(v float64) *float64 { return &v }

// TestRegistryWellFormed: every entry can be computed as its aggregation
// says, names what it refers to, and the ranks that order views are unique.
func TestRegistryWellFormed(t *testing.T) {
	gateRanks, cols := map[int]string{}, map[int]string{}
	tuneRanks, tuneCols, briefs := map[int]string{}, map[string]string{}, map[int]string{}
	for _, f := range All() {
		if f.Name == "" || f.Caption == "" || f.Scope == "" {
			t.Errorf("%q: want a name, scope and caption", f.Name)
		}
		computes := f.Run != nil || f.Event != nil
		switch f.Agg {
		case Sum, Median:
			if !computes || f.Run != nil && f.Event != nil {
				t.Errorf("%s: a %v figure needs exactly one of Run and Event", f.Name, f.Agg)
			}
		case Pooled:
			for _, p := range []string{f.Num, f.Den} {
				if _, ok := Lookup(p); !ok {
					t.Errorf("%s: pools unknown figure %q", f.Name, p)
				}
			}
		case Total:
			for _, p := range f.Parts {
				if g, ok := Lookup(p); !ok || g.Agg != Sum {
					t.Errorf("%s: adds %q, not a registered sum", f.Name, p)
				}
			}
		case Last:
			if f.RunLabel == nil || f.Unit != Label {
				t.Errorf("%s: a label figure needs RunLabel and unit Label", f.Name)
			}
		case External:
			if computes {
				t.Errorf("%s: external figures are computed elsewhere", f.Name)
			}
		}
		if f.Scope != Strategy && f.Agg != External {
			t.Errorf("%s: only strategy figures are computed here", f.Name)
		}
		if f.Gate != nil {
			if f.Better == Neither {
				t.Errorf("%s: gated without a better direction", f.Name)
			}
			if other, dup := gateRanks[f.Gate.Rank]; dup || f.Gate.Rank <= 0 {
				t.Errorf("%s: gate rank %d (also %s)", f.Name, f.Gate.Rank, other)
			}
			gateRanks[f.Gate.Rank] = f.Name
		}
		if (f.Column == "") != (f.Col == 0) {
			t.Errorf("%s: a column needs a header and a position", f.Name)
		}
		if f.Col != 0 {
			if other, dup := cols[f.Col]; dup {
				t.Errorf("%s: column %d taken by %s", f.Name, f.Col, other)
			}
			cols[f.Col] = f.Name
		}
		if f.Tune != nil {
			checkTune(t, &f, tuneRanks, tuneCols)
		}
		if f.Brief != nil {
			checkBrief(t, &f, briefs)
		}
	}
	if len(Briefs()) == 0 || len(TuneColumns()) == 0 || len(ParetoObjectives()) == 0 {
		t.Error("the default table, tune's columns and its Pareto objectives need figures")
	}
	if _, ok := Lookup("no_such_figure"); ok {
		t.Error("Lookup found an unregistered name")
	}
}

// checkTune: a tune column has a unique name and rank, a header, and only
// strategy figures computed here are generated columns (rank > 0).
func checkTune(t *testing.T, f *Figure, ranks map[int]string, cols map[string]string) {
	t.Helper()
	c := f.Tune
	if c.Column == "" || c.Header == "" {
		t.Errorf("%s: a tune column needs a name and a header", f.Name)
	}
	if other, dup := cols[c.Column]; dup {
		t.Errorf("%s: tune column %q taken by %s", f.Name, c.Column, other)
	}
	cols[c.Column] = f.Name
	if c.Rank > 0 {
		if other, dup := ranks[c.Rank]; dup {
			t.Errorf("%s: tune rank %d taken by %s", f.Name, c.Rank, other)
		}
		ranks[c.Rank] = f.Name
	}
	if (c.Rank > 0) != (f.Scope == Strategy && f.Agg != External && f.Unit != Label) {
		t.Errorf("%s: tune rank %d: generated columns are the strategy figures computed here", f.Name, c.Rank)
	}
	if c.Pareto && f.Better == Neither {
		t.Errorf("%s: a Pareto objective needs a direction", f.Name)
	}
}

// checkBrief: a default-table column has a unique rank, a header, and its
// Of and N name registered counts.
func checkBrief(t *testing.T, f *Figure, ranks map[int]string) {
	t.Helper()
	b := f.Brief
	if other, dup := ranks[b.Rank]; dup || b.Rank <= 0 || b.Header == "" {
		t.Errorf("%s: brief rank %d (also %s), header %q", f.Name, b.Rank, other, b.Header)
	}
	ranks[b.Rank] = f.Name
	for _, n := range []string{b.Of, b.N} {
		if g, ok := Lookup(n); n != "" && (!ok || g.Unit != Count || g.Scope != Strategy) {
			t.Errorf("%s: brief names %q, not a strategy count", f.Name, n)
		}
	}
	if f.Scope != Strategy {
		t.Errorf("%s: only strategy figures have a place in the strategy table", f.Name)
	}
}

// TestAggregation: each aggregation over a few replays and events.
func TestAggregation(t *testing.T) {
	runs := []analysis.RunRow{
		{RuleSet: "tuned", Compactions: 2, CostUSD: 1, BaselineCostUSD: 2, CostRatio: fp(0.5), PeakContext: 10},
		{RuleSet: "tuned", Compactions: 1, Overflows: 3, CostUSD: 9, BaselineCostUSD: 9, CostRatio: fp(1), PeakContext: 30,
			BaselineOverflows: 2},
		{RuleSet: "tuned", BaselineOverflows: 1, PeakTrigger: 50, TriggerLimit: 100, PeakContext: 20},
	}
	yes, no := true, false
	events := []analysis.EventRow{
		{CompressionRatio: 0.9, NeedFacts: 4, NeedKept: 3, NeedRecall: fp(0.75), IntentKept: &yes, AnchorKind: "natural", OrphanResults: 1},
		{CompressionRatio: 0.5, LowCompression: true, NeedFacts: 0, IntentKept: &no, AnchorKind: "synthetic", DanglingCalls: 2},
		{CompressionRatio: 0.7, NeedFacts: 6, NeedKept: 6, NeedRecall: fp(1)},
	}
	var s Set
	for i := range runs {
		s.AddRun(&runs[i])
	}
	for i := range events {
		s.AddEvent(&events[i])
	}
	s.Finish()
	for _, c := range []struct {
		name string
		want *float64
	}{
		{Runs, fp(3)}, {FitRuns, fp(2)}, {OverflowRuns, fp(1)}, {Compactions, fp(3)}, {Overflows, fp(3)},
		{ReachedWindowRuns, fp(2)}, {NeverFiredRuns, fp(1)}, {NothingToDropRuns, fp(0)}, {MedianTriggerPeak, fp(0.5)},
		{MedianCompression, fp(0.7)}, {LowCompression, fp(1)}, {LowCompressionShare, fp(1.0 / 3)},
		{NeedFacts, fp(10)}, {NeedKept, fp(9)}, {NeedRecall, fp(0.9)}, {MedianNeedRecall, fp(0.875)},
		{MedianFileRecall, nil}, {IntentKeptShare, fp(0.5)}, {SyntheticAnchorRate, fp(0.5)},
		{CostUSD, fp(1)}, {BaselineCostUSD, fp(2)}, {CostRatio, fp(0.5)}, {MedianCostRatio, fp(0.5)},
		{MedianPeakContext, fp(20)}, {OrphanResults, fp(1)}, {DanglingCalls, fp(2)}, {InvalidContexts, fp(3)},
	} {
		got := s.Value(c.name)
		if (got == nil) != (c.want == nil) || got != nil && math.Abs(*got-*c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, deref(got), deref(c.want))
		}
	}
	if s.Label(RuleSetName) != "tuned" {
		t.Errorf("rule set %q", s.Label(RuleSetName))
	}
	var empty Set
	empty.Finish()
	if empty.Value(NeedRecall) != nil || empty.Value(MedianCompression) != nil || *empty.Value(Runs) != 0 {
		t.Error("an empty set: ratios and medians undefined, sums 0")
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestJSON: a set writes every visible strategy figure in registry order
// and reads back to the same bytes.
func TestJSON(t *testing.T) {
	var s Set
	s.AddRun(&analysis.RunRow{RuleSet: "codelet", Compactions: 4, CostUSD: 0.25, BaselineCostUSD: 1})
	s.AddEvent(&analysis.EventRow{CompressionRatio: 0.8, NeedFacts: 2, NeedKept: 1})
	s.Finish()
	data, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range All() {
		if f.Scope == Strategy && !f.Hidden {
			keys = append(keys, `"`+f.Name+`":`)
		}
	}
	at := 0
	for _, k := range keys {
		i := strings.Index(string(data[at:]), k)
		if i < 0 {
			t.Fatalf("%s missing or out of order in %s", k, data)
		}
		at += i
	}
	for _, want := range []string{`"compactions":4,`, `"cost_ratio":0.25,`, `"median_file_recall":null`, `"rule_set":"codelet"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
	var back Set
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if string(again) != string(data) {
		t.Errorf("round trip:\n%s\n%s", data, again)
	}
	n := 0
	if err := back.EachSample(MedianCompression, func(float64) { n++ }); err != nil || *back.Value(InvalidContexts) != 0 || n != 0 {
		t.Error("a set read back: totals from their parts, no samples")
	}
	if err := json.Unmarshal([]byte(`{"runs":"x"}`), &back); err == nil {
		t.Error("a bad value is an error")
	}
}
