package tokens

import (
	"math"

	"github.com/compactbench/compactbench/internal/transcript"
)

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
	// compaction, at each change of model and after each unrecorded drop
	// (IsDrop): Claude Code re-attaches files, hook output and a different
	// system prompt at those points, and server-side context editing clears
	// content, none of which the transcript records.
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

// Unrecorded drops. Between two consecutive calls the real context can fall
// with no compaction recorded: server-side context editing cleared old tool
// results (or the harness dropped content) without a trace in the
// transcript. A fall counts as a drop when it is at least DropShare of the
// previous call's real context and at least DropTokens tokens. On the real
// corpus (5,900 consecutive call pairs) the real context fell 68 times: the
// 55 falls under 4,000 tokens are the API stripping earlier turns' thinking
// (the transcript predicts them: the estimate falls as well) or a few
// hundred tokens of cache accounting; the 13 falls of 4,000 tokens or more
// (3.9 % to 77 % of the context, 5.7k to 85k tokens) all came while the
// transcript's content grew, so the estimate cannot follow them.
const (
	DropShare  = 0.03
	DropTokens = 4000
)

// IsDrop reports whether a call's real context falling from prev to cur
// (with no compaction recorded in between) is an unrecorded drop.
func IsDrop(prev, cur int64) bool {
	return prev > 0 && prev-cur >= DropTokens && float64(prev-cur) >= DropShare*float64(prev)
}

// strippedSignatureTokens estimates the tokens of encrypted thinking per
// signature character, and strippedTextTokens of visible thinking per byte:
// rough on purpose, since they only bound how much a fall the API's own
// thinking stripping can explain.
const (
	strippedSignatureTokens = 0.20
	strippedTextTokens      = 0.25
)

// UnrecordedDrops finds the recorded calls (by message index) whose real
// context fell from the previous call's by IsDrop with no compaction
// recorded in between, and by how much. For models whose API drops the
// thinking of earlier turns, the fall that stripping explains (the thinking
// of the turn a new user message closed) is not a drop: a user whose
// sessions think at length would otherwise see every turn counted as one.
// The fall reported is what stripping does not explain.
func UnrecordedDrops(t *transcript.Transcript, models *Models) map[int]int64 {
	var out map[int]int64
	last, comp := int64(0), 0
	turnThinking, strippable := 0.0, 0.0
	for i := range t.Messages {
		for comp < len(t.Compactions) && t.Compactions[comp].MessageIndex <= i {
			last, turnThinking, strippable = 0, 0, 0
			comp++
		}
		m := &t.Messages[i]
		switch m.Role {
		case transcript.RoleUser:
			strippable += turnThinking
			turnThinking = 0
		case transcript.RoleAssistant:
			if m.Measured() {
				r := m.Usage.Context()
				explained := int64(0)
				if models.Lookup(m.Model).StripsThinking {
					explained = int64(strippable)
				}
				if fall := last - r - explained; IsDrop(last, last-fall) {
					if out == nil {
						out = map[int]int64{}
					}
					out[i] = fall
				}
				last, strippable = r, 0
			}
			for j := range m.Blocks {
				if b := &m.Blocks[j]; b.Kind == transcript.BlockThinking {
					turnThinking += float64(len(b.Text))*strippedTextTokens + float64(b.SignatureLen)*strippedSignatureTokens
				}
			}
		}
	}
	return out
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
	// drop: the real context fell since the previous call without a
	// recorded compaction (IsDrop).
	drop bool
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
func walk(t *transcript.Transcript, mode Anchoring, models *Models, v visitor) {
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
	drops := UnrecordedDrops(t, models)
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
		if m.Measured() {
			if mode == AnchorSegments && lastModel != "" && m.Model != lastModel {
				anchorNext = true
			}
			real := m.Usage.Context()
			_, drop := drops[i]
			if drop && mode == AnchorSegments {
				anchorNext = true
			}
			if calls == 0 || m.Model != lastModel {
				strip = models.Lookup(m.Model).StripsThinking
			}
			v.call(&point{call: calls, msg: i, m: m, real: real, anchor: anchorNext,
				complete: m.Line < firstProblem, strip: strip, drop: drop})
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
