package loader

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// ChatGPTFormat names the ChatGPT data export reader.
const ChatGPTFormat = "chatgpt"

func init() { Register(chatGPT{}) }

// chatGPT reads ChatGPT data exports: conversations.json, one JSON array of
// conversations, or the .zip the export arrives in (zip.go), or a single
// conversation object.
//
//   - The array is streamed one conversation at a time (scanValues); each
//     conversation is a transcript with its conversation_id (or id) as id,
//     made distinct within the file when repeated.
//   - A conversation's messages are the nodes of its "mapping" tree, each
//     {id, message, parent, children}. The active conversation is the walk
//     from current_node up through the parents to the root, reversed; with no
//     current_node, the walk starts at the newest leaf (latest create_time,
//     later in the mapping on ties). A parent missing from the mapping ends
//     the walk there and is reported; a cycle stops it and is reported.
//   - Nodes without a message (the client-created root) are skipped.
//     author.role system/user/assistant/tool; content_type text and
//     multimodal_text (parts: strings, and image_asset_pointer objects whose
//     width and height give the image's pixels), code (an assistant message
//     addressed to a tool: recipient other than "all" is a tool call named
//     after the recipient), execution_output and other tool output (the
//     tool's result, paired with the open call), thoughts (thinking),
//     user_editable_context (custom instructions: harness content). UI-only
//     content (reasoning_recap, hidden empty system messages) is ignored by
//     kind; an unknown content_type is reported and read as text when it
//     has any.
//   - Exports carry no usage: Usage stays nil and rulers estimate.
//
// Its records are the mapping's nodes. Messages carry the line where their
// node starts.
type chatGPT struct{}

func (chatGPT) Name() string { return ChatGPTFormat }

func (x chatGPT) Sniff(path string, head []byte) int { return x.sniffShape(path, head, shapeOf(head)) }

func (chatGPT) sniffShape(path string, head []byte, h headShape) int {
	score := 0
	switch {
	case h.Has("mapping") && (h.Has("current_node") || h.Has("conversation_id") || h.Has("create_time")):
		score = 10
	case startsJSONDoc(head) && bytes.Contains(head, []byte(`"mapping"`)) && bytes.Contains(head, []byte(`"author"`)):
		score = 6
	default:
		return 0
	}
	if strings.EqualFold(baseName(path), "conversations.json") || strings.HasSuffix(strings.ToLower(baseName(path)), ".zip") {
		score++
	}
	return score
}

func (chatGPT) Read(src *Source, emit func(*transcript.Transcript) error) error {
	return readExport(src, ChatGPTFormat, readChatGPTConversation, emit)
}

// cgNode is one mapping node, read as it is split off.
type cgNode struct {
	id, parent string
	line       int
	created    float64
	msg        *fastjson.Value // nil for a node without a message
	hasKids    bool
}

// readChatGPTConversation turns one conversation object into a transcript.
// The mapping is split into its nodes and each node parsed on its own.
func readChatGPTConversation(p *fastjson.Parser, path, st string, v *jsonValue, ids uniqueIDs) *transcript.Transcript {
	b := newBuilder(path, ChatGPTFormat)
	where := fmt.Sprintf("conversation %d (byte %d)", v.Index, v.Offset)
	b.t.ID = ids.get(fmt.Sprintf("%s#%d", st, v.Index))
	fields, err := splitObject(v.Data)
	if err != nil {
		b.record()
		if c := parseOne(p, b, v.Data, v.Line, where); c != nil {
			b.bad(v.Line, "%s: %v", where, err)
		}
		return b.finish()
	}
	lines := newLineIndex(v.Data, v.Line)
	mapping, current := chatGPTHead(p, b, fields, ids)
	if len(mapping.Value) == 0 || mapping.Value[0] != '{' {
		b.record()
		b.bad(v.Line, `%s has no "mapping" object`, where)
		return b.finish()
	}
	nodeFields, err := splitObject(mapping.Value)
	if err != nil {
		b.record()
		b.bad(lines.at(mapping.Offset), "%s, mapping: %v", where, err)
		return b.finish()
	}
	nodes, index := chatGPTNodes(b, nodeFields, lines, mapping.Offset, where)
	for _, i := range chatGPTPath(b, nodes, index, current, where) {
		addChatGPTMessage(b, &nodes[i], where)
	}
	if b.t.Model == "" {
		for i := range b.t.Messages {
			if m := b.t.Messages[i].Model; m != "" {
				b.t.Model = m
			}
		}
	}
	return b.finish()
}

// chatGPTHead reads a conversation's fields other than its mapping, which
// it returns unparsed, with the current node's id.
func chatGPTHead(p *fastjson.Parser, b *builder, fields []jsonField, ids uniqueIDs) (mapping jsonField, current string) {
	for _, f := range fields {
		switch f.Key {
		case "mapping":
			mapping = f
		case "current_node":
			if s, err := p.ParseBytes(f.Value); err == nil {
				current = str(s)
			}
		case "conversation_id", "id":
			if s, err := p.ParseBytes(f.Value); err == nil && str(s) != "" && b.t.SessionID == "" {
				delete(ids, b.t.ID)
				b.t.SessionID = str(s)
				b.t.ID = ids.get(b.t.SessionID)
			}
		case "default_model_slug":
			if s, err := p.ParseBytes(f.Value); err == nil {
				b.t.Model = str(s)
			}
		}
	}
	return mapping, current
}

// chatGPTNodes parses the nodes of a conversation's mapping, which starts
// at mapOff, each a record, and indexes them by id. Each node is parsed
// with a parser of its own: the message values are kept until the walk is
// done.
func chatGPTNodes(b *builder, nodeFields []jsonField, lines *lineIndex, mapOff int, where string) ([]cgNode, map[string]int) {
	var nodes []cgNode
	index := map[string]int{}
	for _, nf := range nodeFields {
		b.record()
		line := lines.at(mapOff + nf.Offset)
		var np fastjson.Parser
		nv, err := np.ParseBytes(nf.Value)
		if err != nil {
			b.bad(line, "%s, mapping[%q]: malformed JSON: %s", where, nf.Key, shortErr(err))
			continue
		}
		if nv.Type() != fastjson.TypeObject {
			b.bad(line, "%s, mapping[%q] is a %s, want an object", where, nf.Key, nv.Type())
			continue
		}
		nd := cgNode{id: nf.Key, parent: str(nv, "parent"), line: line, hasKids: len(nv.GetArray("children")) > 0}
		if m := nv.Get("message"); m != nil && m.Type() == fastjson.TypeObject {
			nd.msg = m
			nd.created = m.GetFloat64("create_time")
		}
		index[nd.id] = len(nodes)
		nodes = append(nodes, nd)
	}
	return nodes, index
}

// chatGPTPath returns the nodes of the active branch, root first.
func chatGPTPath(b *builder, nodes []cgNode, index map[string]int, current, where string) []int {
	leaf := -1
	if j, ok := index[current]; ok {
		leaf = j
	} else {
		if current != "" {
			b.problem(0, "%s: current_node %s is not in the mapping; the newest leaf is used", where, current)
		}
		order := make([]int, len(nodes))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(x, y int) bool { return nodes[order[x]].created < nodes[order[y]].created })
		for k := len(order) - 1; k >= 0; k-- {
			if !nodes[order[k]].hasKids {
				leaf = order[k]
				break
			}
		}
	}
	in := make([]bool, len(nodes))
	var path []int
	for cur := leaf; cur >= 0; {
		if in[cur] {
			b.problem(nodes[cur].line, "%s: cycle in the mapping's parent links at node %s; the conversation starts after it", where, nodes[cur].id)
			break
		}
		in[cur] = true
		path = append(path, cur)
		parent := nodes[cur].parent
		if parent == "" {
			break
		}
		next, ok := index[parent]
		if !ok {
			b.problem(nodes[cur].line, "%s: parent %s of node %s is not in the mapping; the conversation starts there", where, parent, nodes[cur].id)
			break
		}
		cur = next
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	// Nodes off the path are accounted for: those with a message are another
	// branch, those without are structure.
	for i := range nodes {
		switch {
		case in[i]:
		case nodes[i].msg == nil:
			b.t.Stats.Ignore("empty node")
		default:
			b.t.Stats.Ignore("other branch")
			b.t.Stats.LeaveOut("branch")
		}
	}
	return path
}

// cgIgnored are content types that are interface state, not model context.
var cgIgnored = map[string]bool{"reasoning_recap": true}

// addChatGPTMessage adds the message of one node on the active path.
func addChatGPTMessage(b *builder, nd *cgNode, where string) {
	m := nd.msg
	if m == nil {
		b.t.Stats.Ignore("empty node")
		return
	}
	role := str(m, "author", "role")
	ct := str(m, "content", "content_type")
	meta := m.Get("metadata")
	base := transcript.Message{UUID: nd.id, Line: nd.line}
	if ts := m.GetFloat64("create_time"); ts > 0 {
		base.Timestamp = fmt.Sprintf("%.3f", ts)
	}
	if cgIgnored[ct] {
		b.t.Stats.Ignore(ct)
		return
	}
	blocks, images := chatGPTParts(b, m.Get("content"), ct, nd.line, where)
	if len(blocks) == 0 && images == 0 {
		b.t.Stats.Ignore("empty message")
		return
	}
	switch role {
	case "system":
		msg := base
		msg.Role, msg.Blocks = transcript.RoleSystem, blocks
		b.add(msg)
	case "user":
		msg := base
		msg.Role, msg.Blocks = transcript.RoleUser, blocks
		if ct == "user_editable_context" || meta.GetBool("is_visually_hidden_from_conversation") {
			msg.IsMeta = true
		}
		b.add(msg)
	case "assistant":
		msg := base
		msg.Role = transcript.RoleAssistant
		msg.Model = str(meta, "model_slug")
		msg.Blocks = blocks
		if recipient := str(m, "recipient"); recipient != "" && recipient != "all" {
			msg.Blocks = []transcript.Block{chatGPTCall(b, recipient, blocks)}
		}
		b.add(msg)
	case "tool":
		msg := base
		msg.Role, msg.Blocks = transcript.RoleTool, []transcript.Block{chatGPTResult(m, meta, ct, blocks)}
		b.add(msg)
	default:
		b.bad(nd.line, "%s, node %s: unknown author role %q, message skipped", where, nd.id, role)
		return
	}
	b.parsed()
}

// chatGPTCall makes the tool call an assistant message addressed to a
// tool (recipient) stands for, its text the input.
func chatGPTCall(b *builder, recipient string, blocks []transcript.Block) transcript.Block {
	var input strings.Builder // not +=, which copies the text so far per part
	for _, bl := range blocks {
		input.WriteString(bl.Text)
	}
	return transcript.Block{Kind: transcript.BlockToolUse, ToolID: b.newID("call-"),
		ToolName: recipient, Input: jsonObject([]string{"input"}, []string{input.String()})}
}

// chatGPTResult makes a tool message one tool result: its texts joined,
// its images counted, an error when the tool failed.
func chatGPTResult(m, meta *fastjson.Value, ct string, blocks []transcript.Block) transcript.Block {
	var text strings.Builder
	for _, bl := range blocks {
		if bl.Kind == transcript.BlockText {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(bl.Text)
		}
	}
	res := transcript.Block{Kind: transcript.BlockToolResult, ToolName: str(m, "author", "name"), Text: text.String()}
	for _, bl := range blocks {
		if bl.Kind == transcript.BlockImage {
			res.Images += bl.Images
			res.SizedImages += bl.SizedImages
			res.ImagePixels += bl.ImagePixels
			res.ImageTokens += bl.ImageTokens
		}
	}
	res.IsError = ct == "system_error" || str(meta, "aggregate_result", "status") == "failed_with_in_kernel_exception"
	return res
}

// chatGPTParts converts a message's content into blocks; it also returns
// how many images it held.
func chatGPTParts(b *builder, c *fastjson.Value, ct string, line int, where string) ([]transcript.Block, int) {
	if c == nil {
		return nil, 0
	}
	var ps cgParts
	switch ct {
	case "text", "multimodal_text":
		for _, part := range c.GetArray("parts") {
			ps.part(b, part, line, where)
		}
	case "code", "execution_output", "system_error", "computer_output":
		ps.text(firstStr(c, "text", "output"))
	case "thoughts":
		var parts []string
		for _, th := range c.GetArray("thoughts") {
			if s := firstStr(th, "content", "summary"); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			ps.out = append(ps.out, transcript.Block{Kind: transcript.BlockThinking, Text: strings.Join(parts, "\n")})
		}
	case "tether_browsing_display":
		ps.text(firstStr(c, "result", "summary"))
	case "tether_quote":
		ps.text(strings.TrimSpace(str(c, "title") + "\n" + str(c, "text")))
	case "user_editable_context":
		ps.text(strings.TrimSpace(str(c, "user_profile") + "\n" + str(c, "user_instructions")))
	case "model_editable_context":
		ps.text(str(c, "model_set_context"))
	default:
		t := firstStr(c, "text", "result")
		if t == "" {
			var parts []string
			for _, part := range c.GetArray("parts") {
				if part.Type() == fastjson.TypeString {
					parts = append(parts, string(part.GetStringBytes()))
				}
			}
			t = strings.Join(parts, "\n")
		}
		if t != "" {
			b.problem(line, "%s: unknown content_type %q read as text", where, ct)
			ps.text(t)
		} else {
			b.problem(line, "%s: unknown content_type %q skipped", where, ct)
		}
	}
	return ps.out, ps.images
}

// cgParts collects the blocks of a ChatGPT message's content.
type cgParts struct {
	out    []transcript.Block
	images int
}

// text adds a text block, unless s is blank.
func (ps *cgParts) text(s string) {
	if strings.TrimSpace(s) != "" {
		ps.out = append(ps.out, transcript.Block{Kind: transcript.BlockText, Text: s})
	}
}

// part adds one of the parts of a text or multimodal_text content.
func (ps *cgParts) part(b *builder, part *fastjson.Value, line int, where string) {
	switch part.Type() {
	case fastjson.TypeString:
		ps.text(string(part.GetStringBytes()))
	case fastjson.TypeObject:
		switch pt := str(part, "content_type"); pt {
		case "image_asset_pointer":
			ps.images++
			bl := transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: part.GetInt("size_bytes")}
			addImageSize(&bl, part.GetInt("width"), part.GetInt("height"))
			ps.out = append(ps.out, bl)
		case "audio_transcription":
			ps.text(str(part, "text"))
		case "audio_asset_pointer", "real_time_user_audio_video_asset_pointer":
			// Audio the model heard; its transcription is a part of its own.
		default:
			if t := str(part, "text"); t != "" {
				ps.text(t)
			} else {
				b.problem(line, "%s: unknown content part %q skipped", where, pt)
			}
		}
	}
}
