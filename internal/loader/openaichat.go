package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// OpenAIChatFormat names the reader of OpenAI-style chat logs.
const OpenAIChatFormat = "openai-chat"

func init() { Register(openAIChat{}) }

// openAIChat reads chat logs in the OpenAI messages shape, which most public
// agent-trajectory datasets also use:
//
//   - The file is JSON lines, a JSON array, or one JSON object. Each row (line
//     or element) holding a message list is one transcript, in file order:
//     {"messages": [...]}, ShareGPT's {"conversations": [{from, value}]}, or
//     {"trajectory": [{role, text}]} (SWE-agent dataset rows); a row that is
//     itself a message list is one too. Rows that are single messages
//     ({role, content}) together make one transcript. The row's id
//     (id, instance_id, traj_id, conversation_id, session_id, uuid) names it,
//     made distinct within the file; else the file's stem (#index after the
//     first).
//   - Roles: system/developer → system; user/human → user;
//     assistant/ai/gpt/model → assistant; tool/function/ipython/observation →
//     tool results. content is a string or a list of parts (text, input_text,
//     output_text, image_url, input_image, and Anthropic-style text, image,
//     thinking, tool_use, tool_result blocks); null is empty.
//   - Native calls: tool_calls[{id, function{name, arguments}}] (arguments is a
//     JSON string, kept when valid JSON) and the older function_call; results
//     pair by tool_call_id, else with the oldest unanswered call (of the same
//     name when the result names its tool).
//   - Calls written in the text, as harnesses without native function calling
//     do, are read as calls too: OpenHands' and SWE-smith's
//     "<function=NAME><parameter=K>V</parameter></function>" (the first such
//     block of an assistant message, as those harnesses parse only one), and
//     in SWE-agent dataset rows the last ``` fenced block of an assistant
//     message (SWE-agent's thought/action convention). The call leaves the
//     text; its input is the parameters as a JSON object; the user message
//     that follows is its observation (a tool result).
//   - A tool result is an error when it says is_error, or when its text ends
//     with OpenHands' "[Command finished with exit code N]" (or starts with
//     "Exit code: N") and N is not 0.
//   - reasoning_content / reasoning / thinking strings become thinking
//     blocks; a "usage" object on a message (OpenAI or Anthropic shape) makes
//     it a recorded call.
//
// Its records are the messages, whatever the layout (a line of JSON lines
// holds a whole row): each is parsed, ignored ("empty message") or bad, and
// carries the line where it starts; a row that is not a message list is one
// bad record. Blank lines between rows are not records.
type openAIChat struct{}

func (openAIChat) Name() string { return OpenAIChatFormat }

func (x openAIChat) Sniff(path string, head []byte) int {
	return x.sniffShape(path, head, shapeOf(head))
}

func (openAIChat) sniffShape(path string, head []byte, h headShape) int {
	switch {
	case h.Has("messages", "messages[].role"),
		h.Has("conversations", "conversations[].from"),
		h.Has("trajectory", "trajectory[].role"):
		return 9
	case h.Has("messages") && !h.Complete:
		return 6
	case h.Has("role") && (h.Has("content") || h.Has("tool_calls")),
		h.Has("[].role") && (h.Has("[].content") || h.Has("[].tool_calls")):
		return 7 // rows that are single messages, or message lists
	case startsJSONDoc(head) && !h.Complete && bytes.Contains(head, []byte(`"messages"`)) && bytes.Contains(head, []byte(`"role"`)):
		return 4
	}
	return 0
}

func (openAIChat) Read(src *Source, emit func(*transcript.Transcript) error) error {
	r := &chatReader{path: src.Path, stem: stem(src.Path), ids: uniqueIDs{}, emit: emit}
	br, ok := src.R.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(src.R, sniffSize)
	}
	src.R = br
	head, _ := br.Peek(sniffSize)
	if jsonLines(head) {
		n, rerr := eachLine(src, func(n int, line []byte, final bool) {
			if r.err != nil {
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				return // blank lines hold no record
			}
			r.value(&jsonValue{Data: line, Index: r.rows, Line: n, EndLine: n}, final)
		})
		if r.err != nil {
			return r.err
		}
		var problems []scanProblem
		if rerr != nil {
			problems = append(problems, scanProblem{Line: n, Reason: rerr.Error()})
		}
		return r.end(problems)
	}
	_, problems, err := scanValues(br, func(v *jsonValue) error {
		r.value(v, false)
		return r.err
	})
	if err != nil {
		return err
	}
	return r.end(problems)
}

// jsonLines reports whether head looks like JSON lines: its first line is a
// complete JSON object or array and another line starts a value. (A file
// holding one compact array is a document whose elements are the rows.)
func jsonLines(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return false
	}
	first := bytes.TrimSpace(head[:i])
	if len(first) == 0 || (first[0] != '{' && first[0] != '[') || fastjson.ValidateBytes(first) != nil {
		return false
	}
	if first[0] == '{' {
		return true // an object line: JSON lines or a one-object file read alike
	}
	next := bytes.TrimLeft(head[i+1:], " \t\r\n")
	return len(next) > 0 && (next[0] == '{' || next[0] == '[')
}

// chatReader is the state of reading one chat log file.
type chatReader struct {
	path, stem string
	ids        uniqueIDs
	emit       func(*transcript.Transcript) error
	err        error
	p          fastjson.Parser
	rows       int
	// bare collects rows that are single messages.
	bare *chatConv
}

// value handles one row. Its records are its messages; a row that is not
// a message list is one bad record.
func (r *chatReader) value(v *jsonValue, final bool) {
	r.rows++
	where := fmt.Sprintf("row %d", v.Index)
	doc, err := r.p.ParseBytes(v.Data)
	lastWins(doc)
	if len(v.Data) > bigValue {
		defer func() { r.p = fastjson.Parser{} }()
	}
	if err != nil {
		v.Data = nil
		r.badRow(nil, v, "%s: %s", where, lineError(err, final))
		return
	}
	data := v.Data
	v.Data = nil
	var list []*fastjson.Value
	listKey := "" // where the list is in the row; "" for the row itself
	fenced := false
	switch doc.Type() {
	case fastjson.TypeArray:
		list = doc.GetArray()
	case fastjson.TypeObject:
		if doc.Exists("role") || doc.Exists("from") {
			if r.bare == nil {
				r.bare = newChatConv(newBuilder(r.path, OpenAIChatFormat), false)
			}
			r.bare.b.record()
			r.bare.message(doc, v.Line, where)
			return
		}
		for _, key := range []string{"messages", "conversations", "trajectory"} {
			if x := doc.Get(key); x != nil && x.Type() == fastjson.TypeArray {
				list, listKey = x.GetArray(), key
				fenced = key == "trajectory"
				break
			}
		}
		if list == nil {
			r.badRow(doc, v, `%s has no "messages" list`, where)
			return
		}
	default:
		r.badRow(doc, v, "%s is a JSON %s, want an object or a message list", where, doc.Type())
		return
	}
	lines := elementLines(data, v.Line, listKey, len(list)) // each message's line
	c := newChatConv(newBuilder(r.path, OpenAIChatFormat), fenced)
	if doc.Type() == fastjson.TypeObject {
		c.b.t.Model = firstStr(doc, "model", "model_name")
	}
	for i, m := range list {
		c.b.record()
		c.message(m, lineOf(lines, i, v.Line), fmt.Sprintf("%s, message %d", where, i))
	}
	r.send(c.b, r.rowID(doc, v.Index))
}

// badRow emits a row that is not a message list: a transcript of one bad
// record.
func (r *chatReader) badRow(doc *fastjson.Value, v *jsonValue, format string, args ...any) {
	b := newBuilder(r.path, OpenAIChatFormat)
	b.record()
	b.bad(v.Line, format, args...)
	r.send(b, r.rowID(doc, v.Index))
}

// rowID names the transcript of a row (doc, when it is an object).
func (r *chatReader) rowID(doc *fastjson.Value, index int) string {
	if doc != nil && doc.Type() == fastjson.TypeObject {
		for _, k := range []string{"id", "instance_id", "traj_id", "conversation_id", "session_id", "uuid"} {
			x := doc.Get(k)
			if x == nil {
				continue
			}
			switch x.Type() {
			case fastjson.TypeString:
				if s := x.GetStringBytes(); len(s) > 0 {
					return string(s)
				}
			case fastjson.TypeNumber:
				return x.String()
			}
		}
	}
	if index == 0 {
		return r.stem
	}
	return fmt.Sprintf("%s#%d", r.stem, index)
}

func (r *chatReader) send(b *builder, id string) {
	if r.err != nil {
		return
	}
	b.t.ID = r.ids.get(id)
	r.err = r.emit(b.finish())
}

// end emits the single-message rows and the file's structural problems.
func (r *chatReader) end(problems []scanProblem) error {
	if r.bare != nil {
		r.send(r.bare.b, r.stem)
		if r.err != nil {
			return r.err
		}
	}
	return emitFileProblems(r.path, OpenAIChatFormat, r.stem, r.rows, problems, r.ids, "messages", r.emit)
}

// chatConv converts one message list.
type chatConv struct {
	b *builder
	// fenced reads SWE-agent's thought/action convention.
	fenced bool
	// awaitObs is the id of a call written in the text, whose observation is
	// the next user message.
	awaitObs string
}

func newChatConv(b *builder, fenced bool) *chatConv { return &chatConv{b: b, fenced: fenced} }

// chatRole maps role names to roles; ok is false for unknown names.
func chatRole(role string) (transcript.Role, bool) {
	switch strings.ToLower(role) {
	case "system", "developer":
		return transcript.RoleSystem, true
	case "user", "human":
		return transcript.RoleUser, true
	case "assistant", "ai", "gpt", "model", "bot":
		return transcript.RoleAssistant, true
	case "tool", "function", "ipython", "observation":
		return transcript.RoleTool, true
	}
	return 0, false
}

// message converts one message and counts its record.
func (c *chatConv) message(m *fastjson.Value, line int, where string) {
	b := c.b
	if m.Type() != fastjson.TypeObject {
		b.bad(line, "%s is a %s, want an object", where, m.Type())
		return
	}
	roleName := firstStr(m, "role", "from")
	role, ok := chatRole(roleName)
	if !ok {
		b.bad(line, "%s: unknown role %q, message skipped", where, roleName)
		return
	}
	content := m.Get("content")
	if content == nil {
		content = m.Get("value") // ShareGPT
	}
	if content == nil || content.Type() == fastjson.TypeNull {
		content = m.Get("text") // SWE-agent dataset rows
	}
	msg := transcript.Message{Role: role, Timestamp: firstStr(m, "timestamp", "created_at"), Line: line}
	blocks := c.parts(content, line, where)
	switch role {
	case transcript.RoleSystem:
		if len(blocks) == 0 {
			if sp := str(m, "system_prompt"); sp != "" {
				blocks = []transcript.Block{{Kind: transcript.BlockText, Text: sp}}
			}
		}
	case transcript.RoleUser:
		blocks = c.userBlocks(&msg, blocks)
	case transcript.RoleTool:
		c.awaitObs = ""
		if !allResults(blocks) || len(blocks) == 0 {
			blocks = []transcript.Block{toolResult(m, blocks)}
		}
	case transcript.RoleAssistant:
		c.awaitObs = ""
		blocks = c.assistant(m, &msg, blocks, line, where)
	}
	if len(blocks) == 0 && msg.Usage == nil {
		b.t.Stats.Ignore("empty message")
		return
	}
	msg.Blocks = blocks
	b.add(msg)
	b.parsed()
}

// userBlocks makes a user message the observation of the action the
// previous assistant message gave as text, or a tool message when it holds
// only tool results.
func (c *chatConv) userBlocks(msg *transcript.Message, blocks []transcript.Block) []transcript.Block {
	if c.awaitObs != "" {
		id := c.awaitObs
		c.awaitObs = ""
		text, images, size := joinBlocks(blocks)
		res := transcript.Block{Kind: transcript.BlockToolResult, ToolID: id, Text: text, Images: images, ImageBytes: size}
		if code, ok := exitStatus(text); ok {
			res.IsError = code != 0
		}
		msg.Role = transcript.RoleTool
		return []transcript.Block{res}
	}
	if len(blocks) > 0 && allResults(blocks) {
		msg.Role = transcript.RoleTool
	}
	return blocks
}

// toolResult makes a tool message's content one tool result, an error when
// flagged or when its text reports a non-zero exit status.
func toolResult(m *fastjson.Value, blocks []transcript.Block) transcript.Block {
	text, images, size := joinBlocks(blocks)
	res := transcript.Block{Kind: transcript.BlockToolResult, ToolID: str(m, "tool_call_id"), ToolName: str(m, "name"),
		Text: text, Images: images, ImageBytes: size}
	if e := m.Get("is_error"); e != nil && e.Type() == fastjson.TypeTrue {
		res.IsError = true
	} else if code, ok := exitStatus(text); ok {
		res.IsError = code != 0
	}
	return res
}

// assistant reads an assistant message's model, usage, reasoning and tool
// calls (native ones, or else an action given in its text).
func (c *chatConv) assistant(m *fastjson.Value, msg *transcript.Message, blocks []transcript.Block, line int, where string) []transcript.Block {
	msg.Model = firstStr(m, "model")
	if msg.Model == "" {
		msg.Model = c.b.t.Model
	}
	var why string
	if msg.Usage, why = usageOf(m.Get("usage")); why != "" {
		c.b.problem(line, "%s: %s", where, why)
	}
	if r := firstStr(m, "reasoning_content", "reasoning", "thinking"); r != "" {
		blocks = append([]transcript.Block{{Kind: transcript.BlockThinking, Text: r}}, blocks...)
	}
	native := false
	for _, tc := range m.GetArray("tool_calls") {
		native = true
		blocks = append(blocks, transcript.Block{Kind: transcript.BlockToolUse, ToolID: str(tc, "id"),
			ToolName: str(tc, "function", "name"), Input: jsonText(str(tc, "function", "arguments"))})
	}
	if fc := m.Get("function_call"); fc != nil && fc.Type() == fastjson.TypeObject {
		native = true
		blocks = append(blocks, transcript.Block{Kind: transcript.BlockToolUse,
			ToolName: str(fc, "name"), Input: jsonText(str(fc, "arguments"))})
	}
	for i := range blocks {
		if blocks[i].Kind == transcript.BlockToolUse {
			native = true
		}
	}
	if !native {
		blocks = c.textCall(blocks)
	}
	return blocks
}

// joinBlocks flattens blocks into one text and their image counts.
func joinBlocks(blocks []transcript.Block) (string, int, int) {
	var parts []string
	images, size := 0, 0
	for i := range blocks {
		images += blocks[i].Images
		size += blocks[i].ImageBytes
		if blocks[i].Text != "" {
			parts = append(parts, blocks[i].Text)
		}
	}
	return strings.Join(parts, "\n"), images, size
}

// parts converts a content value: a string, or a list of OpenAI or
// Anthropic content parts.
func (c *chatConv) parts(content *fastjson.Value, line int, where string) []transcript.Block {
	if content == nil {
		return nil
	}
	switch content.Type() {
	case fastjson.TypeNull:
		return nil
	case fastjson.TypeString:
		if s := content.GetStringBytes(); len(s) > 0 {
			return []transcript.Block{{Kind: transcript.BlockText, Text: string(s)}}
		}
		return nil
	case fastjson.TypeArray:
	default:
		c.b.problem(line, "%s: content is a %s, read as its JSON text", where, content.Type())
		return []transcript.Block{{Kind: transcript.BlockText, Text: string(content.MarshalTo(nil))}}
	}
	var out []transcript.Block
	for i, it := range content.GetArray() {
		if it.Type() == fastjson.TypeString {
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: string(it.GetStringBytes())})
			continue
		}
		if it.Type() != fastjson.TypeObject {
			c.b.problem(line, "%s: content part %d is a %s, skipped", where, i, it.Type())
			continue
		}
		switch typ := str(it, "type"); typ {
		case "text", "input_text", "output_text":
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: str(it, "text")})
		case "refusal":
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: str(it, "refusal")})
		case "image_url", "input_image", "image":
			n, _ := imageSize(it)
			out = append(out, transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: n, MediaType: str(it, "source", "media_type")})
		case "thinking", "redacted_thinking", "tool_use", "tool_result":
			out = claudeBlock(c.b, it, line, where, out)
		default:
			if t := str(it, "text"); t != "" {
				c.b.problem(line, "%s: unknown content part type %q read as text", where, typ)
				out = append(out, transcript.Block{Kind: transcript.BlockText, Text: t})
			} else {
				c.b.problem(line, "%s: unknown content part type %q skipped", where, typ)
			}
		}
	}
	return out
}

// textCall moves a call written in the text of an assistant message into a
// tool_use block, and arms the observation pairing.
func (c *chatConv) textCall(blocks []transcript.Block) []transcript.Block {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Kind != transcript.BlockText {
			continue
		}
		var call transcript.Block
		var rest string
		var ok bool
		if c.fenced {
			call, rest, ok = fencedAction(blocks[i].Text)
		} else {
			call, rest, ok = functionTag(blocks[i].Text)
		}
		if !ok {
			continue
		}
		call.ToolID = c.b.newID("text-call-")
		c.awaitObs = call.ToolID
		out := append([]transcript.Block(nil), blocks[:i]...)
		if strings.TrimSpace(rest) != "" {
			out = append(out, transcript.Block{Kind: transcript.BlockText, Text: rest})
		}
		out = append(out, blocks[i+1:]...)
		return append(out, call)
	}
	return blocks
}

// functionTag finds the first "<function=NAME>...</function>" block of s
// and returns it as a tool_use block, with the text around it.
func functionTag(s string) (transcript.Block, string, bool) {
	const open = "<function="
	i := strings.Index(s, open)
	if i < 0 {
		return transcript.Block{}, "", false
	}
	j := strings.IndexByte(s[i:], '>')
	if j < 0 {
		return transcript.Block{}, "", false
	}
	name := s[i+len(open) : i+j]
	if name == "" || len(name) > 64 || strings.ContainsAny(name, " \t\r\n<\"'") {
		return transcript.Block{}, "", false
	}
	body := s[i+j+1:]
	after := ""
	if k := strings.Index(body, "</function>"); k >= 0 {
		body, after = body[:k], body[k+len("</function>"):]
	}
	var keys, vals []string
	for {
		const popen = "<parameter="
		p := strings.Index(body, popen)
		if p < 0 {
			break
		}
		q := strings.IndexByte(body[p:], '>')
		if q < 0 {
			break
		}
		key := body[p+len(popen) : p+q]
		val := body[p+q+1:]
		if e := strings.Index(val, "</parameter>"); e >= 0 {
			body = val[e+len("</parameter>"):]
			val = val[:e]
		} else {
			body = ""
		}
		val = strings.TrimPrefix(strings.TrimSuffix(val, "\n"), "\n")
		keys, vals = append(keys, key), append(vals, val)
	}
	call := transcript.Block{Kind: transcript.BlockToolUse, ToolName: name, Input: jsonObject(keys, vals)}
	argFields(&call, keys, vals)
	return call, s[:i] + after, true
}

// argFields sets a call's Path and Command from its string arguments as
// Block.InputFields finds them in the JSON object jsonObject renders of
// them, without decoding it again: the last of repeated keys, the first of
// file_path, notebook_path and path that is not empty, command. When one
// of those values is not UTF-8 (the JSON holds it with replacement
// characters), or neither field is found, the call is left to InputFields.
func argFields(call *transcript.Block, keys, vals []string) {
	var path [3]string // file_path, notebook_path, path
	command := ""
	for i, k := range keys {
		var dst *string
		switch k {
		case "file_path":
			dst = &path[0]
		case "notebook_path":
			dst = &path[1]
		case "path":
			dst = &path[2]
		case "command":
			dst = &command
		default:
			continue
		}
		if !utf8.ValidString(vals[i]) {
			return
		}
		*dst = vals[i]
	}
	for _, p := range path {
		if p != "" {
			call.Path = p
			break
		}
	}
	call.Command = command
}

// jsonObject renders string pairs as a JSON object, keys in order.
func jsonObject(keys, vals []string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		k, _ := json.Marshal(keys[i])
		v, _ := json.Marshal(vals[i])
		sb.Write(k)
		sb.WriteByte(':')
		sb.Write(v)
	}
	sb.WriteByte('}')
	return sb.String()
}

// fencedAction finds SWE-agent's action, the last ``` fenced block of s,
// and returns it as a tool_use block with the text before it (the thought).
func fencedAction(s string) (transcript.Block, string, bool) {
	end := strings.LastIndex(s, "```")
	if end < 0 {
		return transcript.Block{}, "", false
	}
	start := strings.LastIndex(s[:end], "```")
	if start < 0 {
		return transcript.Block{}, "", false
	}
	inner := s[start+3 : end]
	// Drop the opening line when it is empty or a language tag.
	if nl := strings.IndexByte(inner, '\n'); nl >= 0 && fenceTags[strings.TrimSpace(inner[:nl])] {
		inner = inner[nl+1:]
	}
	action := strings.TrimSpace(inner)
	if action == "" {
		return transcript.Block{}, "", false
	}
	return sweActionBlock(action), s[:start] + s[end+3:], true
}

// fenceTags are opening-line words of a fenced block that are not commands.
var fenceTags = map[string]bool{"": true, "bash": true, "sh": true, "shell": true, "console": true, "python": true, "text": true}
