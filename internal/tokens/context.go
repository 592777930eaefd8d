package tokens

import (
	"math"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// stripThinkingModels are the model-name prefixes whose API drops the
// thinking blocks of earlier turns from the context. Measured on the real
// corpus: claude-sonnet-4-5 sessions lose the previous turns' thinking when a
// new user message arrives (the next call's real context grows by the new
// text minus that thinking, to within a few tokens), while claude-opus-4-5
// and claude-opus-4-6 keep it (the context only grows). The older Claude 3.7
// and 4.0/4.1 models follow the documented stripping rule; haiku-4-5 is
// assumed to as well (no thinking was recorded for it).
var stripThinkingModels = []string{
	"claude-3", "claude-sonnet-4-2", "claude-sonnet-4-5", "claude-opus-4-2", "claude-opus-4-1", "claude-haiku-4-5",
}

// StripsOldThinking reports whether a call to model leaves out the thinking
// blocks of earlier turns. A turn ends when a user message that is not only
// tool results arrives. Models not in the list keep thinking.
func StripsOldThinking(model string) bool {
	for _, p := range stripThinkingModels {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// MicrocompactPlaceholder is the text Claude Code leaves in place of a tool
// result a microcompaction cleared.
const MicrocompactPlaceholder = "[Old tool result content cleared]"

// Anchoring chooses the calls whose real context fixes the overhead (system
// prompt + tools, which no transcript records): overhead = real − estimate at
// the anchor, applied to the following calls.
type Anchoring int

const (
	// AnchorFirst takes the overhead from the transcript's first call only,
	// as the replay does (internal/compaction.Overhead).
	AnchorFirst Anchoring = iota
	// AnchorSegments also re-anchors at the first call after each full
	// compaction and at each change of model: Claude Code re-attaches
	// files, hook output and a different system prompt at those points, none
	// of which the transcript records.
	AnchorSegments
)

// String names the mode as flags and summary.json do.
func (a Anchoring) String() string {
	if a == AnchorSegments {
		return "segments"
	}
	return "first"
}

// ParseAnchoring reads "first" or "segments".
func ParseAnchoring(s string) (Anchoring, bool) {
	switch s {
	case "first":
		return AnchorFirst, true
	case "segments":
		return AnchorSegments, true
	}
	return AnchorFirst, false
}

// point describes one recorded API call as the walk reaches it.
type point struct {
	call     int // 0-based index among the calls visited
	msg      int // index of the call's message
	m        *transcript.Message
	real     int64
	anchor   bool
	complete bool
	strip    bool // the called model drops earlier turns' thinking
}

// visitor receives the walk over a transcript's prompt.
type visitor interface {
	// reset: a full compaction replaced the context (the summary is added next).
	reset()
	// add: a message enters the prompt.
	add(m *transcript.Message)
	// turn: a user message is about to enter; thinking so far is now from
	// earlier turns.
	turn()
	// replace: a microcompaction replaced a tool result block in the prompt.
	replace(old, with *transcript.Block)
	// call: a recorded call sends the prompt built so far.
	call(p *point)
	// boundary: a recorded compaction happens now (before it is applied);
	// strip is the last call's thinking rule.
	boundary(k int, c *transcript.Compaction, strip bool)
}

// walk replays the prompt of each recorded call of t, in order, through v:
// the messages before the call, as the harness had them. After a recorded
// full compaction the prompt restarts from the summary (a user message);
// after a microcompaction the cleared tool results read
// MicrocompactPlaceholder. A call counts as complete when no load problem
// lies at or before its line (a lost line before a call leaves its real
// context with content the transcript no longer holds).
func walk(t *transcript.Transcript, mode Anchoring, v visitor) {
	firstProblem := math.MaxInt
	for _, p := range t.Problems {
		if p.Line < firstProblem {
			firstProblem = p.Line
		}
	}
	placeholder := &transcript.Block{Kind: transcript.BlockToolResult, Text: MicrocompactPlaceholder}
	results := map[string]*transcript.Block{}
	msgs := t.Messages
	comp, calls := 0, 0
	anchorNext := true
	lastModel := ""
	strip := false
	for i := 0; i <= len(msgs); i++ {
		for comp < len(t.Compactions) && t.Compactions[comp].MessageIndex <= i {
			c := &t.Compactions[comp]
			v.boundary(comp, c, strip)
			switch c.Kind {
			case transcript.CompactFull:
				v.reset()
				clear(results)
				if c.Summary != "" {
					v.turn()
					v.add(&transcript.Message{Role: transcript.RoleUser,
						Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: c.Summary}}})
				}
				if mode == AnchorSegments {
					anchorNext = true
				}
			case transcript.CompactMicro:
				for _, id := range c.CompactedToolIDs {
					if b := results[id]; b != nil {
						v.replace(b, placeholder)
						delete(results, id)
					}
				}
			}
			comp++
		}
		if i == len(msgs) {
			break
		}
		m := &msgs[i]
		if m.Role == transcript.RoleAssistant && m.Usage != nil && m.Usage.Context() > 0 {
			if mode == AnchorSegments && lastModel != "" && m.Model != lastModel {
				anchorNext = true
			}
			strip = StripsOldThinking(m.Model)
			v.call(&point{call: calls, msg: i, m: m, real: m.Usage.Context(), anchor: anchorNext,
				complete: m.Line < firstProblem, strip: strip})
			anchorNext = false
			lastModel = m.Model
			calls++
		}
		if m.Role == transcript.RoleUser {
			v.turn()
		}
		v.add(m)
		for j := range m.Blocks {
			if b := &m.Blocks[j]; b.Kind == transcript.BlockToolResult && b.ToolID != "" {
				results[b.ToolID] = b
			}
		}
	}
}
