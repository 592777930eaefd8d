package loader

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// ClaudeCodeFormat names the Claude Code session JSONL reader.
const ClaudeCodeFormat = "claude-code"

func init() { Register(claudeCode{}) }

// claudeCode reads Claude Code session files (~/.claude/projects/*/*.jsonl),
// as docs/formats.md describes:
//
//   - lines of any length; one record per line;
//   - the active conversation is rebuilt from the newest leaf up through
//     parentUuid, passing recorded compact boundaries through their
//     logicalParentUuid; parallel tool results hanging off the path are
//     pulled in; abandoned branches are left out;
//   - a dangling parent (a parent line that is not in the file, usually a
//     line lost to corruption) is bridged to the nearest earlier record and
//     reported; a cycle stops the walk and is reported;
//   - lines of one API response (same message.id) become one message, with
//     usage taken from the last line of that id;
//   - compact_boundary + isCompactSummary and microcompact_boundary become
//     transcript.Compaction events, not messages;
//   - attachment records Claude Code renders into the prompt become injected
//     blocks; progress, snapshots, titles and the UI-only toolUseResult are
//     never context;
//   - assistant lines of model "<synthetic>" (local error notices) are not
//     sent to the API and are left out of Messages.
type claudeCode struct{}

func (claudeCode) Name() string { return ClaudeCodeFormat }

func (claudeCode) Sniff(path string, head []byte) int {
	orig := head
	p := sniffParsers.Get()
	defer sniffParsers.Put(p)
	parsed := 0
	for n := 0; n < 32 && len(head) > 0; n++ {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break // an incomplete last line tells nothing certain
		}
		line := bytes.TrimSpace(head[:i])
		head = head[i+1:]
		if len(line) == 0 {
			continue
		}
		v, err := p.ParseBytes(line)
		if err != nil || v.Type() != fastjson.TypeObject {
			continue
		}
		parsed++
		if v.Exists("payload") {
			return 0 // {timestamp,type,payload}: a Codex rollout
		}
		if _, ok := ccTypes[string(v.GetStringBytes("type"))]; ok &&
			(v.Exists("uuid") || v.Exists("sessionId") || v.Exists("leafUuid") || v.Exists("messageId")) {
			return 10
		}
		if usageOnly(v) {
			return 6
		}
		if t := string(v.GetStringBytes("type")); (t == "user" || t == "assistant") && v.Get("message") != nil &&
			v.Get("message").Type() == fastjson.TypeObject && !v.Exists("role") {
			return 4 // bare records (hand-written, or tools' test transcripts): no uuid, no sessionId
		}
	}
	if parsed > 0 {
		return 0 // JSON lines, but not Claude Code records
	}
	// A first line longer than the sniff window: look for tell-tale keys.
	if bytes.Contains(orig, []byte(`"parentUuid"`)) && bytes.Contains(orig, []byte(`"sessionId"`)) {
		return 5
	}
	if strings.HasSuffix(baseName(path), ".jsonl") && bytes.HasPrefix(bytes.TrimSpace(orig), []byte("{")) {
		return 1
	}
	return 0
}

// sniffParsers are the parsers Sniff methods read a head's lines with:
// every file's head is sniffed by every format.
var sniffParsers fastjson.ParserPool

// nodeKind classifies a record that takes part in the parentUuid tree.
type nodeKind uint8

const (
	nodeUser nodeKind = iota
	nodeAssistant
	nodeAttachment
	nodeSystem   // system records other than boundaries: tree only
	nodeProgress // progress records: tree only
	nodeBoundary
	nodeMicroBoundary
)

// node is one record of the parentUuid tree.
type node struct {
	line          int
	uuid          string
	parent        string
	logicalParent string
	timestamp     string

	// message content (user, assistant, attachment)
	blocks      []transcript.Block
	msgID       string
	model       string
	command     string
	summaryText string

	// boundary metadata
	compaction *transcript.Compaction

	// The small fields last, together (a node is 16 bytes smaller than
	// with each next to its kin).
	kind           nodeKind
	role           transcript.Role
	sidechain      bool
	isMeta         bool
	recMeta        bool // the record's own isMeta flag
	compactSummary bool
	transcriptOnly bool
}

// ccFile holds the state of reading one Claude Code file.
type ccFile struct {
	recorder
	p       *fastjson.Parser // from ccParsers, for one file
	nodes   nodeList
	usage   map[string]transcript.Usage // per message id, from its last line
	session string
	agentID string

	// side is the scope of the record being read: 1 when it is marked
	// isSidechain, else 0. Counts are kept per scope so that a session
	// file's inline subagent traffic stays out of the session's counters.
	side  int
	scope [2]ccScope
	// unknown holds the unknown record types and keys met, for the
	// problems table.
	unknown map[string]*unknownSeen
	// usageOnly counts records that carry only a call's usage (usage
	// trackers' logs: no type, no uuid, no content).
	usageOnly int
	// strs gathers the strings of the record being read into one
	// allocation; models interns model names, which repeat on every line.
	strs   recordStrings
	models map[string]string
	// keys remembers, per record type, the known keys of the last record
	// and of its message (checkKeys).
	keys map[string]*[2]keyCache
}

// ccScope holds the counts of one scope (main or sidechain records).
type ccScope struct {
	parsed   int
	ignored  map[string]int
	calls    map[string]bool // distinct non-synthetic message ids
	toolUses map[string]bool
	toolErrs map[string]bool
}

// unknownSeen is an unknown record type or key: where it was first met and
// how often.
type unknownSeen struct {
	line, n int
	what    string
}

func (claudeCode) Read(src *Source, emit func(*transcript.Transcript) error) error {
	return emit(readClaudeCode(src))
}

// readClaudeCode reads a Claude Code file line by line. A read error (a
// truncated .gz or .zst) is a problem on the last line read.
// ccParsers are the Claude Code reader's JSON parsers, reused across files
// (a parser's value cache grows to a file's largest line).
var ccParsers fastjson.ParserPool

func readClaudeCode(src *Source) *transcript.Transcript {
	f := &ccFile{
		recorder: recorder{t: &transcript.Transcript{Path: src.Path, Format: ClaudeCodeFormat}},
		usage:    make(map[string]transcript.Usage),
		unknown:  make(map[string]*unknownSeen),
	}
	for i := range f.scope {
		f.scope[i] = ccScope{ignored: map[string]int{}, calls: map[string]bool{},
			toolUses: map[string]bool{}, toolErrs: map[string]bool{}}
	}
	f.takeNodes()
	defer f.keepNodes()
	f.p = ccParsers.Get()
	n, rerr := eachLine(src, f.line)
	ccParsers.Put(f.p) // every value read was copied out of it
	f.p = nil
	f.t.Stats.Lines = n
	f.build()
	if rerr != nil {
		f.problem(n, "%s", rerr) // after the sort, as the last problem
	}
	return f.t
}

// ccNodes holds the node lists of files read, emptied, for the next
// files: a file no longer grows its first node chunk by doubling from
// nothing (with the chunks' allocation, a fifth of the bytes reading a file
// allocated). At most ccNodeListsKept lists are kept, each with at most
// ccNodeChunksKept chunks, so that what is kept stays small whatever the
// files read. (The maps of a file are not kept: clearing them, and ranging
// over a large map holding few entries, cost more than growing them.)
var ccNodes = make(chan nodeList, ccNodeListsKept)

const (
	ccNodeListsKept  = 4
	ccNodeChunksKept = 16
)

// takeNodes gives f the node list an earlier file left, or none.
func (f *ccFile) takeNodes() {
	select {
	case f.nodes = <-ccNodes:
	default:
	}
}

// keepNodes empties f's node list, once its transcript is built, and keeps
// it for the next file when there is room.
func (f *ccFile) keepNodes() {
	l := f.nodes
	f.nodes = nodeList{}
	l.reset(ccNodeChunksKept)
	select {
	case ccNodes <- l:
	default:
	}
}

// line handles one input line.
func (f *ccFile) line(n int, line []byte, final bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		f.t.Stats.Ignore("(blank)")
		return
	}
	v := f.parse(n, line, final)
	if v == nil {
		return
	}
	f.side = 0
	if v.GetBool("isSidechain") {
		f.side = 1
	}
	typ, known, ok := f.recordType(n, v)
	if !ok {
		return
	}
	if f.session == "" {
		f.session = string(v.GetStringBytes("sessionId"))
	}
	if f.agentID == "" {
		f.agentID = string(v.GetStringBytes("agentId"))
	}
	if !known {
		f.seeUnknown(n, "type "+typ, fmt.Sprintf("unknown record type %q", typ))
		f.t.Stats.UnknownTypes++
		f.ignore(typ)
		return
	}
	f.checkKeys(n, typ, v)
	switch typ {
	case "user", "assistant":
		f.message(n, typ, v)
	case "system":
		f.system(n, v)
	case "attachment":
		f.attachment(n, v)
	case "progress":
		f.treeOnly(n, v, nodeProgress, "progress")
	default:
		f.ignore(typ)
	}
}

// parse parses a line into a record object, or reports it as a bad record
// and returns nil: not UTF-8, an escape JSON does not allow, malformed JSON,
// or not an object.
func (f *ccFile) parse(n int, line []byte, final bool) *fastjson.Value {
	if !utf8.Valid(line) {
		f.bad(n, "invalid UTF-8")
		return nil
	}
	err := checkEscapes(line)
	var v *fastjson.Value
	if err == nil {
		v, err = f.p.ParseBytes(line)
		lastWinsTop(v, ccDeepKeys) // strings are decoded as they are read
	}
	if err != nil {
		f.bad(n, "%s", lineError(err, final))
		return nil
	}
	if v.Type() != fastjson.TypeObject {
		f.bad(n, "record is a JSON %s, want an object", v.Type())
		return nil
	}
	return v
}

// recordType reads a record's type, and whether it is one Claude Code
// writes. A record without one is a usage tracker's record (read here) or
// a bad record; either way ok is false.
func (f *ccFile) recordType(n int, v *fastjson.Value) (typ string, known, ok bool) {
	tv := v.Get("type")
	if tv == nil {
		if usageOnly(v) {
			f.usageRecord(v)
			return "", false, false
		}
		f.bad(n, `record has no "type"`)
		return "", false, false
	}
	if tv.Type() != fastjson.TypeString {
		f.bad(n, `"type" is a %s, want a string`, tv.Type())
		return "", false, false
	}
	if typ, known = ccTypeNames[string(tv.GetStringBytes())]; !known {
		typ = string(tv.GetStringBytes())
	}
	return typ, known, true
}

// parsed counts a record read into the current scope.
func (f *ccFile) parsed() { f.scope[f.side].parsed++ }

// ignore counts a record set aside, by type, in the current scope.
func (f *ccFile) ignore(recordType string) { f.scope[f.side].ignored[recordType]++ }

// seeUnknown notes an unknown type or key (key) met on line n.
func (f *ccFile) seeUnknown(n int, key, what string) {
	if u := f.unknown[key]; u != nil {
		u.n++
		return
	}
	f.unknown[key] = &unknownSeen{line: n, n: 1, what: what}
}

// checkKeys counts the keys of a record of known type, and of its
// message, that no Claude Code version is known to write.
func (f *ccFile) checkKeys(n int, typ string, v *fastjson.Value) {
	kc := f.keys[typ]
	if kc == nil {
		if f.keys == nil {
			f.keys = map[string]*[2]keyCache{}
		}
		kc = new([2]keyCache)
		f.keys[typ] = kc
	}
	i := 0
	v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
		if !kc[0].known(i, k, ccKnownKeyNames) {
			f.t.Stats.UnknownKeys++
			f.seeUnknown(n, "key "+string(k), fmt.Sprintf("unknown key %q on a %s record", k, typ))
		}
		i++
		if string(k) == "message" && x.Type() == fastjson.TypeObject {
			j := 0
			x.GetObject().Visit(func(mk []byte, _ *fastjson.Value) {
				if !kc[1].known(j, mk, ccMessageKeyNames) {
					f.t.Stats.UnknownKeys++
					f.seeUnknown(n, "message key "+string(mk), fmt.Sprintf("unknown key %q in the message of a %s record", mk, typ))
				}
				j++
			})
		}
	})
}

// keyCache remembers the known keys met at each position of the last
// record of a type: records of one type list the same keys in the same
// order, so comparing a key with the one last met at its place spares most
// lookups.
type keyCache []string

// known reports whether k, the i-th key of an object, is in names (known
// keys, each mapped to itself).
func (c *keyCache) known(i int, k []byte, names map[string]string) bool {
	if i < len(*c) && (*c)[i] == string(k) {
		return true
	}
	name, ok := names[string(k)]
	if !ok {
		return false
	}
	if i < 64 { // keys past 64 are looked up every time
		if i >= len(*c) {
			if i >= cap(*c) {
				// Room for a record's keys at once, not one more at a time.
				*c = append(make(keyCache, 0, max(32, 2*i)), *c...)
			}
			*c = (*c)[:i+1]
		}
		(*c)[i] = name
	}
	return true
}

// usageOnly reports whether a record is a usage tracker's line: no type,
// a message object with a role and usage but no content.
func usageOnly(v *fastjson.Value) bool {
	if v.Exists("type") || v.Exists("uuid") {
		return false
	}
	m := v.Get("message")
	return m != nil && m.Type() == fastjson.TypeObject && m.Exists("usage") && m.Exists("role") && !m.Exists("content")
}

// usageRecord reads a usage-only record: one API call (by message id, else
// requestId) with its usage and model, and no content.
func (f *ccFile) usageRecord(v *fastjson.Value) {
	m := v.Get("message")
	id := string(m.GetStringBytes("id"))
	if id == "" {
		id = string(v.GetStringBytes("requestId"))
	}
	if id == "" {
		id = fmt.Sprintf("(line %d)", f.t.Stats.Lines)
	}
	f.usageOnly++
	if model := string(m.GetStringBytes("model")); model != "<synthetic>" && string(m.GetStringBytes("role")) == "assistant" {
		f.scope[f.side].calls[id] = true
		if f.t.Model == "" {
			f.t.Model = model
		}
	}
	if u := m.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		if why := usageProblem(u); why != "" {
			f.problem(f.t.Stats.Lines, "%s", why)
		} else {
			f.usage[id] = anthropicCounts(u)
		}
	}
	f.parsed()
}

// checkEscapes rejects escape sequences JSON does not allow. fastjson's
// parser keeps them as they are; JSON.parse (and so Claude Code) rejects the
// line, so it must be a problem here too. A backslash can only legally occur
// inside a string, so a flat scan suffices.
func checkEscapes(line []byte) error {
	for {
		i := bytes.IndexByte(line, '\\')
		if i < 0 || i+1 >= len(line) {
			return nil
		}
		switch c := line[i+1]; c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			line = line[i+2:]
		case 'u':
			if i+6 > len(line) {
				return fmt.Errorf(`short escape sequence \u%s`, line[i+2:])
			}
			for _, h := range line[i+2 : i+6] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return fmt.Errorf(`invalid escape sequence \u%s`, line[i+2:i+6])
				}
			}
			line = line[i+6:]
		default:
			return fmt.Errorf(`invalid escape sequence \%c`, c)
		}
	}
}

// lineError describes a line that does not parse: the last line of a file
// that does not end in a newline is taken as cut short.
func lineError(err error, final bool) string {
	if final {
		return "truncated final line: " + shortErr(err)
	}
	return "malformed JSON: " + shortErr(err)
}

// shortErr reduces fastjson's nested error text ("cannot parse object:
// cannot parse object value: ... missing closing '"'") to its innermost
// reason.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.Index(s, "; unparsed tail"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "cannot parse") {
		s = s[i+2:]
	}
	return s
}

// base fills the tree fields of a node; it reports false (and a problem)
// when they have the wrong types. The strings are made at the next flush.
func (f *ccFile) base(n int, v *fastjson.Value, nd *node) bool {
	for i, key := range [4]string{"uuid", "parentUuid", "logicalParentUuid", "timestamp"} {
		b, ok := f.optBytes(n, v, key)
		if !ok {
			return false
		}
		f.strs.add([4]*string{&nd.uuid, &nd.parent, &nd.logicalParent, &nd.timestamp}[i], b)
	}
	nd.line = n
	nd.sidechain = v.GetBool("isSidechain")
	return true
}

// dropNode removes the node being read (a bad record) and the strings
// gathered for it.
func (f *ccFile) dropNode() {
	f.nodes.drop()
	f.strs.reset()
}

// optBytes reads a string field that may be absent or null, as bytes of
// the parser's (valid until the next line is parsed).
func (f *ccFile) optBytes(n int, v *fastjson.Value, key string) ([]byte, bool) {
	x := v.Get(key)
	if x == nil || x.Type() == fastjson.TypeNull {
		return nil, true
	}
	if x.Type() != fastjson.TypeString {
		f.bad(n, "%q is a %s, want a string", key, x.Type())
		return nil, false
	}
	return x.GetStringBytes(), true
}

// model reads the message's model name, interned per file.
func (f *ccFile) model(n int, m *fastjson.Value) (string, bool) {
	b, ok := f.optBytes(n, m, "model")
	if !ok || len(b) == 0 {
		return "", ok
	}
	if s, hit := f.models[string(b)]; hit {
		return s, true
	}
	if f.models == nil {
		f.models = map[string]string{}
	}
	s := string(b)
	f.models[s] = s
	return s, true
}

// treeOnly keeps the tree links of a record that is not conversation and
// counts the line as ignored under recordType. A record whose links have the
// wrong types is a problem instead.
func (f *ccFile) treeOnly(n int, v *fastjson.Value, kind nodeKind, recordType string) {
	nd := f.nodes.add(kind)
	if !f.base(n, v, nd) {
		f.dropNode()
		return
	}
	f.strs.flush()
	if nd.uuid == "" {
		f.nodes.drop()
	}
	f.ignore(recordType)
}

func (f *ccFile) system(n int, v *fastjson.Value) {
	sub := intern(ccSystemNames, v.GetStringBytes("subtype"))
	switch sub {
	case "compact_boundary", "microcompact_boundary":
	default:
		if sub == "" {
			sub = "?"
		}
		if _, ok := ccSystemSubtypes[sub]; !ok {
			f.seeUnknown(n, "system "+sub, fmt.Sprintf("unknown system subtype %q", sub))
			f.t.Stats.UnknownTypes++
		}
		f.treeOnly(n, v, nodeSystem, "system:"+sub)
		return
	}
	nd := f.nodes.add(nodeBoundary)
	if !f.base(n, v, nd) {
		f.dropNode()
		return
	}
	f.strs.flush()
	c := &transcript.Compaction{Kind: transcript.CompactFull, Line: n}
	meta := v.Get("compactMetadata")
	if sub == "microcompact_boundary" {
		nd.kind = nodeMicroBoundary
		c.Kind = transcript.CompactMicro
		meta = v.Get("microcompactMetadata")
		f.t.Stats.MicrocompactBoundaries++
	} else {
		f.t.Stats.CompactBoundaries++
	}
	if meta != nil && meta.Type() == fastjson.TypeObject {
		c.Trigger = string(meta.GetStringBytes("trigger"))
		c.PreTokens = meta.GetInt64("preTokens")
		c.PostTokens = meta.GetInt64("postTokens")
		c.TokensSaved = meta.GetInt64("tokensSaved")
		for _, id := range meta.GetArray("compactedToolIds") {
			if s := id.GetStringBytes(); s != nil {
				c.CompactedToolIDs = append(c.CompactedToolIDs, string(s))
			}
		}
	}
	nd.compaction = c
	f.parsed()
}

func (f *ccFile) attachment(n int, v *fastjson.Value) {
	a := v.Get("attachment")
	if a == nil || a.Type() != fastjson.TypeObject {
		f.treeOnly(n, v, nodeSystem, "attachment:?")
		return
	}
	kind := intern(ccAttachmentNames, a.GetStringBytes("type"))
	if cls, ok := ccAttachments[kind]; cls != classContext {
		if kind == "" {
			kind = "?"
		}
		if !ok {
			f.seeUnknown(n, "attachment "+kind, fmt.Sprintf("unknown attachment type %q", kind))
			f.t.Stats.UnknownTypes++
		}
		f.treeOnly(n, v, nodeSystem, "attachment:"+kind)
		return
	}
	nd := f.nodes.add(nodeAttachment)
	nd.role, nd.isMeta = transcript.RoleUser, true
	if !f.base(n, v, nd) {
		f.dropNode()
		return
	}
	f.strs.flush()
	nd.blocks = []transcript.Block{{Kind: transcript.BlockInjected, InjectedKind: kind, Text: renderAttachment(a)}}
	f.parsed()
}

// renderAttachment turns an attachment into the text the model sees: its
// textual fields when it has them, otherwise its JSON without the type.
func renderAttachment(a *fastjson.Value) string {
	decodeAll(a) // rendered as lastWins leaves it
	var parts []string
	for _, key := range []string{"content", "stdout", "stderr", "text", "prompt", "message", "diff", "snippet"} {
		x := a.Get(key)
		if x == nil {
			continue
		}
		switch x.Type() {
		case fastjson.TypeString:
			parts = append(parts, string(x.GetStringBytes()))
		case fastjson.TypeArray:
			for _, e := range x.GetArray() {
				if e.Type() == fastjson.TypeString {
					parts = append(parts, string(e.GetStringBytes()))
				} else {
					parts = append(parts, string(e.MarshalTo(nil)))
				}
			}
		default:
			parts = append(parts, string(x.MarshalTo(nil)))
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	return withoutKey(a, "type")
}

// continuedPrefix opens the summary Claude Code puts in place of the
// history after a compaction.
const continuedPrefix = "This session is being continued from a previous conversation"

// commandPrompt returns "/name args" when a user message is a slash
// command as Claude Code records it (<command-name>/x</command-name> and
// <command-args>...</command-args> markup), else "".
func commandPrompt(blocks []transcript.Block) string {
	if len(blocks) == 0 || blocks[0].Kind != transcript.BlockText {
		return ""
	}
	text := blocks[0].Text
	name, ok := between(text, "<command-name>", "</command-name>")
	if !ok {
		return ""
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return ""
	}
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	if args, ok := between(text, "<command-args>", "</command-args>"); ok && strings.TrimSpace(args) != "" {
		return name + " " + strings.TrimSpace(args)
	}
	return name
}

// between returns the text between the first open and the next close.
func between(s, open, close string) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	s = s[i+len(open):]
	j := strings.Index(s, close)
	if j < 0 {
		return "", false
	}
	return s[:j], true
}

// metaPrefixes open user text that the harness, not the user, wrote.
var metaPrefixes = []string{
	"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
	"<local-command-stderr>", "<local-command-caveat>", "<system-reminder>",
	"<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
	"<user-prompt-submit-hook>", "[Request interrupted by user", "Caveat: The messages below were generated",
}

// message reads a user or assistant record into a node: its tree fields,
// id, model and content, then what it counts for (harness text, slash
// commands, compaction summaries, calls, tool uses and errors).
func (f *ccFile) message(n int, typ string, v *fastjson.Value) {
	nd := f.nodes.add(nodeUser)
	nd.role = transcript.RoleUser
	if typ == "assistant" {
		nd.kind, nd.role = nodeAssistant, transcript.RoleAssistant
	}
	m, ok := f.messageFields(n, typ, v, nd)
	if !ok {
		f.dropNode()
		return
	}
	f.strs.flush()
	nd.isMeta = v.GetBool("isMeta")
	nd.recMeta = nd.isMeta
	nd.compactSummary = v.GetBool("isCompactSummary")
	nd.transcriptOnly = v.GetBool("isVisibleInTranscriptOnly")
	if nd.role == transcript.RoleUser {
		f.userMessage(nd)
	} else {
		f.assistantMessage(n, nd, m)
	}
	f.parsed()
}

// messageFields reads the fields of a message record whose strings are
// made at the next flush: the tree fields, message.id, the model and the
// content. It returns the message object, or false (and a problem) when a
// field has the wrong type.
func (f *ccFile) messageFields(n int, typ string, v *fastjson.Value, nd *node) (*fastjson.Value, bool) {
	if !f.base(n, v, nd) {
		return nil, false
	}
	m := v.Get("message")
	if m == nil || m.Type() != fastjson.TypeObject {
		if m == nil {
			f.bad(n, `%s record has no "message"`, typ)
		} else {
			f.bad(n, `"message" is a %s, want an object`, m.Type())
		}
		return nil, false
	}
	id, ok := f.optBytes(n, m, "id")
	if !ok {
		return nil, false
	}
	f.strs.add(&nd.msgID, id)
	if nd.model, ok = f.model(n, m); !ok {
		return nil, false
	}
	if nd.blocks, ok = f.content(n, m.Get("content")); !ok {
		return nil, false
	}
	return m, true
}

// userMessage marks what a user record is: a compaction summary (older
// versions open a new root with it, unmarked), a slash command, harness
// text; and counts its tool errors.
func (f *ccFile) userMessage(nd *node) {
	blocks := nd.blocks
	if !nd.compactSummary && nd.parent == "" && len(blocks) > 0 && blocks[0].Kind == transcript.BlockText &&
		strings.HasPrefix(blocks[0].Text, continuedPrefix) {
		nd.compactSummary = true
	}
	if !nd.recMeta {
		nd.command = commandPrompt(blocks)
	}
	if nd.compactSummary {
		for _, b := range blocks {
			if b.Kind == transcript.BlockText {
				nd.summaryText += b.Text
			}
		}
	}
	if !nd.isMeta {
		nd.isMeta = harnessText(blocks, metaPrefixes)
	}
	sc := &f.scope[f.side]
	for _, b := range blocks {
		if b.Kind == transcript.BlockToolResult && b.IsError {
			sc.toolErrs[b.ToolID] = true
		}
	}
}

// assistantMessage counts an assistant record's tool uses and its call
// (by message id; a record with usage but no id is still one call), and
// keeps the call's usage from the last line of its id.
func (f *ccFile) assistantMessage(n int, nd *node, m *fastjson.Value) {
	sc := &f.scope[f.side]
	for _, b := range nd.blocks {
		if b.Kind == transcript.BlockToolUse {
			sc.toolUses[b.ToolID] = true
		}
	}
	if nd.msgID == "" && m.Get("usage") != nil && nd.model != "<synthetic>" {
		nd.msgID = fmt.Sprintf("(line %d)", n)
	}
	if nd.msgID == "" {
		return
	}
	if u := m.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		if why := usageProblem(u); why != "" {
			f.problem(n, "%s", why)
			delete(f.usage, nd.msgID)
		} else {
			f.usage[nd.msgID] = anthropicCounts(u)
		}
	}
	if nd.model != "<synthetic>" {
		sc.calls[nd.msgID] = true
	}
}

// content converts message.content (a string or an array of blocks). The
// blocks' strings are made at the next flush.
func (f *ccFile) content(n int, c *fastjson.Value) ([]transcript.Block, bool) {
	if c == nil || c.Type() == fastjson.TypeNull {
		return nil, true
	}
	switch c.Type() {
	case fastjson.TypeString:
		blocks := []transcript.Block{{Kind: transcript.BlockText}}
		f.strs.addText(&blocks[0].Text, c.GetStringBytes())
		return blocks, true
	case fastjson.TypeArray:
	default:
		f.bad(n, `"message.content" is a %s, want a string or an array`, c.Type())
		return nil, false
	}
	items := c.GetArray()
	// At most one block per item: the slice never grows, so the blocks
	// stay where the strings gathered for them are written.
	blocks := make([]transcript.Block, 0, len(items))
	for _, it := range items {
		if it.Type() == fastjson.TypeString { // tolerated: bare strings as text
			blocks = append(blocks, transcript.Block{Kind: transcript.BlockText})
			f.strs.addText(&blocks[len(blocks)-1].Text, it.GetStringBytes())
			continue
		}
		if it.Type() != fastjson.TypeObject {
			f.problem(n, "content block is a %s, skipped", it.Type())
			continue
		}
		blocks = append(blocks, transcript.Block{})
		if !f.block(n, it, &blocks[len(blocks)-1]) {
			blocks = blocks[:len(blocks)-1]
		}
	}
	return blocks, true
}

// block reads a content block object into b, a zero block; it reports
// false (and a problem) for a block type it does not know.
func (f *ccFile) block(n int, it *fastjson.Value, b *transcript.Block) bool {
	switch bt := it.GetStringBytes("type"); string(bt) {
	case "text":
		b.Kind = transcript.BlockText
		f.strs.addText(&b.Text, it.GetStringBytes("text"))
	case "thinking":
		b.Kind, b.SignatureLen = transcript.BlockThinking, len(it.GetStringBytes("signature"))
		f.strs.addText(&b.Text, it.GetStringBytes("thinking"))
	case "redacted_thinking":
		b.Kind, b.SignatureLen = transcript.BlockThinking, len(it.GetStringBytes("data"))
	case "tool_use", "server_tool_use":
		f.toolUse(b, it)
	case "tool_result", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result":
		b.Kind = transcript.BlockToolResult
		f.strs.add(&b.ToolID, it.GetStringBytes("tool_use_id"))
		if e := it.Get("is_error"); e != nil {
			if e.Type() == fastjson.TypeTrue {
				b.IsError = true
			} else if e.Type() != fastjson.TypeFalse && e.Type() != fastjson.TypeNull {
				f.problem(n, `"is_error" is a %s, want a boolean; read as false`, e.Type())
			}
		}
		f.resultContent(b, it.Get("content"))
	case "image":
		f.imageBlock(b, it)
	case "document":
		*b = documentBlock(it)
	case "tool_reference":
		b.Kind, b.InjectedKind = transcript.BlockInjected, "tool_reference"
		b.ToolRefs = []string{string(it.GetStringBytes("tool_name"))}
	default:
		f.problem(n, "unknown content block type %q skipped", bt)
		return false
	}
	return true
}

// toolUse reads a tool_use block: its id, name, input (as JSON) and the
// file path and command the input names.
func (f *ccFile) toolUse(b *transcript.Block, it *fastjson.Value) {
	b.Kind = transcript.BlockToolUse
	f.strs.add(&b.ToolID, it.GetStringBytes("id"))
	f.strs.add(&b.ToolName, it.GetStringBytes("name"))
	in := it.Get("input")
	if in == nil {
		return
	}
	start := len(f.strs.scratch)
	f.strs.scratch = renderJSON(f.strs.scratch, in)
	f.strs.addText(&b.Input, f.strs.scratch[start:])
	if in.Type() != fastjson.TypeObject {
		return
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if s := in.GetStringBytes(k); len(s) > 0 {
			f.strs.add(&b.Path, s)
			break
		}
	}
	f.strs.add(&b.Command, in.GetStringBytes("command"))
}

// imageBlock reads an image content block, with its dimensions when its
// base64 data has them.
func (f *ccFile) imageBlock(b *transcript.Block, it *fastjson.Value) {
	data := it.GetStringBytes("source", "data")
	b.Kind, b.Images, b.ImageBytes = transcript.BlockImage, 1, len(data)
	f.strs.add(&b.MediaType, it.GetStringBytes("source", "media_type"))
	sizeImageBytes(b, data)
}

// documentBlock reads a document content block: a plain-text source (or
// one given as content blocks) is text the model reads; a base64 source (a
// PDF) is counted by its data, like an image.
func documentBlock(it *fastjson.Value) transcript.Block {
	src := it.Get("source")
	switch string(src.GetStringBytes("type")) {
	case "text":
		return transcript.Block{Kind: transcript.BlockText, Text: string(src.GetStringBytes("data"))}
	case "content":
		var parts []string
		for _, c := range src.GetArray("content") {
			if t := c.GetStringBytes("text"); t != nil {
				parts = append(parts, string(t))
			}
		}
		return transcript.Block{Kind: transcript.BlockText, Text: strings.Join(parts, "\n")}
	}
	return transcript.Block{Kind: transcript.BlockImage, Images: 1,
		MediaType: string(src.GetStringBytes("media_type")), ImageBytes: len(src.GetStringBytes("data"))}
}

// resultContent reads a tool_result's content: a string, or a list of text
// and image blocks, their text joined by newlines.
func (f *ccFile) resultContent(b *transcript.Block, c *fastjson.Value) {
	if c == nil {
		return
	}
	switch c.Type() {
	case fastjson.TypeString:
		f.strs.addText(&b.Text, c.GetStringBytes())
	case fastjson.TypeArray:
		f.strs.addText(&b.Text, f.resultParts(b, c.GetArray()))
	case fastjson.TypeNull:
	default:
		start := len(f.strs.scratch)
		f.strs.scratch = renderJSON(f.strs.scratch, c)
		f.strs.addText(&b.Text, f.strs.scratch[start:])
	}
}

// resultParts reads the items of a tool_result's content list: it returns
// their texts joined by newlines (a newline before each text but when the
// text so far is empty), and counts their images on b. A single text is
// returned as it is, not copied: joining starts in scratch at the second.
func (f *ccFile) resultParts(b *transcript.Block, items []*fastjson.Value) []byte {
	var one []byte // the text while it is one part
	start, joined := len(f.strs.scratch), false
	for _, it := range items {
		t, ok := f.resultPart(b, it)
		switch {
		case !ok:
		case !joined && len(one) == 0:
			one = t
		default:
			if !joined {
				f.strs.scratch, joined = append(f.strs.scratch, one...), true
			}
			if len(f.strs.scratch) > start {
				f.strs.scratch = append(f.strs.scratch, '\n')
			}
			f.strs.scratch = append(f.strs.scratch, t...)
		}
	}
	if joined {
		return f.strs.scratch[start:]
	}
	return one
}

// resultPart reads one item of a tool_result's content list: it returns
// its text and true for a text, and counts an image on b.
func (f *ccFile) resultPart(b *transcript.Block, it *fastjson.Value) ([]byte, bool) {
	switch string(it.GetStringBytes("type")) {
	case "text":
		return it.GetStringBytes("text"), true
	case "image":
		data := it.GetStringBytes("source", "data")
		b.Images++
		b.ImageBytes += len(data)
		sizeImageBytes(b, data)
	case "tool_reference":
		b.ToolRefs = append(b.ToolRefs, string(it.GetStringBytes("tool_name")))
	case "document":
		d := documentBlock(it)
		if d.Kind == transcript.BlockText {
			return []byte(d.Text), true
		}
		b.Images++
		b.ImageBytes += d.ImageBytes
	default:
		if it.Type() == fastjson.TypeString {
			return it.GetStringBytes(), true
		}
	}
	return nil, false
}

// kindOf classifies the file from its name and records.
func (f *ccFile) kindOf(allSidechain bool) transcript.Kind {
	base := filepath.Base(f.t.Path)
	switch {
	case strings.HasPrefix(base, "agent-acompact"):
		return transcript.KindCompactionCall
	case strings.HasPrefix(base, "agent-aside_question"):
		return transcript.KindSideQuestion
	case strings.HasPrefix(base, "agent-") || allSidechain:
		return transcript.KindSubagent
	}
	return transcript.KindSession
}
