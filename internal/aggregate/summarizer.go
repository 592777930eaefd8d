package aggregate

import (
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
