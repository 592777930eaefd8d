package aggregate

import (
	"fmt"
	"maps"
	"slices"

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

// Err is the first error (in strategy order) a strategy's figures met
// reading back the values behind their medians; nil for none.
func (s Strategies) Err() error {
	for _, id := range slices.Sorted(maps.Keys(s)) {
		if err := s[id].Err(); err != nil {
			return fmt.Errorf("strategy %s: %w", id, err)
		}
	}
	return nil
}

// CompressionHistogram bins the strategy's event compression ratios in 20
// bins over [0, 1] (negative ratios are Under) for report.html; nil for a
// missing strategy. An error reading the ratios back is kept in the
// strategy's figures (Strategies.Err).
func CompressionHistogram(st *StrategyStats) *Histogram {
	if st == nil {
		return nil
	}
	h := NewHistogram(0, 1, 20)
	_ = st.EachSample(figures.MedianCompression, h.Add)
	return h
}

func share(n, of int64) *float64 {
	if of == 0 {
		return nil
	}
	v := float64(n) / float64(of)
	return &v
}
