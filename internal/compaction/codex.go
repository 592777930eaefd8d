package compaction

import (
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// CodexParams configure the Codex CLI strategy.
type CodexParams struct {
	// TriggerFraction of the window starts an auto-compaction.
	TriggerFraction float64 `yaml:"trigger_fraction"`
	// UserBudget is how many tokens of the newest user messages survive.
	UserBudget int `yaml:"user_budget"`
	// Ruler counts user messages against the budget (Codex: bytes/4).
	Ruler string `yaml:"ruler"`
}

func init() {
	register(Spec{
		ID: "codex", Source: "OpenAI Codex CLI",
		Doc:    "replace history by a summary plus the newest user messages up to 20k tokens",
		Params: func() any { return &CodexParams{TriggerFraction: 0.9, UserBudget: 20_000, Ruler: "chars4"} },
		New:    func(p any) Strategy { return &codex{p: *p.(*CodexParams)} },
	})
}

type codex struct{ p CodexParams }

const codexSummaryPrefix = "Another language model started to solve this problem and produced a summary of its thinking process. " +
	"You also have access to the state of the tools that were used by that language model. Use this to build on the work " +
	"that has already been done and avoid duplicating work. Here is the summary produced by the other language model, " +
	"use the information in this summary to assist with your own analysis:\n"

func (c *codex) Trigger(s *Sim) (bool, int) {
	return float64(s.Prompt()) >= c.p.TriggerFraction*float64(s.Window), s.Prompt()
}

// Compact keeps the real user messages, newest first, while they fit the
// budget (the one that overflows it is cut to fit), in chronological order,
// followed by the summary. Every assistant and tool item is dropped.
func (c *codex) Compact(s *Sim) Outcome {
	r := s.Ruler(c.p.Ruler)
	var keep []Item
	left := c.p.UserBudget
	for i := len(s.Ctx) - 1; i >= 0 && left > 0; i-- {
		it := s.Ctx[i]
		if !it.Msg.IsPrompt() || strings.HasPrefix(it.Msg.Text(), codexSummaryPrefix) {
			continue
		}
		n := r.Message(it.Msg)
		if n > left {
			text := clip(it.Msg.Text(), left*4)
			it = s.Modify(it, []transcript.Block{{Kind: transcript.BlockText, Text: text}})
			n = left
		}
		keep = append(keep, it)
		left -= n
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	all := s.Ctx
	req := &SummaryRequest{Strategy: "codex", Round: s.Round + 1, PromptName: "codex",
		Input:         func() string { return plainText(all) },
		Deterministic: func() string { return handoff(gather(s.Shared, all), "Handoff summary") }}
	summary := codexSummaryPrefix + s.summarize(req)
	ctx := append(keep, s.Synthetic(transcript.RoleUser, summary))
	return Outcome{Ctx: ctx, Action: "compact", Summary: summary, SummarizerInput: s.Tokens()}
}

// plainText renders items as "[role]: text" lines (the input most
// summarizer prompts get).
func plainText(items []Item) string {
	var b strings.Builder
	for i := range items {
		b.WriteString("[" + items[i].Msg.Role.String() + "]: ")
		writeText(&b, items[i].Msg)
		b.WriteString("\n")
	}
	return b.String()
}
