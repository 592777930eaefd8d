package compaction

import (
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// RecordedParams configure the recorded strategy.
type RecordedParams struct {
	// Placeholder replaces the outputs a microcompaction cleared.
	Placeholder string `yaml:"placeholder"`
}

func init() {
	register(Spec{
		ID: "recorded", Source: "the transcript itself",
		Doc:    "what the recording harness really did: Claude Code compact_boundary + isCompactSummary events, replayed as a strategy row",
		Params: func() any { return &RecordedParams{Placeholder: tokens.MicrocompactPlaceholder} },
		New:    func(p any) Strategy { return &recorded{p: *p.(*RecordedParams)} },
	})
}

type recorded struct{ p RecordedParams }

func (recorded) Trigger(*Sim) (bool, int) { return false, 0 }
func (recorded) Compact(*Sim) Outcome     { return Outcome{Skip: true} }

// Recorded applies a recorded compaction: a full compaction replaces the
// history by its summary (as Claude Code does); a microcompaction clears the
// listed tool outputs.
func (r *recorded) Recorded(s *Sim, c *transcript.Compaction) Outcome {
	if c.Kind == transcript.CompactMicro {
		ids := map[string]bool{}
		for _, id := range c.CompactedToolIDs {
			ids[id] = true
		}
		ctx := make([]Item, len(s.Ctx))
		copy(ctx, s.Ctx)
		changed := false
		for i := range ctx {
			var nb []transcript.Block
			for j, b := range ctx[i].Msg.Blocks {
				if b.Kind == transcript.BlockToolResult && ids[b.ToolID] {
					if nb == nil {
						nb = append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
					}
					nb[j] = placeholderResult(b, r.p.Placeholder, placeholderCleared)
				}
			}
			if nb != nil {
				ctx[i] = s.Modify(ctx[i], nb)
				changed = true
			}
		}
		if !changed {
			return Outcome{Skip: true}
		}
		return Outcome{Ctx: ctx, Action: "microcompact"}
	}
	summary := c.Summary
	return Outcome{Ctx: []Item{s.Synthetic(transcript.RoleUser, summary)}, Action: "recorded", Summary: summary,
		SummarizerInput: s.Tokens()}
}

// Drop applies an unrecorded drop (the real context fell by fall tokens
// before a call, with no compaction recorded) the way server-side context
// editing does: the oldest tool outputs still in the context are cleared,
// oldest first, until the metric count fell by fall or none is left.
// Strategies other than recorded do not see drops: they manage the context
// themselves, and what the harness's clearing removed is theirs to keep or
// drop.
func (r *recorded) Drop(s *Sim, fall int64) Outcome {
	ctx := make([]Item, len(s.Ctx))
	copy(ctx, s.Ctx)
	freed := 0
	changed := false
	for i := range ctx {
		if int64(freed) >= fall {
			break
		}
		var nb []transcript.Block
		for j, b := range ctx[i].Msg.Blocks {
			if b.Kind != transcript.BlockToolResult || b.Text == r.p.Placeholder || int64(freed) >= fall {
				continue
			}
			if nb == nil {
				nb = append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
			}
			nb[j] = placeholderResult(b, r.p.Placeholder, placeholderCleared)
			freed += s.Metric.Block(&ctx[i].Msg.Blocks[j]) - s.Metric.Block(&nb[j])
		}
		if nb != nil {
			ctx[i] = s.Modify(ctx[i], nb)
			changed = true
		}
	}
	if !changed {
		return Outcome{Skip: true}
	}
	return Outcome{Ctx: ctx, Action: "drop"}
}
