package report

import (
	"io"
	"math"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/tokens"
)

// StrategyStats are one strategy's aggregates over the corpus in
// summary.json. Medians are over events (compression, recalls) or over
// replayed transcripts (cost ratio); shares are over events.
type StrategyStats struct {
	Runs         int64 `json:"runs"`
	Compactions  int64 `json:"compactions"`
	Overflows    int64 `json:"overflows"`
	OverflowRuns int64 `json:"overflow_runs"`
	Thrash       int64 `json:"thrash"`
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
	MedianCostRatio     *float64 `json:"median_cost_ratio"`
	// CostUSD and BaselineCostUSD sum the simulated bills; CostRatio is
	// their ratio (the corpus's cost with the strategy over without).
	CostUSD           float64  `json:"cost_usd"`
	BaselineCostUSD   float64  `json:"baseline_cost_usd"`
	CostRatio         *float64 `json:"cost_ratio"`
	MedianPeakContext *float64 `json:"median_peak_context"`

	compression, need, file, errs, cost, peak []float64
	intent, intentKept, anchored, synthetic   int64
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
		st.Compactions += run.Compactions
		st.Overflows += run.Overflows
		if run.Overflows > 0 {
			st.OverflowRuns++
		}
		st.Thrash += run.Thrash
		if run.CostRatio != nil {
			st.cost = append(st.cost, *run.CostRatio)
		}
		st.CostUSD += run.CostUSD
		st.BaselineCostUSD += run.BaselineCostUSD
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

// StrategyTable renders one row per strategy with the medians that matter.
func StrategyTable(w io.Writer, s *Summary) error {
	header, rows := strategyGrid(s)
	if len(rows) == 0 {
		return nil
	}
	return RenderTable(w, header, rows)
}

// strategyGrid is the per-strategy table's header and rows (strategies in
// compaction.Specs order), shared by the terminal and the reports.
func strategyGrid(s *Summary) ([]string, [][]string) {
	header := []string{"strategy", "runs", "compactions", "overflows", "median compression", "low (<60%)",
		"need recall", "file recall", "intent kept", "orphans+dangling", "synthetic", "thrash", "cost ratio"}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		rows = append(rows, []string{spec.ID, itoa(st.Runs), itoa(st.Compactions), itoa(st.Overflows),
			pct(st.MedianCompression), pct(st.LowCompressionShare), pct(st.NeedRecall), pct(st.MedianFileRecall),
			pct(st.IntentKeptShare), itoa(st.OrphanResults + st.DanglingCalls), pct(st.SyntheticAnchorRate),
			itoa(st.Thrash), ratio(st.CostRatio)})
	}
	return header, rows
}
