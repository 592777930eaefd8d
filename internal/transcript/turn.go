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
	starts, prompts := turnStarts(msgs)
	// The turns' calls and results are cut from one array each.
	ncalls, nresults, allCalls, allResults := countTurnTools(msgs, starts)
	tools := toolsByID(msgs, allCalls)
	calls, results := make([]ToolCall, 0, allCalls), make([]ToolResult, 0, allResults)

	turns := make([]Turn, len(starts))
	var resp []string
	for k, s := range starts {
		e := turnEnd(starts, k, len(msgs))
		tr := &turns[k]
		tr.Index, tr.Start, tr.End = k, s, e
		tr.Timestamp = msgs[s].Timestamp
		if p := prompts[k]; p >= 0 {
			tr.setPrompt(&msgs[p])
		}
		// A turn's calls and results are the next ones of the shared
		// arrays, capacity clipped so that appending to them copies.
		if n := int(ncalls[k]); n > 0 {
			tr.ToolCalls = calls[len(calls) : len(calls) : len(calls)+n]
		}
		if n := int(nresults[k]); n > 0 {
			tr.ToolResults = results[len(results) : len(results) : len(results)+n]
		}
		resp = tr.collect(msgs[s:e], tools, resp[:0])
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

// turnStarts returns the first message of each turn and the prompt that
// opens it (-1 for a leading turn without one). Messages before the first
// prompt make a leading turn when one of them is an assistant message, and
// otherwise (harness-injected content) join the first turn.
func turnStarts(msgs []Message) (starts, prompts []int) {
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
	return starts, prompts
}

// turnEnd is the end (exclusive) of turn k's messages: the next turn's
// start, or nmsgs for the last turn.
func turnEnd(starts []int, k, nmsgs int) int {
	if k+1 < len(starts) {
		return starts[k+1]
	}
	return nmsgs
}

// countTurnTools counts each turn's tool calls and results, and their
// totals over all turns.
func countTurnTools(msgs []Message, starts []int) (ncalls, nresults []int32, allCalls, allResults int) {
	ncalls, nresults = make([]int32, len(starts)), make([]int32, len(starts))
	for k, s := range starts {
		e := turnEnd(starts, k, len(msgs))
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
	return ncalls, nresults, allCalls, allResults
}

// turnTool is the name and kind of a called tool, found by call id.
type turnTool struct {
	name string
	kind ToolKind
}

// toolsByID maps every tool call's id in msgs to its tool (the last call
// wins when an id repeats); ncalls sizes the map.
func toolsByID(msgs []Message, ncalls int) map[string]turnTool {
	tools := make(map[string]turnTool, ncalls)
	for i := range msgs {
		for j := range msgs[i].Blocks {
			b := &msgs[i].Blocks[j]
			if b.Kind == BlockToolUse {
				tools[b.ToolID] = turnTool{b.ToolName, b.ToolKind()}
			}
		}
	}
	return tools
}

// setPrompt records the prompt p that opens the turn: its text (the
// recorded prompt when there is one), id and timestamp.
func (tr *Turn) setPrompt(p *Message) {
	tr.UserMessage = p.Text()
	if p.Prompt != "" {
		tr.UserMessage = p.Prompt
	}
	tr.PromptUUID, tr.PromptTime = p.UUID, p.Timestamp
}

// collect appends the turn's messages' tool calls and results (results
// named by their call, through tools) to the turn, and its assistant text
// blocks to resp, which it returns.
func (tr *Turn) collect(msgs []Message, tools map[string]turnTool, resp []string) []string {
	for i := range msgs {
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
	return resp
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
