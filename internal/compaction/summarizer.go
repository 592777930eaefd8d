package compaction

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

// Summarizer writes the summary of a compaction. The built-in summarizer
// (Deterministic, "extractive") returns the strategy's own summary, filled
// from the transcript; an LLM-backed summarizer sends the strategy's prompt
// (Prompts) with the part of the conversation the strategy summarizes and
// returns the model's text, falling back to the deterministic summary when
// the model cannot answer.
type Summarizer interface {
	Summarize(r *SummaryRequest) Summary
}

// SummaryRequest is one summarization.
type SummaryRequest struct {
	Strategy string
	// Round is the compaction round, from 1.
	Round int
	// PromptName names the prompt template (Prompts): the strategy's own,
	// or its update prompt on later rounds.
	PromptName string
	// Input builds the conversation text as the source formats it for its
	// summarizer (truncations included): exactly the part summarized.
	Input func() string
	// Previous is the previous round's summary, when the source passes it.
	Previous string
	// Task is the session's original task, when the source passes it.
	Task string
	// MaxOutputTokens caps the summary (0: the summarizer's default).
	MaxOutputTokens int
	// Temperature is the source's sampling temperature (nil: the
	// provider's default).
	Temperature *float64
	// Deterministic builds the built-in summary.
	Deterministic func() string
}

// Summary sources, as the events and summaries tables report them.
const (
	// SourceExtractive is the built-in deterministic summary.
	SourceExtractive = "extractive"
	// SourceLLM is a model's answer to this run's request.
	SourceLLM = "llm"
	// SourceCache is a model's answer read from the summary cache.
	SourceCache = "cache"
	// SourceFallback is the built-in summary written because the model
	// could not answer (Err says why).
	SourceFallback = "fallback"
)

// Summary is a summarizer's answer.
type Summary struct {
	Text   string
	Source string
	// Err says why a fallback happened.
	Err string
	// Model, InputTokens, OutputTokens and CostUSD describe the model call
	// (zero for extractive and fallback summaries).
	Model        string
	InputTokens  int
	OutputTokens int
	CostUSD      float64
	// Attempts counts requests sent for this summary (0 for cache hits).
	Attempts int
	// Extractive is the extractive summary of the same request, which a
	// model summarizer returns beside its own for comparison (Replay
	// measures it into Event.ExtractiveTokens and drops the text).
	Extractive string
}

// Deterministic is the built-in summarizer.
type Deterministic struct{}

// Summarize returns the strategy's deterministic summary.
func (Deterministic) Summarize(r *SummaryRequest) Summary {
	return Summary{Text: r.Deterministic(), Source: SourceExtractive}
}

//go:embed prompts/*.tmpl
var promptFiles embed.FS

// PromptNames lists the built-in prompt templates.
func PromptNames() []string {
	entries, _ := promptFiles.ReadDir("prompts")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".tmpl"))
	}
	return names
}

// PromptSource returns a built-in prompt template's text.
func PromptSource(name string) (string, error) {
	data, err := promptFiles.ReadFile("prompts/" + name + ".tmpl")
	if err != nil {
		return "", fmt.Errorf("no built-in prompt %q (have %s)", name, strings.Join(PromptNames(), ", "))
	}
	return string(data), nil
}

// Prompt is a parsed prompt template. Its source holds an optional system
// prompt, a line "---", and the user message; both are text/template
// templates over PromptData.
type Prompt struct {
	Name   string
	Source string
	system *template.Template
	user   *template.Template
}

// PromptData are the values a prompt template can use.
type PromptData struct {
	Conversation string
	Previous     string
	Task         string
	Round        int
}

// ParsePrompt parses a prompt template's source.
func ParsePrompt(name, src string) (*Prompt, error) {
	sys, user, ok := strings.Cut(src, "---\n")
	if !ok {
		return nil, fmt.Errorf("prompt %s: no line \"---\" between the system prompt and the user message", name)
	}
	p := &Prompt{Name: name, Source: src}
	var err error
	if p.system, err = template.New(name + ".system").Option("missingkey=error").Parse(strings.TrimSpace(sys)); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", name, err)
	}
	if p.user, err = template.New(name + ".user").Option("missingkey=error").Parse(strings.TrimRight(user, "\n")); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", name, err)
	}
	if _, _, err := p.Render(&PromptData{}); err != nil {
		return nil, err
	}
	return p, nil
}

// Render fills the template: the system prompt ("" when the source sends
// none) and the user message.
func (p *Prompt) Render(d *PromptData) (system, user string, err error) {
	var sb, ub bytes.Buffer
	if err := p.system.Execute(&sb, d); err != nil {
		return "", "", fmt.Errorf("prompt %s: %w", p.Name, err)
	}
	if err := p.user.Execute(&ub, d); err != nil {
		return "", "", fmt.Errorf("prompt %s: %w", p.Name, err)
	}
	return sb.String(), ub.String(), nil
}

// BuiltinPrompts parses every built-in prompt template.
func BuiltinPrompts() (map[string]*Prompt, error) {
	out := map[string]*Prompt{}
	for _, name := range PromptNames() {
		src, err := PromptSource(name)
		if err != nil {
			return nil, err
		}
		if out[name], err = ParsePrompt(name, src); err != nil {
			return nil, err
		}
	}
	return out, nil
}
