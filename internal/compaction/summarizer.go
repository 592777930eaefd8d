package compaction

// Summarizer writes the summary of a compaction. The built-in summarizer is
// deterministic: it returns the strategy's own summary, filled from the
// transcript. An LLM-backed summarizer would send Prompt and Input (what the
// source system sends its model) and return the model's text.
type Summarizer interface {
	Summarize(r *SummaryRequest) string
}

// SummaryRequest is one summarization.
type SummaryRequest struct {
	Strategy string
	// Round is the compaction round, from 1.
	Round int
	// Prompt is the source system's summarization instructions.
	Prompt string
	// Input builds the conversation text as the source formats it for its
	// summarizer (truncations included).
	Input func() string
	// Previous is the previous round's summary, when the source passes it.
	Previous string
	// Deterministic builds the built-in summary.
	Deterministic func() string
}

// Deterministic is the built-in summarizer.
type Deterministic struct{}

// Summarize returns the strategy's deterministic summary.
func (Deterministic) Summarize(r *SummaryRequest) string { return r.Deterministic() }
