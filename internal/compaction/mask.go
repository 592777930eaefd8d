package compaction

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// MaskParams configure observation masking ("The Complexity Trap",
// JetBrains 2025): the newest Keep tool observations stay verbatim, older
// ones become a one-line placeholder; the agent's reasoning and actions stay.
type MaskParams struct {
	// Keep is M, the observations kept verbatim.
	Keep int `yaml:"keep"`
	// Placeholder replaces an old observation; %d is its line count.
	Placeholder string `yaml:"placeholder"`
}

func init() {
	register(Spec{
		ID: "mask", Source: "The Complexity Trap (JetBrains 2025)",
		Doc: "observation masking: keep the last M=10 tool observations, older ones become a one-line placeholder; no summary",
		Params: func() any {
			return &MaskParams{Keep: 10, Placeholder: "Old environment output: (%d lines omitted)"}
		},
		New: func(p any) Strategy { return &mask{p: *p.(*MaskParams)} },
	})
}

type mask struct{ p MaskParams }

// observations calls fn with the (item, block) position of every unmasked
// tool output, oldest first.
func observations(ctx []Item, fn func(i, j int)) {
	for i := range ctx {
		for j := range ctx[i].Msg.Blocks {
			if ctx[i].Msg.Blocks[j].Kind == transcript.BlockToolResult && !isMasked(&ctx[i], j) {
				fn(i, j)
			}
		}
	}
}

// isMasked reports whether block j of the item was masked already.
func isMasked(it *Item, j int) bool {
	return it.Modified && it.Msg.Blocks[j].InjectedKind == placeholderMasked
}

// Markers on tool results whose content a strategy replaced (kept in the
// block's InjectedKind, which tool results do not otherwise use).
const (
	placeholderMasked  = "masked"
	placeholderPruned  = "pruned"
	placeholderCleared = "cleared"
)

func isPlaceholder(b *transcript.Block) bool {
	switch b.InjectedKind {
	case placeholderMasked, placeholderPruned, placeholderCleared:
		return true
	}
	return false
}

// Trigger fires whenever more than Keep observations are unmasked: masking
// is applied continuously, before every call, as in the paper.
func (m *mask) Trigger(s *Sim) (bool, int) {
	n := 0
	observations(s.Ctx, func(int, int) { n++ })
	return n > m.p.Keep, n
}

// Compact masks every observation but the newest Keep.
func (m *mask) Compact(s *Sim) Outcome {
	var obs [][2]int
	observations(s.Ctx, func(i, j int) { obs = append(obs, [2]int{i, j}) })
	if len(obs) <= m.p.Keep {
		return Outcome{Skip: true}
	}
	old := map[int][]int{}
	for _, o := range obs[:len(obs)-m.p.Keep] {
		old[o[0]] = append(old[o[0]], o[1])
	}
	ctx := make([]Item, len(s.Ctx))
	copy(ctx, s.Ctx)
	for i, blocks := range old {
		nb := append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
		for _, j := range blocks {
			nb[j] = placeholderResult(nb[j], fmt.Sprintf(m.p.Placeholder, strings.Count(nb[j].Text, "\n")+1), placeholderMasked)
		}
		ctx[i] = s.Modify(ctx[i], nb)
	}
	return Outcome{Ctx: ctx, Action: "mask"}
}

// placeholderResult is a tool result whose content was replaced: the
// tool_use/tool_result pairing stays valid.
func placeholderResult(b transcript.Block, text, marker string) transcript.Block {
	return transcript.Block{Kind: transcript.BlockToolResult, ToolID: b.ToolID, ToolName: b.ToolName, IsError: b.IsError,
		Text: text, InjectedKind: marker}
}
