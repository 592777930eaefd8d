package report

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/tokens"
)

// StrategyStats are one strategy's aggregates over the corpus in
// summary.json. Each figure has one aggregation: medians over compaction
// events (compression, file and error recall), pooled over events (need
// recall: kept facts over needed facts; shares), pooled over the sessions
// that fit the window (cost, cost ratio), counts over runs or events.
type StrategyStats struct {
	Runs int64 `json:"runs"`
	// RuleSet is the anchor rule set the strategy selects with.
	RuleSet string `json:"rule_set,omitempty"`
	// FitRuns are the runs with no call over the window.
	FitRuns      int64 `json:"fit_runs"`
	Compactions  int64 `json:"compactions"`
	Overflows    int64 `json:"overflows"`
	OverflowRuns int64 `json:"overflow_runs"`
	Thrash       int64 `json:"thrash"`
	// KeptEverything counts compactions that dropped no recorded message;
	// FreedUnder1Pct those that freed less than 1 % of the window.
	KeptEverything int64 `json:"kept_everything"`
	FreedUnder1Pct int64 `json:"freed_under_1pct"`
	// ReachedWindowRuns are the runs whose context exceeds the window
	// without compaction; NeverFiredRuns those of them where the trigger
	// never fired, NothingToDropRuns those where it fired but the
	// selection never found anything to compact; MedianTriggerPeak is,
	// over the never-fired runs, the median of the trigger's peak measure
	// over its limit.
	ReachedWindowRuns int64    `json:"reached_window_runs"`
	NeverFiredRuns    int64    `json:"never_fired_runs"`
	NothingToDropRuns int64    `json:"nothing_to_drop_runs"`
	MedianTriggerPeak *float64 `json:"median_trigger_peak"`
	// OrphanResults and DanglingCalls are summed over events: any non-zero
	// value means some compacted context was an invalid API request.
	OrphanResults  int64 `json:"orphan_results"`
	DanglingCalls  int64 `json:"dangling_calls"`
	LowCompression int64 `json:"low_compression"`
	// LowCompressionShare is low_compression events over events.
	LowCompressionShare *float64 `json:"low_compression_share"`
	MedianCompression   *float64 `json:"median_compression"`
	// NeedRecall pools facts over events (kept / needed); MedianNeedRecall
	// is the median of the per-event ratios.
	NeedFacts           int64    `json:"need_facts"`
	NeedKept            int64    `json:"need_kept"`
	NeedRecall          *float64 `json:"need_recall"`
	MedianNeedRecall    *float64 `json:"median_need_recall"`
	MedianFileRecall    *float64 `json:"median_file_recall"`
	MedianErrorRecall   *float64 `json:"median_error_recall"`
	IntentKeptShare     *float64 `json:"intent_kept_share"`
	SyntheticAnchorRate *float64 `json:"synthetic_anchor_rate"`
	// MedianCostRatio is the median of the per-run cost ratios over the
	// runs that fit the window.
	MedianCostRatio *float64 `json:"median_cost_ratio"`
	// CostUSD and BaselineCostUSD sum the simulated bills over the runs
	// that fit the window (FitRuns); CostRatio is their ratio. A run that
	// overflowed would have failed, so its bill says nothing.
	CostUSD           float64  `json:"cost_usd"`
	BaselineCostUSD   float64  `json:"baseline_cost_usd"`
	CostRatio         *float64 `json:"cost_ratio"`
	MedianPeakContext *float64 `json:"median_peak_context"`

	compression, need, file, errs, cost, peak, trigger []float64
	intent, intentKept, anchored, synthetic            int64
}

// Strategies maps strategy ids to their aggregates.
type Strategies map[string]*StrategyStats

func (s Strategies) add(r *analysis.Result) {
	for i := range r.Runs {
		run := &r.Runs[i]
		st := s[run.Strategy]
		if st == nil {
			st = &StrategyStats{}
			s[run.Strategy] = st
		}
		st.Runs++
		st.RuleSet = run.RuleSet
		st.Compactions += run.Compactions
		st.Overflows += run.Overflows
		st.Thrash += run.Thrash
		st.KeptEverything += run.KeptEverything
		st.FreedUnder1Pct += run.FreedUnder1Pct
		if run.BaselineOverflows > 0 {
			st.ReachedWindowRuns++
			switch {
			case run.Compactions == 0 && run.Skips > 0:
				st.NothingToDropRuns++
			case run.Compactions == 0:
				st.NeverFiredRuns++
				if run.TriggerLimit > 0 {
					st.trigger = append(st.trigger, float64(run.PeakTrigger)/float64(run.TriggerLimit))
				}
			}
		}
		if run.Overflows > 0 {
			st.OverflowRuns++
		} else {
			st.FitRuns++
			if run.CostRatio != nil {
				st.cost = append(st.cost, *run.CostRatio)
			}
			st.CostUSD += run.CostUSD
			st.BaselineCostUSD += run.BaselineCostUSD
		}
		st.peak = append(st.peak, float64(run.PeakContext))
	}
	for i := range r.Events {
		e := &r.Events[i]
		st := s[e.Strategy]
		if st == nil {
			continue
		}
		st.OrphanResults += e.OrphanResults
		st.DanglingCalls += e.DanglingCalls
		if e.LowCompression {
			st.LowCompression++
		}
		st.compression = append(st.compression, e.CompressionRatio)
		st.NeedFacts += e.NeedFacts
		st.NeedKept += e.NeedKept
		if e.NeedRecall != nil {
			st.need = append(st.need, *e.NeedRecall)
		}
		if e.FileRecall != nil {
			st.file = append(st.file, *e.FileRecall)
		}
		if e.ErrorRecall != nil {
			st.errs = append(st.errs, *e.ErrorRecall)
		}
		if e.IntentKept != nil {
			st.intent++
			if *e.IntentKept {
				st.intentKept++
			}
		}
		if e.AnchorKind != "" {
			st.anchored++
			if e.AnchorKind == "synthetic" {
				st.synthetic++
			}
		}
	}
}

func (s Strategies) finish() {
	for _, st := range s {
		st.MedianCompression = median(st.compression)
		st.LowCompressionShare = share(st.LowCompression, int64(len(st.compression)))
		st.NeedRecall = share(st.NeedKept, st.NeedFacts)
		st.MedianNeedRecall = median(st.need)
		st.MedianFileRecall = median(st.file)
		st.MedianErrorRecall = median(st.errs)
		st.IntentKeptShare = share(st.intentKept, st.intent)
		st.SyntheticAnchorRate = share(st.synthetic, st.anchored)
		st.MedianCostRatio = median(st.cost)
		if st.BaselineCostUSD > 0 {
			r := st.CostUSD / st.BaselineCostUSD
			st.CostRatio = &r
		}
		st.MedianPeakContext = median(st.peak)
		st.MedianTriggerPeak = median(st.trigger)
	}
}

// compressionHistogram bins the strategy's event compression ratios in 20
// bins over [0, 1] (negative ratios are Under) for report.html; nil for a
// missing strategy.
func (st *StrategyStats) compressionHistogram() *Histogram {
	if st == nil {
		return nil
	}
	h := NewHistogram(0, 1, 20)
	for _, v := range st.compression {
		h.Add(v)
	}
	return h
}

func median(xs []float64) *float64 {
	v := tokens.Quantile(xs, 0.5)
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

func share(n, of int64) *float64 {
	if of == 0 {
		return nil
	}
	v := float64(n) / float64(of)
	return &v
}

// StrategyTable renders the per-strategy table for a terminal: the deciding
// figures within 100 columns, or every figure when wide.
func StrategyTable(w io.Writer, s *Summary, wide bool) error {
	header, rows := strategyGridNarrow(s)
	legend := strategyLegendNarrow
	if wide {
		header, rows = strategyGrid(s)
		legend = strategyLegend
	}
	if len(rows) == 0 {
		return nil
	}
	if err := RenderTable(w, header, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, strings.Join(wrap(legend, 100, ""), "\n")+"\n")
	return err
}

// VerdictText writes the verdict, wrapped at 100 columns.
func VerdictText(w io.Writer, s *Summary) error {
	lines := verdictText(s, 100)
	if len(lines) == 0 {
		return nil
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// anchorF1 is the F1 of a strategy's rule set: against gold labels, else
// against evidence labels (nil without labels or rule set).
func anchorF1(s *Summary, st *StrategyStats) *float64 {
	if st.RuleSet == "" {
		return nil
	}
	rs := ruleSet(s, st.RuleSet)
	if rs == nil {
		return nil
	}
	if v := f1(rs.Gold); v != nil {
		return v
	}
	return f1(rs.Evidence)
}

// fits is "fit/runs".
func fits(st *StrategyStats) string { return itoa(st.FitRuns) + "/" + itoa(st.Runs) }

// costCell is the cost ratio over the fitting runs with their number.
func costCell(st *StrategyStats) string {
	return ratio(st.CostRatio) + " (" + itoa(st.FitRuns) + ")"
}

// strategyGridNarrow is the terminal's default table: the figures that
// decide, within 100 columns.
func strategyGridNarrow(s *Summary) ([]string, [][]string) {
	header := []string{"strategy", "fits", "events", "compr.", "need rec.", "err rec.", "F1", "cost (n)"}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		rows = append(rows, []string{spec.ID, fits(st), itoa(st.Compactions), pct0Or(st.MedianCompression),
			pct0Or(st.NeedRecall), pct0Or(st.MedianErrorRecall), ratio(anchorF1(s, st)), costCell(st)})
	}
	return header, rows
}

func pct0Or(v *float64) string {
	if v == nil {
		return "-"
	}
	return pctLabel(*v)
}

const strategyLegendNarrow = "fits: sessions with no call over the window / sessions replayed. events: compactions. " +
	"compr.: median compression per compaction. need rec.: facts needed later that the compacted context kept, pooled " +
	"over compactions. err rec.: median error recall per compaction. F1: the strategy's anchor rule set against gold " +
	"labels (evidence labels where there are none). cost (n): simulated bill over the bill without compaction, pooled " +
	"over the n sessions that fit the window. --wide shows every figure."

// strategyGrid is the per-strategy table with every figure (strategies in
// compaction.Specs order), shared by --wide and the reports.
func strategyGrid(s *Summary) ([]string, [][]string) {
	header := []string{"strategy", "rule set", "runs", "fits window", "compactions", "kept everything", "freed <1%",
		"overflows", "median compression", "low (<60%)", "need recall", "median need recall", "file recall",
		"error recall", "intent kept", "orphans+dangling", "synthetic", "thrash", "anchor F1", "cost ratio (fit)",
		"median cost ratio (fit)", "cost USD (fit)"}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		rows = append(rows, []string{spec.ID, dash(st.RuleSet), itoa(st.Runs), itoa(st.FitRuns), itoa(st.Compactions),
			itoa(st.KeptEverything), itoa(st.FreedUnder1Pct), itoa(st.Overflows),
			pct(st.MedianCompression), pct(st.LowCompressionShare), pct(st.NeedRecall), pct(st.MedianNeedRecall),
			pct(st.MedianFileRecall), pct(st.MedianErrorRecall),
			pct(st.IntentKeptShare), itoa(st.OrphanResults + st.DanglingCalls), pct(st.SyntheticAnchorRate),
			itoa(st.Thrash), ratio(anchorF1(s, st)), ratio(st.CostRatio), ratio(st.MedianCostRatio),
			strconv.FormatFloat(st.CostUSD, 'f', 2, 64)})
	}
	return header, rows
}
