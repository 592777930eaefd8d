package loader

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// SWEAgentFormat names the SWE-agent trajectory reader.
const SWEAgentFormat = "swe-agent"

func init() { Register(sweAgent{}) }

// sweAgent reads SWE-agent .traj files: one JSON object with "trajectory"
// (the steps: thought, action, observation, response) and "history" (the
// messages the model saw, in order).
//
//   - The conversation is "history": system → system, user → user (the
//     in-context demonstration, is_demo, is marked meta), assistant →
//     assistant, tool → tool results paired by tool_call_ids.
//   - Newer versions record function calls (tool_calls): they are read as
//     such. Older versions write the action as a fenced block in the
//     assistant text and record it apart ("action"): the assistant message
//     becomes the thought plus a tool_use named after the action's first word
//     (find_file, open, edit, python, submit...), with the whole action as
//     its command, and the user message that follows (the observation) its
//     result.
//   - Without a history, the steps are read as thought + action / observation
//     pairs.
//   - SWE-agent records only run-level token totals (info.model_stats), so
//     Usage stays nil; api_calls is info.model_stats.api_calls; the model is
//     replay_config.agent.model.name when set.
//   - Tool calls count per step: a tool-call id that an earlier step used
//     again (replayed trajectories reuse them) is renamed "<id>#<entry>" in
//     that step and in the results that answer it, so no call is lost.
//   - One file is one transcript, named after the file (the instance id).
//
// Its records are the history entries (the steps without a history); a
// file that holds none it can read is one bad record, reported on line 0
// (the whole file). Messages and problems carry the line where their entry
// starts; problems also name its index.
type sweAgent struct{}

func (sweAgent) Name() string { return SWEAgentFormat }

func (x sweAgent) Sniff(path string, head []byte) int { return x.sniffShape(path, head, shapeOf(head)) }

func (sweAgent) sniffShape(path string, head []byte, h headShape) int {
	bonus := 0
	if strings.HasSuffix(baseName(path), ".traj") {
		bonus = 1
	}
	if h.Array {
		return 0
	}
	switch {
	case h.Has("trajectory[].action"), h.Has("trajectory[].observation"), h.Has("history[].role"):
		return 10 + bonus
	case bonus == 1 && startsJSONDoc(head):
		return 3
	}
	return 0
}

func (sweAgent) Read(src *Source, emit func(*transcript.Transcript) error) error {
	data, rerr := ReadAll(src)
	b := newBuilder(src.Path, SWEAgentFormat)
	b.t.ID = stem(src.Path)
	if rerr != nil {
		last := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			last++
		}
		b.problem(last, "%s", rerr.Error())
	}
	var p fastjson.Parser
	doc := parseOne(&p, b, data, 0, "trajectory file")
	if doc == nil {
		b.record() // the unreadable document
	} else {
		readSWEAgent(b, doc, data)
	}
	return emit(b.finish())
}

// readSWEAgent reads a parsed trajectory; data is its text, for lines.
func readSWEAgent(b *builder, doc *fastjson.Value, data []byte) {
	b.t.Model = sweModel(doc.Get("replay_config"))
	defer func() {
		// Only run-level totals are recorded: the number of calls, no usage.
		if n := doc.GetInt("info", "model_stats", "api_calls"); n > 0 {
			b.t.Stats.APICalls = n
		}
	}()
	history := doc.GetArray("history")
	if len(history) == 0 {
		steps := doc.GetArray("trajectory")
		if len(steps) == 0 {
			b.record()
			b.bad(0, `neither "history" nor "trajectory" holds any entry`)
			return
		}
		sweTrajectory(b, steps, elementLines(data, 1, "trajectory", len(steps)))
		return
	}
	lines := elementLines(data, 1, "history", len(history))
	h := sweHistory{b: b, alias: map[string]string{}, used: map[string]bool{}}
	for i, e := range history {
		b.record()
		h.entry(i, e, lineOf(lines, i, 1))
	}
}

// sweTrajectory reads the steps of an older trajectory (no history): each
// a thought and an action, answered by its observation.
func sweTrajectory(b *builder, steps []*fastjson.Value, lines []int) {
	for i, st := range steps {
		b.record()
		line := lineOf(lines, i, 1)
		if st.Type() != fastjson.TypeObject {
			b.bad(line, "trajectory[%d] is a %s, want an object", i, st.Type())
			continue
		}
		m := transcript.Message{Role: transcript.RoleAssistant, Model: b.t.Model, Line: line}
		if t := str(st, "thought"); t != "" {
			m.Blocks = append(m.Blocks, transcript.Block{Kind: transcript.BlockText, Text: t})
		}
		action := str(st, "action")
		var call transcript.Block
		if strings.TrimSpace(action) != "" {
			call = sweActionBlock(action)
			m.Blocks = append(m.Blocks, call)
		}
		if len(m.Blocks) == 0 {
			b.t.Stats.Ignore("empty step")
			continue
		}
		b.add(m)
		if call.Kind == transcript.BlockToolUse {
			b.add(transcript.Message{Role: transcript.RoleTool, Line: line,
				Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, Text: str(st, "observation")}}})
		}
		b.parsed()
	}
}

// sweHistory reads the entries of a trajectory's history.
type sweHistory struct {
	b *builder
	// awaitObs is set after an action given as text: the next user entry
	// is its observation.
	awaitObs bool
	// alias maps a tool-call id to the name its latest call got; used
	// holds the ids met.
	alias map[string]string
	used  map[string]bool
}

// entry reads history entry i, on the given line.
func (h *sweHistory) entry(i int, e *fastjson.Value, line int) {
	b := h.b
	where := fmt.Sprintf("history[%d]", i)
	if e.Type() != fastjson.TypeObject {
		b.bad(line, "%s is a %s, want an object", where, e.Type())
		return
	}
	text, images, size := textOf(e.Get("content"))
	role := str(e, "role")
	switch role {
	case "system":
		h.awaitObs = false
		b.add(transcript.Message{Role: transcript.RoleSystem, Blocks: textBlocks(text, images, size), Line: line})
	case "user":
		if h.awaitObs {
			h.awaitObs = false
			b.add(transcript.Message{Role: transcript.RoleTool, Line: line,
				Blocks: []transcript.Block{{Kind: transcript.BlockToolResult, Text: text, Images: images, ImageBytes: size}}})
			break
		}
		b.add(transcript.Message{Role: transcript.RoleUser, Blocks: textBlocks(text, images, size), IsMeta: e.GetBool("is_demo"), Line: line})
	case "tool":
		h.awaitObs = false
		b.add(transcript.Message{Role: transcript.RoleTool, Blocks: h.results(e, text, images, size), Line: line})
	case "assistant":
		h.awaitObs = false
		m := h.assistant(i, e, text, images, size, line)
		if len(m.Blocks) == 0 {
			b.t.Stats.Ignore("empty message")
			return
		}
		b.add(m)
	default:
		b.bad(line, "%s: unknown role %q, message skipped", where, role)
		return
	}
	b.parsed()
}

// results makes the tool results of a tool entry, one per tool_call_ids
// entry (the content goes to the first), or one without an id.
func (h *sweHistory) results(e *fastjson.Value, text string, images, size int) []transcript.Block {
	var blocks []transcript.Block
	for k, id := range e.GetArray("tool_call_ids") {
		tid := string(id.GetStringBytes())
		if a, ok := h.alias[tid]; ok {
			tid = a
		}
		bl := transcript.Block{Kind: transcript.BlockToolResult, ToolID: tid}
		if k == 0 {
			bl.Text, bl.Images, bl.ImageBytes = text, images, size
		}
		blocks = append(blocks, bl)
	}
	if len(blocks) == 0 {
		blocks = []transcript.Block{{Kind: transcript.BlockToolResult, Text: text, Images: images, ImageBytes: size}}
	}
	return blocks
}

// assistant makes the message of assistant entry i: its text (the thought
// when the action is given as text) and its tool calls, a reused call id
// renamed so that each call has its own.
func (h *sweHistory) assistant(i int, e *fastjson.Value, text string, images, size, line int) transcript.Message {
	m := transcript.Message{Role: transcript.RoleAssistant, Model: h.b.t.Model, Line: line}
	calls := e.GetArray("tool_calls")
	action := str(e, "action")
	if len(calls) == 0 && strings.TrimSpace(action) != "" {
		if t := str(e, "thought"); t != "" {
			text = t
		}
	}
	m.Blocks = textBlocks(text, images, size)
	for _, tc := range calls {
		id := str(tc, "id")
		if id != "" {
			name := id
			if h.used[id] {
				name = fmt.Sprintf("%s#%d", id, i)
			}
			h.used[id], h.alias[id] = true, name
			id = name
		}
		m.Blocks = append(m.Blocks, transcript.Block{Kind: transcript.BlockToolUse, ToolID: id,
			ToolName: str(tc, "function", "name"), Input: jsonText(str(tc, "function", "arguments"))})
	}
	if len(calls) == 0 && strings.TrimSpace(action) != "" {
		m.Blocks = append(m.Blocks, sweActionBlock(action))
		h.awaitObs = true
	}
	return m
}

// textBlocks is a text block (when text is not empty) and an image block
// (when there are images).
func textBlocks(text string, images, size int) []transcript.Block {
	var out []transcript.Block
	if text != "" {
		out = append(out, transcript.Block{Kind: transcript.BlockText, Text: text})
	}
	if images > 0 {
		out = append(out, transcript.Block{Kind: transcript.BlockImage, Images: images, ImageBytes: size})
	}
	return out
}

// sweModel reads the model name from replay_config (an object, or the JSON
// text of one in older versions).
func sweModel(rc *fastjson.Value) string {
	if rc == nil {
		return ""
	}
	if rc.Type() == fastjson.TypeString {
		var p fastjson.Parser
		v, err := p.ParseBytes(rc.GetStringBytes())
		if err != nil {
			return ""
		}
		return str(v, "agent", "model", "name")
	}
	return str(rc, "agent", "model", "name")
}

// sweActionBlock turns a SWE-agent action (a shell line or one of its
// special commands) into a tool_use block named after its first word, with
// the action as its command and, for open and create, the file as its path.
func sweActionBlock(action string) transcript.Block {
	action = strings.TrimSpace(action)
	name := action
	if i := strings.IndexAny(action, " \t\r\n"); i >= 0 {
		name = action[:i]
	}
	bl := transcript.Block{Kind: transcript.BlockToolUse, ToolName: name, Command: action,
		Input: jsonObject([]string{"command"}, []string{action})}
	if name == "open" || name == "create" {
		if f := strings.Fields(strings.SplitN(action, "\n", 2)[0]); len(f) > 1 {
			p := f[1]
			if u, err := strconv.Unquote(p); err == nil {
				p = u
			} else {
				p = strings.Trim(p, `"'`)
			}
			bl.Path = p
		}
	}
	return bl
}
