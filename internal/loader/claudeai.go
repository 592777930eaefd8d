package loader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// ClaudeAIFormat names the Claude.ai data export reader.
const ClaudeAIFormat = "claude-ai"

func init() { Register(claudeAI{}) }

// claudeAI reads Claude.ai data exports: conversations.json, one JSON array
// of conversations (real ones are hundreds of MB on a single line), or the
// .zip the export arrives in (see zip.go), or a single conversation object.
//
//   - The array is streamed one conversation at a time (scanValues), so
//     memory is bounded by the largest conversation; each conversation is a
//     transcript, in file order, with its uuid as id (made distinct within the
//     file when repeated).
//   - chat_messages[].parent_message_uuid forms a tree when present: the
//     active conversation is the walk from current_leaf_message_uuid, or else
//     from the newest leaf (latest created_at, later in the array on ties), up
//     to the root, as for Claude Code. A parent missing from the conversation
//     is bridged to the nearest earlier message and reported; a cycle stops
//     the walk and is reported. Without any parent links the array order is
//     the conversation.
//   - sender human/assistant; content blocks text, thinking, tool_use,
//     tool_result (server-side tools: the result sits inside the assistant
//     message, so the message is split into assistant / tool / assistant
//     messages at each result); token_budget and flag blocks are not model
//     text and are skipped; an unknown block type is reported, and kept as
//     text when it has a "text" field. A message whose content yields nothing
//     falls back to its flat "text" field; with nothing there either, it is
//     ignored as "empty message" (it still links the tree).
//   - attachments (pasted or uploaded text, with extracted_content) become an
//     injected message after the prompt; files (images, PDFs) become image
//     blocks without data.
//   - exports carry no usage: Usage stays nil and rulers estimate.
//
// Messages and problems carry the line where their chat message starts
// (problems about the whole conversation, where it starts); problems also
// name the conversation by index and byte offset, since one line may hold
// the whole export.
type claudeAI struct{}

func (claudeAI) Name() string { return ClaudeAIFormat }

func (x claudeAI) Sniff(path string, head []byte) int { return x.sniffShape(path, head, shapeOf(head)) }

func (claudeAI) sniffShape(path string, head []byte, h headShape) int {
	score := 0
	switch {
	case h.Has("chat_messages"):
		score = 10
	case startsJSONDoc(head) && bytes.Contains(head, []byte(`"chat_messages"`)):
		score = 6
	default:
		return 0
	}
	base := strings.ToLower(baseName(path))
	if base == "conversations.json" || strings.HasSuffix(base, ".zip") {
		score++
	}
	return score
}

// startsJSONDoc reports whether head starts like a JSON object or array.
func startsJSONDoc(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(head) > 0 && (head[0] == '[' || head[0] == '{')
}

func (claudeAI) Read(src *Source, emit func(*transcript.Transcript) error) error {
	return readExport(src, ClaudeAIFormat, readConversation, emit)
}

// readExport streams a data export's conversations (scanValues), one
// transcript each from conv, with ids made distinct within the file, then
// accounts for what the document held besides them (emitFileProblems).
func readExport(src *Source, format string, conv func(p *fastjson.Parser, path, st string, v *jsonValue, ids uniqueIDs) *transcript.Transcript, emit func(*transcript.Transcript) error) error {
	var p fastjson.Parser
	ids := uniqueIDs{}
	st := stem(src.Path)
	n := 0
	_, problems, err := scanValues(src.R, func(v *jsonValue) error {
		n++
		return emit(conv(&p, src.Path, st, v, ids))
	})
	if err != nil {
		return err
	}
	return emitFileProblems(src.Path, format, st, n, problems, ids, "conversations", emit)
}

// emitFileProblems accounts for what a streamed document held besides its
// values: structural problems, or no value at all. They go on a transcript
// of their own (id <stem>#file), with no messages.
func emitFileProblems(path, format, st string, n int, problems []scanProblem, ids uniqueIDs, what string, emit func(*transcript.Transcript) error) error {
	if len(problems) == 0 && n > 0 {
		return nil
	}
	r := recorder{t: &transcript.Transcript{ID: ids.get(st + "#file"), Path: path, Format: format, Kind: transcript.KindSession}}
	r.scanProblems(problems)
	if n == 0 && len(problems) == 0 {
		r.problem(0, "no %s in the file", what)
	}
	return emit(r.t)
}

// claudeRootParent is the parent Claude.ai gives the first message.
const claudeRootParent = "00000000-0000-4000-8000-000000000000"

// caMessage is one chat_messages entry, converted as it is read.
type caMessage struct {
	uuid, parent, created string
	line                  int // where the entry starts in the file
	hasParent             bool
	role                  transcript.Role
	skip                  bool // unknown sender: reported, not added
	blocks                []transcript.Block
	attach                []transcript.Block // injected attachment text
}

// readConversation turns one conversation object into a transcript. The
// object is split into its members first and chat_messages parsed one
// message at a time, so a 40 MB conversation costs about its text once
// more, not a parse tree several times its size.
//
// Its records are the chat_messages entries. A conversation whose entries
// cannot be told apart (malformed, not an object, no chat_messages array) is
// one bad record, and so is the rest of an array that stops splitting.
func readConversation(p *fastjson.Parser, path, st string, v *jsonValue, ids uniqueIDs) *transcript.Transcript {
	b := newBuilder(path, ClaudeAIFormat)
	where := fmt.Sprintf("conversation %d (byte %d)", v.Index, v.Offset)
	b.t.ID = ids.get(fmt.Sprintf("%s#%d", st, v.Index)) // replaced below when the uuid is known
	c, chat, ok := conversationHead(p, b, v, where)
	if c == nil {
		return b.finish()
	}
	if uuid := str(c, "uuid"); uuid != "" {
		delete(ids, b.t.ID)
		b.t.ID = ids.get(uuid)
		b.t.SessionID = uuid
	}
	b.t.Model = str(c, "model")
	leafUUID := str(c, "current_leaf_message_uuid")

	switch {
	case !ok:
		b.record()
		b.bad(v.Line, `%s has no "chat_messages"`, where)
		return b.finish()
	case string(chat.Value) == "null":
		return b.finish()
	case chat.Value[0] != '[':
		b.record()
		b.bad(v.Line, `%s: "chat_messages" is a %s, want an array`, where, jsonKind(chat.Value))
		return b.finish()
	}
	msgs, tree := chatMessages(p, b, v, chat, where)
	v.Data = nil
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	if tree {
		order = activeBranch(b, msgs, leafUUID, where)
	}
	for _, i := range order {
		addChatMessage(b, &msgs[i])
	}
	return b.finish()
}

// conversationHead parses a conversation without its chat_messages, which
// it returns unparsed (ok false when there are none). It returns a nil
// object, the record accounted for, when the conversation does not parse.
func conversationHead(p *fastjson.Parser, b *builder, v *jsonValue, where string) (c *fastjson.Value, chat jsonField, ok bool) {
	fields, err := splitObject(v.Data)
	if err != nil {
		b.record()
		// Let the parser name the fault (malformed JSON, not an object).
		if c := parseOne(p, b, v.Data, v.Line, where); c != nil {
			b.bad(v.Line, "%s: %v", where, err)
		}
		return nil, chat, false
	}
	skel := []byte{'{'}
	for _, f := range fields {
		if f.Key == "chat_messages" {
			chat, ok = f, true
			continue
		}
		if len(skel) > 1 {
			skel = append(skel, ',')
		}
		key, _ := json.Marshal(f.Key)
		skel = append(append(append(skel, key...), ':'), f.Value...)
	}
	if c = parseOne(p, b, append(skel, '}'), v.Line, where); c == nil {
		b.record()
	}
	return c, chat, ok
}

// chatMessages parses the elements of a conversation's chat_messages, each
// a record. tree says whether any names its parent.
func chatMessages(p *fastjson.Parser, b *builder, v *jsonValue, chat jsonField, where string) (msgs []caMessage, tree bool) {
	lines := newLineIndex(v.Data, v.Line)
	end := 0 // offset in chat after the last element split
	err := splitArray(chat.Value, func(i, off int, elem []byte) {
		b.record()
		end = off + len(elem)
		line := lines.at(chat.Offset + off)
		mwhere := fmt.Sprintf("%s, chat_messages[%d]", where, i)
		it, err := p.ParseBytes(elem)
		lastWins(it)
		if err != nil {
			b.bad(line, "%s: malformed JSON: %s", mwhere, shortErr(err))
			return
		}
		if it.Type() != fastjson.TypeObject {
			b.bad(line, "%s is a %s, want an object", mwhere, it.Type())
			return
		}
		m := readChatMessage(b, it, line, where)
		switch {
		case m.skip: // counted bad
		case len(m.blocks) == 0 && len(m.attach) == 0:
			b.t.Stats.Ignore("empty message")
		default:
			b.parsed()
		}
		tree = tree || m.hasParent
		msgs = append(msgs, m)
	})
	if err != nil {
		b.record() // the rest of the array
		b.bad(lines.at(chat.Offset+end), "%s, chat_messages: %v", where, err)
	}
	return msgs, tree
}

// jsonKind names the kind of JSON value data starts with.
func jsonKind(data []byte) string {
	switch data[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// activeBranch returns the indices of the messages on the active branch,
// root first.
func activeBranch(b *builder, msgs []caMessage, leafUUID string, where string) []int {
	index := make(map[string]int, len(msgs))
	for i := range msgs {
		if msgs[i].uuid == "" {
			continue
		}
		if _, dup := index[msgs[i].uuid]; dup {
			b.problem(msgs[i].line, "%s: message uuid %s appears twice; the later one is used", where, msgs[i].uuid)
		}
		index[msgs[i].uuid] = i
	}
	leaf := branchLeaf(msgs, index, leafUUID)
	in := make([]bool, len(msgs))
	free := newFreeBelow(len(msgs))
	var path []int
	for cur := leaf; cur >= 0; {
		if in[cur] {
			b.problem(msgs[cur].line, "%s: cycle in parent_message_uuid links at message %s; the conversation starts after it", where, msgs[cur].uuid)
			break
		}
		in[cur] = true
		free.take(cur)
		path = append(path, cur)
		parent := msgs[cur].parent
		if !msgs[cur].hasParent || parent == "" || parent == claudeRootParent {
			break
		}
		next, ok := index[parent]
		if !ok {
			next = missingParent(b, msgs, free, cur, where)
		}
		cur = next
	}
	slices.Reverse(path)
	return path
}

// branchLeaf returns the message the active branch ends with: the one the
// conversation names, else the newest message without a child, else (the
// links form cycles) the last.
func branchLeaf(msgs []caMessage, index map[string]int, leafUUID string) int {
	if j, ok := index[leafUUID]; ok && leafUUID != "" {
		return j
	}
	hasChild := make([]bool, len(msgs))
	for i := range msgs {
		if j, ok := index[msgs[i].parent]; ok && j != i {
			hasChild[j] = true
		}
	}
	leaf := -1
	var best time.Time
	for i := range msgs {
		if hasChild[i] {
			continue
		}
		ts, _ := time.Parse(time.RFC3339Nano, msgs[i].created)
		if leaf < 0 || !ts.Before(best) {
			leaf, best = i, ts
		}
	}
	if leaf < 0 {
		leaf = len(msgs) - 1
	}
	return leaf
}

// missingParent links message cur, whose parent is not in the
// conversation, to the nearest earlier message not on the branch, and
// reports it. It returns that message, or -1.
func missingParent(b *builder, msgs []caMessage, free *freeBelow, cur int, where string) int {
	next := free.at(cur - 1)
	parent := msgs[cur].parent
	if next >= 0 {
		b.problem(msgs[cur].line, "%s: parent_message_uuid %s of message %s is not in the conversation; linked to the message before it (%s)", where, parent, msgs[cur].uuid, msgs[next].uuid)
	} else {
		b.problem(msgs[cur].line, "%s: parent_message_uuid %s of message %s is not in the conversation; the conversation starts there", where, parent, msgs[cur].uuid)
	}
	return next
}

// readChatMessage converts one chat_messages entry.
func readChatMessage(b *builder, v *fastjson.Value, line int, where string) caMessage {
	m := caMessage{uuid: str(v, "uuid"), created: str(v, "created_at"), line: line}
	if pv := v.Get("parent_message_uuid"); pv != nil && pv.Type() == fastjson.TypeString {
		m.parent, m.hasParent = string(pv.GetStringBytes()), true
	}
	where = fmt.Sprintf("%s, message %s", where, m.uuid)
	switch sender := str(v, "sender"); sender {
	case "human", "user":
		m.role = transcript.RoleUser
	case "assistant":
		m.role = transcript.RoleAssistant
	default:
		b.bad(line, "%s: unknown sender %q, message skipped", where, sender)
		m.skip = true
		return m
	}
	m.blocks = claudeBlocks(b, v.Get("content"), line, where)
	if len(m.blocks) == 0 {
		if t := str(v, "text"); t != "" {
			m.blocks = []transcript.Block{{Kind: transcript.BlockText, Text: t}}
		}
	}
	if m.role != transcript.RoleUser {
		return m
	}
	files := v.GetArray("files_v2")
	if len(files) == 0 {
		files = v.GetArray("files")
	}
	for _, f := range files {
		mt := firstStr(f, "file_type", "mime_type")
		if !strings.Contains(mt, "/") {
			mt = "" // a kind such as "image", not a media type
		}
		m.blocks = append(m.blocks, transcript.Block{Kind: transcript.BlockImage, Images: 1, MediaType: mt})
	}
	for _, a := range v.GetArray("attachments") {
		text := str(a, "extracted_content")
		if text == "" {
			continue
		}
		if name := str(a, "file_name"); name != "" {
			text = name + "\n" + text
		}
		m.attach = append(m.attach, transcript.Block{Kind: transcript.BlockInjected, InjectedKind: "attachment", Text: text})
	}
	return m
}

// addChatMessage adds the messages one converted entry becomes.
func addChatMessage(b *builder, m *caMessage) {
	if m.skip {
		return
	}
	base := transcript.Message{UUID: m.uuid, Timestamp: m.created, Line: m.line}
	if m.role == transcript.RoleUser {
		// Tool results in a human message (not seen in exports) make it a
		// tool message, like Claude Code's.
		if len(m.blocks) > 0 {
			msg := base
			msg.Role, msg.Blocks = transcript.RoleUser, m.blocks
			if allResults(m.blocks) {
				msg.Role = transcript.RoleTool
			}
			b.add(msg)
		}
		if len(m.attach) > 0 {
			inj := base
			inj.Role, inj.Blocks, inj.IsMeta = transcript.RoleUser, m.attach, true
			b.add(inj)
		}
		return
	}
	// Assistant: split at tool results, which the server ran between calls.
	var cur []transcript.Block
	flush := func(role transcript.Role) {
		if len(cur) == 0 {
			return
		}
		msg := base
		msg.Role, msg.Blocks = role, cur
		if role == transcript.RoleAssistant {
			msg.Model = b.t.Model
		}
		b.add(msg)
		cur = nil
	}
	for _, bl := range m.blocks {
		isResult := bl.Kind == transcript.BlockToolResult
		if n := len(cur); n > 0 && (cur[n-1].Kind == transcript.BlockToolResult) != isResult {
			if isResult {
				flush(transcript.RoleAssistant)
			} else {
				flush(transcript.RoleTool)
			}
		}
		cur = append(cur, bl)
	}
	if len(cur) > 0 && cur[len(cur)-1].Kind == transcript.BlockToolResult {
		flush(transcript.RoleTool)
	} else {
		flush(transcript.RoleAssistant)
	}
}

func allResults(blocks []transcript.Block) bool {
	for i := range blocks {
		if blocks[i].Kind != transcript.BlockToolResult {
			return false
		}
	}
	return true
}

// claudeBlocks converts an Anthropic-style content array (Claude.ai export
// messages). A string content is one text block.
func claudeBlocks(b *builder, c *fastjson.Value, line int, where string) []transcript.Block {
	if c == nil {
		return nil
	}
	switch c.Type() {
	case fastjson.TypeString:
		if s := c.GetStringBytes(); len(s) > 0 {
			return []transcript.Block{{Kind: transcript.BlockText, Text: string(s)}}
		}
		return nil
	case fastjson.TypeArray:
	case fastjson.TypeNull:
		return nil
	default:
		b.problem(line, "%s: content is a %s, want an array", where, c.Type())
		return nil
	}
	var out []transcript.Block
	for i, it := range c.GetArray() {
		if it.Type() != fastjson.TypeObject {
			b.problem(line, "%s: content[%d] is a %s, skipped", where, i, it.Type())
			continue
		}
		out = claudeBlock(b, it, line, where, out)
	}
	return out
}

// claudeBlock appends the block an Anthropic-style content item becomes.
func claudeBlock(b *builder, it *fastjson.Value, line int, where string, out []transcript.Block) []transcript.Block {
	switch typ := str(it, "type"); typ {
	case "text":
		if t := str(it, "text"); t != "" {
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: t})
		}
	case "thinking":
		out = append(out, transcript.Block{Kind: transcript.BlockThinking, Text: str(it, "thinking"), SignatureLen: len(it.GetStringBytes("signature"))})
	case "redacted_thinking":
		out = append(out, transcript.Block{Kind: transcript.BlockThinking, SignatureLen: len(it.GetStringBytes("data"))})
	case "tool_use", "server_tool_use":
		bl := transcript.Block{Kind: transcript.BlockToolUse, ToolID: str(it, "id"), ToolName: str(it, "name")}
		if in := it.Get("input"); in != nil {
			bl.Input = string(in.MarshalTo(nil))
		}
		out = append(out, bl)
	case "tool_result", "web_search_tool_result", "web_fetch_tool_result":
		bl := transcript.Block{Kind: transcript.BlockToolResult, ToolID: str(it, "tool_use_id"), ToolName: str(it, "name")}
		bl.Text, bl.Images, bl.ImageBytes = textOf(it.Get("content"))
		bl.IsError = it.GetBool("is_error")
		out = append(out, bl)
	case "image":
		n, _ := imageSize(it)
		out = append(out, transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: n, MediaType: str(it, "source", "media_type")})
	case "token_budget", "flag":
		// Interface markers, not model text.
	default:
		if t := str(it, "text"); t != "" {
			b.problem(line, "%s: unknown content block type %q read as text", where, typ)
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: t})
		} else {
			b.problem(line, "%s: unknown content block type %q skipped", where, typ)
		}
	}
	return out
}

// freeBelow finds, among the indices 0..n-1, the nearest one at or below a
// given index that is not yet taken (on the branch being walked). A plain
// scan down is quadratic: a branch that alternates between messages below
// and above a growing run of taken ones crosses the whole run at every
// missing parent. Each taken index points further down, and the pointers
// are shortened as they are followed (path compression), so a walk costs
// about its length.
type freeBelow struct{ down []int }

func newFreeBelow(n int) *freeBelow {
	f := &freeBelow{down: make([]int, n)}
	for i := range f.down {
		f.down[i] = i
	}
	return f
}

// take marks index i taken.
func (f *freeBelow) take(i int) { f.down[i] = i - 1 }

// at returns the largest index <= i not taken, or -1.
func (f *freeBelow) at(i int) int {
	root := i
	for root >= 0 && f.down[root] != root {
		root = f.down[root]
	}
	for i > root {
		i, f.down[i] = f.down[i], root
	}
	return root
}
