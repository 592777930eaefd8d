package loader

import (
	"bytes"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// CodexFormat names the OpenAI Codex CLI rollout reader.
const CodexFormat = "codex"

func init() { Register(codex{}) }

// codex reads Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl),
// lines of {timestamp, type, payload}:
//
//   - The conversation is read from the response_item records only; the
//     event_msg stream repeats it for the UI and is ignored by type (counted
//     as "event_msg:<type>"), except token_count.
//   - The assistant items of one model response (reasoning, message,
//     function_call, custom_tool_call, local_shell_call, web_search_call) are
//     one assistant message. The response ends at the next input item (a
//     user/developer message or a tool output), at a token_count event, or at
//     a compacted record.
//   - Usage: a token_count event whose total_token_usage differs from the
//     previous one reports one new model call, and its last_token_usage
//     belongs to the assistant message of the response items recorded since
//     the previous token_count or input item (Codex writes the event when the
//     response completes, before running its tools). Repeated snapshots (same
//     total, e.g. at turn start or after a compaction), null-info events and
//     events with no response items before them are ignored. OpenAI's
//     input_tokens include the cached ones: Input = input_tokens −
//     cached_input_tokens, CacheRead = cached_input_tokens, so Context() is
//     input_tokens.
//   - function_call arguments are a JSON string, kept as the tool input when
//     it is valid JSON; custom_tool_call input (apply_patch) is free text,
//     kept as a JSON string, with the first patched file as the path. Outputs
//     pair by call_id. An output is an error when its exit code (the leading
//     "Exit code: N" line, or metadata.exit_code in the JSON form) is not 0.
//   - web_search_call items run on the server and record no output: each
//     becomes a tool_use with an empty tool_result in the same assistant
//     message, so the context stays a valid request.
//   - developer/system messages are system messages; user messages that
//     Codex writes itself (environment context, AGENTS.md instructions, turn
//     aborted notices) are marked meta.
//   - compacted records become recorded compaction events: Summary is the
//     text of the replacement history's messages when it is recorded (the
//     encrypted compaction item itself cannot be rendered), else the
//     record's message; PreTokens is the last call's total tokens; Trigger is
//     not recorded by Codex and stays empty.
//   - The pre-2025-09 layout (a first line {id, timestamp, instructions},
//     then bare response items and {record_type} lines) is read too.
//
// Paths inside the records are kept as written (Windows paths included).
//
// Its records are the lines: session_meta, turn_context, the response items
// above, compacted records and the token_count events that give a call its
// usage are parsed; other events and unknown types are ignored by type.
type codex struct{}

func (codex) Name() string { return CodexFormat }

// codexTypes are the top-level record types of a rollout.
var codexTypes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true,
}

// codexItemTypes are response item types, for the legacy layout.
var codexItemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true, "web_search_call": true,
}

func (codex) Sniff(path string, head []byte) int {
	p := sniffParsers.Get()
	defer sniffParsers.Put(p)
	bonus := 0
	if strings.HasPrefix(baseName(path), "rollout-") {
		bonus = 1
	}
	legacyMeta := false
	lines := 0
	rest := head
	for n := 0; n < 32 && len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(rest[:i])
		rest = rest[i+1:]
		if len(line) == 0 {
			continue
		}
		lines++
		if lines > 1 && !legacyMeta && !mayHoldKey(line, "payload") {
			continue // only a payload could tell: the line is not parsed
		}
		v, err := p.ParseBytes(line)
		if err != nil || v.Type() != fastjson.TypeObject {
			continue
		}
		typ := str(v, "type")
		switch {
		case v.Exists("payload") && codexTypes[typ]:
			return 10 + bonus
		case lines == 1 && typ == "" && v.Exists("id") && v.Exists("timestamp"):
			legacyMeta = true
		case legacyMeta && (v.Exists("record_type") || codexItemTypes[typ]):
			return 8 + bonus
		}
	}
	if lines == 0 {
		t := bytes.TrimSpace(head)
		if bytes.HasPrefix(t, []byte(`{"timestamp":`)) && bytes.Contains(t, []byte(`"type":"session_meta"`)) {
			return 8 + bonus
		}
	}
	return 0
}

// mayHoldKey reports whether line, a JSON text, may hold the key name
// (ASCII letters): as it is, or with letters written as \u escapes. Every
// file's head is sniffed by every reader, and a Claude Code head holds 32
// long lines none of which names a payload.
func mayHoldKey(line []byte, name string) bool {
	return bytes.Contains(line, []byte(name)) || bytes.Contains(line, []byte(`\u`))
}

// codexFile is the state of reading one rollout.
type codexFile struct {
	b     *builder
	p     fastjson.Parser
	model string
	// pending is the assistant message of the response being read.
	pending *transcript.Message
	// prevTotal is the total_token_usage of the last token_count seen.
	prevTotal int64
	seenTotal bool
	// lastCall is the total tokens of the last call with usage.
	lastCall int64
	legacy   bool

	// Calls whose token_count event follows no recorded assistant output
	// (a rollout that kept only its token_count events): counted apart.
	looseCalls int
	loosePeak  int64
	sawOutput  bool
	unknown    map[string]bool // unknown record types reported
	// userSince holds the user prompts added since the last assistant or
	// tool message: Codex records a prompt both as a response_item and as
	// an event_msg, and either may be missing.
	userSince codexPrompts
}

// codexPrompts are the user prompts added since the last assistant or tool
// message, looked up by text: a burst of thousands of prompts costs each
// one a lookup, not a pass over the others.
type codexPrompts struct {
	// texts holds the prompts' texts.
	texts map[string]bool
	// events holds, by text, the message indices of the prompts that came
	// from an event_msg user_message and that no response_item has taken
	// the place of yet, oldest first.
	events map[string][]int
}

// reset forgets the prompts.
func (p *codexPrompts) reset() {
	if len(p.texts) > 0 {
		p.texts, p.events = nil, nil
	}
}

// has reports whether a prompt of that text was added.
func (p *codexPrompts) has(text string) bool { return p.texts[text] }

// add records a prompt added at message index, from an event or not.
func (p *codexPrompts) add(index int, text string, fromEvent bool) {
	if p.texts == nil {
		p.texts, p.events = map[string]bool{}, map[string][]int{}
	}
	p.texts[text] = true
	if fromEvent {
		p.events[text] = append(p.events[text], index)
	}
}

// takeEvent returns the message index of the oldest prompt of that text
// from an event that nothing has taken the place of, and marks it taken.
func (p *codexPrompts) takeEvent(text string) (int, bool) {
	q := p.events[text]
	if len(q) == 0 {
		return 0, false
	}
	p.events[text] = q[1:]
	return q[0], true
}

func (codex) Read(src *Source, emit func(*transcript.Transcript) error) error {
	c := &codexFile{b: newBuilder(src.Path, CodexFormat)}
	lineNo, rerr := eachLine(src, c.line)
	c.flush()
	t := c.b.t
	if rerr != nil {
		c.b.problem(lineNo, "%s", rerr.Error())
	}
	if t.ID == "" {
		t.ID = stem(src.Path)
	}
	c.b.finish()
	if c.looseCalls > 0 {
		t.Stats.APICalls += c.looseCalls
		t.Stats.PeakContextReal = max(t.Stats.PeakContextReal, c.loosePeak)
		c.b.problem(0, "%d token_count events follow no recorded model output: counted as API calls with no message", c.looseCalls)
		if t.Model == "" {
			t.Model = c.model
		}
	}
	return emit(t)
}

// line handles one input line: a record, counted as parsed, ignored or
// bad where that is decided.
func (c *codexFile) line(n int, line []byte, final bool) {
	b := c.b
	b.record()
	if len(bytes.TrimSpace(line)) == 0 {
		b.t.Stats.Ignore("(blank)")
		return
	}
	v, err := c.p.ParseBytes(line)
	lastWins(v)
	if err != nil {
		b.bad(n, "%s", lineError(err, final))
		return
	}
	if v.Type() != fastjson.TypeObject {
		b.bad(n, "record is a JSON %s, want an object", v.Type())
		return
	}
	ts := str(v, "timestamp")
	pl := v.Get("payload")
	typ := str(v, "type")
	if pl == nil {
		c.legacyRecord(n, v, typ, ts)
		return
	}
	if pl.Type() != fastjson.TypeObject {
		b.bad(n, `"payload" is a %s, want an object`, pl.Type())
		return
	}
	switch typ {
	case "session_meta":
		c.session(pl)
		b.parsed()
	case "turn_context":
		if m := str(pl, "model"); m != "" {
			c.model = m
		}
		b.parsed()
	case "response_item":
		c.item(n, pl, ts)
	case "event_msg":
		c.eventMsg(n, pl, ts)
	case "compacted":
		c.compacted(n, pl)
		b.parsed()
	case "":
		b.bad(n, `record has no "type"`)
	default:
		c.unknownType(n, typ)
	}
}

// legacyRecord reads a record of the legacy layout (no payload): a
// session header, bare items, state records.
func (c *codexFile) legacyRecord(n int, v *fastjson.Value, typ, ts string) {
	b := c.b
	switch {
	case v.Exists("record_type"):
		b.t.Stats.Ignore("record_type:" + str(v, "record_type"))
	case n == 1 && typ == "" && v.Exists("id"):
		c.legacy = true
		c.session(v)
		b.parsed()
	case codexItemTypes[typ] || (c.legacy && typ != ""):
		c.item(n, v, ts)
	case typ == "":
		b.bad(n, `record has no "type"`)
	default:
		b.bad(n, `%q record has no "payload"`, typ)
	}
}

// eventMsg reads an event_msg: token counts and user prompts are read,
// other events set aside.
func (c *codexFile) eventMsg(n int, pl *fastjson.Value, ts string) {
	b := c.b
	et := str(pl, "type")
	if et == "token_count" && c.tokenCount(n, pl) {
		b.parsed()
		return
	}
	if et == "user_message" && c.eventPrompt(n, pl, ts) {
		b.parsed()
		return
	}
	b.t.Stats.Ignore("event_msg:" + et)
}

// unknownType counts a record type no Codex version is known to write,
// reported once per type.
func (c *codexFile) unknownType(n int, typ string) {
	b := c.b
	if c.unknown == nil {
		c.unknown = map[string]bool{}
	}
	if !c.unknown[typ] {
		c.unknown[typ] = true
		b.problem(n, "unknown record type %q, not read", typ)
	}
	b.t.Stats.UnknownTypes++
	b.t.Stats.Ignore(typ)
}

// session reads a session_meta payload (or the legacy header line).
func (c *codexFile) session(pl *fastjson.Value) {
	t := c.b.t
	if id := str(pl, "id"); id != "" && t.SessionID == "" {
		t.SessionID, t.ID = id, id
	}
}

// flush ends the response being read.
func (c *codexFile) flush() {
	if c.pending != nil {
		c.b.add(*c.pending)
		c.pending = nil
	}
}

// assistant returns the message of the response being read, opening one.
func (c *codexFile) assistant(n int, ts string) *transcript.Message {
	c.userSince.reset()
	c.sawOutput = true
	if c.pending == nil {
		c.pending = &transcript.Message{Role: transcript.RoleAssistant, Timestamp: ts, Line: n, Model: c.model}
	}
	return c.pending
}

// codexMetaPrefixes open user messages that Codex writes itself.
var codexMetaPrefixes = []string{
	"<environment_context>", "# AGENTS.md instructions for ", "<user_instructions>", "<INSTRUCTIONS>",
	"<turn_aborted>", "<user_shell_command>", "<skill>",
}

// item handles one response item and counts its record.
func (c *codexFile) item(n int, it *fastjson.Value, ts string) {
	b := c.b
	switch typ := str(it, "type"); typ {
	case "message":
		c.message(n, it, ts)
		return
	case "reasoning":
		var parts []string
		for _, key := range []string{"summary", "content"} {
			for _, s := range it.GetArray(key) {
				if t := str(s, "text"); t != "" {
					parts = append(parts, t)
				}
			}
		}
		m := c.assistant(n, ts)
		m.Blocks = append(m.Blocks, transcript.Block{Kind: transcript.BlockThinking,
			Text: strings.Join(parts, "\n"), SignatureLen: len(it.GetStringBytes("encrypted_content"))})
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		blocks := c.toolCall(typ, it)
		m := c.assistant(n, ts)
		m.Blocks = append(m.Blocks, blocks...)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		c.flush()
		c.userSince.reset()
		bl := transcript.Block{Kind: transcript.BlockToolResult, ToolID: firstStr(it, "call_id", "id")}
		codexOutput(&bl, it.Get("output"))
		b.add(transcript.Message{Role: transcript.RoleTool, Blocks: []transcript.Block{bl}, Timestamp: ts, Line: n})
	default:
		b.t.Stats.Ignore("response_item:" + typ)
		return
	}
	b.parsed() // the item kinds read above
}

// toolCall makes the blocks of a tool call item of type typ: the call,
// and for a web search (answered in the same item) its empty result.
func (c *codexFile) toolCall(typ string, it *fastjson.Value) []transcript.Block {
	switch typ {
	case "function_call":
		return []transcript.Block{{Kind: transcript.BlockToolUse,
			ToolID: firstStr(it, "call_id", "id"), ToolName: str(it, "name"), Input: jsonText(str(it, "arguments"))}}
	case "custom_tool_call":
		input := str(it, "input")
		bl := transcript.Block{Kind: transcript.BlockToolUse,
			ToolID: firstStr(it, "call_id", "id"), ToolName: str(it, "name"), Input: jsonText(input)}
		if bl.Input != input { // free text: InputFields cannot see into it
			bl.Path = patchPath(input)
		}
		return []transcript.Block{bl}
	case "local_shell_call":
		bl := transcript.Block{Kind: transcript.BlockToolUse, ToolID: firstStr(it, "call_id", "id"), ToolName: "local_shell"}
		if a := it.Get("action"); a != nil {
			bl.Input = string(a.MarshalTo(nil))
		}
		return []transcript.Block{bl}
	}
	id := str(it, "id") // web_search_call
	if id == "" {
		id = c.b.newID("web_search-")
	}
	bl := transcript.Block{Kind: transcript.BlockToolUse, ToolID: id, ToolName: "web_search"}
	if a := it.Get("action"); a != nil {
		bl.Input = string(a.MarshalTo(nil))
	}
	return []transcript.Block{bl, {Kind: transcript.BlockToolResult, ToolID: id}}
}

// message reads a message item: an assistant's joins the open assistant
// message; a user's, developer's or system's is a message of its own. A
// user prompt already added from its event_msg is replaced by this record,
// which is what the model saw.
func (c *codexFile) message(n int, it *fastjson.Value, ts string) {
	b := c.b
	role := str(it, "role")
	blocks := c.messageParts(n, it)
	if role == "assistant" {
		m := c.assistant(n, ts)
		m.Blocks = append(m.Blocks, blocks...)
		b.parsed()
		return
	}
	c.flush()
	m := transcript.Message{Role: transcript.RoleUser, Blocks: blocks, Timestamp: ts, Line: n}
	switch role {
	case "user":
		m.IsMeta = harnessText(blocks, codexMetaPrefixes)
	case "developer", "system":
		m.Role = transcript.RoleSystem
	default:
		b.bad(n, "message with unknown role %q skipped", role)
		return
	}
	if m.IsPrompt() {
		text := strings.TrimSpace(m.Text())
		if i, ok := c.userSince.takeEvent(text); ok {
			b.register(&m)
			b.t.Messages[i] = m
			b.parsed()
			return
		}
		c.userSince.add(len(b.t.Messages), text, false)
	}
	b.add(m)
	b.parsed()
}

// messageParts converts a message item's content parts.
func (c *codexFile) messageParts(n int, it *fastjson.Value) []transcript.Block {
	var blocks []transcript.Block
	for _, part := range it.GetArray("content") {
		switch pt := str(part, "type"); pt {
		case "input_text", "output_text", "text":
			blocks = append(blocks, transcript.Block{Kind: transcript.BlockText, Text: str(part, "text")})
		case "refusal":
			blocks = append(blocks, transcript.Block{Kind: transcript.BlockText, Text: str(part, "refusal")})
		case "input_image":
			size, _ := imageSize(part)
			blocks = append(blocks, transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: size})
		default:
			c.b.problem(n, "unknown message content type %q skipped", pt)
		}
	}
	return blocks
}

// codexOutput fills a tool result from a Codex output: a string (plain,
// or the JSON {"output", "metadata":{"exit_code"}} form), a list of content
// items, or an object {content, success}.
func codexOutput(bl *transcript.Block, out *fastjson.Value) {
	if out == nil {
		return
	}
	switch out.Type() {
	case fastjson.TypeString:
		s := string(out.GetStringBytes())
		if strings.HasPrefix(s, "{") {
			var p fastjson.Parser
			if v, err := p.Parse(s); err == nil && v.Type() == fastjson.TypeObject && v.Exists("output") {
				bl.Text = str(v, "output")
				if code := v.Get("metadata", "exit_code"); code != nil && code.Type() == fastjson.TypeNumber {
					bl.IsError = code.GetInt() != 0
				}
				return
			}
		}
		bl.Text = s
		if code, ok := exitStatus(s); ok {
			bl.IsError = code != 0
		}
	case fastjson.TypeObject:
		bl.Text, bl.Images, bl.ImageBytes = textOf(out.Get("content"))
		if s := out.Get("success"); s != nil && s.Type() == fastjson.TypeFalse {
			bl.IsError = true
		}
	default:
		bl.Text, bl.Images, bl.ImageBytes = textOf(out)
	}
}

// patchPath returns the first file an apply_patch text touches.
func patchPath(patch string) string {
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}

// tokenCount handles a token_count event; it reports whether the event
// gave a call its usage.
func (c *codexFile) tokenCount(n int, pl *fastjson.Value) bool {
	info := pl.Get("info")
	if info == nil || info.Type() != fastjson.TypeObject {
		return false
	}
	if why := usageProblem(info, []string{"total_token_usage", "total_tokens"}, []string{"last_token_usage", "input_tokens"},
		[]string{"last_token_usage", "cached_input_tokens"}, []string{"last_token_usage", "output_tokens"}, []string{"last_token_usage", "total_tokens"}); why != "" {
		c.b.problem(n, "%s", why)
		return false
	}
	total := info.GetInt64("total_token_usage", "total_tokens")
	repeat := c.seenTotal && total == c.prevTotal
	c.prevTotal, c.seenTotal = total, true
	last := info.Get("last_token_usage")
	if !repeat && last != nil && last.Type() == fastjson.TypeObject && c.pending == nil && !c.sawOutput {
		// No model output recorded at all: the call is known only from
		// its token_count event.
		c.looseCalls++
		c.loosePeak = max(c.loosePeak, last.GetInt64("input_tokens"))
		return true
	}
	if repeat || last == nil || c.pending == nil || c.pending.Usage != nil {
		return false
	}
	in, cached := last.GetInt64("input_tokens"), last.GetInt64("cached_input_tokens")
	if cached > in {
		cached = in
	}
	c.pending.Usage = &transcript.Usage{Input: in - cached, CacheRead: cached, Output: last.GetInt64("output_tokens")}
	c.lastCall = last.GetInt64("total_tokens")
	c.flush()
	return true
}

// eventPrompt reads an event_msg user_message: the prompt the user typed.
// It opens a turn unless a response_item user message since the last model
// output carries the same text (Codex usually records both); it reports
// whether the event was used.
func (c *codexFile) eventPrompt(n int, pl *fastjson.Value, ts string) bool {
	text := strings.TrimSpace(str(pl, "message"))
	if text == "" {
		return false
	}
	if c.userSince.has(text) {
		return false
	}
	c.flush()
	c.userSince.add(len(c.b.t.Messages), text, true)
	c.b.add(transcript.Message{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: str(pl, "message")}},
		Timestamp: ts, Line: n})
	return true
}

// compacted turns a compacted record into a recorded compaction.
func (c *codexFile) compacted(n int, pl *fastjson.Value) {
	c.flush()
	comp := transcript.Compaction{Kind: transcript.CompactFull, MessageIndex: len(c.b.t.Messages), PreTokens: c.lastCall, Line: n}
	var parts []string
	for _, it := range pl.GetArray("replacement_history") {
		if str(it, "type") != "message" {
			continue
		}
		for _, part := range it.GetArray("content") {
			if t := str(part, "text"); t != "" {
				parts = append(parts, t)
			}
		}
	}
	comp.Summary = strings.Join(parts, "\n\n")
	if comp.Summary == "" {
		comp.Summary = str(pl, "message")
	}
	c.b.t.Compactions = append(c.b.t.Compactions, comp)
}
