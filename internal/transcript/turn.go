package transcript

import "strings"

// Turn is the seeds' ConversationTurn: a real user prompt and everything the
// agent did until the next one.
type Turn struct {
	// Index is the turn's 0-based position (the seeds' turn_index).
	Index int
	// UserMessage is the prompt text; empty for a leading turn that starts
	// without one (a subagent's first message, a resumed session).
	UserMessage string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	// AssistantResponse is the assistant's text blocks of the turn, in order,
	// joined by newlines (seed 002 accumulates all assistant text).
	AssistantResponse string
	// Timestamp is the recording's timestamp of the turn's first message.
	Timestamp string
	// PromptUUID and PromptTime are the recording's id and timestamp of the
	// prompt that opens the turn (empty for a leading turn without one);
	// labels name turns by them so that renumbering cannot move a label.
	PromptUUID, PromptTime string
	// PreviousError is set when the previous turn's last tool result failed.
	PreviousError bool
	// Start and End delimit the turn's messages: Messages[Start:End].
	Start, End int
}

// ToolCall is one tool invocation within a turn.
type ToolCall struct {
	ID   string
	Name string
	// Kind is what the tool does (Block.ToolKind).
	Kind    ToolKind
	Input   string
	Path    string
	Command string
}

// ToolResult is the result of one tool call within a turn, paired by id.
type ToolResult struct {
	ID string
	// Name is the called tool's name, when the call was found.
	Name string
	// Kind is what the called tool does (Block.ToolKind).
	Kind    ToolKind
	Success bool
	Output  string
	// Images is the number of images the result carried.
	Images int
}

// IsPrompt reports whether the message opens a turn: a user message with
// text, written by the user rather than injected by the harness, and not a
// tool result.
func (m *Message) IsPrompt() bool {
	if m.Role != RoleUser || m.IsMeta {
		return false
	}
	hasText := false
	for i := range m.Blocks {
		switch m.Blocks[i].Kind {
		case BlockToolResult, BlockInjected:
			return false
		case BlockText:
			if strings.TrimSpace(m.Blocks[i].Text) != "" {
				hasText = true
			}
		}
	}
	return hasText
}

// Turns groups the messages into turns. A turn starts at each real user
// prompt; messages before the first prompt open a leading turn of their own
// when they hold any assistant message, and otherwise join the first turn.
// Tool calls and results are paired by id, never by position.
func (t *Transcript) Turns() []Turn {
	return GroupTurns(t.Messages)
}

// GroupTurns is Turns over any message slice.
func GroupTurns(msgs []Message) []Turn {
	if len(msgs) == 0 {
		return nil
	}
	// starts are the first message of each turn, prompts the prompt that
	// opens it (-1 for a leading turn without one).
	var starts, prompts []int
	for i := range msgs {
		if msgs[i].IsPrompt() {
			starts = append(starts, i)
			prompts = append(prompts, i)
		}
	}
	if len(starts) == 0 || starts[0] > 0 {
		lead := len(starts) == 0
		for i := 0; !lead && i < starts[0]; i++ {
			lead = msgs[i].Role == RoleAssistant
		}
		if lead {
			starts = append([]int{0}, starts...)
			prompts = append([]int{-1}, prompts...)
		} else {
			starts[0] = 0 // harness-injected content before the first prompt joins its turn
		}
	}

	// The tools by call id, and each turn's number of calls and results:
	// the turns' calls and results are cut from one array each.
	type tool struct {
		name string
		kind ToolKind
	}
	ncalls, nresults := make([]int32, len(starts)), make([]int32, len(starts))
	allCalls, allResults := 0, 0
	for k, s := range starts {
		e := len(msgs)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		for i := s; i < e; i++ {
			for j := range msgs[i].Blocks {
				switch msgs[i].Blocks[j].Kind {
				case BlockToolUse:
					ncalls[k]++
				case BlockToolResult:
					nresults[k]++
				}
			}
		}
		allCalls += int(ncalls[k])
		allResults += int(nresults[k])
	}
	tools := make(map[string]tool, allCalls)
	for i := range msgs {
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			if b.Kind == BlockToolUse {
				tools[b.ToolID] = tool{b.ToolName, b.ToolKind()}
			}
		}
	}
	calls, results := make([]ToolCall, 0, allCalls), make([]ToolResult, 0, allResults)

	turns := make([]Turn, len(starts))
	var resp []string
	for k, s := range starts {
		e := len(msgs)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		tr := &turns[k]
		tr.Index, tr.Start, tr.End = k, s, e
		tr.Timestamp = msgs[s].Timestamp
		if p := prompts[k]; p >= 0 {
			tr.UserMessage = msgs[p].Text()
			if msgs[p].Prompt != "" {
				tr.UserMessage = msgs[p].Prompt
			}
			tr.PromptUUID, tr.PromptTime = msgs[p].UUID, msgs[p].Timestamp
		}
		// A turn's calls and results are the next ones of the shared
		// arrays, capacity clipped so that appending to them copies.
		if n := int(ncalls[k]); n > 0 {
			tr.ToolCalls = calls[len(calls) : len(calls) : len(calls)+n]
		}
		if n := int(nresults[k]); n > 0 {
			tr.ToolResults = results[len(results) : len(results) : len(results)+n]
		}
		resp = resp[:0]
		for i := s; i < e; i++ {
			m := &msgs[i]
			for j := range m.Blocks {
				b := &m.Blocks[j]
				switch {
				case b.Kind == BlockToolUse:
					tr.ToolCalls = append(tr.ToolCalls, ToolCall{ID: b.ToolID, Name: b.ToolName, Kind: b.ToolKind(), Input: b.Input, Path: b.Path, Command: b.Command})
				case b.Kind == BlockToolResult:
					tl, ok := tools[b.ToolID]
					if !ok {
						tl.kind = b.ToolKind()
					}
					tr.ToolResults = append(tr.ToolResults, ToolResult{ID: b.ToolID, Name: tl.name, Kind: tl.kind, Success: !b.IsError, Output: b.Text, Images: b.Images})
				case b.Kind == BlockText && m.Role == RoleAssistant:
					resp = append(resp, b.Text)
				}
			}
		}
		calls, results = calls[:len(calls)+len(tr.ToolCalls)], results[:len(results)+len(tr.ToolResults)]
		tr.AssistantResponse = strings.Join(resp, "\n")
		if k > 0 {
			prev := &turns[k-1]
			if n := len(prev.ToolResults); n > 0 && !prev.ToolResults[n-1].Success {
				tr.PreviousError = true
			}
		}
	}
	return turns
}

// TurnOf returns, for each message index, the index of the turn holding it.
func TurnOf(turns []Turn, nmsgs int) []int {
	out := make([]int, nmsgs)
	for _, t := range turns {
		for i := t.Start; i < t.End && i < nmsgs; i++ {
			out[i] = t.Index
		}
	}
	return out
}
