package compaction

import (
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/transcript"
)

// AnchorParams configure the anchor-point strategies, codelet (seeds 001 and
// 002, the TypeScript reference) and fspec (seed 000, its Rust target).
type AnchorParams struct {
	// Rules is the rule set that detects anchors.
	Rules string `yaml:"rules"`
	// Threshold is the trigger's fraction of the window:
	// effective = input − CacheDiscount × cache_read > Threshold × window.
	Threshold     float64 `yaml:"threshold"`
	CacheDiscount float64 `yaml:"cache_discount"`
	// KeepTurns are the recent turns always kept (min(3, n)).
	KeepTurns int `yaml:"keep_turns"`
	// AutocompactBuffer sets the summarization budget: window − buffer, or
	// 0.8 × window when the window is not larger than the buffer. The
	// seeds compute it and pass it to the selection, which ignores it; it is
	// listed for completeness and changes nothing.
	AutocompactBuffer int `yaml:"autocompact_buffer"`
	// TailBudget, when > 0, replaces KeepTurns: the kept tail is the newest
	// messages whose tokens fit TailBudget × window (cut between messages,
	// never between a tool call and its result), moved forward to the
	// first anchor turn inside it when there is one. Not in the seeds: a
	// Claude Code session is mostly one or a few long turns, so "the last
	// 3 turns" is often the whole context.
	TailBudget float64 `yaml:"tail_budget"`
	// Style is the weighted summary's format: codelet (seed 001) or fspec
	// (seed 000: fallbacks, 500/150-character cuts).
	Style string `yaml:"style"`
}

func init() {
	register(Spec{
		ID: "codelet", Source: "seeds 001/002 (TypeScript reference)",
		Doc: "strict anchors (error-resolution, task-completion, threshold 0.9), keep last 3 turns + from most recent older anchor, weighted outcome summary, cache-aware trigger",
		Params: func() any {
			return &AnchorParams{Rules: "codelet", Threshold: 0.9, CacheDiscount: 0.9, KeepTurns: 3, AutocompactBuffer: 50_000, Style: "codelet"}
		},
		New: func(p any) Strategy { return &anchorPoint{id: "codelet", p: *p.(*AnchorParams)} },
	})
	register(Spec{
		ID: "fspec", Source: "seed 000 (target state)",
		Doc: "codelet + search/bash/synthesis rules, synthetic anchor fallback, PreservationContext summary",
		Params: func() any {
			return &AnchorParams{Rules: "fspec", Threshold: 0.9, CacheDiscount: 0.9, KeepTurns: 3, AutocompactBuffer: 50_000, Style: "fspec"}
		},
		New: func(p any) Strategy { return &anchorPoint{id: "fspec", p: *p.(*AnchorParams)} },
	})
	// The variants deviate from the seeds on purpose, so that the seeds'
	// selection and summaries can be measured at all: with a warm prompt
	// cache the seeds' trigger (input − 0.9 × cache read) stays far below
	// 90 % of the window, and "keep the last 3 turns" keeps everything
	// when a session is one long turn.
	for _, base := range []string{"codelet", "fspec"} {
		register(Spec{
			ID: base + "-raw", Source: "variant of " + base + " (deviation: cache discount 0)",
			Doc: base + " with the trigger on the raw prompt (input + cache read > 90% of the window); selection as the seed",
			Params: func() any {
				return &AnchorParams{Rules: base, Threshold: 0.9, CacheDiscount: 0, KeepTurns: 3, AutocompactBuffer: 50_000, Style: base}
			},
			New: func(p any) Strategy { return &anchorPoint{id: base + "-raw", p: *p.(*AnchorParams)} },
		})
		register(Spec{
			ID: base + "-budget", Source: "variant of " + base + " (deviations: cache discount 0, kept tail by token budget)",
			Doc: base + "-raw keeping the newest messages within 25% of the window (moved to the first anchor turn inside it) instead of the last 3 turns",
			Params: func() any {
				return &AnchorParams{Rules: base, Threshold: 0.9, CacheDiscount: 0, KeepTurns: 3, TailBudget: 0.25,
					AutocompactBuffer: 50_000, Style: base}
			},
			New: func(p any) Strategy { return &anchorPoint{id: base + "-budget", p: *p.(*AnchorParams)} },
		})
	}
}

type anchorPoint struct {
	id string
	p  AnchorParams
}

// Trigger is codelet's shouldTriggerCompaction with effective tokens
// (runner.ts): input − 0.9 × cache_read > floor(0.9 × window). Input is the
// whole prompt (the seed's tracker merges cache reads into input tokens);
// cache_read is the simulated prefix unchanged since the previous call.
// With prompt caching working, effective tokens stay far below the
// threshold, so this trigger seldom fires before the window overflows.
func (a *anchorPoint) Trigger(s *Sim) (bool, int) {
	effective := s.Prompt() - int(a.p.CacheDiscount*float64(s.CacheRead()))
	return effective > int(a.p.Threshold*float64(s.Window)), effective
}

// Compact is selectTurnsForCompaction and the weighted summary. The
// context's turns are its recorded turns, preceded by one turn per message
// the strategy wrote before (a previous summary is a user message, so
// converting the messages to a flow makes it a turn of its own, which a
// later round summarizes like any other: codelet does not chain summaries).
func (a *anchorPoint) Compact(s *Sim) Outcome {
	e, err := s.evaluation(a.p.Rules)
	if err != nil {
		return Outcome{Skip: true}
	}
	ct, ok := contextTurnsOf(s)
	if !ok {
		return Outcome{Skip: true}
	}
	last := s.TurnOf[s.Cursor-1]
	total := len(ct.pseudo) + last - ct.first + 1
	keep := min(a.p.KeepTurns, total)
	flow := e.Flow(ct.first, last+1)
	cut, info := chooseAnchor(&flow, ct.shift(), total, keep)
	var keepFrom int
	if a.p.TailBudget > 0 {
		keepFrom = a.budgetCut(s, flow.Anchors, ct.shift(), ct.start, &info)
	} else {
		if cut == 0 {
			return Outcome{Skip: true, Anchor: info}
		}
		keepFrom = ct.start(cut)
	}
	if keepFrom == 0 {
		return Outcome{Skip: true, Anchor: info}
	}
	return a.summarizeBefore(s, &flow, ct, keepFrom, info)
}

// contextTurns are the turns of a context: one pseudo-turn per written
// message leading it, then the recorded turns from first on. Context turn
// i is flow turn i − shift().
type contextTurns struct {
	s      *Sim
	pseudo []transcript.Turn
	first  int
}

// contextTurnsOf finds the context's turns; false when the context holds no
// recorded message.
func contextTurnsOf(s *Sim) (contextTurns, bool) {
	ct := contextTurns{s: s, first: -1}
	for i := range s.Ctx {
		it := &s.Ctx[i]
		if it.Orig >= 0 {
			ct.first = s.TurnOf[it.Orig]
			break
		}
		ct.pseudo = append(ct.pseudo, transcript.Turn{UserMessage: it.Msg.Text(), Timestamp: "written"})
	}
	return ct, ct.first >= 0
}

// shift is the number of pseudo-turns: flow turn i is context turn i+shift.
func (ct contextTurns) shift() int { return len(ct.pseudo) }

// start is the context index of context turn t's first item.
func (ct contextTurns) start(t int) int {
	if t < len(ct.pseudo) {
		return t
	}
	s := ct.s
	for i := range s.Ctx {
		it := &s.Ctx[i]
		if it.Orig >= 0 && s.TurnOf[it.Orig]-ct.first+ct.shift() >= t {
			return i
		}
	}
	return len(s.Ctx)
}

// chooseAnchor picks the most recent anchor older than the kept turns and
// returns the first kept context turn (from that anchor, else the last keep
// turns) and what the event says about anchors.
func chooseAnchor(flow *anchors.Flow, shift, total, keep int) (int, AnchorInfo) {
	info := AnchorInfo{Kind: "none"}
	natural := flow.Natural()
	switch {
	case len(natural) > 0:
		info.Kind = "natural"
	case flow.Synthetic != nil:
		info.Kind = "synthetic"
	}
	var chosen *anchors.Anchor
	for i := range flow.Anchors {
		an := &flow.Anchors[i]
		if an.Turn+shift < total-keep && (chosen == nil || an.Turn > chosen.Turn) {
			chosen = an
		}
	}
	cut := total - keep // first kept context turn
	switch {
	case chosen != nil:
		cut = chosen.Turn + shift
		info.Used = true
		info.Type, info.Rule = string(chosen.Type), chosen.Rule
	case len(natural) > 0:
		info.Type, info.Rule = string(natural[len(natural)-1].Type), natural[len(natural)-1].Rule
	case flow.Synthetic != nil:
		info.Type, info.Rule = string(flow.Synthetic.Type), flow.Synthetic.Rule
	}
	return cut, info
}

// summarizeBefore replaces the context items before keepFrom with the
// weighted summary of their turns: one per written message before the cut,
// and the recorded turns the summarized messages belong to (a turn the
// budget cut splits is summarized whole).
func (a *anchorPoint) summarizeBefore(s *Sim, flow *anchors.Flow, ct contextTurns, keepFrom int, info AnchorInfo) Outcome {
	var summarize []transcript.Turn
	summarize = append(summarize, ct.pseudo[:min(keepFrom, len(ct.pseudo))]...)
	if keepFrom > len(ct.pseudo) {
		lastTurn := s.TurnOf[s.Ctx[keepFrom-1].Orig]
		for t := ct.first; t <= lastTurn; t++ {
			summarize = append(summarize, s.Turns[t])
		}
	}
	style := anchors.StyleCodelet
	if a.p.Style == "fspec" {
		style = anchors.StyleFSpec
	}
	ctxInfo := flow.Context
	natural := flow.Natural()
	summarized := s.Ctx[:keepFrom]
	req := &SummaryRequest{Strategy: a.id, Round: s.Round + 1, PromptName: "codelet", MaxOutputTokens: 1024,
		Input: func() string { return plainText(summarized) },
		Deterministic: func() string {
			return anchors.WeightedSummary(summarize, natural, &ctxInfo, style)
		}}
	summary := s.summarize(req)
	ctx := make([]Item, 0, len(s.Ctx)-keepFrom+1)
	ctx = append(ctx, s.Synthetic(transcript.RoleUser, summary))
	ctx = append(ctx, s.Ctx[keepFrom:]...)
	in := 0
	for i := 0; i < keepFrom; i++ {
		in += s.ItemTokens(i)
	}
	return Outcome{Ctx: ctx, Action: "compact", Summary: summary, SummarizerInput: in, Anchor: info}
}

// budgetCut is the tail_budget variant's selection: the context index of
// the first kept item. The tail is the newest items whose tokens fit
// TailBudget × window, starting at an item that carries no tool result (so
// no result loses its call); when even the newest item is over the budget,
// the last such item. The cut then moves forward to the first anchor turn
// that starts inside the tail, if any (the selection keeps from an anchor,
// as the seed does, but only within the budget).
func (a *anchorPoint) budgetCut(s *Sim, anchorsFound []anchors.Anchor, shift int, turnStart func(int) int, info *AnchorInfo) int {
	budget := int(a.p.TailBudget * float64(s.Window))
	c, used := len(s.Ctx), 0
	for c > 0 && used+s.ItemTokens(c-1) <= budget {
		c--
		used += s.ItemTokens(c)
	}
	safe := safeCuts(s)
	for c < len(s.Ctx) && !safe[c] {
		c++
	}
	if c == len(s.Ctx) {
		for c = len(s.Ctx) - 1; c > 0 && !safe[c]; c-- {
		}
	}
	best := -1
	for i := range anchorsFound {
		an := &anchorsFound[i]
		if at := turnStart(an.Turn + shift); at >= c && at < len(s.Ctx) && (best < 0 || at < best) {
			best = at
			info.Used = true
			info.Type, info.Rule = string(an.Type), an.Rule
		}
	}
	if best >= 0 {
		return best
	}
	info.Used = false
	return c
}

// safeCuts reports, per context index, whether a kept tail may start
// there: no tool result at or after it has its call before it.
func safeCuts(s *Sim) []bool {
	safe := make([]bool, len(s.Ctx)+1)
	minCall, firstOrig := len(s.T.Messages), len(s.T.Messages)
	safe[len(s.Ctx)] = true
	for i := len(s.Ctx) - 1; i >= 0; i-- {
		if o := s.Ctx[i].Orig; o >= 0 {
			firstOrig = o
			for _, tp := range s.partners[o] {
				if tp.result && tp.partner >= 0 {
					minCall = min(minCall, tp.partner)
				}
			}
		}
		safe[i] = minCall >= firstOrig
	}
	return safe
}
