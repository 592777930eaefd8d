package gen

import (
	"io"
	"sync"
)

// profile is the file shape of one Claude Code version (docs/formats.md and
// the real files in shared/real-corpus): 2.1.39 writes hook progress records,
// points each tool result at the line holding its tool_use and tags tool
// calls with a caller; 2.0.76 chains every record to the previous one,
// parallel tool results included, and writes 5-minute cache entries.
type profile struct {
	version      string
	hooks        bool
	threaded     bool
	caller       bool
	slug         bool
	geo          bool
	ttl1h        bool
	thinkingMeta string
	permission   bool
	mainModel    string
	subModel     string
}

var profiles = []*profile{
	{version: "2.1.39", hooks: true, threaded: true, caller: true, slug: true, geo: true, ttl1h: true,
		thinkingMeta: `{"maxThinkingTokens":31999}`, permission: true,
		mainModel: "claude-opus-4-6", subModel: "claude-sonnet-4-5-20250929"},
	{version: "2.0.76", thinkingMeta: `{"level":"high","disabled":false,"triggers":[]}`,
		mainModel: "claude-sonnet-4-5-20250929", subModel: "claude-haiku-4-5-20251001"},
}

// flushAt is the buffered size at which a file's bytes go to its writer.
const flushAt = 256 << 10

// bufPool recycles file buffers between sessions: allocating and clearing a
// fresh one per file was a tenth of the generation time.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, flushAt+64<<10)
	return &b
}}

// tfile writes one transcript file and keeps the state its records depend
// on: the parent chain, the usage model and the counts it promises.
type tfile struct {
	s    *sess
	w    io.Writer
	err  error
	buf  []byte
	env  []byte // fields between parentUuid and the record's own fields
	side bool   // a subagent (sidechain) file
	last string // uuid of the newest tree record, the next record's parent

	exp Expect // also holds the file's model

	system    int64 // fixed overhead of every call
	total     int64 // context the next call would send
	cached    int64 // prefix the next call reads from the cache
	newPrompt bool  // a prompt came since the last call
}

func (s *sess) newFile(path string, side bool, agentID, model string) (*tfile, error) {
	w, err := s.create(path)
	if err != nil {
		return nil, err
	}
	f := &tfile{s: s, w: w, side: side, buf: (*bufPool.Get().(*[]byte))[:0]}
	f.exp.Path = path
	f.exp.SessionID = s.id
	f.exp.Model = model
	f.exp.Kind = "session"
	f.exp.ID = s.id
	f.system = SystemTokens
	if side {
		f.system = SubagentSystemTokens
		f.exp.Kind = "subagent"
		f.exp.ID = "agent-" + agentID
		f.exp.ParentID = s.id
	}
	f.total = f.system
	f.cached = f.system // the system prefix is warm from earlier sessions
	if side {
		f.cached = 0
	}
	p := s.prof
	e := kvBool(append(f.env, '{'), "isSidechain", side)[1:]
	e = kvStr(e, "userType", "external")
	e = kvStr(e, "cwd", s.proj.root)
	e = kvStr(e, "sessionId", s.id)
	e = kvStr(e, "version", p.version)
	e = kvStr(e, "gitBranch", s.proj.branch)
	if side {
		e = kvStr(e, "agentId", agentID)
	}
	if p.slug {
		e = kvStr(e, "slug", s.slug)
	}
	f.env = e
	return f, nil
}

// begin starts a tree record: {"parentUuid":…,<envelope>
func (f *tfile) begin(parent string) []byte {
	b := append(f.buf, `{"parentUuid":`...)
	if parent == "" {
		b = append(b, "null"...)
	} else {
		b = appendStr(b, parent)
	}
	b = append(b, ',')
	return append(b, f.env...)
}

// end closes a record and counts its line.
func (f *tfile) end(b []byte) {
	f.buf = append(b, '}', '\n')
	f.exp.Lines++
	if len(f.buf) >= flushAt {
		f.flush()
	}
}

func (f *tfile) flush() {
	if len(f.buf) == 0 {
		return
	}
	f.exp.Bytes += int64(len(f.buf))
	if f.err == nil {
		_, f.err = f.w.Write(f.buf)
	}
	f.buf = f.buf[:0]
}

// close flushes the file and returns the first write error.
func (f *tfile) close() error {
	f.flush()
	b := f.buf[:0]
	bufPool.Put(&b)
	f.buf = nil
	if c, ok := f.w.(io.Closer); ok {
		if err := c.Close(); err != nil && f.err == nil {
			f.err = err
		}
	}
	return f.err
}

// tail appends uuid and timestamp, the fields every tree record ends with.
func (f *tfile) tail(b []byte, uuid string) []byte {
	return f.timestampKV(kvStr(b, "uuid", uuid))
}

// timestampKV appends the time of the newest record.
func (f *tfile) timestampKV(b []byte) []byte {
	b = appendKey(b, "timestamp")
	b = append(b, '"')
	b = appendTime(b, f.s.clock)
	return append(b, '"')
}

// ignored counts a line the reader skips by record type.
func (f *tfile) ignored() { f.exp.IgnoredLines++ }

// snapshot writes a file-history-snapshot record (ignored by readers).
func (f *tfile) snapshot(messageID string) {
	b := append(f.buf, '{')
	b = kvStr(b, "type", "file-history-snapshot")
	b = kvStr(b, "messageId", messageID)
	b = append(appendKey(b, "snapshot"), '{')
	b = kvStr(b, "messageId", messageID)
	b = append(appendKey(b, "trackedFileBackups"), '{', '}')
	b = f.timestampKV(b)
	b = append(b, '}')
	b = kvBool(b, "isSnapshotUpdate", false)
	f.ignored()
	f.end(b)
}

// title writes a session title record ("summary" type, not a compaction).
func (f *tfile) title(text string) {
	b := append(f.buf, '{')
	b = kvStr(b, "type", "summary")
	b = kvStr(b, "summary", text)
	b = kvStr(b, "leafUuid", newUUID(f.s.rng))
	f.ignored()
	f.end(b)
}

// progress writes a hook or bash progress record chained to the newest
// record.
func (f *tfile) progress(data []byte, toolUseID, parentToolUseID string) {
	u := newUUID(f.s.rng)
	b := f.begin(f.last)
	b = kvStr(b, "type", "progress")
	b = kvRaw(b, "data", data)
	b = kvStr(b, "toolUseID", toolUseID)
	b = kvStr(b, "parentToolUseID", parentToolUseID)
	b = f.tail(b, u)
	f.last = u
	f.ignored()
	f.end(b)
	f.s.tick(1, 40)
}

// hook writes the progress record of one hook command run for event
// (tool: the tool or the SessionStart source, "" for none).
func (f *tfile) hook(event, tool, command, toolUseID string) {
	d := append(make([]byte, 0, 160), '{')
	d = kvStr(d, "type", "hook_progress")
	d = kvStr(d, "hookEvent", event)
	name := event
	if tool != "" {
		name += ":" + tool
	}
	d = kvStr(d, "hookName", name)
	d = kvStr(d, "command", command)
	d = append(d, '}')
	f.progress(d, toolUseID, toolUseID)
}

// sessionStart writes the SessionStart hook records of a session's start or
// of its resumption after a compaction (source "startup" or "compact").
func (f *tfile) sessionStart(source string) {
	id := newUUID(f.s.rng)
	for _, h := range []string{"~/.claude/hooks/session-start.sh", "git status --short"} {
		f.hook("SessionStart", source, h, id)
	}
}

// sysRecord writes a system record of a subtype readers ignore.
func (f *tfile) sysRecord(subtype string, extra func(b []byte) []byte) {
	u := newUUID(f.s.rng)
	b := f.begin(f.last)
	b = kvStr(b, "type", "system")
	b = kvStr(b, "subtype", subtype)
	b = extra(b)
	b = f.tail(b, u)
	b = kvBool(b, "isMeta", false)
	f.last = u
	f.ignored()
	f.end(b)
}

// prompt writes a user prompt: a new turn.
func (f *tfile) prompt(text string) string {
	u := newUUID(f.s.rng)
	if !f.side {
		f.snapshot(u)
	}
	b := f.begin(f.last)
	b = kvStr(b, "type", "user")
	b = append(appendKey(b, "message"), '{')
	b = kvStr(b, "role", "user")
	b = kvStr(b, "content", text)
	b = append(b, '}')
	b = f.tail(b, u)
	if !f.side {
		p := f.s.prof
		b = kvRaw(b, "thinkingMetadata", []byte(p.thinkingMeta))
		b = append(appendKey(b, "todos"), '[', ']')
		if p.permission {
			b = kvStr(b, "permissionMode", "acceptEdits")
		}
	}
	f.last = u
	f.end(b)
	f.exp.Messages++
	f.exp.Turns++
	f.total += MessageTokens + proseTokens(len(text))
	f.newPrompt = true
	return u
}

// metaText writes a user text record that the harness, not the user,
// produced (an interruption notice): model-visible, not a prompt.
func (f *tfile) metaText(text string) {
	u := newUUID(f.s.rng)
	b := f.begin(f.last)
	b = kvStr(b, "type", "user")
	b = append(appendKey(b, "message"), '{')
	b = kvStr(b, "role", "user")
	b = append(appendKey(b, "content"), '[', '{')
	b = kvStr(b, "type", "text")
	b = kvStr(b, "text", text)
	b = append(b, '}', ']', '}')
	b = f.tail(b, u)
	f.last = u
	f.end(b)
	f.exp.Messages++
	f.total += MessageTokens + BlockTokens + proseTokens(len(text))
}

// callUsage is the token split a response line reports: the context the
// call sent (uncached input, cache writes, cache reads) and its output.
type callUsage struct{ input, create, read, output int64 }

// usage appends the usage object of a response line.
func (f *tfile) usage(b []byte, u callUsage) []byte {
	b = append(b, '{')
	b = kvInt(b, "input_tokens", u.input)
	b = kvInt(b, "cache_creation_input_tokens", u.create)
	b = kvInt(b, "cache_read_input_tokens", u.read)
	b = append(appendKey(b, "cache_creation"), '{')
	if f.s.prof.ttl1h && !f.side {
		b = kvInt(b, "ephemeral_5m_input_tokens", 0)
		b = kvInt(b, "ephemeral_1h_input_tokens", u.create)
	} else {
		b = kvInt(b, "ephemeral_5m_input_tokens", u.create)
		b = kvInt(b, "ephemeral_1h_input_tokens", 0)
	}
	b = append(b, '}')
	b = kvInt(b, "output_tokens", u.output)
	b = kvStr(b, "service_tier", "standard")
	if f.s.prof.geo {
		b = kvStr(b, "inference_geo", "not_available")
	}
	return append(b, '}')
}

// assistantLine writes one line of an API response holding one block.
func (f *tfile) assistantLine(uuid, msgID, reqID string, x *blk, u callUsage, stop string) {
	b := f.begin(f.last)
	b = append(appendKey(b, "message"), '{')
	b = kvStr(b, "model", f.exp.Model)
	b = kvStr(b, "id", msgID)
	b = kvStr(b, "type", "message")
	b = kvStr(b, "role", "assistant")
	b = append(appendKey(b, "content"), '[')
	b = appendBlock(b, x, f.s.prof.caller)
	b = append(b, ']')
	b = kvStrOrNull(b, "stop_reason", stop)
	b = kvNull(b, "stop_sequence")
	b = f.usage(appendKey(b, "usage"), u)
	b = append(b, '}')
	b = kvStr(b, "requestId", reqID)
	b = kvStr(b, "type", "assistant")
	b = f.tail(b, uuid)
	f.last = uuid
	f.end(b)
}

// result writes the user record carrying one tool result.
func (f *tfile) result(c *call, parent string) {
	u := newUUID(f.s.rng)
	b := f.begin(parent)
	b = kvStr(b, "type", "user")
	b = append(appendKey(b, "message"), '{')
	b = kvStr(b, "role", "user")
	b = append(appendKey(b, "content"), '[', '{')
	b = kvStr(b, "tool_use_id", c.id)
	b = kvStr(b, "type", "tool_result")
	if c.listContent {
		b = append(appendKey(b, "content"), '[', '{')
		b = kvStr(b, "type", "text")
		b = kvStr(b, "text", c.out)
		b = append(b, '}', ']')
	} else {
		b = kvStr(b, "content", c.out)
	}
	if c.isErr || c.name == "Bash" {
		b = kvBool(b, "is_error", c.isErr)
	}
	b = append(b, '}', ']', '}')
	b = f.tail(b, u)
	if c.tur != nil {
		b = c.tur(appendKey(b, "toolUseResult"))
	}
	if f.s.prof.threaded {
		b = kvStr(b, "sourceToolAssistantUUID", c.lineUUID)
	}
	f.last = u
	f.end(b)
}

// boundary writes a compact_boundary and the summary that replaces the
// history, and resets the usage model to the compacted context.
func (f *tfile) boundary(summary string) {
	pre := f.total
	u := newUUID(f.s.rng)
	b := append(f.buf, `{"parentUuid":null`...)
	b = kvStr(b, "logicalParentUuid", f.last)
	b = append(b, ',')
	b = append(b, f.env...)
	b = kvStr(b, "type", "system")
	b = kvStr(b, "subtype", "compact_boundary")
	b = kvStr(b, "content", "Conversation compacted")
	b = kvBool(b, "isMeta", false)
	b = f.timestampKV(b)
	b = kvStr(b, "uuid", u)
	b = kvStr(b, "level", "info")
	b = append(appendKey(b, "compactMetadata"), '{')
	b = kvStr(b, "trigger", "auto")
	b = kvInt(b, "preTokens", pre)
	b = append(b, '}')
	f.last = u
	f.end(b)
	f.exp.CompactBoundaries++

	su := newUUID(f.s.rng)
	b = f.begin(f.last)
	b = kvStr(b, "type", "user")
	b = append(appendKey(b, "message"), '{')
	b = kvStr(b, "role", "user")
	b = kvStr(b, "content", summary)
	b = append(b, '}')
	b = kvBool(b, "isVisibleInTranscriptOnly", true)
	b = kvBool(b, "isCompactSummary", true)
	b = f.tail(b, su)
	f.last = su
	f.end(b)

	f.total = f.system + MessageTokens + proseTokens(len(summary))
	f.cached = f.system
}

// peak records a call's context as the largest so far when it is.
func (f *tfile) peak(ctx int64) {
	if ctx > f.exp.PeakContext {
		f.exp.PeakContext = ctx
	}
}
