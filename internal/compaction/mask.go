package compaction

import (
	"fmt"
	"strconv"
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

type mask struct {
	p MaskParams
	// obs are the unmasked observations of the context as of scanned items,
	// for the Sim sim at compaction round round: between compactions the
	// context only grows, so each call scans only the new items.
	sim     *Sim
	round   int
	scanned int
	obs     [][2]int
	// buf is the new context mask last returned (replace copies it); while
	// synced, the context is buf followed by the items appended since, so
	// that the next compaction appends those instead of copying it all.
	buf    []Item
	synced bool
	// pre splits the placeholder once (placeholder).
	pre *placeholderHalves
}

// scan brings obs up to date with the context and returns it.
func (m *mask) scan(s *Sim) [][2]int {
	if m.sim != s || m.round != s.Round || m.scanned > len(s.Ctx) {
		m.sim, m.round, m.scanned, m.obs = s, s.Round, 0, m.obs[:0]
		m.synced = false
	}
	for i := m.scanned; i < len(s.Ctx); i++ {
		for j := range s.Ctx[i].Msg.Blocks {
			if s.Ctx[i].Msg.Blocks[j].Kind == transcript.BlockToolResult && !isMasked(&s.Ctx[i], j) {
				m.obs = append(m.obs, [2]int{i, j})
			}
		}
	}
	m.scanned = len(s.Ctx)
	return m.obs
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
	n := len(m.scan(s))
	return n > m.p.Keep, n
}

// Compact masks every observation but the newest Keep.
func (m *mask) Compact(s *Sim) Outcome {
	obs := m.scan(s)
	if len(obs) <= m.p.Keep {
		return Outcome{Skip: true}
	}
	var ctx []Item
	if m.synced && len(m.buf) <= len(s.Ctx) {
		ctx = append(m.buf, s.Ctx[len(m.buf):]...)
	} else {
		ctx = append(m.buf[:0], s.Ctx...)
	}
	old := obs[:len(obs)-m.p.Keep]
	first := old[0][0] // items before it are the context's, unchanged
	for k := 0; k < len(old); {
		i := old[k][0]
		nb := append([]transcript.Block(nil), ctx[i].Msg.Blocks...)
		for ; k < len(old) && old[k][0] == i; k++ {
			j := old[k][1]
			nb[j] = placeholderResult(nb[j], m.placeholder(strings.Count(nb[j].Text, "\n")+1), placeholderMasked)
		}
		ctx[i] = s.Modify(ctx[i], nb)
	}
	m.buf, m.synced = ctx, true
	// The compaction installs ctx as it is (replace) and starts the next
	// round: the observations left unmasked are the newest Keep.
	m.round, m.scanned = s.Round+1, len(ctx)
	m.obs = append(m.obs[:0], obs[len(obs)-m.p.Keep:]...)
	return Outcome{Ctx: ctx, Action: "mask", same: first}
}

// placeholder is the placeholder of an observation of n lines: Placeholder
// formatted with n. A placeholder whose only verb is one %d (the default)
// is put together from its two halves, which saves fmt on every masked
// observation.
func (m *mask) placeholder(n int) string {
	if m.pre == nil {
		m.pre = new(placeholderHalves)
		if k := strings.Index(m.p.Placeholder, "%d"); k >= 0 && strings.Count(m.p.Placeholder, "%") == 1 {
			*m.pre = placeholderHalves{ok: true, before: m.p.Placeholder[:k], after: m.p.Placeholder[k+2:]}
		}
	}
	if !m.pre.ok {
		return fmt.Sprintf(m.p.Placeholder, n)
	}
	return m.pre.before + strconv.Itoa(n) + m.pre.after
}

// placeholderHalves are a placeholder's text before and after its one %d
// (ok), as placeholder splits it once.
type placeholderHalves struct {
	ok            bool
	before, after string
}

// placeholderResult is a tool result whose content was replaced: the
// tool_use/tool_result pairing stays valid.
func placeholderResult(b transcript.Block, text, marker string) transcript.Block {
	return transcript.Block{Kind: transcript.BlockToolResult, ToolID: b.ToolID, ToolName: b.ToolName, IsError: b.IsError,
		Text: text, InjectedKind: marker}
}
