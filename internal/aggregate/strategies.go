package aggregate

import (
	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/figures"
)

// StrategyStats are one strategy's aggregates over the corpus in
// summary.json: every Strategy figure of the figures registry, each with
// its own aggregation (medians over events, pooled ratios, sums over runs
// or events), read by name (st.Value(figures.NeedRecall)).
type StrategyStats = figures.Set

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
		st.AddRun(run)
	}
	for i := range r.Events {
		e := &r.Events[i]
		if st := s[e.Strategy]; st != nil {
			st.AddEvent(e)
		}
	}
}

func (s Strategies) finish() {
	for _, st := range s {
		st.Finish()
	}
}

// CompressionHistogram bins the strategy's event compression ratios in 20
// bins over [0, 1] (negative ratios are Under) for report.html; nil for a
// missing strategy.
func CompressionHistogram(st *StrategyStats) *Histogram {
	if st == nil {
		return nil
	}
	h := NewHistogram(0, 1, 20)
	for _, v := range st.Samples(figures.MedianCompression) {
		h.Add(v)
	}
	return h
}

func share(n, of int64) *float64 {
	if of == 0 {
		return nil
	}
	v := float64(n) / float64(of)
	return &v
}
