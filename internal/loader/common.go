package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/transcript"
)

// This file holds what the readers share: the recorder that accounts for
// records and problems (every reader), a transcript builder that pairs tool
// calls with their results and fills the file-level stats (the readers of
// formats other than Claude Code, which rebuilds a tree instead), line
// reading, and small helpers over fastjson values.

// recorder accounts for the records of one transcript and reports its
// problems. Every reader's state embeds one.
type recorder struct {
	t *transcript.Transcript
}

// problem records a problem on the transcript. Past maxProblemsHeld it is
// only counted (Stats.ProblemsUnlisted), so that a file of millions of bad
// lines costs no more memory than one of ten thousand.
func (r recorder) problem(line int, format string, args ...any) {
	if len(r.t.Problems) >= maxProblemsHeld {
		r.t.Stats.ProblemsUnlisted++
		return
	}
	r.t.Problems = append(r.t.Problems, transcript.Problem{Line: line, Reason: fmt.Sprintf(format, args...)})
}

// record counts one record met in the input (Stats.Lines). Each record is
// then exactly one of parsed, ignored (Stats.Ignore) or bad, each counted
// where the reader decides it.
func (r recorder) record() { r.t.Stats.Lines++ }

// parsed counts a record read into the transcript (a message, a compaction,
// the metadata the reader uses).
func (r recorder) parsed() { r.t.Stats.ParsedLines++ }

// bad records a record that could not be used at all.
func (r recorder) bad(line int, format string, args ...any) {
	r.problem(line, format, args...)
	r.t.Stats.BadLines++
}

// scanProblems reports the structure scanValues could not split into
// values: a problem each, and one bad record for each that skipped input.
func (r recorder) scanProblems(problems []scanProblem) {
	for _, sp := range problems {
		if sp.Lost {
			r.record()
			r.bad(sp.Line, "%s", sp.Reason)
		} else {
			r.problem(sp.Line, "%s", sp.Reason)
		}
	}
}

// finish sets the transcript's model, when the reader found none, to the
// one counted most often (the lexically first on ties), and sorts the
// problems by line.
func (r recorder) finish(models map[string]int) {
	t := r.t
	if t.Model == "" {
		for model, n := range models {
			if n > models[t.Model] || (n == models[t.Model] && model < t.Model) {
				t.Model = model
			}
		}
	}
	sort.SliceStable(t.Problems, func(i, j int) bool { return t.Problems[i].Line < t.Problems[j].Line })
}

// builder assembles one transcript.
type builder struct {
	recorder
	// calls maps a tool_use id to its name, over every message added.
	calls map[string]string
	// answered holds the tool_use ids that have a result.
	answered map[string]bool
	errs     map[string]bool
	// open lists the tool_use ids without a result yet, in call order.
	open []string
	// synth numbers the ids made up for calls that carry none.
	synth int
}

func newBuilder(path, format string) *builder {
	return &builder{
		recorder: recorder{t: &transcript.Transcript{Path: path, Format: format, Kind: transcript.KindSession}},
		calls:    map[string]string{},
		answered: map[string]bool{},
		errs:     map[string]bool{},
	}
}

// newID makes up a tool_use id for a call recorded without one. The ids are
// stable for a given file, so outputs stay deterministic.
func (b *builder) newID(prefix string) string {
	b.synth++
	return prefix + strconv.Itoa(b.synth)
}

// add appends a message, registering its tool calls and pairing its tool
// results: a result's missing id is taken from the oldest unanswered call
// (of the same name when the result names its tool), and its ToolName is
// filled from the call.
func (b *builder) add(m transcript.Message) {
	b.register(&m)
	b.t.Messages = append(b.t.Messages, m)
}

// register pairs and records the tool blocks of m.
func (b *builder) register(m *transcript.Message) {
	for i := range m.Blocks {
		bl := &m.Blocks[i]
		switch bl.Kind {
		case transcript.BlockToolUse:
			if bl.ToolID == "" {
				bl.ToolID = b.newID("call-")
			}
			bl.InputFields()
			if transcript.LookupTool(b.t.Format, bl.ToolName, "").Commands != nil ||
				strings.Contains(strings.ToLower(bl.ToolName), "editor") {
				// str_replace_editor and file editors: their "command" is a
				// sub-command (view, create, str_replace), not a shell line.
				bl.Command = ""
			}
			if _, dup := b.calls[bl.ToolID]; !dup {
				b.open = append(b.open, bl.ToolID)
			}
			b.calls[bl.ToolID] = bl.ToolName
		case transcript.BlockToolResult:
			if bl.ToolID == "" {
				bl.ToolID = b.oldestOpen(bl.ToolName)
			}
			if name, ok := b.calls[bl.ToolID]; ok {
				bl.ToolName = name
			}
			if bl.ToolID != "" {
				b.answered[bl.ToolID] = true
				if bl.IsError {
					b.errs[bl.ToolID] = true
				}
			}
		}
	}
}

// addBlock appends a block to the message at index i, registering it as
// add does (for calls that a later record adds to an earlier response).
func (b *builder) addBlock(i int, bl transcript.Block) {
	tmp := transcript.Message{Blocks: []transcript.Block{bl}}
	b.register(&tmp)
	b.t.Messages[i].Blocks = append(b.t.Messages[i].Blocks, tmp.Blocks[0])
}

// oldestOpen returns the oldest call without a result (named name, when
// name is set), or "".
func (b *builder) oldestOpen(name string) string {
	k := 0
	found := ""
	for _, id := range b.open {
		if b.answered[id] {
			continue
		}
		b.open[k] = id
		k++
		if found == "" && (name == "" || b.calls[id] == name) {
			found = id
		}
	}
	b.open = b.open[:k]
	return found
}

// finish fills the stats that follow from the messages: tool calls and
// errors, recorded API calls (assistant messages with usage), the peak real
// context, and the model that served most calls (or most assistant messages
// when none has usage). It also sorts the problems by line.
func (b *builder) finish() *transcript.Transcript {
	t := b.t
	t.Stats.ToolCalls = len(b.calls)
	t.Stats.ToolErrors = len(b.errs)
	all, called := map[string]int{}, map[string]int{}
	for i := range t.Messages {
		m := &t.Messages[i]
		if m.Role != transcript.RoleAssistant {
			continue
		}
		if m.Usage != nil {
			t.Stats.APICalls++
			if c := m.Usage.Context(); c > t.Stats.PeakContextReal {
				t.Stats.PeakContextReal = c
			}
			if m.Model != "" {
				called[m.Model]++
			}
		}
		if m.Model != "" {
			all[m.Model]++
		}
	}
	for i := range t.Compactions {
		if t.Compactions[i].Kind == transcript.CompactMicro {
			t.Stats.MicrocompactBoundaries++
		} else {
			t.Stats.CompactBoundaries++
		}
	}
	if len(called) == 0 {
		called = all
	}
	b.recorder.finish(called)
	return t
}

// uniqueIDs hands out transcript ids that are distinct within one file.
type uniqueIDs map[string]int

// get returns id, or id#n when id was already handed out.
func (u uniqueIDs) get(id string) string {
	n := u[id]
	u[id] = n + 1
	if n == 0 {
		return id
	}
	for ; ; n++ {
		alt := id + "#" + strconv.Itoa(n)
		if u[alt] == 0 {
			u[alt] = 1
			return alt
		}
	}
}

// str returns the string at keys, or "" when it is absent or not a string.
func str(v *fastjson.Value, keys ...string) string {
	return string(v.GetStringBytes(keys...))
}

// firstStr returns the first non-empty string among the keys of v.
func firstStr(v *fastjson.Value, keys ...string) string {
	for _, k := range keys {
		if s := v.GetStringBytes(k); len(s) > 0 {
			return string(s)
		}
	}
	return ""
}

// jsonText returns JSON text for a tool input recorded as a JSON string
// (OpenAI arguments, Codex arguments): the string itself when it holds valid
// JSON, otherwise the string quoted as a JSON string.
func jsonText(s string) string {
	if s != "" && fastjson.Validate(s) == nil {
		return s
	}
	q, _ := json.Marshal(s)
	return string(q)
}

// harnessText reports whether a user message's text is the harness's own:
// it has a text block that is not blank, and every such block starts (after
// leading blank lines) with one of prefixes.
func harnessText(blocks []transcript.Block, prefixes []string) bool {
	texts := 0
	for i := range blocks {
		if blocks[i].Kind != transcript.BlockText || strings.TrimSpace(blocks[i].Text) == "" {
			continue
		}
		texts++
		s := strings.TrimLeft(blocks[i].Text, " \t\r\n")
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) }) {
			return false
		}
	}
	return texts > 0
}

// withoutKey renders an object as JSON without one of its keys.
func withoutKey(v *fastjson.Value, key string) string {
	o, err := v.Object()
	if err != nil {
		return string(v.MarshalTo(nil))
	}
	buf := []byte{'{'}
	o.Visit(func(k []byte, x *fastjson.Value) {
		if string(k) == key {
			return
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		q, _ := json.Marshal(string(k))
		buf = append(buf, q...)
		buf = append(buf, ':')
		buf = x.MarshalTo(buf)
	})
	return string(append(buf, '}'))
}

// textOf renders a content value as plain text: a string as is; an array
// by joining its items' text (strings, or objects' "text"/"content"
// fields); anything else as its JSON. It also returns the images met.
func textOf(v *fastjson.Value) (text string, images, imageBytes int) {
	if v == nil {
		return "", 0, 0
	}
	switch v.Type() {
	case fastjson.TypeString:
		return string(v.GetStringBytes()), 0, 0
	case fastjson.TypeNull:
		return "", 0, 0
	case fastjson.TypeArray:
		var sb strings.Builder
		for _, it := range v.GetArray() {
			var part string
			switch it.Type() {
			case fastjson.TypeString:
				part = string(it.GetStringBytes())
			case fastjson.TypeObject:
				if n, ok := imageSize(it); ok {
					images++
					imageBytes += n
					continue
				}
				if t := it.Get("text"); t != nil && t.Type() == fastjson.TypeString {
					part = string(t.GetStringBytes())
				} else if c := it.Get("content"); c != nil {
					p, im, ib := textOf(c)
					part, images, imageBytes = p, images+im, imageBytes+ib
				} else {
					part = string(it.MarshalTo(nil))
				}
			default:
				part = string(it.MarshalTo(nil))
			}
			if part == "" {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(part)
		}
		return sb.String(), images, imageBytes
	}
	return string(v.MarshalTo(nil)), 0, 0
}

// imageSize recognises an image content part (Anthropic "image" with a
// base64 source, OpenAI "image_url", Responses "input_image") and returns
// the length of its data or URL text.
func imageSize(it *fastjson.Value) (int, bool) {
	switch str(it, "type") {
	case "image":
		return len(it.GetStringBytes("source", "data")), true
	case "image_url":
		if u := it.GetStringBytes("image_url", "url"); u != nil {
			return len(u), true
		}
		return len(it.GetStringBytes("image_url")), true
	case "input_image":
		return len(it.GetStringBytes("image_url")), true
	}
	return 0, false
}

// exitStatus reads the exit status that harnesses print into tool output:
// Codex's leading "Exit code: N" and OpenHands' trailing
// "[Command finished with exit code N]". ok is false when the text carries
// neither.
func exitStatus(text string) (code int, ok bool) {
	if rest, found := strings.CutPrefix(text, "Exit code: "); found {
		return leadingInt(rest)
	}
	t := strings.TrimRight(text, " \t\r\n")
	const marker = "[Command finished with exit code "
	if strings.HasSuffix(t, "]") {
		if i := strings.LastIndex(t, marker); i >= 0 {
			return leadingInt(t[i+len(marker):])
		}
	}
	return 0, false
}

// leadingInt parses the (optionally signed) integer at the start of s.
func leadingInt(s string) (int, bool) {
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	return n, err == nil
}

// usageOf reads a usage object in the Anthropic shape (input_tokens,
// cache_read_input_tokens, cache_creation_input_tokens, output_tokens) or
// the OpenAI shape (prompt_tokens including cached tokens, completion_tokens,
// prompt_tokens_details.cached_tokens). LiteLLM-style objects that mix both
// (prompt_tokens counting cache reads and writes, beside Anthropic's cache
// fields) are read so that Context() equals prompt_tokens.
//
// A usage object whose token counts are not all valid (usageProblem) gives
// no usage and the reason, for the caller to report.
func usageOf(u *fastjson.Value) (*transcript.Usage, string) {
	if u == nil || u.Type() != fastjson.TypeObject {
		return nil, ""
	}
	if why := usageProblem(u); why != "" {
		return nil, why
	}
	get := func(keys ...string) int64 { n, _ := countAt(u, keys...); return n }
	if u.Exists("prompt_tokens") {
		prompt := get("prompt_tokens")
		read := get("cache_read_input_tokens")
		if read == 0 {
			read = get("prompt_tokens_details", "cached_tokens")
		}
		created := get("cache_creation_input_tokens")
		input := prompt - read - created
		if input < 0 { // the cache fields are not part of prompt_tokens
			input = prompt
		}
		return &transcript.Usage{Input: input, Output: get("completion_tokens"), CacheRead: read, CacheCreation: created}, ""
	}
	if u.Exists("input_tokens") {
		return anthropicUsage(u), ""
	}
	return nil, ""
}

// anthropicUsage reads a usage object of the Anthropic shape whose counts
// usageProblem accepted.
func anthropicUsage(u *fastjson.Value) *transcript.Usage {
	x := anthropicCounts(u)
	return &x
}

// anthropicCounts is anthropicUsage as a value (no allocation).
func anthropicCounts(u *fastjson.Value) transcript.Usage {
	get := func(key string) int64 { n, _ := countAt(u, key); return n }
	return transcript.Usage{
		Input:         get("input_tokens"),
		Output:        get("output_tokens"),
		CacheRead:     get("cache_read_input_tokens"),
		CacheCreation: get("cache_creation_input_tokens"),
	}
}

// parseOne parses one JSON value, reporting a malformed or non-object value
// as a bad record at line (what names the record in the reason).
func parseOne(p *fastjson.Parser, b *builder, data []byte, line int, what string) *fastjson.Value {
	v, err := p.ParseBytes(data)
	if err != nil {
		b.bad(line, "%s: malformed JSON: %s", what, shortErr(err))
		return nil
	}
	lastWins(v)
	if v.Type() != fastjson.TypeObject {
		b.bad(line, "%s is a JSON %s, want an object", what, v.Type())
		return nil
	}
	return v
}

// lineReaders are eachLine's 64 KiB read buffers, reused across files (a
// buffer per file was a tenth of the bytes the Claude Code reader
// allocated); fn never keeps a line past its call.
var lineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// longLines are the buffers eachLine assembles lines longer than its read
// buffer in, reused across lines and files. They hold at most maxLongKept
// bytes: a longer line is kept in pieces and assembled once at its exact
// size, so that growing a buffer by doubling never holds a line near
// MaxLine twice over.
var longLines sync.Pool

// maxLongKept is the most a long-line buffer holds.
const maxLongKept = 8 << 20

// eachLine calls fn with each line of src (without its "\n" or "\r\n"),
// its 1-based number, and whether it is the last line with no newline after
// it. A read error after some data (a truncated .gz or .zst) is returned
// after the lines read were handed out, the last of them as final.
//
// A line longer than the source's MaxLine, or nested deeper than its
// MaxDepth, is not handed out: it is read past without being held, keeps its
// number, and becomes a bad record on the transcript emitted next (Source
// settles it). Memory is thus bounded by MaxLine, whatever the file holds.
func eachLine(src *Source, fn func(n int, line []byte, final bool)) (int, error) {
	br, done := lineReaderOf(src)
	defer done()
	ls := lineSplitter{src: src, lim: src.limits(), fn: fn}
	defer ls.release()
	for {
		if ls.n%64 == 0 || ls.size > 0 {
			if err := src.cancelled(); err != nil {
				return ls.n, err
			}
		}
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			ls.more(chunk)
			continue
		}
		ls.end(chunk)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ls.n, nil
			}
			return ls.n, src.readError(err)
		}
	}
}

// lineReaderOf returns the buffered reader of src, or a pooled one over
// it, and what to call when the lines are read.
func lineReaderOf(src *Source) (*bufio.Reader, func()) {
	switch r := src.R.(type) {
	case *bufio.Reader:
		return r, func() {}
	case limitedReader:
		if b, ok := r.Reader.(*bufio.Reader); ok {
			return b, func() {}
		}
	}
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(src.R)
	return br, func() {
		br.Reset(nil) // drop the source; the buffer is for the next file
		lineReaders.Put(br)
	}
}

// lineSplitter turns the chunks of a buffered reader into lines for
// eachLine, within the source's limits.
type lineSplitter struct {
	src *Source
	lim Limits
	fn  func(n int, line []byte, final bool)
	n   int // lines handed out or skipped so far
	// long holds the start of a line longer than the read buffer, up to
	// maxLongKept bytes; pieces hold the chunks of a longer one (copies).
	// size is the line's length so far, counted also while skipping (the
	// line outgrew MaxLine and is being read past).
	long     *[]byte
	pieces   [][]byte
	size     int
	skipping bool
}

// more takes a chunk that does not end the line.
func (ls *lineSplitter) more(chunk []byte) {
	if ls.skipping {
		return
	}
	ls.size += len(chunk)
	if ls.size > ls.lim.MaxLine {
		ls.skipping, ls.pieces = true, nil
		return
	}
	if ls.long == nil {
		if b, ok := longLines.Get().(*[]byte); ok {
			ls.long = b
		} else {
			ls.long = new([]byte)
		}
	}
	if ls.pieces == nil && ls.size <= maxLongKept {
		*ls.long = append(*ls.long, chunk...)
		return
	}
	if ls.pieces == nil {
		ls.pieces = [][]byte{bytes.Clone(*ls.long)}
		*ls.long = (*ls.long)[:0]
	}
	ls.pieces = append(ls.pieces, bytes.Clone(chunk))
}

// end takes the chunk that ends a line (empty at the end of the input) and
// hands the line out, or records why it is skipped.
func (ls *lineSplitter) end(chunk []byte) {
	defer func() {
		ls.skipping, ls.size, ls.pieces = false, 0, nil
		if ls.long != nil {
			*ls.long = (*ls.long)[:0]
		}
	}()
	if len(chunk) == 0 && ls.size == 0 {
		return
	}
	ls.n++
	final := len(chunk) == 0 || chunk[len(chunk)-1] != '\n'
	if ls.skipping || ls.size+len(chunk) > ls.lim.MaxLine {
		ls.src.lost = append(ls.src.lost, lostLine{ls.n, tooLong("line", ls.lim.MaxLine)})
		return
	}
	line := chunk
	switch {
	case len(ls.pieces) > 0:
		// Assemble the line once, at its exact size.
		whole := make([]byte, 0, ls.size+len(chunk))
		for _, p := range ls.pieces {
			whole = append(whole, p...)
		}
		line = append(whole, chunk...)
		ls.pieces = nil
	case ls.size > 0:
		*ls.long = append(*ls.long, chunk...)
		line = *ls.long
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
	if jsonDepth(line, ls.lim.MaxDepth) > ls.lim.MaxDepth {
		ls.src.lost = append(ls.src.lost, lostLine{ls.n, tooDeep("line", ls.lim.MaxDepth)})
		return
	}
	ls.fn(ls.n, line, final)
}

// release returns the long-line buffer for reuse, unless it grew large.
func (ls *lineSplitter) release() {
	if ls.long != nil && cap(*ls.long) <= 2*maxLongKept {
		*ls.long = (*ls.long)[:0]
		longLines.Put(ls.long)
	}
	ls.long = nil
}
