package compaction

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// span gathers, from the messages a compaction summarizes, what the
// deterministic summarizers write: prompts, file operations, errors, todos,
// decisions. It reads messages as given (a summarizer that sees truncated
// messages gets truncated facts).
type span struct {
	prompts     []string
	constraints []string
	reads       orderedSet
	written     orderedSet
	edited      orderedSet
	// actions are per-file descriptions for tables: path -> last action.
	actions   map[string]string
	errors    orderedSet // first lines of failed tool results
	lastError string     // the last failed result's first line, "" if a later result succeeded
	todos     []todo
	decisions orderedSet
	commands  orderedSet
	says      []string // the assistant's texts, trimmed
	lastSay   string   // the last assistant text
	cues      cueText
}

// identifiers returns the first n identifiers the assistant named in its
// text, extracting no more than it needs.
func (sp *span) identifiers(n int) []string {
	var ids orderedSet
	var ex extractor
	ex.emit = func(f Fact) {
		if f.Kind == FactIdent && len(ids.list) < n {
			ids.add(f.Text)
		}
	}
	for _, t := range sp.says {
		if len(ids.list) == n {
			break
		}
		ex.words(t)
	}
	return ids.list
}

type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// orderedSet keeps first-seen order.
type orderedSet struct {
	list []string
	seen map[string]bool
}

func (o *orderedSet) add(s string) {
	if s == "" {
		return
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if !o.seen[s] {
		o.seen[s] = true
		o.list = append(o.list, s)
	}
}

func (o *orderedSet) has(s string) bool { return o.seen[s] }

var decisionCues = []string{"i'll use ", "i will use ", "we'll use ", "decided to ", "instead of ", "chose ",
	"going with ", "switch to ", "switching to ", "the approach is ", "let's use "}

// decisionCueBytes are decisionCues as bytes.
var decisionCueBytes = func() (out [][]byte) {
	for _, c := range decisionCues {
		out = append(out, []byte(c))
	}
	return out
}()

// gather reads the span's prompts, file operations, commands, errors,
// decisions and todos from the items, in order. The sentences of recorded
// messages that set a rule or state a decision are found once per
// transcript (sh.cues), whichever strategy and compaction gathers them.
func gather(sh *Shared, items []Item) *span {
	sp := &span{actions: map[string]string{}}
	var todoWrites []string // TodoWrite inputs: the last valid list is the todos
	for i := range items {
		m := items[i].Msg
		var mc *msgCues
		if o := items[i].Orig; o >= 0 && m == &sh.T.Messages[o] { // the recorded message itself
			mc = sh.cuesOf(o, &sp.cues)
		}
		switch {
		case mc != nil && mc.prompt:
			sp.addPromptFound(m.Text(), mc.constraints)
		case mc == nil && m.IsPrompt():
			sp.addPrompt(m.Text())
		}
		for j := range m.Blocks {
			b := &m.Blocks[j]
			switch {
			case b.Kind == transcript.BlockToolUse:
				sp.addToolUse(b)
				if b.ToolKind() == transcript.ToolTodo {
					todoWrites = append(todoWrites, b.Input)
				}
			case b.Kind == transcript.BlockToolResult:
				sp.addResult(b)
			case b.Kind == transcript.BlockText && m.Role == transcript.RoleAssistant:
				if mc != nil {
					sp.addSayFound(b.Text, mc.decisions[j])
				} else {
					sp.addSay(b.Text)
				}
			}
		}
	}
	sp.setTodos(todoWrites)
	return sp
}

// msgCues are what gather finds in a recorded message whatever the span:
// whether it is a prompt, the rule-setting sentences of its text when it is
// (clipped), and, by block, the decision sentences of its assistant text.
type msgCues struct {
	prompt      bool
	constraints []string
	decisions   [][]string
}

// cuesOf returns recorded message o's cues, found on first use.
func (sh *Shared) cuesOf(o int, ct *cueText) *msgCues {
	if sh.cues == nil {
		sh.cues = make([]*msgCues, len(sh.T.Messages))
	}
	if mc := sh.cues[o]; mc != nil {
		return mc
	}
	m := &sh.T.Messages[o]
	mc := &msgCues{prompt: sh.prompts[o]}
	if mc.prompt {
		mc.constraints = constraintSentences(m.Text(), ct)
	}
	if m.Role == transcript.RoleAssistant {
		mc.decisions = make([][]string, len(m.Blocks))
		for j := range m.Blocks {
			if b := &m.Blocks[j]; b.Kind == transcript.BlockText {
				mc.decisions[j] = decisionSentences(strings.TrimSpace(b.Text), ct)
			}
		}
	}
	sh.cues[o] = mc
	return mc
}

// addPrompt adds a user prompt and the sentences of it that set a rule.
func (sp *span) addPrompt(p string) { sp.addPromptFound(p, constraintSentences(p, &sp.cues)) }

// addPromptFound is addPrompt given the prompt's rule-setting sentences.
func (sp *span) addPromptFound(p string, constraints []string) {
	sp.prompts = append(sp.prompts, p)
	sp.constraints = append(sp.constraints, constraints...)
}

// constraintSentences are the sentences of a prompt that set a rule,
// clipped.
func constraintSentences(p string, ct *cueText) []string {
	var out []string
	for _, s := range sentences(p) {
		if ct.hasWordCue(" ", s, " ") {
			out = append(out, clip(s, 200))
		}
	}
	return out
}

// addToolUse adds a tool call's file operation (read, created, modified)
// and the first line of the command it ran.
func (sp *span) addToolUse(b *transcript.Block) {
	kind := b.ToolKind()
	switch {
	case b.Path == "":
	case kind == transcript.ToolRead:
		sp.reads.add(b.Path)
		if _, ok := sp.actions[b.Path]; !ok {
			sp.actions[b.Path] = "Read"
		}
	case kind == transcript.ToolModify && transcript.LookupTool("", b.ToolName, b.Input).Whole:
		sp.written.add(b.Path)
		sp.actions[b.Path] = "Created"
	case kind == transcript.ToolModify:
		sp.edited.add(b.Path)
		if sp.actions[b.Path] != "Created" {
			sp.actions[b.Path] = "Modified"
		}
	}
	if c := firstLine(b.Command); c != "" {
		sp.commands.add(clip(c, 200))
	}
}

// addResult adds a failed tool result's first line as an error (the last
// error until a later result succeeds).
func (sp *span) addResult(b *transcript.Block) {
	if !b.IsError {
		sp.lastError = ""
		return
	}
	if l := firstLine(b.Text); l != "" {
		sp.errors.add(clip(l, 200))
		sp.lastError = clip(l, 200)
	}
}

// addSay adds assistant text and the sentences of it that state a decision.
func (sp *span) addSay(text string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	sp.addSayFound(text, decisionSentences(t, &sp.cues))
}

// addSayFound is addSay given the decision sentences of the text.
func (sp *span) addSayFound(text string, decisions []string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	sp.lastSay = t
	sp.says = append(sp.says, t)
	for _, d := range decisions {
		sp.decisions.add(d)
	}
}

// decisionSentences are the sentences of a trimmed assistant text that
// state a decision, clipped.
func decisionSentences(t string, ct *cueText) []string {
	var out []string
	for _, s := range sentences(t) {
		lower := ct.lower("", s, "")
		for _, cue := range decisionCueBytes {
			if bytes.Contains(lower, cue) {
				out = append(out, clip(s, 200))
				break
			}
		}
	}
	return out
}

// setTodos sets the todos from the last TodoWrite input that parses.
func (sp *span) setTodos(todoWrites []string) {
	for i := len(todoWrites) - 1; i >= 0; i-- {
		var in struct{ Todos []todo }
		if json.Unmarshal([]byte(todoWrites[i]), &in) == nil && in.Todos != nil {
			sp.todos = in.Todos
			return
		}
	}
}

// modified is edited ∪ written, sorted (seed 003).
func (sp *span) modified() []string {
	var out orderedSet
	for _, p := range sp.edited.list {
		out.add(p)
	}
	for _, p := range sp.written.list {
		out.add(p)
	}
	return sortedCopy(out.list)
}

// readOnly is read − modified, sorted (seed 003).
func (sp *span) readOnly() []string {
	var out []string
	for _, p := range sp.reads.list {
		if !sp.edited.has(p) && !sp.written.has(p) {
			out = append(out, p)
		}
	}
	return sortedCopy(out)
}

func (sp *span) openTodos() []todo {
	var out []todo
	for _, t := range sp.todos {
		if t.Status != "completed" {
			out = append(out, t)
		}
	}
	return out
}

func (sp *span) doneTodos() []string {
	var out []string
	for _, t := range sp.todos {
		if t.Status == "completed" {
			out = append(out, t.Content)
		}
	}
	return out
}

// firstSentence is the first sentence of s (sentences: split at . ! ? that
// end a word, and at newlines), at most n characters, whitespace collapsed.
// need recall's intent check uses the same definition.
func firstSentence(s string, n int) string {
	if ss := sentences(s); len(ss) > 0 {
		s = ss[0]
	}
	return transcript.FirstRunes(collapseSpace(s), n)
}
