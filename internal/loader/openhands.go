package loader

import (
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// OpenHandsFormat names the OpenHands event-stream reader.
const OpenHandsFormat = "openhands"

func init() { Register(openHands{}) }

// openHands reads OpenHands trajectories: a JSON array of events (or JSON
// lines of events, or an object holding them under history, events or
// trajectory), each an action or an observation with id, source and
// timestamp. One file is one transcript, named after the file.
//
//   - User message actions are user messages (image_urls count as images);
//     the system action is the system message; agent message and finish
//     actions are assistant text.
//   - Every other agent action (run, run_ipython, edit, read, write, browse,
//     think, delegate, MCP calls...) is a tool_use: with tool_call_metadata,
//     its id, function name and arguments are the model's own, and the
//     actions of one model_response (same id) are one assistant message whose
//     text is the response's content and whose usage is the response's usage;
//     without it, the action name is the tool, its args (less "thought") the
//     input, and the thought the text. run actions carry the command, file
//     actions the path.
//   - An observation answers the action named by its "cause": a tool result,
//     an error when the observation is "error", success is false, or the exit
//     code (extras.metadata.exit_code) is not 0. Observations of actions that
//     are not tool calls (messages, state changes) and bookkeeping events
//     (agent_state_changed, null observations, change_agent_state) are
//     ignored by type, counted as "action:<name>" / "observation:<name>".
//   - A condensation action (OpenHands' context condenser) is a recorded
//     compaction whose summary is the condenser's summary.
//   - finish is assistant text, not a call: it never gets a result and
//     OpenHands drops unanswered calls from later prompts.
//
// Its records are the events (a wrapping object is not one); each is parsed,
// ignored by type or bad.
type openHands struct{}

func (openHands) Name() string { return OpenHandsFormat }

// ohEventKeys are the keys that hold an event list in an object.
var ohEventKeys = []string{"history", "events", "trajectory"}

func (x openHands) Sniff(path string, head []byte) int {
	return x.sniffShape(path, head, shapeOf(head))
}

func (openHands) sniffShape(path string, head []byte, h headShape) int {
	event := func(prefix string) bool {
		return h.Has(prefix+"source") && (h.Has(prefix+"action") || h.Has(prefix+"observation"))
	}
	if event("") {
		return 10
	}
	for _, k := range ohEventKeys {
		if !h.Array && event(k+"[].") {
			return 9
		}
	}
	return 0
}

func (openHands) Read(src *Source, emit func(*transcript.Transcript) error) error {
	c := &ohConv{b: newBuilder(src.Path, OpenHandsFormat), tools: map[int64]string{}, responses: map[string]int{}}
	c.b.t.ID = stem(src.Path)
	var p fastjson.Parser
	_, problems, err := scanValues(src.R, func(v *jsonValue) error {
		where := fmt.Sprintf("event %d", v.Index)
		e, perr := p.ParseBytes(v.Data)
		lastWins(e)
		if perr != nil {
			c.b.record()
			c.b.bad(v.Line, "%s: malformed JSON: %s", where, shortErr(perr))
			return nil
		}
		if e.Type() == fastjson.TypeObject && !e.Exists("action") && !e.Exists("observation") {
			for _, k := range ohEventKeys {
				if list := e.Get(k); list != nil && list.Type() == fastjson.TypeArray {
					events := list.GetArray()
					lines := elementLines(v.Data, v.Line, k, len(events))
					for i, ev := range events {
						c.b.record()
						c.event(ev, lineOf(lines, i, v.Line), fmt.Sprintf("%s[%d]", k, i))
					}
					return nil
				}
			}
		}
		c.b.record()
		c.event(e, v.Line, where)
		return nil
	})
	if err != nil {
		return err
	}
	c.b.scanProblems(problems)
	return emit(c.b.finish())
}

// ohConv is the state of reading one event stream.
type ohConv struct {
	b *builder
	// tools maps an action event id to its tool_use id.
	tools map[int64]string
	// responses maps a model_response id to its assistant message index.
	responses map[string]int
}

// event handles one event and counts its record.
func (c *ohConv) event(e *fastjson.Value, line int, where string) {
	b := c.b
	if e.Type() != fastjson.TypeObject {
		b.bad(line, "%s is a %s, want an object", where, e.Type())
		return
	}
	if a := e.Get("action"); a != nil {
		c.action(e, str(e, "action"), line, where)
		return
	}
	if o := e.Get("observation"); o != nil {
		c.observation(e, line)
		return
	}
	b.bad(line, "%s has neither an action nor an observation", where)
}

func (c *ohConv) action(e *fastjson.Value, act string, line int, where string) {
	b := c.b
	args := e.Get("args")
	ts := str(e, "timestamp")
	source := str(e, "source")
	switch act {
	case "message":
		c.message(e, args, source, ts, line)
		return
	case "system":
		b.add(transcript.Message{Role: transcript.RoleSystem, Blocks: textBlocks(str(args, "content"), 0, 0), Timestamp: ts, Line: line})
		b.parsed()
		return
	case "finish":
		text := firstStr(args, "final_thought", "thought")
		if text == "" {
			text = str(e, "message")
		}
		c.assistantText(e, textBlocks(text, 0, 0), ts, line)
		return
	case "condensation":
		b.t.Compactions = append(b.t.Compactions, transcript.Compaction{Kind: transcript.CompactFull,
			MessageIndex: len(b.t.Messages), Summary: str(args, "summary"), Line: line})
		b.parsed()
		return
	case "change_agent_state", "null", "recall", "condensation_request", "":
		b.t.Stats.Ignore("action:" + act)
		return
	}
	if source != "agent" {
		b.t.Stats.Ignore("action:" + act + "(" + source + ")")
		return
	}
	tcm := e.Get("tool_call_metadata")
	resp := tcm.Get("model_response")
	respMsg := resp.Get("choices", "0", "message")
	call := c.toolCall(e, act, args, tcm, respMsg)
	b.parsed()
	text := str(respMsg, "content")
	if text == "" {
		text = str(args, "thought")
	}
	c.respond(resp, ts, line, textBlocks(text, 0, 0), call)
}

// message reads a message action: a user's is a message of its own, an
// agent's assistant text.
func (c *ohConv) message(e, args *fastjson.Value, source, ts string, line int) {
	b := c.b
	text := str(args, "content")
	if text == "" {
		text = str(e, "message")
	}
	blocks := textBlocks(text, 0, 0)
	for _, u := range args.GetArray("image_urls") {
		blocks = append(blocks, transcript.Block{Kind: transcript.BlockImage, Images: 1, ImageBytes: len(u.GetStringBytes())})
	}
	if source != "user" {
		c.assistantText(e, blocks, ts, line)
		return
	}
	if len(blocks) == 0 {
		b.t.Stats.Ignore("action:message(empty)")
		return
	}
	b.add(transcript.Message{Role: transcript.RoleUser, Blocks: blocks, Timestamp: ts, Line: line})
	b.parsed()
}

// toolCall makes the tool call of an agent action act: its id and name
// from the tool call metadata, its input from the model response's call
// (else the action's args without the thought), and registers its id for
// the observation that answers it.
func (c *ohConv) toolCall(e *fastjson.Value, act string, args, tcm, respMsg *fastjson.Value) transcript.Block {
	call := transcript.Block{Kind: transcript.BlockToolUse, ToolID: str(tcm, "tool_call_id"), ToolName: str(tcm, "function_name")}
	if call.ToolName == "" {
		call.ToolName = act
	}
	for _, tc := range respMsg.GetArray("tool_calls") {
		if call.ToolID != "" && str(tc, "id") == call.ToolID {
			call.Input = jsonText(str(tc, "function", "arguments"))
		}
	}
	if call.Input == "" && args != nil {
		call.Input = withoutKey(args, "thought")
	}
	if act == "run" {
		call.Command = str(args, "command")
	}
	call.Path = str(args, "path")
	if call.ToolID == "" {
		call.ToolID = c.b.newID("oh-")
	}
	if id := e.Get("id"); id != nil {
		c.tools[id.GetInt64()] = call.ToolID
	}
	return call
}

// assistantText adds assistant text, merged into its model response's
// message when an earlier action of the same response made one.
func (c *ohConv) assistantText(e *fastjson.Value, blocks []transcript.Block, ts string, line int) {
	b := c.b
	if len(blocks) == 0 {
		b.t.Stats.Ignore("action:" + str(e, "action") + "(empty)")
		return
	}
	b.parsed()
	c.respond(e.Get("tool_call_metadata", "model_response"), ts, line, nil, blocks...)
}

// respond adds blocks to the assistant message of the model response resp:
// the message an earlier event of the same response made, or else a new one
// that opens with lead and carries the response's model and usage.
func (c *ohConv) respond(resp *fastjson.Value, ts string, line int, lead []transcript.Block, blocks ...transcript.Block) {
	b := c.b
	respID := str(resp, "id")
	if i, ok := c.responses[respID]; ok && respID != "" {
		for _, bl := range blocks {
			b.addBlock(i, bl)
		}
		return
	}
	m := transcript.Message{Role: transcript.RoleAssistant, Blocks: append(lead, blocks...), Timestamp: ts, Line: line, Model: str(resp, "model")}
	var why string
	if m.Usage, why = usageOf(resp.Get("usage")); why != "" {
		b.problem(line, "%s", why)
	}
	if respID != "" {
		m.ID = respID
		c.responses[respID] = len(b.t.Messages)
	}
	b.add(m)
}

func (c *ohConv) observation(e *fastjson.Value, line int) {
	b := c.b
	obs := str(e, "observation")
	cause := e.Get("cause")
	id, ok := "", false
	if cause != nil && cause.Type() == fastjson.TypeNumber {
		id, ok = c.tools[cause.GetInt64()]
	}
	if !ok {
		if obs == "recall" {
			if text := recallText(e); text != "" {
				b.add(transcript.Message{Role: transcript.RoleUser, IsMeta: true, Timestamp: str(e, "timestamp"), Line: line,
					Blocks: []transcript.Block{{Kind: transcript.BlockInjected, InjectedKind: "recall", Text: text}}})
				b.parsed()
				return
			}
		}
		if obs == "" {
			obs = "null"
		}
		b.t.Stats.Ignore("observation:" + obs)
		return
	}
	res := transcript.Block{Kind: transcript.BlockToolResult, ToolID: id, Text: str(e, "content")}
	switch s := e.Get("success"); {
	case obs == "error":
		res.IsError = true
	case s != nil && (s.Type() == fastjson.TypeFalse || s.Type() == fastjson.TypeTrue):
		res.IsError = s.Type() == fastjson.TypeFalse
	default:
		if code := e.Get("extras", "metadata", "exit_code"); code != nil && code.Type() == fastjson.TypeNumber {
			res.IsError = code.GetInt() != 0
		}
	}
	b.add(transcript.Message{Role: transcript.RoleTool, Blocks: []transcript.Block{res}, Timestamp: str(e, "timestamp"), Line: line})
	b.parsed()
}

// recallText renders what a recall observation adds to the prompt: the
// workspace context (repository and conversation instructions) and the
// microagent knowledge OpenHands puts in a user message.
func recallText(e *fastjson.Value) string {
	var parts []string
	if c := str(e, "content"); c != "" {
		parts = append(parts, c)
	}
	x := e.Get("extras")
	for _, k := range []string{"repo_instructions", "additional_agent_instructions", "conversation_instructions"} {
		if s := str(x, k); s != "" {
			parts = append(parts, s)
		}
	}
	for _, k := range x.GetArray("microagent_knowledge") {
		if s := str(k, "content"); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}
