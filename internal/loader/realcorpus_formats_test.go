package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// These tests read the real corpus folders of the formats other than Claude
// Code and check the readers against counts made here independently, with
// encoding/json over the raw records.

type obj = map[string]any

func getS(m obj, k string) string { s, _ := m[k].(string); return s }

func getA(m obj, k string) []any { a, _ := m[k].([]any); return a }

func getM(m obj, k string) obj { o, _ := m[k].(obj); return o }

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func requireNoProblems(t *testing.T, tr *transcript.Transcript) {
	t.Helper()
	for _, p := range tr.Problems {
		t.Errorf("%s (%s): unexpected problem line %d: %s", tr.Path, tr.ID, p.Line, p.Reason)
	}
}

// requireAccounting checks a transcript read from path with checkAccounting.
func requireAccounting(t *testing.T, path string, tr *transcript.Transcript) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkAccounting(tr, textLines(data)); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// jsonElem is an element of a JSON array and the line where it starts.
type jsonElem struct {
	line int
	raw  json.RawMessage
}

// jsonElems returns the elements of the array in data (whose first byte is
// on line first), or of the array under keys, object by object, with the
// line each starts on, found with encoding/json's tokenizer rather than the
// reader's scanner.
func jsonElems(t *testing.T, data []byte, first int, keys ...string) []jsonElem {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	delim := func(want json.Delim) {
		tok, err := dec.Token()
		if err != nil || tok != want {
			t.Fatalf("want %v, got %v (%v)", want, tok, err)
		}
	}
	for _, key := range keys {
		delim('{')
		for {
			if !dec.More() {
				t.Fatalf("no key %q", key)
			}
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			if k == key {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
	}
	delim('[')
	var out []jsonElem
	line, pos := first, 0
	for dec.More() {
		off := int(dec.InputOffset())
		for off < len(data) && (data[off] == ',' || data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
			off++
		}
		line += bytes.Count(data[pos:off], []byte{'\n'})
		pos = off
		var e jsonElem
		if err := dec.Decode(&e.raw); err != nil {
			t.Fatal(err)
		}
		e.line = line
		out = append(out, e)
	}
	return out
}

type counts struct {
	messages, toolUses, toolResults, toolErrors, calls int
	roles                                              map[transcript.Role]int
}

func countOf(tr *transcript.Transcript) counts {
	c := counts{roles: map[transcript.Role]int{}}
	c.messages = len(tr.Messages)
	for _, m := range tr.Messages {
		c.roles[m.Role]++
		if m.Usage != nil {
			c.calls++
		}
		for _, b := range m.Blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				c.toolUses++
			case transcript.BlockToolResult:
				c.toolResults++
				if b.IsError {
					c.toolErrors++
				}
			}
		}
	}
	return c
}

// readItems are the response item types the Codex reader turns into
// messages, by the rollout format's documentation.
var readItems = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"local_shell_call_output": true, "web_search_call": true,
}

func TestRealCorpusCodex(t *testing.T) {
	dir := testutil.RealCorpus(t, "codex")
	for _, path := range corpusFiles(t, dir, ".jsonl") {
		tr := readAs(t, path, CodexFormat)
		requireNoProblems(t, tr)

		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var lines, read, skipped, eventLines, inputs, outputs, calls, webSearch, errs, compacted, groups, newTotals int
		var sumInput int64
		inGroup := false
		var prevTotal int64 = -1
		sessionID := ""
		for sc.Scan() {
			lines++
			var rec obj
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s:%d: %v", path, lines, err)
			}
			pl := getM(rec, "payload")
			// What the reader makes of the line: read (parsed) or skipped
			// (ignored by type); a new token_count total is read below.
			switch typ := getS(rec, "type"); {
			case typ == "session_meta" || typ == "turn_context" || typ == "compacted":
				read++
			case typ == "response_item" && readItems[getS(pl, "type")]:
				read++
			case typ != "event_msg" || getS(pl, "type") != "token_count":
				skipped++
			}
			switch getS(rec, "type") {
			case "session_meta":
				sessionID = getS(pl, "id")
			case "compacted":
				compacted++
				inGroup = false
			case "event_msg":
				eventLines++
				if getS(pl, "type") != "token_count" {
					continue
				}
				info := getM(pl, "info")
				if info == nil {
					skipped++
					continue
				}
				total := num(getM(info, "total_token_usage")["total_tokens"])
				if total != prevTotal {
					read++
					newTotals++
					sumInput += num(getM(info, "last_token_usage")["input_tokens"])
				} else {
					skipped++
				}
				prevTotal = total
				inGroup = false
			case "response_item":
				switch typ := getS(pl, "type"); typ {
				case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "reasoning":
					if typ != "reasoning" {
						calls++
					}
					if typ == "web_search_call" {
						webSearch++
					}
					if !inGroup {
						groups++
					}
					inGroup = true
				case "message":
					if getS(pl, "role") == "assistant" {
						if !inGroup {
							groups++
						}
						inGroup = true
					} else {
						inputs++
						inGroup = false
					}
				case "function_call_output", "custom_tool_call_output":
					outputs++
					inGroup = false
					out, _ := pl["output"].(string)
					code, known := exitCodeIndependent(out)
					if known && code != 0 {
						errs++
					}
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()

		c := countOf(tr)
		if tr.ID != sessionID || tr.SessionID != sessionID {
			t.Errorf("%s: id %q, want the session id %q", path, tr.ID, sessionID)
		}
		if s := tr.Stats; s.Lines != lines || s.ParsedLines != read || s.IgnoredLines != skipped || s.BadLines != 0 {
			t.Errorf("%s: lines/parsed/ignored/bad %d/%d/%d/%d, want %d/%d/%d/0", path, s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines, lines, read, skipped)
		}
		if read+skipped != lines {
			t.Errorf("%s: the test classified %d + %d of %d lines", path, read, skipped, lines)
		}
		requireAccounting(t, path, tr)
		if want := inputs + outputs + groups; c.messages != want {
			t.Errorf("%s: %d messages, want %d (%d inputs + %d outputs + %d responses)", path, c.messages, want, inputs, outputs, groups)
		}
		if c.toolUses != calls || tr.Stats.ToolCalls != calls {
			t.Errorf("%s: %d tool_use blocks (stats %d), want %d", path, c.toolUses, tr.Stats.ToolCalls, calls)
		}
		if c.toolResults != outputs+webSearch {
			t.Errorf("%s: %d tool results, want %d outputs + %d web searches", path, c.toolResults, outputs, webSearch)
		}
		if c.toolErrors != errs {
			t.Errorf("%s: %d error results, want %d", path, c.toolErrors, errs)
		}
		// Every new token_count snapshot in these files follows the items
		// of its response, so each is one recorded call.
		if c.calls != newTotals || tr.Stats.APICalls != newTotals {
			t.Errorf("%s: %d calls with usage, want %d new token_count totals", path, c.calls, newTotals)
		}
		var gotInput int64
		for _, i := range tr.Calls() {
			if tr.Messages[i].Measured() {
				gotInput += tr.Messages[i].Usage.Context()
			}
		}
		if gotInput != sumInput {
			t.Errorf("%s: summed call context %d, want the summed last_token_usage.input_tokens %d", path, gotInput, sumInput)
		}
		if len(tr.Compactions) != compacted || tr.Stats.CompactBoundaries != compacted {
			t.Errorf("%s: %d compactions, want %d", path, len(tr.Compactions), compacted)
		}
		ignoredEvents := 0
		for k, n := range tr.Stats.IgnoredByType {
			if strings.HasPrefix(k, "event_msg:") {
				ignoredEvents += n
			}
		}
		if ignoredEvents+newTotals != eventLines {
			t.Errorf("%s: %d ignored event lines + %d used token counts, want %d event lines", path, ignoredEvents, newTotals, eventLines)
		}
		for _, comp := range tr.Compactions {
			if comp.Summary == "" || comp.PreTokens <= 0 {
				t.Errorf("%s: compaction without summary or pre-tokens: %+v", path, comp)
			}
		}
	}
}

var exitLine = regexp.MustCompile(`^Exit code: (-?\d+)`)

// exitCodeIndependent reads an exit code from a Codex output without the
// reader's helper: the JSON form's metadata.exit_code, or the first line.
func exitCodeIndependent(out string) (int, bool) {
	var js struct {
		Metadata *struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(out), &js) == nil && js.Metadata != nil && js.Metadata.ExitCode != nil {
		return *js.Metadata.ExitCode, true
	}
	if m := exitLine.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	return 0, false
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestRealCorpusSWEAgent(t *testing.T) {
	dir := testutil.RealCorpus(t, "swe-agent")
	for _, path := range corpusFiles(t, dir, ".traj") {
		tr := readAs(t, path, SWEAgentFormat)
		requireNoProblems(t, tr)
		var doc obj
		readJSON(t, path, &doc)
		history := getA(doc, "history")
		var calls, results, demos, read, empty int
		prevAction := false
		for _, h := range history {
			m := h.(obj)
			switch getS(m, "role") {
			case "system", "user", "tool":
				read++
			case "assistant":
				if m["content"] == "" && len(getA(m, "tool_calls")) == 0 && strings.TrimSpace(getS(m, "action")) == "" {
					empty++
				} else {
					read++
				}
			}
			switch getS(m, "role") {
			case "assistant":
				n := len(getA(m, "tool_calls"))
				if n == 0 && strings.TrimSpace(getS(m, "action")) != "" {
					n = 1
					prevAction = true
				} else {
					prevAction = false
				}
				calls += n
			case "tool":
				results += len(getA(m, "tool_call_ids"))
				prevAction = false
			case "user":
				if prevAction {
					results++
				}
				if m["is_demo"] == true {
					demos++
				}
				prevAction = false
			}
		}
		c := countOf(tr)
		if c.messages != len(history) {
			t.Errorf("%s: %d messages, want %d history entries", path, c.messages, len(history))
		}
		// The records are the history entries.
		if s := tr.Stats; s.Lines != len(history) || s.ParsedLines != read || s.IgnoredLines != empty || s.BadLines != 0 {
			t.Errorf("%s: lines/parsed/ignored/bad %d/%d/%d/%d, want %d/%d/%d/0", path, s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines, len(history), read, empty)
		}
		requireAccounting(t, path, tr)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// One message per entry, on the line where the entry starts.
		for i, e := range jsonElems(t, data, 1, "history") {
			if i < len(tr.Messages) && tr.Messages[i].Line != e.line {
				t.Errorf("%s: message %d on line %d, its history entry starts on line %d", path, i, tr.Messages[i].Line, e.line)
			}
		}
		if c.toolUses != calls || c.toolResults != results {
			t.Errorf("%s: %d calls / %d results, want %d / %d", path, c.toolUses, c.toolResults, calls, results)
		}
		meta := 0
		for _, m := range tr.Messages {
			if m.IsMeta {
				meta++
			}
		}
		if meta != demos {
			t.Errorf("%s: %d meta messages, want %d demonstrations", path, meta, demos)
		}
		if turns := tr.Turns(); len(turns) != 1 {
			t.Errorf("%s: %d turns, want 1 (one issue statement)", path, len(turns))
		}
	}
}

func TestRealCorpusOpenHands(t *testing.T) {
	dir := testutil.RealCorpus(t, "openhands")
	notCalls := map[string]bool{"message": true, "system": true, "finish": true, "condensation": true,
		"change_agent_state": true, "null": true, "recall": true, "": true}
	for _, path := range corpusFiles(t, dir, ".json") {
		tr := readAs(t, path, OpenHandsFormat)
		requireNoProblems(t, tr)
		var events []obj
		readJSON(t, path, &events)
		callEvents := map[int64]bool{}
		var calls, results, userMsgs, texts, errs, read int
		responses := map[string]bool{}
		for _, e := range events {
			if resp := getM(getM(e, "tool_call_metadata"), "model_response"); resp != nil && resp["usage"] != nil {
				responses[getS(resp, "id")] = true
			}
			args := getM(e, "args")
			if act, ok := e["action"].(string); ok {
				switch {
				case act == "message" && getS(e, "source") == "user":
					userMsgs++
					if getS(args, "content")+getS(e, "message") != "" || len(getA(args, "image_urls")) > 0 {
						read++
					}
				case act == "message" || act == "finish":
					texts++
					if getS(args, "content")+getS(args, "final_thought")+getS(args, "thought")+getS(e, "message") != "" {
						read++
					}
				case act == "system" || act == "condensation":
					read++
				case !notCalls[act] && getS(e, "source") == "agent":
					calls++
					read++
					callEvents[num(e["id"])] = true
				}
				continue
			}
			if cause, ok := e["cause"].(float64); ok && callEvents[int64(cause)] {
				results++
				read++
				if e["success"] == false || getS(e, "observation") == "error" {
					errs++
				}
			} else if getS(e, "observation") == "recall" && getS(e, "content") != "" {
				read++
			}
		}
		c := countOf(tr)
		if c.toolUses != calls || c.toolResults != results || c.toolErrors != errs {
			t.Errorf("%s: calls/results/errors %d/%d/%d, want %d/%d/%d", path, c.toolUses, c.toolResults, c.toolErrors, calls, results, errs)
		}
		if c.roles[transcript.RoleUser] != userMsgs {
			t.Errorf("%s: %d user messages, want %d", path, c.roles[transcript.RoleUser], userMsgs)
		}
		if c.calls != len(responses) {
			t.Errorf("%s: %d calls with usage, want %d model responses with usage", path, c.calls, len(responses))
		}
		// The records are the events: those read, the rest ignored by type.
		if s := tr.Stats; s.Lines != len(events) || s.ParsedLines != read || s.IgnoredLines != len(events)-read || s.BadLines != 0 {
			t.Errorf("%s: lines/parsed/ignored/bad %d/%d/%d/%d, want %d/%d/%d/0", path, s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines,
				len(events), read, len(events)-read)
		}
		requireAccounting(t, path, tr)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Each message is on the line of an event: the first one of its
		// model response, so the lines never go back.
		starts := map[int]bool{}
		for _, e := range jsonElems(t, data, 1) {
			starts[e.line] = true
		}
		prev := 0
		for i, m := range tr.Messages {
			if !starts[m.Line] || m.Line < prev {
				t.Errorf("%s: message %d on line %d, not where an event starts or before message %d", path, i, m.Line, i-1)
			}
			prev = m.Line
		}
	}
}

var functionTagRe = regexp.MustCompile(`<function=[^>\s]+>`)

func TestRealCorpusADP(t *testing.T) {
	dir := testutil.RealCorpus(t, "adp")
	for _, path := range corpusFiles(t, dir, ".json") {
		ts := readPath(t, path, "")
		var rows []obj
		readJSON(t, path, &rows)
		if len(ts) != len(rows) {
			t.Fatalf("%s: %d transcripts, want one per row (%d)", path, len(ts), len(rows))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rawRows := jsonElems(t, data, 1)
		for i, row := range rows {
			tr := ts[i]
			if tr.Format != OpenAIChatFormat {
				t.Errorf("%s row %d read as %s", path, i, tr.Format)
			}
			requireNoProblems(t, tr)
			requireAccounting(t, path, tr)
			list := getA(row, "messages")
			key, fenced := "messages", false
			if list == nil {
				list, key, fenced = getA(row, "trajectory"), "trajectory", true
			}
			// The records are the messages, each read and on its own line.
			if s := tr.Stats; s.Lines != len(list) || s.ParsedLines != len(list) || s.IgnoredLines != 0 || s.BadLines != 0 {
				t.Errorf("%s row %d: lines/parsed/ignored/bad %d/%d/%d/%d, want %d/%d/0/0", path, i, s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines,
					len(list), len(list))
			}
			for j, e := range jsonElems(t, rawRows[i].raw, rawRows[i].line, key) {
				if j < len(tr.Messages) && tr.Messages[j].Line != e.line {
					t.Errorf("%s row %d: message %d on line %d, it starts on line %d", path, i, j, tr.Messages[j].Line, e.line)
				}
			}
			var calls, results int
			pending := false
			for _, x := range list {
				m := x.(obj)
				text := getS(m, "content")
				if fenced {
					text = getS(m, "text")
				}
				switch getS(m, "role") {
				case "assistant", "ai":
					pending = false
					if n := len(getA(m, "tool_calls")); n > 0 {
						calls += n
					} else if (!fenced && functionTagRe.MatchString(text)) || (fenced && strings.Count(text, "```") >= 2) {
						calls++
						pending = true
					}
				case "tool":
					results++
				case "user":
					if pending {
						results++
					}
					pending = false
				}
			}
			c := countOf(tr)
			if c.messages != len(list) {
				t.Errorf("%s row %d: %d messages, want %d", path, i, c.messages, len(list))
			}
			if c.toolUses != calls || c.toolResults != results {
				t.Errorf("%s row %d: calls/results %d/%d, want %d/%d", path, i, c.toolUses, c.toolResults, calls, results)
			}
			for _, k := range []string{"id", "instance_id"} {
				if id := getS(row, k); id != "" {
					if tr.ID != id {
						t.Errorf("%s row %d: id %q, want %q", path, i, tr.ID, id)
					}
					break
				}
			}
		}
	}
}

func TestRealCorpusClaudeAISynthetic(t *testing.T) {
	dir := testutil.RealCorpus(t, "claude-ai-synthetic")
	known := map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true, "server_tool_use": true,
		"tool_result": true, "web_search_tool_result": true, "web_fetch_tool_result": true, "image": true, "token_budget": true, "flag": true}
	for _, path := range corpusFiles(t, dir, ".json") {
		tr := readAs(t, path, ClaudeAIFormat)
		var conv obj
		readJSON(t, path, &conv)
		msgs := getA(conv, "chat_messages")
		var unknown, wantMsgs, images int
		for _, x := range msgs {
			m := x.(obj)
			wantMsgs++
			for _, b := range getA(m, "content") {
				if !known[getS(b.(obj), "type")] {
					unknown++
				}
			}
			if getS(m, "sender") == "human" {
				images += len(getA(m, "files"))
				for _, a := range getA(m, "attachments") {
					if getS(a.(obj), "extracted_content") != "" {
						wantMsgs++
						break
					}
				}
			}
		}
		// The schema-generated samples use made-up block types: each is
		// reported, and nothing else is.
		if len(tr.Problems) != unknown {
			t.Errorf("%s: %d problems, want %d (one per unknown block type)", path, len(tr.Problems), unknown)
		}
		for _, p := range tr.Problems {
			if !strings.Contains(p.Reason, "unknown content block type") {
				t.Errorf("%s: unexpected problem %q", path, p.Reason)
			}
		}
		if len(tr.Messages) != wantMsgs {
			t.Errorf("%s: %d messages, want %d", path, len(tr.Messages), wantMsgs)
		}
		gotImages := 0
		for _, m := range tr.Messages {
			for _, b := range m.Blocks {
				gotImages += b.Images
			}
		}
		if gotImages != images {
			t.Errorf("%s: %d images, want %d files", path, gotImages, images)
		}
		if tr.ID != getS(conv, "uuid") {
			t.Errorf("%s: id %q, want %q", path, tr.ID, getS(conv, "uuid"))
		}
		// The records are the chat messages; each gives a message here.
		if s := tr.Stats; s.Lines != len(msgs) || s.ParsedLines != len(msgs) || s.IgnoredLines != 0 || s.BadLines != 0 {
			t.Errorf("%s: lines/parsed/ignored/bad %d/%d/%d/%d, want %d/%d/0/0", path, s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines,
				len(msgs), len(msgs))
		}
		requireAccounting(t, path, tr)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Messages and problems are on the line where their chat message
		// starts.
		lineOfUUID := map[string]int{}
		starts := map[int]bool{}
		for _, e := range jsonElems(t, data, 1, "chat_messages") {
			var m struct{ UUID string }
			if err := json.Unmarshal(e.raw, &m); err != nil {
				t.Fatal(err)
			}
			lineOfUUID[m.UUID] = e.line
			starts[e.line] = true
		}
		for i, m := range tr.Messages {
			if want, ok := lineOfUUID[m.UUID]; !ok || m.Line != want {
				t.Errorf("%s: message %d (%s) on line %d, its chat message starts on line %d", path, i, m.UUID, m.Line, want)
			}
		}
		for _, p := range tr.Problems {
			if !starts[p.Line] {
				t.Errorf("%s: problem on line %d, where no chat message starts: %s", path, p.Line, p.Reason)
			}
		}
	}
}

// TestRealCorpusDetection checks that every real file is claimed by the
// reader its MANIFEST.tsv kind names, so a folder added to the corpus needs no
// edit here. Files the manifest does not list are checked against the folder's
// other files; a folder whose files are all unlisted fails with a message.
func TestRealCorpusDetection(t *testing.T) {
	root := testutil.RealCorpus(t)
	manifest := readManifest(t, root)
	byKind := map[string]string{
		"claude-code": ClaudeCodeFormat, "claude-ai-export": ClaudeAIFormat, "codex": CodexFormat,
		"swe-agent": SWEAgentFormat, "openhands": OpenHandsFormat, "other": "unknown",
	}
	// The Agent Data Protocol folder holds SWE-agent and OpenHands sessions
	// converted to ADP's OpenAI-style chat: the manifest names their origin.
	byFolder := map[string]string{"adp": OpenAIChatFormat}
	folderKind := map[string]string{}
	for rel, row := range manifest {
		folder := strings.SplitN(rel, "/", 2)[0]
		if w, ok := byKind[row.kind]; ok && row.kind != "other" {
			folderKind[folder] = w
		}
	}
	for _, path := range corpusFiles(t, root, ".json", ".jsonl", ".traj") {
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(os.PathSeparator)))
		folder := strings.SplitN(rel, "/", 2)[0]
		w, ok := byFolder[folder]
		if !ok {
			if row, listed := manifest[rel]; listed {
				w, ok = byKind[row.kind]
				if !ok {
					t.Errorf("%s: manifest kind %q names no reader", rel, row.kind)
					continue
				}
			} else if w, ok = folderKind[folder]; !ok {
				t.Errorf("%s: not in MANIFEST.tsv and no other file of folder %s is", rel, folder)
				continue
			}
		}
		for _, tr := range readPath(t, path, "") {
			if tr.Format != w {
				t.Errorf("%s read as %s, want %s", rel, tr.Format, w)
			}
		}
	}
}
