package compaction

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// recordingSummarizer answers every request with a fixed text and keeps the
// requests, so a test sees what each strategy asks its summarizer.
type recordingSummarizer struct {
	text string
	reqs []SummaryRequest
}

func (r *recordingSummarizer) Summarize(req *SummaryRequest) Summary {
	r.reqs = append(r.reqs, *req)
	return Summary{Text: r.text, Source: SourceLLM, Model: "m", InputTokens: 1000, OutputTokens: 100, CostUSD: 0.25, Attempts: 1}
}

// TestBuiltinPromptsRender: every strategy that summarizes names a built-in
// prompt, every prompt parses and renders, and the conversation (exactly the
// summarized part) is placed in it.
func TestBuiltinPromptsRender(t *testing.T) {
	prompts, err := BuiltinPrompts()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"codelet", "structured", "structured-update", "window", "prune", "codex"} {
		p := prompts[name]
		if p == nil {
			t.Fatalf("no built-in prompt %s", name)
		}
		sys, user, err := p.Render(&PromptData{Conversation: "CONVERSATION-X", Previous: "PREVIOUS-Y", Task: "TASK-Z", Round: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(user, "CONVERSATION-X") {
			t.Errorf("%s: the user message does not hold the conversation", name)
		}
		switch name {
		case "window":
			if sys == "" || !strings.Contains(user, "TASK-Z") || !strings.Contains(user, "Compaction Round 7") || !strings.Contains(user, "PREVIOUS-Y") {
				t.Errorf("window: system %q, user lacks task, round or previous summary", sys)
			}
		case "structured-update":
			if !strings.Contains(user, "<previous-summary>\nPREVIOUS-Y\n</previous-summary>") {
				t.Errorf("structured-update: previous summary not in its tags")
			}
		}
	}
	if _, err := ParsePrompt("bad", "no separator"); err == nil {
		t.Error("a prompt without --- parsed")
	}
	if _, err := ParsePrompt("bad", "---\n{{.Nope}}"); err == nil {
		t.Error("a prompt naming an unknown field parsed")
	}
}

// TestLLMSummaryReplacesTheSummarized: with a model summarizer, every
// summarizing strategy sends a request naming a built-in prompt, the model's
// text replaces the summarized part (the event measures it), the event says
// where the summary came from, and the bill counts the model's own cost
// instead of the estimate.
func TestLLMSummaryReplacesTheSummarized(t *testing.T) {
	prompts, err := BuiltinPrompts()
	if err != nil {
		t.Fatal(err)
	}
	tr := codingSession().transcript()
	for _, spec := range Specs() {
		if spec.ID == "recorded" || spec.ID == "mask" || spec.ID == "truncate" {
			continue
		}
		t.Run(spec.ID, func(t *testing.T) {
			opt := options(t, 90)
			if spec.ID == "codelet" || spec.ID == "fspec" {
				p := spec.Params().(*AnchorParams)
				p.CacheDiscount = 0
				orig := spec
				spec = Spec{ID: spec.ID, New: func(any) Strategy { return orig.New(p) }, Params: orig.Params}
			}
			_, extractive, _ := replay(t, tr, spec.ID, spec.New(spec.Params()), opt)
			rec := &recordingSummarizer{text: "SUMMARY " + strings.Repeat("w ", 40)}
			opt.Summarizer = rec
			run, events, _ := replay(t, tr, spec.ID, spec.New(spec.Params()), opt)
			summarized := 0
			for _, e := range events {
				if e.Summary.Source == "" {
					continue
				}
				summarized++
				if e.Summary.Source != SourceLLM || e.Summary.CostUSD != 0.25 || e.Summary.Text != "" {
					t.Errorf("event %d: summary %+v", e.Round, e.Summary)
				}
			}
			if summarized == 0 || len(rec.reqs) != summarized {
				t.Fatalf("%d summarized events, %d requests", summarized, len(rec.reqs))
			}
			for _, r := range rec.reqs {
				if prompts[r.PromptName] == nil || r.Input == nil || r.Input() == "" {
					t.Errorf("request %+v: unknown prompt or empty input", r.PromptName)
				}
				if (spec.ID == "codelet" || spec.ID == "fspec") && r.MaxOutputTokens != 1024 {
					t.Errorf("%s asks for %d output tokens, want the seeds' 1024", spec.ID, r.MaxOutputTokens)
				}
			}
			if len(extractive) == len(events) && len(events) > 0 && extractive[0].SummaryTokens == events[0].SummaryTokens {
				t.Errorf("the model's summary did not replace the extractive one (%d tokens both)", events[0].SummaryTokens)
			}
			base := compactionFreeCost(t, tr, opt)
			if run.CostUSD < 0.25*float64(summarized)+base*0.5 {
				t.Errorf("cost %.4f does not hold %d model calls at $0.25", run.CostUSD, summarized)
			}
		})
	}
}

// compactionFreeCost is the cost of replaying without compaction.
func compactionFreeCost(t *testing.T, tr *transcript.Transcript, opt *Options) float64 {
	run, _, _ := replay(t, tr, "none", none{}, opt)
	return run.CostUSD
}
