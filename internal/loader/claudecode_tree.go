package loader

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// build turns the parsed records into the transcript: file-level stats, the
// active path, and the model-visible messages.
func (f *ccFile) build() {
	t := f.t
	side, anyConv := f.ownSide()
	f.countScopes(side, anyConv)
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
	f.reportUnknown()
	if f.usageOnly > 0 && len(t.Messages) == 0 {
		f.problem(0, "usage-only log: %d records carry API usage but no content; its calls are counted, rulers and strategies have no messages to measure", f.usageOnly)
	}

	counts := map[string]int{}
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Usage != nil && m.Model != "" {
			counts[m.Model]++
		}
	}
	f.finish(counts)
}

// ownSide returns the file's own side (true: the sidechain) and whether it
// holds any conversation record. A subagent file holds only sidechain
// records; a session file may also hold inline sidechain records (older
// Claude Code wrote Task subagents into the session file), which belong to
// its subagents.
func (f *ccFile) ownSide() (side, anyConv bool) {
	side = true
	for i := range f.nodes.len() {
		if nd := f.nodes.at(i); nd.isConversation() {
			anyConv = true
			if !nd.sidechain {
				return false, true
			}
		}
	}
	return side, anyConv
}

// countScopes adds the counts of both scopes to the transcript. Every
// counter of the row has the file's own scope: the other side's records
// are set aside as "sidechain" and count in no other figure, unless the
// file holds no conversation at all (then every count is kept).
func (f *ccFile) countScopes(side, anyConv bool) {
	own, other := &f.scope[0], &f.scope[1]
	if side {
		own, other = other, own
	}
	f.scopeStats(own, "", nil)
	if anyConv {
		f.scopeStats(other, "sidechain", nil)
	} else {
		f.scopeStats(other, "", own)
	}
}

// noScope is a scope with nothing in it.
var noScope ccScope

// scopeStats adds a scope's counts to the transcript. With setAside, the
// scope's records are counted as ignored under that name and nothing else
// of them is counted. Call, tool and error counts are distinct ids, a union
// over the scopes counted: the ids of counted, a scope counted before, are
// not counted again.
func (f *ccFile) scopeStats(sc *ccScope, setAside string, counted *ccScope) {
	s := &f.t.Stats
	if setAside != "" {
		n := sc.parsed
		for _, c := range sc.ignored {
			n += c
		}
		s.IgnoreN(setAside, n)
		return
	}
	s.ParsedLines += sc.parsed
	for typ, c := range sc.ignored {
		s.IgnoreN(typ, c)
	}
	if counted == nil {
		counted = &noScope
	}
	for id := range sc.calls {
		if !counted.calls[id] {
			s.APICalls++
			if c := f.usage[id].Context(); c > s.PeakContextReal {
				s.PeakContextReal = c
			}
		}
	}
	for id := range sc.toolUses {
		if !counted.toolUses[id] {
			s.ToolCalls++
		}
	}
	for id := range sc.toolErrs {
		if !counted.toolErrs[id] {
			s.ToolErrors++
		}
	}
}

// reportUnknown puts the unknown record types and keys met in the
// problems, one row each, at the line where each was first met.
func (f *ccFile) reportUnknown() {
	keys := make([]string, 0, len(f.unknown))
	for k := range f.unknown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		u := f.unknown[k]
		f.problem(u.line, "%s (%d records), not read", u.what, u.n)
	}
}

func (nd *node) isConversation() bool {
	return nd.kind == nodeUser || nd.kind == nodeAssistant || nd.kind == nodeAttachment
}

// real reports whether a node is a conversation record the model saw (not
// a <synthetic> notice), or a compaction boundary: the records a
// bookkeeping record attaches to.
func (nd *node) real() bool {
	switch nd.kind {
	case nodeUser, nodeAttachment, nodeBoundary, nodeMicroBoundary:
		return true
	case nodeAssistant:
		return nd.model != "<synthetic>"
	}
	return false
}

// fingerprint identifies a conversation record's content, to tell a copy
// of a record (same uuid, same content) from a different record that
// reuses a uuid.
func (nd *node) fingerprint() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|", nd.kind, nd.msgID)
	for _, b := range nd.blocks {
		fmt.Fprintf(h, "%d|%s|%s|%s|%t|%d\x00", b.Kind, b.Text, b.ToolID, b.Input, b.IsError, b.ImageBytes)
	}
	return h.Sum64()
}

// activePath returns, in file order, the indices of the nodes that make the
// active conversation.
//
// When the parentUuid chain can be trusted, that is the walk from the
// newest leaf to the root, plus the lines of the same API responses and
// the parallel tool results that hang off that walk. Bookkeeping records
// (progress, system records) and <synthetic> notices take part in the
// chain but their own parent links are not trusted: Claude Code links them
// to whatever record was current when it wrote them, which may be before a
// compaction or on another branch. Each attaches instead to the nearest
// earlier real record in file order, so a record hanging off them keeps
// the real conversation before it.
//
// The chain cannot be trusted when the file's scope has several roots
// (records without a parent: hand-written or exported files, older files
// holding several sessions), conversation records without a uuid, or two
// different records with one uuid. Then the conversation is read in file
// order, every record kept, and a problem says so.
//
// Two records with one uuid: the first in file order wins (records are
// written after their parents, so a child always meant the first). A later
// record with the same content is a copy (a resumed session repeats
// records) and is left out; a later record with other content makes the
// chain untrusted.
func (f *ccFile) activePath(side bool) []int {
	w := &pathWalk{f: f, nodes: &f.nodes, side: side}
	roots, noUUID, clash := w.indexScope()
	leaf := w.leaf()
	if leaf < 0 {
		return nil
	}
	w.in = make([]bool, w.nodes.len())
	if why := w.untrusted(roots, noUUID, clash); why != "" {
		f.problem(w.nodes.at(w.scope[0]).line, "the parentUuid chain cannot be trusted: %s; read in file order, every record kept", why)
		for _, i := range w.scope {
			w.in[i] = !w.copyOf[i]
		}
		f.leftOut(w.scope, w.in, w.copyOf)
		return pathOf(w.in)
	}
	w.walk(leaf)
	w.pullResponses()
	w.pullResults()
	f.leftOut(w.scope, w.in, w.copyOf)
	return pathOf(w.in)
}

// pathWalk is the state of finding a file's active path (activePath).
type pathWalk struct {
	f     *ccFile
	nodes *nodeList
	side  bool
	// scope lists the nodes of the file's own side, in file order; index
	// maps a uuid to the first of them that has it; copyOf marks the later
	// records with the same uuid and content; in marks the path.
	scope  []int
	index  map[string]int
	copyOf map[int]bool
	in     []bool
}

// indexScope lists the scope's nodes and indexes their uuids. It returns
// the conversation records without a parent, those without a uuid, and
// those that reuse the uuid of a record with other content.
func (w *pathWalk) indexScope() (roots, noUUID, clash []int) {
	w.scope = make([]int, 0, w.nodes.len())
	for i := range w.nodes.len() {
		if w.nodes.at(i).sidechain == w.side {
			w.scope = append(w.scope, i)
		}
	}
	w.index = make(map[string]int, w.nodes.len())
	w.copyOf = map[int]bool{}
	for _, i := range w.scope {
		nd := w.nodes.at(i)
		if nd.uuid != "" {
			if j, ok := w.index[nd.uuid]; ok {
				if other := w.nodes.at(j); nd.isConversation() && other.isConversation() && nd.fingerprint() != other.fingerprint() {
					clash = append(clash, i)
				} else {
					w.copyOf[i] = true
				}
				continue
			}
			w.index[nd.uuid] = i
		}
		if !nd.isConversation() {
			continue
		}
		if nd.uuid == "" {
			noUUID = append(noUUID, i)
		}
		if nd.parent == "" && !w.copyOf[i] && !nd.compactSummary {
			roots = append(roots, i)
		}
	}
	return roots, noUUID, clash
}

// leaf returns the last conversation record of the scope that is not a
// copy, or -1.
func (w *pathWalk) leaf() int {
	for k := len(w.scope) - 1; k >= 0; k-- {
		if i := w.scope[k]; w.nodes.at(i).isConversation() && !w.copyOf[i] {
			return i
		}
	}
	return -1
}

// untrusted says why the parentUuid chain cannot be trusted, or "".
func (w *pathWalk) untrusted(roots, noUUID, clash []int) string {
	var why []string
	if len(roots) > 1 {
		why = append(why, fmt.Sprintf("%d records without a parent (lines %s)", len(roots), lineList(w.nodes, roots)))
	}
	if len(noUUID) > 0 {
		why = append(why, fmt.Sprintf("%d records without a uuid (lines %s)", len(noUUID), lineList(w.nodes, noUUID)))
	}
	if len(clash) > 0 {
		why = append(why, fmt.Sprintf("%d records reuse the uuid of a different record (lines %s)", len(clash), lineList(w.nodes, clash)))
	}
	return strings.Join(why, "; ")
}

// nearestReal is the nearest real record before position i that is not
// on the path yet, or -1.
func (w *pathWalk) nearestReal(i int) int {
	for j := i - 1; j >= 0; j-- {
		if nd := w.nodes.at(j); !w.in[j] && nd.sidechain == w.side && !w.copyOf[j] && nd.real() {
			return j
		}
	}
	return -1
}

// walk marks the path from the leaf up to the root.
func (w *pathWalk) walk(leaf int) {
	for cur := leaf; cur >= 0; {
		w.in[cur] = true
		nd := w.nodes.at(cur)
		if !nd.real() {
			cur = w.nearestReal(cur)
			continue
		}
		next := nd.parent
		if next == "" && (nd.kind == nodeBoundary || nd.kind == nodeMicroBoundary) {
			next = nd.logicalParent
		}
		if next == "" && nd.compactSummary {
			// Older versions open a new root with the summary: the history
			// before it is what was compacted.
			cur = w.nearestReal(cur)
			continue
		}
		if next == "" {
			return
		}
		p, ok := w.index[next]
		if !ok {
			p = w.dangling(cur, next)
		}
		if p >= 0 && w.in[p] {
			w.f.problem(nd.line, "parentUuid %s closes a cycle (the record on line %d is already on the path); the conversation starts here", next, w.nodes.at(p).line)
			return
		}
		cur = p
	}
}

// dangling links node cur, whose parent line is missing (lost to
// corruption, or the file starts mid-session), to the nearest earlier
// record, and reports it in sessions and subagents. It returns that
// record, or -1.
func (w *pathWalk) dangling(cur int, parent string) int {
	p := -1
	for j := cur - 1; j >= 0; j-- {
		if !w.in[j] && w.nodes.at(j).sidechain == w.side {
			p = j
			break
		}
	}
	if k := w.f.t.Kind; k != transcript.KindSession && k != transcript.KindSubagent {
		return p
	}
	line := w.nodes.at(cur).line
	if p >= 0 {
		w.f.problem(line, "parentUuid %s is not in the file; linked to the record on line %d", parent, w.nodes.at(p).line)
	} else {
		w.f.problem(line, "parentUuid %s is not in the file; the conversation starts here", parent)
	}
	return p
}

// pullResponses adds the lines of the same API responses that the walk
// skipped (older versions chain parallel tool calls so that only some
// lines are ancestors).
func (w *pathWalk) pullResponses() {
	var ids map[string]bool // the ids on the path, listed at the first record off it that may be pulled
	for i := range w.nodes.len() {
		nd := w.nodes.at(i)
		if w.in[i] || nd.kind != nodeAssistant || nd.sidechain != w.side || nd.msgID == "" {
			continue
		}
		if ids == nil {
			ids = w.pathMessageIDs()
		}
		if ids[nd.msgID] {
			w.in[i] = true
		}
	}
}

// pathMessageIDs returns the message ids of the assistant records on the
// path.
func (w *pathWalk) pathMessageIDs() map[string]bool {
	ids := map[string]bool{}
	for i := range w.nodes.len() {
		if nd := w.nodes.at(i); w.in[i] && nd.kind == nodeAssistant && nd.msgID != "" {
			ids[nd.msgID] = true
		}
	}
	return ids
}

// pullResults adds the tool results of calls on the path whose result is
// off the walk: a user record of results only, hanging off the path, all
// of whose results answer calls on the path that have none yet.
func (w *pathWalk) pullResults() {
	// The calls and results on the path, listed at the first record off it
	// that may be pulled (before any record is pulled).
	var calls, answered map[string]bool
	for i := range w.nodes.len() {
		nd := w.nodes.at(i)
		if w.in[i] || nd.kind != nodeUser || nd.sidechain != w.side || len(nd.blocks) == 0 {
			continue
		}
		if p, ok := w.index[nd.parent]; !ok || !w.in[p] {
			continue
		}
		if calls == nil {
			calls, answered = w.pathToolIDs()
		}
		pull := true
		for _, b := range nd.blocks {
			if b.Kind != transcript.BlockToolResult || !calls[b.ToolID] || answered[b.ToolID] {
				pull = false
				break
			}
		}
		if pull {
			w.in[i] = true
			for _, b := range nd.blocks {
				answered[b.ToolID] = true
			}
		}
	}
}

// pathToolIDs returns the ids of the tool uses and of the tool results on
// the path.
func (w *pathWalk) pathToolIDs() (calls, answered map[string]bool) {
	calls, answered = map[string]bool{}, map[string]bool{}
	for i := range w.nodes.len() {
		if !w.in[i] {
			continue
		}
		for _, b := range w.nodes.at(i).blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				calls[b.ToolID] = true
			case transcript.BlockToolResult:
				answered[b.ToolID] = true
			}
		}
	}
	return calls, answered
}

// pathOf lists the indices set in in.
func pathOf(in []bool) []int {
	var out []int
	for i, ok := range in {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// leftOut counts the scope's conversation records that are not on the
// path, by reason: a copy of an earlier record, or another branch.
func (f *ccFile) leftOut(scope []int, in []bool, copyOf map[int]bool) {
	for _, i := range scope {
		nd := f.nodes.at(i)
		switch {
		case in[i] || !nd.isConversation():
		case copyOf[i]:
			f.t.Stats.LeaveOut("duplicate_uuid")
		case nd.kind == nodeAssistant && nd.model == "<synthetic>":
			f.t.Stats.LeaveOut("synthetic")
		default:
			f.t.Stats.LeaveOut("branch")
		}
	}
}

// lineList renders the lines of some nodes, at most five.
func lineList(nodes *nodeList, idx []int) string {
	var parts []string
	for k, i := range idx {
		if k == 5 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprint(nodes.at(i).line))
	}
	return strings.Join(parts, ",")
}

// messages builds the model-visible messages and the recorded compactions
// from the active path, in file order.
func (f *ccFile) messages(path []int) {
	t := f.t
	msgs := make([]transcript.Message, 0, len(path))
	var usages []transcript.Usage // the messages' usage, allocated in chunks
	for k, i := range path {
		nd := f.nodes.at(i)
		switch nd.kind {
		case nodeBoundary, nodeMicroBoundary:
			c := *nd.compaction
			c.MessageIndex = len(msgs)
			t.Compactions = append(t.Compactions, c)
		case nodeUser:
			if nd.compactSummary {
				f.summary(nd, len(msgs))
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
			m.Blocks = f.responseBlocks(path[k:])
			if u, ok := f.usage[nd.msgID]; ok && (f.scope[0].calls[nd.msgID] || f.scope[1].calls[nd.msgID]) {
				if len(usages) == cap(usages) {
					usages = make([]transcript.Usage, 0, 32)
				}
				usages = append(usages, u)
				m.Usage = &usages[len(usages)-1]
			}
			msgs = append(msgs, m)
		}
	}
	orderResults(msgs)
	commandTurns(msgs)
	t.Messages = msgs
	f.checkPairs()
}

// summary records a compaction summary that comes before message index
// at: it completes the compact boundary just before it, or stands for a
// compaction of its own.
func (f *ccFile) summary(nd *node, at int) {
	t := f.t
	n := len(t.Compactions)
	if n > 0 && t.Compactions[n-1].Kind == transcript.CompactFull && t.Compactions[n-1].Summary == "" {
		t.Compactions[n-1].Summary = nd.summaryText
		return
	}
	t.Compactions = append(t.Compactions, transcript.Compaction{
		Kind: transcript.CompactFull, MessageIndex: at, Summary: nd.summaryText, Line: nd.line})
}

// responseBlocks returns the blocks of the assistant node path[0] in a
// slice with room for those of the later lines of the same API response
// that follow it (past tool results and injected content, as sameResponse
// looks back), so that appending them does not grow it step by step.
func (f *ccFile) responseBlocks(path []int) []transcript.Block {
	first := f.nodes.at(path[0])
	n := len(first.blocks)
	for _, i := range path[1:] {
		nd := f.nodes.at(i)
		if nd.kind == nodeAssistant {
			if nd.msgID != first.msgID {
				break
			}
			n += len(nd.blocks)
		}
	}
	if n == len(first.blocks) || first.msgID == "" {
		return first.blocks
	}
	return append(make([]transcript.Block, 0, n), first.blocks...)
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
	calls, results := make(map[string]int, len(msgs)), make(map[string]bool, len(msgs))
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
		Prompt: nd.command,
	}
}

// commandTurns makes a slash command the user typed open its turn, with
// the command and its arguments as the prompt. A local command (its output
// follows as <local-command-stdout>, and no model call answers it) stays
// harness content.
func commandTurns(msgs []transcript.Message) {
	for i := range msgs {
		m := &msgs[i]
		if m.Prompt == "" {
			continue
		}
		local := false
		if i+1 < len(msgs) && msgs[i+1].Role == transcript.RoleUser {
			next := strings.TrimSpace(msgs[i+1].Text())
			local = strings.HasPrefix(next, "<local-command-stdout>") || strings.HasPrefix(next, "<local-command-stderr>")
		}
		if local {
			m.Prompt = ""
			continue
		}
		m.IsMeta = false
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
		uses := 0
		for _, b := range msgs[a].Blocks {
			if b.Kind == transcript.BlockToolUse {
				uses++
			}
		}
		if uses < 2 {
			continue // no order to restore (nor a map to build)
		}
		pos := make(map[string]int, uses)
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
		slices.SortStableFunc(run, func(x, y transcript.Message) int { return cmp.Compare(key(&x), key(&y)) })
	}
}
