package gen

import (
	"io"
	"math/rand/v2"
	"strings"
)

// sess is one session being generated: the random stream, the project, the
// files written so far and the gold labels.
type sess struct {
	rng    *rand.Rand
	create func(path string) (io.Writer, error)
	prof   *profile
	proj   *project
	id     string
	slug   string
	dir    string
	clock  int64 // unix milliseconds of the newest record

	main  *tfile
	cur   *tfile // the file steps go to: main, or a subagent while it runs
	files []*tfile
	err   error

	turn      int // index of the current main turn, -1 before the first prompt
	labels    []Label
	preHooks  []string
	postHooks []string
	facts     facts
}

// facts are what a compaction summary recalls of the session so far.
type facts struct {
	requests []string
	files    []string
	seen     map[string]bool
	errors   []string
	commands []string
	current  string
}

func (f *facts) file(path string) {
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if !f.seen[path] {
		f.seen[path] = true
		f.files = append(f.files, path)
	}
}

func (s *sess) tick(lo, hi int) { s.clock += int64(between(s.rng, lo, hi)) }

// user writes a prompt in the main file and opens a new turn.
func (s *sess) user(text string) {
	if s.turn >= 0 {
		s.tick(4_000, 240_000)
		if chance(s.rng, 0.07) {
			s.pause()
		}
	}
	s.cur = s.main
	s.main.prompt(text)
	s.turn++
	s.facts.requests = append(s.facts.requests, clip(text, 300))
	s.facts.current = clip(text, 200)
}

// pause is a long break between prompts: the prompt cache has expired, so
// the next call reads only the system prefix from it.
func (s *sess) pause() {
	if s.prof.ttl1h {
		s.tick(65*60_000, 5*3600_000)
	} else {
		s.tick(6*60_000, 90*60_000)
	}
	s.main.cached = min(s.main.cached, s.main.system)
}

// interrupt writes the notice Claude Code records when the user stops a
// response: model-visible, not a prompt.
func (s *sess) interrupt() {
	s.tick(500, 20_000)
	s.main.metaText("[Request interrupted by user]")
}

// endTurn writes the bookkeeping records that close a turn in newer files.
func (s *sess) endTurn() {
	f := s.main
	if !s.prof.hooks || !chance(s.rng, 0.4) {
		return
	}
	s.tick(5, 200)
	d := int64(between(s.rng, 3_000, 900_000))
	f.sysRecord("turn_duration", func(b []byte) []byte { return kvInt(b, "durationMs", d) })
}

// label records a gold anchor at the current main turn. A turn carries at
// most one label: when a second event lands on the same turn, the type with
// the higher weight stays (error-resolution > task-completion >
// feature-milestone > user-checkpoint) and the other is kept in the note.
func (s *sess) label(typ, note string) {
	if n := len(s.labels); n > 0 && s.labels[n-1].Turn == s.turn {
		l := &s.labels[n-1]
		if weight[typ] > weight[l.Type] {
			typ, note, l.Type, l.Note = l.Type, l.Note, typ, note
		}
		l.Note += "; also " + typ + ": " + note
		return
	}
	s.labels = append(s.labels, Label{Transcript: s.main.exp.Path, Turn: s.turn, Type: typ, Note: note})
}

var weight = map[string]int{ErrorResolution: 4, TaskCompletion: 3, FeatureMilestone: 2, UserCheckpoint: 1}

// clip cuts s to n bytes, on a rune boundary, and marks the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// block kinds of an assistant message.
const (
	kText = iota
	kThinking
	kTool
)

type blk struct {
	kind int
	text string
	sig  string
	c    *call
}

// call is one tool call and its result.
type call struct {
	id          string
	name        string
	input       []byte
	out         string
	isErr       bool
	listContent bool                // result content as a list of text blocks (Task)
	tur         func([]byte) []byte // appends toolUseResult: UI data beside the result, never context
	durMs       int
	longRun     bool // prints bash progress while it runs
	run         func(c *call)
	lineUUID    string
}

// step is one API call being assembled: its blocks, then done() writes it.
type step struct {
	s      *sess
	f      *tfile
	blocks []blk
}

func (s *sess) step() *step { return &step{s: s, f: s.cur} }

// think adds a thinking block with visible text.
func (st *step) think(text string) *step {
	st.blocks = append(st.blocks, blk{kind: kThinking, text: text, sig: signature(st.s.rng, between(st.s.rng, 200, 900))})
	return st
}

// thinkHidden adds an encrypted thinking block: no text, a long signature.
func (st *step) thinkHidden() *step {
	st.blocks = append(st.blocks, blk{kind: kThinking, sig: signature(st.s.rng, between(st.s.rng, 1_500, 24_000))})
	return st
}

// say adds a text block (the API rejects empty ones, so none is written).
func (st *step) say(text string) *step {
	if text == "" {
		return st
	}
	st.blocks = append(st.blocks, blk{kind: kText, text: text})
	return st
}

func (st *step) add(c *call) {
	c.id = apiID(st.s.rng, "toolu_01", 22)
	st.blocks = append(st.blocks, blk{kind: kTool, c: c})
}

// done writes the call: one line per block sharing the message id, the
// usage snapshot on each (final output count on the last), progress records,
// then the tool results; and it advances the usage model.
func (st *step) done() {
	s, f := st.s, st.f
	if len(st.blocks) == 0 {
		return // nothing to send
	}
	if f == s.main && f.total >= CompactAt {
		s.compact()
	}
	ctx := f.total
	input := int64(1)
	if f.newPrompt {
		input = 3
	}
	read := min(f.cached, ctx-input)
	create := ctx - input - read
	var output int64
	for _, b := range st.blocks {
		output += blockTokens(&b)
	}
	f.exp.APICalls++
	f.exp.Messages++
	f.peak(ctx)

	msgID := apiID(s.rng, "msg_01", 22)
	reqID := apiID(s.rng, "req_011C", 20)
	early := min(int64(between(s.rng, 1, 12)), output)
	var calls []*call
	for i, b := range st.blocks {
		s.tick(250, 2_500)
		last := i == len(st.blocks)-1
		u := callUsage{input: input, create: create, read: read, output: early}
		if last {
			u.output = output
		}
		stop := ""
		if last && !s.prof.threaded {
			stop = "end_turn"
			if b.kind == kTool {
				stop = "tool_use"
			}
		}
		id := newUUID(s.rng)
		f.assistantLine(id, msgID, reqID, &b, u, stop)
		if b.kind == kTool {
			b.c.lineUUID = id
			calls = append(calls, b.c)
			if len(calls) == 1 {
				s.preToolHooks(b.c)
			}
		}
	}
	f.newPrompt = false

	var added int64
	parent := ""
	for i, c := range calls {
		if i > 0 {
			s.preToolHooks(c)
		}
		if c.run != nil {
			c.run(c)
		}
		if c.longRun {
			s.bashProgress(c)
		}
		s.tick(c.durMs/2, c.durMs+50)
		if s.prof.hooks {
			for _, h := range s.postHooks {
				f.hook("PostToolUse", c.name, h, c.id)
			}
		}
		if s.prof.threaded {
			parent = c.lineUUID
		} else {
			parent = f.last
		}
		f.result(c, parent)
		added += MessageTokens + ToolResultTokens + codeTokens(len(c.out))
		f.exp.Messages++
		f.exp.ToolCalls++
		if c.isErr {
			f.exp.ToolErrors++
		}
	}
	f.cached = ctx - input
	f.total = ctx + output + added
}

func (s *sess) preToolHooks(c *call) {
	if !s.prof.hooks {
		return
	}
	for _, h := range s.preHooks {
		s.cur.hook("PreToolUse", c.name, h, c.id)
	}
}

// bashProgress writes the progress records of a long command.
func (s *sess) bashProgress(c *call) {
	lines := strings.Split(strings.TrimRight(c.out, "\n"), "\n")
	n := between(s.rng, 1, 3)
	for i := 1; i <= n; i++ {
		s.tick(1_000, 3_000)
		k := len(lines) * i / (n + 1)
		part := strings.Join(lines[max(0, k-4):k], "\n")
		d := append(make([]byte, 0, 2*len(part)+128), '{')
		d = kvStr(d, "type", "bash_progress")
		d = kvStr(d, "output", part)
		d = kvStr(d, "fullOutput", part)
		d = kvInt(d, "elapsedTimeSeconds", int64(i*2))
		d = kvInt(d, "totalLines", int64(k))
		d = kvInt(d, "timeoutMs", 120000)
		d = append(d, '}')
		s.cur.progress(d, "bash-progress-"+itoa(i-1), c.id)
	}
}

// blockTokens is what a block adds to the context once sent back.
func blockTokens(b *blk) int64 {
	switch b.kind {
	case kThinking:
		if b.text == "" {
			return BlockTokens + ceilDiv(len(b.sig), SignatureChars)
		}
		return BlockTokens + proseTokens(len(b.text))
	case kTool:
		return ToolUseTokens + codeTokens(len(b.c.input))
	}
	return BlockTokens + proseTokens(len(b.text))
}

func appendBlock(b []byte, x *blk, caller bool) []byte {
	b = append(b, '{')
	switch x.kind {
	case kText:
		b = kvStr(b, "type", "text")
		b = kvStr(b, "text", x.text)
	case kThinking:
		b = kvStr(b, "type", "thinking")
		b = kvStr(b, "thinking", x.text)
		b = kvStr(b, "signature", x.sig)
	case kTool:
		b = kvStr(b, "type", "tool_use")
		b = kvStr(b, "id", x.c.id)
		b = kvStr(b, "name", x.c.name)
		b = kvRaw(b, "input", x.c.input)
		if caller {
			b = append(appendKey(b, "caller"), `{"type":"direct"}`...)
		}
	}
	return append(b, '}')
}

// compact writes a recorded compaction in the main file, and the file of
// the summarizer call beside it.
func (s *sess) compact() {
	f := s.main
	summary := s.summary()
	pre, cached, parent := f.total, f.cached, f.last
	s.tick(20_000, 90_000)

	aid := "acompact-" + hexID(s.rng, 6)
	cf, err := s.newFile(s.subagentPath(aid), true, aid, f.exp.Model)
	if err != nil {
		s.fail(err)
	} else {
		cf.exp.Kind = "compaction-call"
		cf.last = parent
		prompt := compactPrompt
		cf.prompt(prompt)
		reply := "<analysis>\n" + clip(s.facts.current, 400) + "\n</analysis>\n\n<summary>\n" + summary + "\n</summary>"
		input := int64(3)
		read := min(cached, pre)
		create := pre + MessageTokens + proseTokens(len(prompt)) - input - read
		out := BlockTokens + proseTokens(len(reply))
		cf.exp.APICalls++
		cf.exp.Messages++
		cf.peak(read + create + input)
		cf.assistantLine(newUUID(s.rng), apiID(s.rng, "msg_01", 22), apiID(s.rng, "req_011C", 20),
			&blk{kind: kText, text: reply}, callUsage{input: input, create: create, read: read, output: out}, "")
		s.closeFile(cf)
	}

	f.boundary("This session continues an earlier conversation that ran out of context. The summary below covers the earlier part of it.\n\n" + summary)
	if s.prof.hooks {
		f.sessionStart("compact")
	}
}

const compactPrompt = "Write a detailed summary of the conversation so far so that the work can continue without it. " +
	"Cover the user's explicit requests and intent, the technical concepts involved, every file read or changed " +
	"(with the important code), errors met and how they were fixed, all user messages, pending tasks, and the " +
	"work in progress right now. Put your reasoning in <analysis> tags and the summary in <summary> tags."

// summary is the text a compaction puts in place of the history, made from
// the session's facts.
func (s *sess) summary() string {
	var b strings.Builder
	p := s.proj
	b.WriteString("Summary:\n1. Primary Request and Intent:\n")
	reqs := s.facts.requests
	if len(reqs) > 8 { // the first request and the latest ones
		reqs = append(reqs[:1:1], lastN(reqs, 7)...)
	}
	for _, r := range reqs {
		b.WriteString("   - " + clip(r, 240) + "\n")
	}
	b.WriteString("\n2. Key Technical Concepts:\n   - " + p.lang.name + " project " + p.name + " at " + p.root + "\n   - tests run with " + p.runner.name + "\n")
	for _, m := range p.mods {
		b.WriteString("   - module " + m + "\n")
	}
	b.WriteString("\n3. Files and Code Sections:\n")
	for _, path := range lastN(s.facts.files, 14) {
		b.WriteString("   - " + p.abs(path) + "\n     - " + prose(s.rng, 1, "noun", pick(s.rng, nouns), "cond", pick(s.rng, conditions), "fn", modOf(path), "Fn", capitalize(modOf(path)), "field", pick(s.rng, fields)) + "\n")
	}
	b.WriteString("\n4. Errors and fixes:\n")
	for _, e := range lastN(s.facts.errors, 6) {
		b.WriteString("   - " + clip(e, 200) + "\n")
	}
	b.WriteString("\n5. Commands run:\n")
	for _, c := range lastN(s.facts.commands, 10) {
		b.WriteString("   - `" + clip(c, 160) + "`\n")
	}
	b.WriteString("\n6. Current Work:\n   " + s.facts.current + "\n")
	return b.String()
}

func lastN(xs []string, n int) []string {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

// subagentPath is where a subagent file of this session goes.
func (s *sess) subagentPath(agentID string) string {
	return s.dir + "/" + s.id + "/subagents/agent-" + agentID + ".jsonl"
}

func (s *sess) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *sess) closeFile(f *tfile) {
	if err := f.close(); err != nil {
		s.fail(err)
	}
	s.files = append(s.files, f)
}
