package compaction

import (
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// PruneParams configure opencode's pruning and overflow compaction.
type PruneParams struct {
	// Protect is the newest tool output (tokens) never pruned.
	Protect int `yaml:"protect"`
	// Minimum is how much must be freed for a prune to happen.
	Minimum int `yaml:"minimum"`
	// SkipTurns are the newest user turns whose outputs are never pruned.
	SkipTurns int `yaml:"skip_turns"`
	// OutputReserve is kept free for the answer: overflow is prompt >
	// window − OutputReserve (opencode: min(20,000, max output)).
	OutputReserve int `yaml:"output_reserve"`
	// Placeholder replaces a pruned output.
	Placeholder string `yaml:"placeholder"`
	// Ruler estimates tool outputs (opencode: chars/4).
	Ruler string `yaml:"ruler"`
}

func init() {
	register(Spec{
		ID: "prune", Source: "opencode",
		Doc: "clear old tool outputs beyond a protected 40k-token tail when at least 20k can be freed, then summarize if still over",
		Params: func() any {
			return &PruneParams{Protect: 40_000, Minimum: 20_000, SkipTurns: 2, OutputReserve: 20_000,
				Placeholder: tokens.MicrocompactPlaceholder, Ruler: "chars4"}
		},
		New: func(p any) Strategy { return &prune{p: *p.(*PruneParams)} },
	})
}

type prune struct{ p PruneParams }

// candidates walks the context backwards as opencode's prune does: it skips
// the newest SkipTurns user turns, stops at a summary or an output pruned
// before, protects the newest Protect tokens of tool output, and returns the
// older outputs with the tokens they would free (only the tokens when
// collect is false: the trigger, asked before every call, lists nothing).
func (p *prune) candidates(s *Sim, collect bool) (parts [][2]int, freed int) {
	r := s.Ruler(p.p.Ruler)
	turns, total := 0, 0
loop:
	for i := len(s.Ctx) - 1; i >= 0; i-- {
		it := &s.Ctx[i]
		if s.isPrompt(it) {
			turns++
		}
		if turns < p.p.SkipTurns {
			continue
		}
		if it.Orig < 0 {
			break // a summary: nothing before it is sent
		}
		for j := len(it.Msg.Blocks) - 1; j >= 0; j-- {
			b := &it.Msg.Blocks[j]
			if b.Kind != transcript.BlockToolResult {
				continue
			}
			if it.Modified && b.InjectedKind == placeholderPruned {
				break loop
			}
			n := r.Block(b)
			total += n
			if total > p.p.Protect {
				freed += n
				if collect {
					parts = append(parts, [2]int{i, j})
				}
			}
		}
	}
	return parts, freed
}

func (p *prune) overflow(s *Sim) bool { return s.Prompt() > s.Window-p.p.OutputReserve }

func (p *prune) Trigger(s *Sim) (bool, int) {
	_, freed := p.candidates(s, false)
	return freed > p.p.Minimum || p.overflow(s), freed
}

// Compact prunes; if the prompt still overflows, it summarizes the whole
// history (opencode's compaction: the next prompt starts at the summary).
func (p *prune) Compact(s *Sim) Outcome {
	parts, freed := p.candidates(s, true)
	ctx := s.Ctx
	action := ""
	after := s.Prompt()
	if freed > p.p.Minimum {
		ctx = make([]Item, len(s.Ctx))
		copy(ctx, s.Ctx)
		byItem := map[int][]int{}
		for _, pt := range parts {
			byItem[pt[0]] = append(byItem[pt[0]], pt[1])
		}
		for i, js := range byItem {
			nb := append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
			for _, j := range js {
				after -= s.Metric.Block(&nb[j])
				nb[j] = placeholderResult(nb[j], p.p.Placeholder, placeholderPruned)
				after += s.Metric.Text(p.p.Placeholder)
			}
			ctx[i] = s.Modify(ctx[i], nb)
		}
		action = "prune"
	}
	if after <= s.Window-p.p.OutputReserve {
		if action == "" {
			return Outcome{Skip: true}
		}
		return Outcome{Ctx: ctx, Action: action}
	}
	all := ctx
	req := &SummaryRequest{Strategy: "prune", Round: s.Round + 1, PromptName: "prune",
		Input:         func() string { return plainText(all) },
		Deterministic: func() string { return handoff(gather(s.Shared, all), "Summary for continuing the conversation") }}
	summary := s.summarize(req)
	return Outcome{Ctx: []Item{s.Synthetic(transcript.RoleAssistant, summary)}, Action: "compact", Summary: summary,
		SummarizerInput: s.Tokens()}
}
