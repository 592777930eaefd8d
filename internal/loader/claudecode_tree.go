package loader

import (
	"sort"

	"github.com/compactbench/compactbench/internal/transcript"
)

// build turns the parsed records into the transcript: file-level stats, the
// active path, and the model-visible messages.
func (f *ccFile) build() {
	t := f.t
	t.Stats.APICalls = len(f.calls)
	t.Stats.ToolCalls = len(f.toolUses)
	t.Stats.ToolErrors = len(f.toolErrs)
	for id := range f.calls {
		if c := f.usage[id].Context(); c > t.Stats.PeakContextReal {
			t.Stats.PeakContextReal = c
		}
	}

	// The file's own side: a subagent file holds only sidechain records; a
	// session file may also hold inline sidechain records, which belong to
	// its subagents and are left out.
	side, anyConv := true, false
	for i := range f.nodes {
		if f.nodes[i].isConversation() {
			anyConv = true
			if !f.nodes[i].sidechain {
				side = false
				break
			}
		}
	}
	t.Kind = f.kindOf(anyConv && side)
	t.SessionID = f.session
	switch {
	case t.Kind == transcript.KindSession && f.session != "":
		t.ID = f.session
	case t.Kind != transcript.KindSession && f.agentID != "":
		t.ID = "agent-" + f.agentID
	default:
		t.ID = stem(t.Path)
	}
	if t.Kind != transcript.KindSession {
		t.ParentID = f.session
	}

	included := f.activePath(side)
	f.messages(included)

	counts := map[string]int{}
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Usage != nil && m.Model != "" {
			counts[m.Model]++
		}
	}
	f.finish(counts)
}

func (nd *node) isConversation() bool {
	return nd.kind == nodeUser || nd.kind == nodeAssistant || nd.kind == nodeAttachment
}

// activePath returns, in file order, the indices of the nodes that make the
// active conversation: the walk from the newest leaf to the root, plus the
// lines of the same API responses and the parallel tool results that hang
// off that walk.
func (f *ccFile) activePath(side bool) []int {
	nodes := f.nodes
	leaf := -1
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].isConversation() && nodes[i].sidechain == side {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return nil
	}
	index := make(map[string]int, len(nodes))
	for i := range nodes {
		if nodes[i].uuid != "" {
			index[nodes[i].uuid] = i
		}
	}
	reportDangling := f.t.Kind == transcript.KindSession || f.t.Kind == transcript.KindSubagent

	in := make([]bool, len(nodes))
	for cur := leaf; cur >= 0; {
		in[cur] = true
		nd := &nodes[cur]
		next := nd.parent
		if next == "" && (nd.kind == nodeBoundary || nd.kind == nodeMicroBoundary) {
			next = nd.logicalParent
		}
		if next == "" {
			break
		}
		p, ok := index[next]
		if !ok {
			// The parent line is missing (lost to corruption, or the file
			// starts mid-session): link to the nearest earlier record.
			p = -1
			for j := cur - 1; j >= 0; j-- {
				if !in[j] && nodes[j].sidechain == side {
					p = j
					break
				}
			}
			if reportDangling {
				if p >= 0 {
					f.problem(nd.line, "parentUuid %s is not in the file; linked to the record on line %d", next, nodes[p].line)
				} else {
					f.problem(nd.line, "parentUuid %s is not in the file; the conversation starts here", next)
				}
			}
		}
		if p >= 0 && in[p] {
			f.problem(nd.line, "parentUuid %s closes a cycle (the record on line %d is already on the path); the conversation starts here", next, nodes[p].line)
			break
		}
		cur = p
	}

	// Lines of the same API responses that the walk skipped (older versions
	// chain parallel tool calls so that only some lines are ancestors).
	ids := map[string]bool{}
	for i := range nodes {
		if in[i] && nodes[i].kind == nodeAssistant && nodes[i].msgID != "" {
			ids[nodes[i].msgID] = true
		}
	}
	for i := range nodes {
		if !in[i] && nodes[i].kind == nodeAssistant && nodes[i].sidechain == side && ids[nodes[i].msgID] {
			in[i] = true
		}
	}
	// Tool results of calls on the path whose result is off the walk.
	calls, answered := map[string]bool{}, map[string]bool{}
	for i := range nodes {
		if !in[i] {
			continue
		}
		for _, b := range nodes[i].blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				calls[b.ToolID] = true
			case transcript.BlockToolResult:
				answered[b.ToolID] = true
			}
		}
	}
	for i := range nodes {
		nd := &nodes[i]
		if in[i] || nd.kind != nodeUser || nd.sidechain != side || len(nd.blocks) == 0 {
			continue
		}
		if p, ok := index[nd.parent]; !ok || !in[p] {
			continue
		}
		pull := true
		for _, b := range nd.blocks {
			if b.Kind != transcript.BlockToolResult || !calls[b.ToolID] || answered[b.ToolID] {
				pull = false
				break
			}
		}
		if pull {
			in[i] = true
			for _, b := range nd.blocks {
				answered[b.ToolID] = true
			}
		}
	}

	var out []int
	for i := range nodes {
		if in[i] {
			out = append(out, i)
		}
	}
	return out
}

// messages builds the model-visible messages and the recorded compactions
// from the active path, in file order.
func (f *ccFile) messages(path []int) {
	t := f.t
	msgs := make([]transcript.Message, 0, len(path))
	for _, i := range path {
		nd := &f.nodes[i]
		switch nd.kind {
		case nodeBoundary, nodeMicroBoundary:
			c := *nd.compaction
			c.MessageIndex = len(msgs)
			t.Compactions = append(t.Compactions, c)
		case nodeUser:
			if nd.compactSummary {
				n := len(t.Compactions)
				if n > 0 && t.Compactions[n-1].Kind == transcript.CompactFull && t.Compactions[n-1].Summary == "" {
					t.Compactions[n-1].Summary = nd.summaryText
				} else {
					t.Compactions = append(t.Compactions, transcript.Compaction{
						Kind: transcript.CompactFull, MessageIndex: len(msgs), Summary: nd.summaryText, Line: nd.line})
				}
				continue
			}
			if nd.transcriptOnly || len(nd.blocks) == 0 {
				continue
			}
			role := transcript.RoleTool
			for _, b := range nd.blocks {
				if b.Kind != transcript.BlockToolResult {
					role = transcript.RoleUser
					break
				}
			}
			msgs = append(msgs, f.newMessage(nd, role))
		case nodeAttachment:
			msgs = append(msgs, f.newMessage(nd, transcript.RoleUser))
		case nodeAssistant:
			if nd.model == "<synthetic>" || len(nd.blocks) == 0 {
				continue
			}
			if j := sameResponse(msgs, nd.msgID); j >= 0 {
				msgs[j].Blocks = append(msgs[j].Blocks, nd.blocks...)
				continue
			}
			m := f.newMessage(nd, transcript.RoleAssistant)
			m.ID, m.Model = nd.msgID, nd.model
			if u, ok := f.usage[nd.msgID]; ok && f.calls[nd.msgID] {
				m.Usage = &u
			}
			msgs = append(msgs, m)
		}
	}
	orderResults(msgs)
	t.Messages = msgs
	f.checkPairs()
}

// checkPairs reports tool results on the active path that answer no call on
// it, and calls that get no result although the conversation goes on: the
// recording lost a line (a real API request always pairs them), and metrics
// must not blame a strategy for it.
func (f *ccFile) checkPairs() {
	if f.t.Kind != transcript.KindSession && f.t.Kind != transcript.KindSubagent {
		return // copies of a parent session's records start mid-conversation
	}
	msgs := f.t.Messages
	calls, results := map[string]int{}, map[string]bool{}
	lastAssistant := -1
	for i := range msgs {
		if msgs[i].Role == transcript.RoleAssistant {
			lastAssistant = i
		}
		for _, b := range msgs[i].Blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				calls[b.ToolID] = i
			case transcript.BlockToolResult:
				results[b.ToolID] = true
				if _, ok := calls[b.ToolID]; !ok {
					f.problem(msgs[i].Line, "tool_result %s answers no tool_use on the active path (the call's line is missing or unreadable)", b.ToolID)
				}
			}
		}
	}
	for i := range msgs {
		if i == lastAssistant {
			break // a session may end while its last calls run
		}
		for _, b := range msgs[i].Blocks {
			if b.Kind == transcript.BlockToolUse && !results[b.ToolID] {
				f.problem(msgs[i].Line, "tool_use %s gets no tool_result on the active path (the result's line is missing or unreadable)", b.ToolID)
			}
		}
	}
}

func (f *ccFile) newMessage(nd *node, role transcript.Role) transcript.Message {
	return transcript.Message{
		Role: role, Blocks: nd.blocks, UUID: nd.uuid, Timestamp: nd.timestamp,
		IsMeta: nd.isMeta && role == transcript.RoleUser, IsSidechain: nd.sidechain, Line: nd.line,
	}
}

// sameResponse finds the earlier assistant message of the same API response,
// looking back over tool results and injected content only.
func sameResponse(msgs []transcript.Message, id string) int {
	if id == "" {
		return -1
	}
	for j := len(msgs) - 1; j >= 0; j-- {
		m := &msgs[j]
		switch {
		case m.Role == transcript.RoleAssistant:
			if m.ID == id {
				return j
			}
			return -1
		case m.IsPrompt():
			return -1
		}
	}
	return -1
}

// orderResults puts each run of tool-result messages that follows an
// assistant message in the order of that message's tool calls.
func orderResults(msgs []transcript.Message) {
	for a := 0; a < len(msgs); a++ {
		if msgs[a].Role != transcript.RoleAssistant {
			continue
		}
		pos := map[string]int{}
		for _, b := range msgs[a].Blocks {
			if b.Kind == transcript.BlockToolUse {
				pos[b.ToolID] = len(pos)
			}
		}
		if len(pos) < 2 {
			continue
		}
		e := a + 1
		for e < len(msgs) && msgs[e].Role == transcript.RoleTool {
			e++
		}
		run := msgs[a+1 : e]
		key := func(m *transcript.Message) int {
			if p, ok := pos[m.Blocks[0].ToolID]; ok {
				return p
			}
			return len(pos)
		}
		sort.SliceStable(run, func(i, j int) bool { return key(&run[i]) < key(&run[j]) })
	}
}
