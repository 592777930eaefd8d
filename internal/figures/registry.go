package figures

import "github.com/compactbench/compactbench/internal/analysis"

// Names of the figures the code reads by name.
const (
	Runs                = "runs"
	RuleSetName         = "rule_set"
	FitRuns             = "fit_runs"
	Compactions         = "compactions"
	Overflows           = "overflows"
	OverflowRuns        = "overflow_runs"
	Thrash              = "thrash"
	KeptEverything      = "kept_everything"
	FreedUnder1Pct      = "freed_under_1pct"
	ReachedWindowRuns   = "reached_window_runs"
	NeverFiredRuns      = "never_fired_runs"
	NothingToDropRuns   = "nothing_to_drop_runs"
	MedianTriggerPeak   = "median_trigger_peak"
	OrphanResults       = "orphan_results"
	DanglingCalls       = "dangling_calls"
	InvalidContexts     = "invalid_contexts"
	MedianCompression   = "median_compression"
	NeedFacts           = "need_facts"
	NeedKept            = "need_kept"
	NeedRecall          = "need_recall"
	SyntheticAnchorRate = "synthetic_anchor_rate"
	CostUSD             = "cost_usd"
	BaselineCostUSD     = "baseline_cost_usd"
	CostRatio           = "cost_ratio"
	MedianErrorRecall   = "median_error_recall"
	AnchorF1            = "anchor_f1"
	RulerMedianError    = "ruler_median_error"
	GoldF1              = "gold_f1"
	EvidenceF1          = "evidence_f1"
	Problems            = "problems"
)

// Per-item helpers.
func one(ok bool) (float64, bool) { return 1, ok }
func num(n int64) (float64, bool) { return float64(n), true }
func opt(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}
func fits(r *analysis.RunRow) bool    { return r.Overflows == 0 }
func reached(r *analysis.RunRow) bool { return r.BaselineOverflows > 0 }
func neverFired(r *analysis.RunRow) bool {
	return reached(r) && r.Compactions == 0 && r.Skips == 0
}

// registry is every figure, in summary.json order (a strategy's keys first,
// hidden tallies and the other scopes' gated figures after).
var registry = []Figure{
	{Name: Runs, Scope: Strategy, Unit: Count, Agg: Sum, Caption: "replays of the strategy (one per session)",
		Run: func(*analysis.RunRow) (float64, bool) { return 1, true }, Column: "runs", Col: 2},
	{Name: RuleSetName, Scope: Strategy, Unit: Label, Agg: Last, Caption: "the anchor rule set the strategy selects with",
		RunLabel: func(r *analysis.RunRow) string { return r.RuleSet }, Column: "rule set", Col: 1},
	{Name: FitRuns, Scope: Strategy, Unit: Count, Agg: Sum, Better: Higher, Caption: "replays with no call over the window",
		Run: func(r *analysis.RunRow) (float64, bool) { return one(fits(r)) }, Column: "fits window", Col: 3,
		Brief: &Brief{Rank: 1, Header: "fits", Of: Runs}},
	{Name: Compactions, Scope: Strategy, Unit: Count, Agg: Sum, Caption: "compaction events",
		Run: func(r *analysis.RunRow) (float64, bool) { return num(r.Compactions) }, Column: "compactions", Col: 4,
		Brief: &Brief{Rank: 2, Header: "events"}, Tune: &TuneCol{Rank: 1, Column: "compactions", Header: "compactions"}},
	{Name: Overflows, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "calls whose prompt exceeded the window",
		Run:  func(r *analysis.RunRow) (float64, bool) { return num(r.Overflows) },
		Gate: &Gate{Rank: 9}, Column: "overflows", Col: 7, Tune: &TuneCol{Rank: 2, Column: "overflows", Header: "overflows"}},
	{Name: OverflowRuns, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "replays with at least one overflow",
		Run: func(r *analysis.RunRow) (float64, bool) { return one(!fits(r)) }},
	{Name: Thrash, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "compactions soon followed by another",
		Run: func(r *analysis.RunRow) (float64, bool) { return num(r.Thrash) }, Column: "thrash", Col: 17},
	{Name: KeptEverything, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "compactions that dropped no recorded message",
		Run: func(r *analysis.RunRow) (float64, bool) { return num(r.KeptEverything) }, Column: "kept everything", Col: 5},
	{Name: FreedUnder1Pct, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "compactions that freed less than 1 % of the window",
		Run: func(r *analysis.RunRow) (float64, bool) { return num(r.FreedUnder1Pct) }, Column: "freed <1%", Col: 6},
	{Name: ReachedWindowRuns, Scope: Strategy, Unit: Count, Agg: Sum, Caption: "replays whose context exceeds the window without compaction",
		Run: func(r *analysis.RunRow) (float64, bool) { return one(reached(r)) }},
	{Name: NeverFiredRuns, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "of those, replays where the trigger never fired",
		Run: func(r *analysis.RunRow) (float64, bool) { return one(neverFired(r)) }},
	{Name: NothingToDropRuns, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "of those, replays where the selection never found anything to drop",
		Run: func(r *analysis.RunRow) (float64, bool) { return one(reached(r) && r.Compactions == 0 && r.Skips > 0) }},
	{Name: MedianTriggerPeak, Scope: Strategy, Unit: Ratio, Agg: Median, Caption: "over never-fired replays, median of the trigger's peak over its limit",
		Run: func(r *analysis.RunRow) (float64, bool) {
			if !neverFired(r) || r.TriggerLimit <= 0 {
				return 0, false
			}
			return float64(r.PeakTrigger) / float64(r.TriggerLimit), true
		}},
	{Name: OrphanResults, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "tool results whose call it dropped (invalid requests)",
		Event: func(e *analysis.EventRow) (float64, bool) { return num(e.OrphanResults) }, Gate: &Gate{Rank: 7}},
	{Name: DanglingCalls, Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "tool calls whose result it dropped (invalid requests)",
		Event: func(e *analysis.EventRow) (float64, bool) { return num(e.DanglingCalls) }, Gate: &Gate{Rank: 8}},
	{Name: "low_compression", Scope: Strategy, Unit: Count, Agg: Sum, Better: Lower, Caption: "events under 60 % compression",
		Event: func(e *analysis.EventRow) (float64, bool) { return one(e.LowCompression) }},
	{Name: "low_compression_share", Scope: Strategy, Unit: Share, Agg: Pooled, Num: "low_compression", Den: "events", Better: Lower,
		Caption: "share of its events under 60 % compression", Gate: &Gate{Rank: 3, Tolerance: 0.05}, Column: "low (<60%)", Col: 9},
	{Name: MedianCompression, Scope: Strategy, Unit: Share, Agg: Median, Better: Higher, Caption: "median compression ratio of its events",
		Event: func(e *analysis.EventRow) (float64, bool) { return e.CompressionRatio, true },
		Gate:  &Gate{Rank: 2, Tolerance: 0.05}, Column: "median compression", Col: 8, Brief: &Brief{Rank: 3, Header: "compr."},
		Tune: &TuneCol{Rank: 4, Column: "median_compression", Header: "median compression", Pareto: true}},
	{Name: NeedFacts, Scope: Strategy, Unit: Count, Agg: Sum, Caption: "facts needed later, summed over events",
		Event: func(e *analysis.EventRow) (float64, bool) { return num(e.NeedFacts) }},
	{Name: NeedKept, Scope: Strategy, Unit: Count, Agg: Sum, Caption: "needed facts the compacted context kept, summed over events",
		Event: func(e *analysis.EventRow) (float64, bool) { return num(e.NeedKept) }},
	{Name: NeedRecall, Scope: Strategy, Unit: Share, Agg: Pooled, Num: NeedKept, Den: NeedFacts, Better: Higher,
		Caption: "facts needed later that the compacted context kept, pooled over its compactions (kept / needed)",
		Gate:    &Gate{Rank: 1, Tolerance: 0.02}, Column: "need recall", Col: 10, Brief: &Brief{Rank: 4, Header: "need rec."},
		Tune: &TuneCol{Rank: 5, Column: "need_recall", Header: "need recall", Pareto: true}},
	{Name: "median_need_recall", Scope: Strategy, Unit: Share, Agg: Median, Better: Higher, Caption: "median of the per-event need recall",
		Event: func(e *analysis.EventRow) (float64, bool) { return opt(e.NeedRecall) }, Column: "median need recall", Col: 11},
	{Name: "median_file_recall", Scope: Strategy, Unit: Share, Agg: Median, Better: Higher, Caption: "median of the per-event file recall",
		Event: func(e *analysis.EventRow) (float64, bool) { return opt(e.FileRecall) }, Column: "file recall", Col: 12},
	{Name: MedianErrorRecall, Scope: Strategy, Unit: Share, Agg: Median, Better: Higher, Caption: "median of the per-event error recall",
		Event: func(e *analysis.EventRow) (float64, bool) { return opt(e.ErrorRecall) }, Column: "error recall", Col: 13,
		Brief: &Brief{Rank: 5, Header: "err rec."}},
	{Name: "intent_kept_share", Scope: Strategy, Unit: Share, Agg: Pooled, Num: "intent_kept", Den: "intent_defined", Better: Higher,
		Caption: "share of events that keep the last user intent", Gate: &Gate{Rank: 4, Tolerance: 0.02}, Column: "intent kept", Col: 14},
	{Name: SyntheticAnchorRate, Scope: Strategy, Unit: Share, Agg: Pooled, Num: "synthetic_anchored", Den: "anchored", Better: Lower,
		Caption: "share of anchored events that fell back to a synthetic anchor", Gate: &Gate{Rank: 5, Tolerance: 0.05}, Column: "synthetic", Col: 16,
		Tune: &TuneCol{Rank: 7, Column: "synthetic_anchor_rate", Header: "synthetic (events)"}},
	{Name: "median_cost_ratio", Scope: Strategy, Unit: Ratio, Agg: Median, Better: Lower, Caption: "median of the per-replay cost ratio over replays that fit",
		Run: func(r *analysis.RunRow) (float64, bool) {
			if !fits(r) {
				return 0, false
			}
			return opt(r.CostRatio)
		}, Column: "median cost ratio (fit)", Col: 20},
	{Name: CostUSD, Scope: Strategy, Unit: USD, Agg: Sum, Better: Lower, Caption: "simulated bill with the strategy over the replays that fit",
		Run: func(r *analysis.RunRow) (float64, bool) { return r.CostUSD, fits(r) }, Column: "cost USD (fit)", Col: 21},
	{Name: BaselineCostUSD, Scope: Strategy, Unit: USD, Agg: Sum, Caption: "simulated bill without compaction over the replays that fit",
		Run: func(r *analysis.RunRow) (float64, bool) { return r.BaselineCostUSD, fits(r) }},
	{Name: CostRatio, Scope: Strategy, Unit: Ratio, Agg: Pooled, Num: CostUSD, Den: BaselineCostUSD, Better: Lower,
		Caption: "simulated bill with the strategy over the bill without compaction, pooled over the replays that fit the window (one that overflowed would have failed)",
		Gate:    &Gate{Rank: 6, Tolerance: 0.05}, Column: "cost ratio (fit)", Col: 19, Brief: &Brief{Rank: 7, Header: "cost (n)", N: FitRuns},
		Tune: &TuneCol{Rank: 6, Column: "cost_ratio", Header: "cost (fit)"}},
	{Name: "median_peak_context", Scope: Strategy, Unit: Tokens, Agg: Median, Better: Lower, Caption: "median of the per-replay peak context",
		Run: func(r *analysis.RunRow) (float64, bool) { return float64(r.PeakContext), true }},

	// Hidden tallies: the parts of pooled figures and of table cells.
	{Name: "events", Scope: Strategy, Unit: Count, Agg: Sum, Hidden: true, Caption: "compaction events",
		Event: func(*analysis.EventRow) (float64, bool) { return 1, true }},
	{Name: "intent_defined", Scope: Strategy, Unit: Count, Agg: Sum, Hidden: true, Caption: "events where intent_kept is defined",
		Event: func(e *analysis.EventRow) (float64, bool) { return one(e.IntentKept != nil) }},
	{Name: "intent_kept", Scope: Strategy, Unit: Count, Agg: Sum, Hidden: true, Caption: "events that kept the last user intent",
		Event: func(e *analysis.EventRow) (float64, bool) { return one(e.IntentKept != nil && *e.IntentKept) }},
	{Name: "anchored", Scope: Strategy, Unit: Count, Agg: Sum, Hidden: true, Caption: "events with an anchor kind",
		Event: func(e *analysis.EventRow) (float64, bool) { return one(e.AnchorKind != "") }},
	{Name: "synthetic_anchored", Scope: Strategy, Unit: Count, Agg: Sum, Hidden: true, Caption: "events with a synthetic anchor",
		Event: func(e *analysis.EventRow) (float64, bool) { return one(e.AnchorKind == "synthetic") }},
	{Name: InvalidContexts, Scope: Strategy, Unit: Count, Agg: Total, Parts: []string{OrphanResults, DanglingCalls}, Hidden: true, Better: Lower,
		Caption: "tool results and calls that lost their other half (orphan results plus dangling calls): any is an invalid API request",
		Column:  "orphans+dangling", Col: 15, Tune: &TuneCol{Rank: 3, Column: "invalid_contexts", Header: "invalid"}},
	{Name: AnchorF1, Scope: Strategy, Unit: Ratio, Agg: External, Hidden: true, Better: Higher,
		Caption: "F1 of the strategy's anchor rule set against gold labels (evidence labels where there are none)", Column: "anchor F1", Col: 18,
		Brief: &Brief{Rank: 6, Header: "F1"}, Tune: &TuneCol{Column: "f1", Header: "F1", Pareto: true}},

	// The other scopes' gated figures (computed by the report package).
	{Name: RulerMedianError, Scope: Ruler, Unit: Ratio, Agg: External, Better: Lower,
		Caption: "median |err| of the ruler over recorded calls", Gate: &Gate{Rank: 10, Tolerance: 0.01}},
	{Name: GoldF1, Scope: RuleSet, Unit: Ratio, Agg: External, Better: Higher,
		Caption: "F1 of the rule set against gold labels", Gate: &Gate{Rank: 11, Tolerance: 0.02}},
	{Name: EvidenceF1, Scope: RuleSet, Unit: Ratio, Agg: External, Better: Higher,
		Caption: "F1 of the rule set against evidence labels", Gate: &Gate{Rank: 12, Tolerance: 0.02}},
	{Name: Problems, Scope: Corpus, Unit: Count, Agg: External, Better: Lower,
		Caption: "input problems", Gate: &Gate{Rank: 13}},
}

// Names of the figures only the registry spells today.
const (
	LowCompression      = "low_compression"
	LowCompressionShare = "low_compression_share"
	MedianNeedRecall    = "median_need_recall"
	MedianFileRecall    = "median_file_recall"
	IntentKeptShare     = "intent_kept_share"
	MedianCostRatio     = "median_cost_ratio"
	MedianPeakContext   = "median_peak_context"
)
