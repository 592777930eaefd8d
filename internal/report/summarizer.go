package report

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
)

// SetSummarizer names the model summarizer of the run: summary.json gets a
// "summarizer" block, report.md a section, and the summaries table rows.
func (w *Writer) SetSummarizer(name, model string) {
	w.sum.Summarizer = &SummarizerSummary{Name: name, Model: model, Strategies: map[string]*SummarizerStrategy{}}
}

// SetSummarizerCounts records the summarizer's own counts at the end of a
// run.
func (w *Writer) SetSummarizerCounts(requests, overBudget, misses int64) {
	if s := w.sum.Summarizer; s != nil {
		s.Requests, s.OverBudget, s.Misses = requests, overBudget, misses
	}
}

// openSummaries opens the summaries table only when a model summarizer is
// set, so extractive runs write exactly the tables they always did.
func openSummaries(o Options, s *Summary) (sink, error) {
	if !o.Summaries {
		return nopSink{}, nil
	}
	return table("summaries", func(r *analysis.Result) []analysis.SummaryRow { return r.Summaries })(o, s)
}

type nopSink struct{}

func (nopSink) add(*analysis.Result) error { return nil }
func (nopSink) Close() error               { return nil }
func (nopSink) Abort()                     {}

// summarizerMarkdown is report.md's section on the model summaries.
func summarizerMarkdown(b *strings.Builder, s *SummarizerSummary) {
	if s == nil {
		return
	}
	fmt.Fprintf(b, "\n## Summarizer\n\nSummaries were written by `%s` (model `%s`): %d requests sent", s.Name, s.Model, s.Requests)
	if s.OverBudget > 0 {
		fmt.Fprintf(b, "; %d summaries fell back because the budget was spent", s.OverBudget)
	}
	if s.Misses > 0 {
		fmt.Fprintf(b, "; %d were not in the cache", s.Misses)
	}
	b.WriteString(". A fallback is the strategy's extractive summary, written when the model gave no answer; " +
		"every figure of the strategy (compression, need recall, cost) measures the summary actually used.\n\n")
	var rows [][]string
	for _, id := range sortedKeys(s.Strategies) {
		st := s.Strategies[id]
		mean := func(sum int64) string {
			if st.Summaries == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", float64(sum)/float64(st.Summaries))
		}
		rows = append(rows, []string{id, fmt.Sprint(st.Summaries), fmt.Sprint(st.LLM), fmt.Sprint(st.Cache), fmt.Sprint(st.Fallback),
			fmt.Sprint(st.InputTokens), fmt.Sprint(st.OutputTokens), fmt.Sprintf("%.4f", st.CostUSD),
			mean(st.SummaryTokens), mean(st.ExtractiveTokens), excerpt(dash(st.FirstError))})
	}
	mdTable(b, []string{"strategy", "summaries", "llm", "cache", "fallback", "model in", "model out", "model $",
		"mean summary tokens", "mean extractive tokens", "first fallback reason"}, rows, "lrrrrrrrrrl")
}

// excerpt shortens a reason for a table cell (mdTable escapes it).
func excerpt(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}
