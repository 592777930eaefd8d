package aggregate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
)

// VerdictLine is one strategy's line in the verdict.
type VerdictLine struct {
	Strategy string `json:"strategy"`
	// Rank is the strategy's place among those that kept every session
	// inside its window (1 is best); 0 for the others.
	Rank int `json:"rank,omitempty"`
	// Layer is its Pareto layer on compression and need recall among the
	// ranked strategies (1: no other ranked strategy beats it on both).
	Layer int `json:"layer,omitempty"`
	// Why is the line of reasons, in words.
	Why string `json:"why"`
}

// Verdict answers which strategy to use: Ranked are the strategies that
// kept every replayed session inside its window with valid requests, best
// first (RankingRule); Others are the rest, each with its reasons.
type Verdict struct {
	Ranked []VerdictLine `json:"ranked"`
	Others []VerdictLine `json:"others"`
	// Note replaces the ranking when it decides nothing: no session's
	// context reached the window, so no ranked strategy had to compact.
	Note string `json:"note,omitempty"`
}

// RankingRule states how the verdict ranks, as the reports print it.
const RankingRule = "Ranked: strategies with no call over the window in any session and no invalid request. " +
	"Order: Pareto layer on (median compression, need recall) — layer 1 are those no other ranked strategy beats on " +
	"both —, then need recall (higher first), then cost ratio over the sessions that fit (lower first). " +
	"A missing figure counts as the worst."

// Thresholds for the verdict's warnings about a strategy's compactions.
const (
	// thrashShare: a strategy most of whose compactions free < 1 % of the
	// window is thrashing.
	thrashShare = 0.5
	// keptAllShare: a strategy many of whose compactions keep every
	// recorded message is not selecting anything to drop.
	keptAllShare = 0.25
)

// ReferenceStrategy is the recording's own compactions: reported, but not a
// choice the verdict ranks.
const ReferenceStrategy = "recorded"

// computeVerdict ranks the strategies of a finished summary.
func computeVerdict(s *Summary) Verdict {
	v := Verdict{Ranked: []VerdictLine{}, Others: []VerdictLine{}}
	var ranked []*candidate
	for i, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil || st.Count(figures.Runs) == 0 {
			continue
		}
		if reasons := failReasons(spec.ID, st); len(reasons) > 0 {
			v.Others = append(v.Others, VerdictLine{Strategy: spec.ID, Why: strings.Join(reasons, "; ")})
			continue
		}
		ranked = append(ranked, &candidate{id: spec.ID, st: st, comp: orWorst(st.Value(figures.MedianCompression)),
			rec: orWorst(st.Value(figures.NeedRecall)), cost: orWorstCost(st.Value(figures.CostRatio)), order: i})
	}
	paretoLayers(ranked)
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		switch {
		case a.layer != b.layer:
			return a.layer < b.layer
		case a.rec != b.rec:
			return a.rec > b.rec
		case a.cost != b.cost:
			return a.cost < b.cost
		}
		return a.order < b.order
	})
	idle := len(ranked) > 0
	for i, c := range ranked {
		v.Ranked = append(v.Ranked, VerdictLine{Strategy: c.id, Rank: i + 1, Layer: c.layer, Why: winReasons(c.st)})
		idle = idle && c.st.Count(figures.Compactions) == 0 && c.st.Count(figures.ReachedWindowRuns) == 0
	}
	if idle {
		v.Note = "Nothing to decide: no session's context reached the window without compaction, so every strategy " +
			"fits without compacting. Replay with a smaller --window to compare them."
	}
	return v
}

// candidate is a strategy the verdict ranks.
type candidate struct {
	id        string
	st        *StrategyStats
	comp, rec float64
	cost      float64
	order     int
	layer     int
}

// paretoLayers sets each candidate's Pareto layer on (compression, need
// recall), higher better: layer 1 is the front, layer 2 the front of the
// rest, and so on.
func paretoLayers(ranked []*candidate) {
	left := append([]*candidate(nil), ranked...)
	for l := 1; len(left) > 0; l++ {
		var next []*candidate
		for _, a := range left {
			beaten := false
			for _, b := range left {
				if b != a && b.comp >= a.comp && b.rec >= a.rec && (b.comp > a.comp || b.rec > a.rec) {
					beaten = true
					break
				}
			}
			if beaten {
				next = append(next, a)
			} else {
				a.layer = l
			}
		}
		left = next
	}
}

func orWorst(p *float64) float64 {
	if p == nil {
		return math.Inf(-1)
	}
	return *p
}

func orWorstCost(p *float64) float64 {
	if p == nil {
		return math.Inf(1)
	}
	return *p
}

// failReasons are why a strategy is not ranked, in words (none: ranked).
func failReasons(id string, st *StrategyStats) []string {
	var out []string
	if id == ReferenceStrategy {
		out = append(out, "reference, not a choice: the compactions the recording holds, where they happened")
	}
	switch {
	case st.Count(figures.NeverFiredRuns) == 0 || id == ReferenceStrategy:
	case st.Value(figures.MedianTriggerPeak) != nil && *st.Value(figures.MedianTriggerPeak) >= 1:
		out = append(out, fmt.Sprintf("never compacted in %d of the %d sessions whose context reached the window without "+
			"compaction: its measure reached a median %s of its limit there, but another condition of its trigger "+
			"(such as a minimum number of messages) held it back", st.Count(figures.NeverFiredRuns), st.Count(figures.ReachedWindowRuns), PctLabel(*st.Value(figures.MedianTriggerPeak))))
	default:
		r := fmt.Sprintf("never compacted: its trigger stayed below its limit in %d of the %d sessions whose context "+
			"reached the window without compaction", st.Count(figures.NeverFiredRuns), st.Count(figures.ReachedWindowRuns))
		if st.Value(figures.MedianTriggerPeak) != nil {
			r += fmt.Sprintf(" (peaking at a median %s of the limit)", PctLabel(*st.Value(figures.MedianTriggerPeak)))
		}
		out = append(out, r)
	}
	if st.Count(figures.NothingToDropRuns) > 0 {
		out = append(out, fmt.Sprintf("found nothing to compact: its trigger fired but its selection kept everything in %d of "+
			"the %d sessions whose context reached the window", st.Count(figures.NothingToDropRuns), st.Count(figures.ReachedWindowRuns)))
	}
	if st.Count(figures.OverflowRuns) > 0 {
		out = append(out, fmt.Sprintf("overflowed in %d/%d sessions (%d calls over the window)", st.Count(figures.OverflowRuns), st.Count(figures.Runs), st.Count(figures.Overflows)))
	}
	if n := st.Count(figures.OrphanResults) + st.Count(figures.DanglingCalls); n > 0 {
		out = append(out, fmt.Sprintf("%d invalid requests (tool results or calls without their other half)", n))
	}
	if len(out) > 0 {
		out = append(out, compactionWarnings(st)...)
	}
	return out
}

// compactionWarnings say when a strategy's compactions do little.
func compactionWarnings(st *StrategyStats) []string {
	var out []string
	if st.Count(figures.Compactions) == 0 {
		return nil
	}
	if share := float64(st.Count(figures.FreedUnder1Pct)) / float64(st.Count(figures.Compactions)); share >= thrashShare {
		out = append(out, fmt.Sprintf("thrash: %s of its %d compactions freed < 1%% of the window", PctLabel(share), st.Count(figures.Compactions)))
	}
	if share := float64(st.Count(figures.KeptEverything)) / float64(st.Count(figures.Compactions)); share >= keptAllShare {
		out = append(out, fmt.Sprintf("%s of its %d compactions kept every recorded message (only re-summarized its own summary)",
			PctLabel(share), st.Count(figures.Compactions)))
	}
	return out
}

// winReasons is a ranked strategy's line: what it does and costs.
func winReasons(st *StrategyStats) string {
	var parts []string
	if st.Count(figures.Compactions) == 0 {
		parts = append(parts, fmt.Sprintf("fits %d/%d sessions without compacting (none reached its trigger)", st.Count(figures.FitRuns), st.Count(figures.Runs)))
	} else {
		parts = append(parts, fmt.Sprintf("fits %d/%d sessions; %s compress a median %s; keeps %s of the facts needed later",
			st.Count(figures.FitRuns), st.Count(figures.Runs), Plural(int(st.Count(figures.Compactions)), "compaction"), PctOr(st.Value(figures.MedianCompression)), PctOr(st.Value(figures.NeedRecall))))
	}
	if st.Value(figures.CostRatio) != nil {
		parts = append(parts, fmt.Sprintf("costs %s× no compaction", strconv.FormatFloat(*st.Value(figures.CostRatio), 'f', 2, 64)))
	}
	parts = append(parts, compactionWarnings(st)...)
	return strings.Join(parts, "; ")
}

// RereadStats total the behaviour check of need recall over the recorded
// compactions (rereads table): files read before a compaction that the agent
// read again within analysis.RereadCalls calls, split by whether the
// harness's summary named them. If the agent re-reads the files a summary
// dropped more often than those it kept, losing a fact costs work, which is
// what need recall counts.
type RereadStats struct {
	Compactions int64 `json:"compactions"`
	FilesRead   int64 `json:"files_read"`
	Reread      int64 `json:"reread"`
	Kept        int64 `json:"summary_kept"`
	RereadKept  int64 `json:"reread_kept"`
	RereadLost  int64 `json:"reread_lost"`
	// RereadRate is Reread / FilesRead; RereadRateKept and RereadRateLost
	// are the rates among the files the summary named and did not name.
	RereadRate     *float64 `json:"reread_rate"`
	RereadRateKept *float64 `json:"reread_rate_kept"`
	RereadRateLost *float64 `json:"reread_rate_lost"`
}

func (r *RereadStats) add(rows []analysis.RereadRow) {
	for i := range rows {
		row := &rows[i]
		r.Compactions++
		r.FilesRead += row.FilesRead
		r.Reread += row.Reread
		r.Kept += row.SummaryKept
		r.RereadKept += row.RereadKept
		r.RereadLost += row.RereadLost
	}
}

func (r *RereadStats) finish() {
	r.RereadRate = share(r.Reread, r.FilesRead)
	r.RereadRateKept = share(r.RereadKept, r.Kept)
	r.RereadRateLost = share(r.RereadLost, r.FilesRead-r.Kept)
}
