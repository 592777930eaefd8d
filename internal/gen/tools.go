package gen

import (
	"strings"
)

// Tool calls as Claude Code records them: the input the model sent, the
// result text it got back, and the toolUseResult UI record beside it. The
// toolUseResult is appended straight into the file when the result is
// written (call.tur); whatever it shows that is random is drawn here, when
// the call is made.

// errorResult is the toolUseResult of a failed call: "Error: " and msg, as
// a JSON string.
func errorResult(msg string) func([]byte) []byte {
	return func(b []byte) []byte {
		b = append(b, `"Error: `...)
		return append(appendEscaped(b, msg), '"')
	}
}

// bash runs a shell command. A non-zero exit is an error result whose text
// starts "Exit code N", as Claude Code writes it.
func (st *step) bash(cmd, desc, out string, exit int) *step {
	in := append(make([]byte, 0, len(cmd)+len(desc)+40), '{')
	in = kvStr(in, "command", cmd)
	if desc != "" {
		in = kvStr(in, "description", desc)
	}
	in = append(in, '}')
	c := &call{name: "Bash", input: in, durMs: between(st.s.rng, 80, 4_000)}
	out = strings.TrimRight(out, "\n")
	if exit != 0 {
		c.isErr = true
		c.out = "Exit code " + itoa(exit) + "\n" + out
		c.tur = errorResult(c.out)
		st.s.facts.errors = append(st.s.facts.errors, errorLine(out))
	} else {
		c.out = out
		c.tur = func(t []byte) []byte {
			t = kvStr(append(t, '{'), "stdout", out)
			t = kvStr(t, "stderr", "")
			t = kvBool(t, "interrupted", false)
			t = kvBool(t, "isImage", false)
			return append(t, '}')
		}
	}
	if strings.Count(out, "\n") > 12 {
		c.longRun = true
		c.durMs = between(st.s.rng, 3_000, 60_000)
	}
	st.s.facts.commands = append(st.s.facts.commands, cmd)
	st.add(c)
	return st
}

// run runs a test run's command.
func (st *step) run(tr testRun, desc string) *step { return st.bash(tr.cmd, desc, tr.out, tr.exit) }

// read reads a project file (relative path) whole.
func (st *step) read(rel string) *step {
	s := st.s
	abs := s.proj.abs(rel)
	content := s.proj.content(s.rng, rel)
	in := kvStr([]byte{'{'}, "file_path", abs)
	in = append(in, '}')
	n := int64(strings.Count(content, "\n"))
	c := &call{name: "Read", input: in, out: numbered(content), durMs: between(s.rng, 5, 120)}
	c.tur = func(t []byte) []byte {
		t = kvStr(append(t, '{'), "type", "text")
		t = append(appendKey(t, "file"), '{')
		t = kvStr(t, "filePath", abs)
		t = kvStr(t, "content", content)
		t = kvInt(t, "numLines", n)
		t = kvInt(t, "startLine", 1)
		t = kvInt(t, "totalLines", n)
		return append(t, '}', '}')
	}
	s.facts.file(rel)
	st.add(c)
	return st
}

// readMissing reads a file that does not exist.
func (st *step) readMissing(rel string) *step {
	in := kvStr([]byte{'{'}, "file_path", st.s.proj.abs(rel))
	c := &call{name: "Read", input: append(in, '}'), isErr: true, durMs: 5,
		out: "<tool_use_error>File does not exist.</tool_use_error>", tur: errorResult("File does not exist.")}
	st.add(c)
	return st
}

// edit replaces old by new in a project file; the file's content changes
// for later reads.
func (st *step) edit(rel, old, new string) *step {
	s := st.s
	abs := s.proj.abs(rel)
	orig := s.proj.content(s.rng, rel)
	c := &call{name: "Edit", input: editInput(abs, old, new), durMs: between(s.rng, 10, 200),
		out: "The file " + abs + " has been updated successfully."}
	at := strings.Index(orig, old)
	start := int64(strings.Count(orig[:max(0, at)], "\n") + 1)
	c.tur = func(t []byte) []byte {
		t = kvStr(append(t, '{'), "filePath", abs)
		t = kvStr(t, "oldString", old)
		t = kvStr(t, "newString", new)
		t = kvStr(t, "originalFile", orig)
		t = append(appendKey(t, "structuredPatch"), '[', '{')
		t = kvInt(t, "oldStart", start)
		t = kvInt(t, "oldLines", int64(strings.Count(old, "\n")+1))
		t = kvInt(t, "newStart", start)
		t = kvInt(t, "newLines", int64(strings.Count(new, "\n")+1))
		var lines []string
		for _, l := range strings.Split(old, "\n") {
			lines = append(lines, "-"+l)
		}
		for _, l := range strings.Split(new, "\n") {
			lines = append(lines, "+"+l)
		}
		t = appendStrArray(appendKey(t, "lines"), lines)
		t = append(t, '}', ']')
		t = kvBool(t, "userModified", false)
		t = kvBool(t, "replaceAll", false)
		return append(t, '}')
	}
	if at >= 0 {
		s.proj.files[rel] = orig[:at] + new + orig[at+len(old):]
	}
	s.facts.file(rel)
	st.add(c)
	return st
}

// editInput is the input of an Edit call.
func editInput(abs, old, new string) []byte {
	in := append(make([]byte, 0, len(old)+len(new)+len(abs)+80), '{')
	in = kvBool(in, "replace_all", false)
	in = kvStr(in, "file_path", abs)
	in = kvStr(in, "old_string", old)
	in = kvStr(in, "new_string", new)
	return append(in, '}')
}

// editMiss is an Edit whose old_string is not in the file.
func (st *step) editMiss(rel, old, new string) *step {
	msg := "String to replace not found in file.\nString: " + old
	st.add(&call{name: "Edit", input: editInput(st.s.proj.abs(rel), old, new), isErr: true, durMs: 10,
		out: "<tool_use_error>" + msg + "</tool_use_error>", tur: errorResult(msg)})
	return st
}

// write creates or overwrites a project file.
func (st *step) write(rel, content string) *step {
	s := st.s
	abs := s.proj.abs(rel)
	in := append(make([]byte, 0, len(content)+len(abs)+40), '{')
	in = kvStr(in, "file_path", abs)
	in = kvStr(in, "content", content)
	in = append(in, '}')
	c := &call{name: "Write", input: in, durMs: between(s.rng, 10, 200), out: "File created successfully at: " + abs}
	c.tur = func(t []byte) []byte {
		t = kvStr(append(t, '{'), "type", "create")
		t = kvStr(t, "filePath", abs)
		t = kvStr(t, "content", content)
		t = append(appendKey(t, "structuredPatch"), '[', ']')
		return append(t, '}')
	}
	s.proj.files[rel] = content
	s.facts.file(rel)
	st.add(c)
	return st
}

// grep searches file contents; out is what it prints (path:line:text).
func (st *step) grep(pattern, path, out string) *step {
	in := append(make([]byte, 0, 128), '{')
	in = kvStr(in, "pattern", pattern)
	if path != "" {
		in = kvStr(in, "path", path)
	}
	in = kvStr(in, "output_mode", "content")
	in = append(in, '}')
	if out == "" {
		out = "No matches found"
	}
	c := &call{name: "Grep", input: in, out: out, durMs: between(st.s.rng, 20, 400)}
	c.tur = func(t []byte) []byte {
		t = kvStr(append(t, '{'), "mode", "content")
		t = kvInt(t, "numFiles", 0)
		t = append(appendKey(t, "filenames"), '[', ']')
		t = kvStr(t, "content", out)
		t = kvInt(t, "numLines", int64(strings.Count(out, "\n")+1))
		return append(t, '}')
	}
	st.add(c)
	return st
}

// glob lists files matching a pattern (absolute paths).
func (st *step) glob(pattern string, matches []string) *step {
	in := kvStr([]byte{'{'}, "pattern", pattern)
	out := strings.Join(matches, "\n")
	if out == "" {
		out = "No files found"
	}
	c := &call{name: "Glob", input: append(in, '}'), out: out, durMs: between(st.s.rng, 5, 300)}
	c.tur = func(t []byte) []byte {
		t = appendStrArray(appendKey(append(t, '{'), "filenames"), matches)
		t = kvInt(t, "durationMs", int64(c.durMs))
		t = kvInt(t, "numFiles", int64(len(matches)))
		t = kvBool(t, "truncated", false)
		return append(t, '}')
	}
	st.add(c)
	return st
}

// link is a web search hit.
type link struct{ title, url string }

// webSearch runs a server-side web search: links, then a digest.
func (st *step) webSearch(query string, links []link, digest string) *step {
	in := kvStr([]byte{'{'}, "query", query)
	lj := append(make([]byte, 0, 512), '[')
	for i, l := range links {
		if i > 0 {
			lj = append(lj, ',')
		}
		lj = append(lj, '{')
		lj = kvStr(lj, "title", l.title)
		lj = kvStr(lj, "url", l.url)
		lj = append(lj, '}')
	}
	lj = append(lj, ']')
	out := "Web search results for query: \"" + query + "\"\n\nLinks: " + string(lj) + "\n\n" + digest
	c := &call{name: "WebSearch", input: append(in, '}'), out: out, durMs: between(st.s.rng, 2_000, 9_000)}
	srvID := apiID(st.s.rng, "srvtoolu_01", 22)
	c.tur = func(t []byte) []byte {
		t = kvStr(append(t, '{'), "query", query)
		t = append(appendKey(t, "results"), '[', '{')
		t = kvStr(t, "tool_use_id", srvID)
		t = kvRaw(t, "content", lj)
		t = append(t, '}', ',')
		t = appendStr(t, digest)
		t = append(t, ']')
		t = kvInt(t, "durationSeconds", int64(c.durMs/1000))
		return append(t, '}')
	}
	st.add(c)
	return st
}

// webFetch fetches a page and answers prompt about it; code is the HTTP
// status (an error result when it is not 200).
func (st *step) webFetch(url, prompt, out string, code int) *step {
	in := append(make([]byte, 0, len(url)+len(prompt)+32), '{')
	in = kvStr(in, "url", url)
	in = kvStr(in, "prompt", prompt)
	in = append(in, '}')
	c := &call{name: "WebFetch", input: in, durMs: between(st.s.rng, 1_000, 12_000)}
	if code != 200 {
		c.isErr = true
		c.out = "Request failed with status code " + itoa(code)
		c.tur = errorResult(c.out)
		st.add(c)
		return st
	}
	c.out = out
	size := int64(between(st.s.rng, 8_000, 400_000))
	c.tur = func(t []byte) []byte {
		t = kvInt(append(t, '{'), "bytes", size)
		t = kvInt(t, "code", 200)
		t = kvStr(t, "codeText", "OK")
		t = kvStr(t, "result", out)
		t = kvInt(t, "durationMs", int64(c.durMs))
		t = kvStr(t, "url", url)
		return append(t, '}')
	}
	st.add(c)
	return st
}

// todoItem is one entry of a TodoWrite list.
type todoItem struct{ content, status string }

// todo rewrites the agent's todo list.
func (st *step) todo(items []todoItem) *step {
	in := append(make([]byte, 0, 256), '{')
	in = append(appendKey(in, "todos"), '[')
	for i, it := range items {
		if i > 0 {
			in = append(in, ',')
		}
		in = append(in, '{')
		in = kvStr(in, "content", it.content)
		in = kvStr(in, "status", it.status)
		in = kvStr(in, "activeForm", capitalize(it.content))
		in = append(in, '}')
	}
	in = append(in, ']', '}')
	c := &call{name: "TodoWrite", input: in, durMs: 5,
		out: "Todo list updated. Keep using it to track progress, and carry on with the current task."}
	c.tur = func(t []byte) []byte {
		t = append(appendKey(append(t, '{'), "oldTodos"), '[', ']')
		t = kvRaw(t, "newTodos", in[len(`{"todos":`):len(in)-1])
		return append(t, '}')
	}
	st.add(c)
	return st
}

// task runs a subagent: body writes the subagent's own file (its steps go
// there while it runs) and returns the report the main session receives.
func (st *step) task(kind, desc, prompt string, body func(s *sess) string) *step {
	s := st.s
	in := append(make([]byte, 0, len(prompt)+len(desc)+64), '{')
	in = kvStr(in, "description", desc)
	in = kvStr(in, "prompt", prompt)
	in = kvStr(in, "subagent_type", kind)
	in = append(in, '}')
	c := &call{name: "Task", input: in, listContent: true, durMs: 500}
	c.run = func(c *call) {
		aid := hexID(s.rng, 7)
		sf, err := s.newFile(s.subagentPath(aid), true, aid, s.prof.subModel)
		if err != nil {
			s.fail(err)
			c.out = "Agent failed to start."
			return
		}
		saved := s.cur
		s.cur = sf
		start := s.clock
		sf.prompt(prompt)
		report := body(s)
		s.cur = saved
		s.closeFile(sf)
		c.out = report
		took, tokens, tools := s.clock-start, sf.total, sf.exp.ToolCalls
		c.tur = func(t []byte) []byte {
			t = kvStr(append(t, '{'), "status", "completed")
			t = kvStr(t, "prompt", prompt)
			t = kvStr(t, "agentId", aid)
			t = append(appendKey(t, "content"), '[', '{')
			t = kvStr(t, "type", "text")
			t = kvStr(t, "text", report)
			t = append(t, '}', ']')
			t = kvInt(t, "totalDurationMs", took)
			t = kvInt(t, "totalTokens", tokens)
			t = kvInt(t, "totalToolUseCount", tools)
			return append(t, '}')
		}
	}
	st.add(c)
	return st
}

// errorLine is the line of a failed command's output that says what went
// wrong: the first one naming an error or failure, else the first line.
func errorLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		l := strings.ToLower(line)
		for _, w := range []string{"error", "fail", "panic", "undefined", "not found", "unauthorized"} {
			if strings.Contains(l, w) {
				return strings.TrimSpace(line)
			}
		}
	}
	return firstLine(strings.TrimSpace(out))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
