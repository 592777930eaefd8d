package report

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
)

// SummarizerSummary describes the summaries a model wrote (summary.json's
// "summarizer"; absent with the extractive summarizer).
type SummarizerSummary struct {
	// Name is the --summarizer (anthropic, openai, cache) and Model the
	// model asked.
	Name  string `json:"name"`
	Model string `json:"model"`
	// Requests, OverBudget and Misses come from the summarizer itself:
	// HTTP requests sent, summaries not asked for because the budget was
	// spent, cache-only misses.
	Requests   int64 `json:"requests"`
	OverBudget int64 `json:"over_budget"`
	Misses     int64 `json:"cache_misses"`
	// Strategies are per-strategy counts over the summaries table.
	Strategies map[string]*SummarizerStrategy `json:"strategies"`
}

// SummarizerStrategy sums one strategy's rows of the summaries table.
type SummarizerStrategy struct {
	Summaries    int64   `json:"summaries"`
	LLM          int64   `json:"llm"`
	Cache        int64   `json:"cache"`
	Fallback     int64   `json:"fallback"`
	InputTokens  int64   `json:"llm_input_tokens"`
	OutputTokens int64   `json:"llm_output_tokens"`
	CostUSD      float64 `json:"llm_cost_usd"`
	// SummaryTokens and ExtractiveTokens sum the summaries written and the
	// extractive summaries of the same events (metric ruler).
	SummaryTokens    int64 `json:"summary_tokens"`
	ExtractiveTokens int64 `json:"extractive_summary_tokens"`
	// FirstError is the first fallback's reason in output order.
	FirstError string `json:"first_error,omitempty"`
}

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

func (s *SummarizerSummary) add(rows []analysis.SummaryRow) {
	if s == nil {
		return
	}
	for i := range rows {
		r := &rows[i]
		st := s.Strategies[r.Strategy]
		if st == nil {
			st = &SummarizerStrategy{}
			s.Strategies[r.Strategy] = st
		}
		st.Summaries++
		switch r.Source {
		case "llm":
			st.LLM++
		case "cache":
			st.Cache++
		default:
			st.Fallback++
			if st.FirstError == "" {
				st.FirstError = r.Error
			}
		}
		st.InputTokens += r.InputTokens
		st.OutputTokens += r.OutputTokens
		st.CostUSD += r.CostUSD
		st.SummaryTokens += r.SummaryTokens
		st.ExtractiveTokens += r.ExtractiveTokens
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
