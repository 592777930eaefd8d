package compaction

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// WindowParams configure the window strategy (seed 004).
type WindowParams struct {
	// ContextLimit is the model window; 0 looks the model up in the seed's
	// table (unknown models get 128,000). --window overrides it.
	ContextLimit     int     `yaml:"context_limit"`
	SystemReserve    int     `yaml:"system_reserve"`
	OutputReserve    int     `yaml:"output_reserve"`
	SafetyBuffer     int     `yaml:"safety_buffer"`
	ThresholdPercent float64 `yaml:"threshold_percent"`
	// KeepLast is how many recent messages stay verbatim.
	KeepLast int `yaml:"keep_last"`
	// Ruler is the trigger's count (seed 004 estimateMessagesTokens).
	Ruler string `yaml:"ruler"`
	// ToolResultChars and MessageChars truncate what the summarizer reads.
	ToolResultChars int `yaml:"tool_result_chars"`
	MessageChars    int `yaml:"message_chars"`
}

// windowModelLimits is seed 004's MODEL_CONTEXT_LIMITS.
var windowModelLimits = map[string]int{
	"gpt-4o": 128_000, "gpt-4-turbo": 128_000, "gpt-4": 8_192,
	"claude-3-5-sonnet-20240620": 200_000, "claude-3-haiku-20240307": 200_000,
}

func init() {
	register(Spec{
		ID: "window", Source: "seed 004",
		Doc: "message window: keep the last 10 messages, tool-pair-safe boundary, chained \"Session Summary (Compaction Round N)\", chars/4 trigger at 80% of available",
		Params: func() any {
			return &WindowParams{SystemReserve: 2000, OutputReserve: 4000, SafetyBuffer: 5000, ThresholdPercent: 0.80,
				KeepLast: 10, Ruler: "chars4msg", ToolResultChars: 500, MessageChars: 2000}
		},
		New: func(p any) Strategy { return &window{p: *p.(*WindowParams)} },
	})
}

type window struct {
	p WindowParams
}

// threshold is seed 004's calculateThreshold.
func (w *window) threshold(s *Sim) int {
	limit := w.p.ContextLimit
	switch {
	case s.Override > 0:
		limit = s.Override
	case limit == 0:
		limit = 128_000
		if l, ok := windowModelLimits[s.T.Model]; ok {
			limit = l
		}
	}
	return int(float64(limit-w.p.SystemReserve-w.p.OutputReserve-w.p.SafetyBuffer) * w.p.ThresholdPercent)
}

// Trigger is seed 004's shouldCompact over [system, ...context]: the system
// message is the overhead (the recording has no system text).
func (w *window) Trigger(s *Sim) (bool, int) {
	r := s.Ruler(w.p.Ruler)
	est := s.Overhead + 2 + s.Count(r)
	if len(s.Ctx)+1 <= w.p.KeepLast+1 {
		return false, est
	}
	return est >= w.threshold(s), est
}

// isWindowSummary is seed 004's previous-summary test.
func isWindowSummary(it *Item) bool {
	return it.Orig < 0 && it.Msg.Role == transcript.RoleAssistant && strings.HasPrefix(it.Msg.Text(), "## Session Summary")
}

// Compact is seed 004's selectMessagesToCompact and compact. Indices follow
// the seed's array, where index 0 is the system message.
func (w *window) Compact(s *Sim) Outcome {
	n := len(s.Ctx) + 1
	if n <= w.p.KeepLast+1 {
		return Outcome{Skip: true}
	}
	at := func(i int) *Item { return &s.Ctx[i-1] }
	boundary := n - w.p.KeepLast
	for boundary > 1 && at(boundary).Msg.Role == transcript.RoleTool {
		boundary--
	}
	start, previous := 1, ""
	if n > 1 && isWindowSummary(at(1)) {
		previous, start = at(1).Msg.Text(), 2
	}
	if boundary <= start {
		return Outcome{Skip: true}
	}
	compacted := s.Ctx[start-1 : boundary-1]
	kept := s.Ctx[boundary-1:]
	round := s.Round + 1
	task := originalTask(s.Ctx)
	view := w.truncatedView(compacted) // what the seed's summarizer reads
	req := &SummaryRequest{Strategy: "window", Round: round, PromptName: "window", Previous: previous, Task: task,
		MaxOutputTokens: 1000, Temperature: &windowTemperature,
		Input:         func() string { return w.format(compacted) },
		Deterministic: func() string { return w.summary(s.Shared, view, previous, task, round) }}
	summary := s.summarize(req)
	ctx := make([]Item, 0, len(kept)+1)
	ctx = append(ctx, s.Synthetic(transcript.RoleAssistant, summary))
	ctx = append(ctx, kept...)
	in := s.Metric.Text(previous) + s.Metric.Text(task)
	for i := range view {
		in += s.Metric.Message(view[i].Msg)
	}
	return Outcome{Ctx: ctx, Action: "compact", Summary: summary, SummarizerInput: in}
}

// windowTemperature is seed 004's sampling temperature for its summarizer.
var windowTemperature = 0.3

// originalTask is seed 004's extractOriginalTask: the first user message
// (a real prompt) of the current messages.
func originalTask(ctx []Item) string {
	for i := range ctx {
		if ctx[i].Msg.IsPrompt() {
			return ctx[i].Msg.Text()
		}
	}
	return "Unknown task"
}

// format is seed 004's formatMessagesForSummary: tool results cut to 500
// characters of their JSON, each message cut to 2,000.
func (w *window) format(items []Item) string {
	var b strings.Builder
	for i := range items {
		m := items[i].Msg
		if i > 0 {
			b.WriteString("\n\n---\n\n")
		}
		fmt.Fprintf(&b, "[%d] %s:\n", i, strings.ToUpper(m.Role.String()))
		b.WriteString(w.content(m))
	}
	return b.String()
}

func (w *window) content(m *transcript.Message) string {
	var parts []string
	for i := range m.Blocks {
		switch bl := &m.Blocks[i]; bl.Kind {
		case transcript.BlockText:
			parts = append(parts, bl.Text)
		case transcript.BlockToolUse:
			parts = append(parts, "[Tool: "+bl.ToolName+"("+bl.Input+")]")
		case transcript.BlockToolResult:
			js, _ := json.Marshal(bl.Text)
			parts = append(parts, "[Result: "+clip(string(js), w.p.ToolResultChars)+"...]")
		}
	}
	c := strings.Join(parts, "\n")
	if len(c) > w.p.MessageChars {
		c = clip(c, w.p.MessageChars) + "\n[...truncated...]"
	}
	return c
}

// truncatedView is what seed 004's summarizer reads of each message: the
// same cuts as format, as messages the span gatherer understands.
func (w *window) truncatedView(items []Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		blocks := make([]transcript.Block, len(it.Msg.Blocks))
		for j, bl := range it.Msg.Blocks {
			if bl.Kind == transcript.BlockToolResult || bl.Kind == transcript.BlockText {
				limit := w.p.MessageChars
				if bl.Kind == transcript.BlockToolResult {
					limit = w.p.ToolResultChars
				}
				bl.Text = clip(bl.Text, limit)
			}
			bl.ResetTokenCache()
			blocks[j] = bl
		}
		m := *it.Msg
		m.Blocks = blocks
		it.Msg = &m
		out[i] = it
	}
	return out
}

// summary writes seed 004's summary template from the compacted messages as
// its summarizer reads them (truncatedView), merging the previous round's
// summary (the seed's prompt asks the model to integrate it, not duplicate
// it).
func (w *window) summary(sh *Shared, items []Item, previous, task string, round int) string {
	sp := gather(sh, items)
	prev := parseSections(previous)

	var b strings.Builder
	fmt.Fprintf(&b, "## Session Summary (Compaction Round %d)\n\n", round)
	b.WriteString("### Original Task\n")
	if t := strings.TrimSpace(prev["Original Task"]); t != "" {
		b.WriteString(t)
	} else {
		b.WriteString(task)
	}
	writeCompletedWork(&b, items, sp, prev)
	writeDecisions(&b, sp, prev)
	writeCurrentState(&b, sp)
	writePending(&b, sp, prev)
	writeErrors(&b, sp, prev)
	if round > 1 {
		fmt.Fprintf(&b, "\nThis summary incorporates context from %d previous compaction rounds.\n", round-1)
	}
	return b.String()
}

// writeCompletedWork writes the Completed Work table: the previous rows,
// then one row per file the span changed (reads left out).
func writeCompletedWork(b *strings.Builder, items []Item, sp *span, prev map[string]string) {
	b.WriteString("\n\n### Completed Work\n| File/Component | Action | Description |\n|----------------|--------|-------------|\n")
	rows := tableRows(prev["Completed Work"])
	for _, p := range sortedKeys(sp.actions) {
		if sp.actions[p] == "Read" {
			continue
		}
		row := "| " + p + " | " + sp.actions[p] + " | " + fileDescription(items, p) + " |"
		rows.add(row)
	}
	for _, r := range rows.list {
		b.WriteString(r + "\n")
	}
}

// writeDecisions writes Key Technical Decisions: the previous ones, the
// span's decisions and the install commands it ran.
func writeDecisions(b *strings.Builder, sp *span, prev map[string]string) {
	b.WriteString("\n### Key Technical Decisions\n")
	decisions := bullets(prev["Key Technical Decisions"])
	for _, d := range sp.decisions.list {
		decisions.add("- " + d)
	}
	for _, c := range sp.commands.list {
		if isInstall(c) {
			decisions.add("- Installed/ran: `" + c + "`")
		}
	}
	writeList(b, decisions.list, "- (none)")
}

// writeCurrentState writes Current State: the last prompt and the last thing
// the assistant said.
func writeCurrentState(b *strings.Builder, sp *span) {
	b.WriteString("\n### Current State\n")
	working := "(unknown)"
	if len(sp.prompts) > 0 {
		working = firstSentence(sp.prompts[len(sp.prompts)-1], 200)
	}
	last := "(none)"
	if sp.lastSay != "" {
		last = firstSentence(sp.lastSay, 200)
	}
	fmt.Fprintf(b, "- Working on: %s\n- Last completed: %s\n", working, last)
}

// writePending writes Pending Work: the open todos, else the previous
// summary's pending items.
func writePending(b *strings.Builder, sp *span, prev map[string]string) {
	b.WriteString("\n### Pending Work\n")
	var pending orderedSet
	for _, t := range sp.openTodos() {
		pending.add("- [ ] " + t.Content)
	}
	if len(pending.list) == 0 {
		for _, l := range bullets(prev["Pending Work"]).list {
			pending.add(l)
		}
	}
	writeList(b, pending.list, "- (none)")
}

// writeErrors writes Errors & Resolutions when there are any: the previous
// ones, then the span's errors (the last one unresolved).
func writeErrors(b *strings.Builder, sp *span, prev map[string]string) {
	errs := bullets(prev["Errors & Resolutions"])
	for _, e := range sp.errors.list {
		res := "resolved"
		if e == sp.lastError {
			res = "unresolved"
		}
		errs.add("- " + e + " → " + res)
	}
	if len(errs.list) > 0 {
		b.WriteString("\n### Errors & Resolutions\n")
		writeList(b, errs.list, "")
	}
}

// fileDescription is the first sentence of the assistant text that follows
// the file's last operation in the span.
func fileDescription(items []Item, path string) string {
	after := false
	for i := range items {
		for j := range items[i].Msg.Blocks {
			bl := &items[i].Msg.Blocks[j]
			if bl.Kind == transcript.BlockToolUse && bl.Path == path {
				after = true
			}
			if after && bl.Kind == transcript.BlockText && items[i].Msg.Role == transcript.RoleAssistant {
				if d := firstSentence(bl.Text, 100); d != "" {
					return strings.ReplaceAll(d, "|", "/")
				}
			}
		}
	}
	return "-"
}

func isInstall(c string) bool {
	for _, p := range []string{"npm install", "npm i ", "pip install", "go get", "cargo add", "bun add", "yarn add", "pnpm add", "apt-get install", "brew install"} {
		if strings.Contains(c, p) {
			return true
		}
	}
	return false
}

// parseSections splits a Markdown summary into "### Title" sections.
func parseSections(s string) map[string]string {
	out := map[string]string{}
	title := ""
	var body []string
	flush := func() {
		if title != "" {
			out[title] = strings.Join(body, "\n")
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if t, ok := strings.CutPrefix(line, "### "); ok {
			flush()
			title, body = strings.TrimSpace(t), nil
			continue
		}
		if strings.HasPrefix(line, "## ") {
			flush()
			title, body = "", nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// bullets collects the "- " and numbered lines of a section.
func bullets(section string) *orderedSet {
	out := &orderedSet{}
	for _, l := range strings.Split(section, "\n") {
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "- ") || (len(l) > 2 && l[0] >= '0' && l[0] <= '9' && strings.Contains(l[:3], "."))) &&
			!strings.Contains(l, "(none)") {
			out.add(l)
		}
	}
	return out
}

// tableRows collects the data rows of a Markdown table section.
func tableRows(section string) *orderedSet {
	out := &orderedSet{}
	for _, l := range strings.Split(section, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "|--") && !strings.HasPrefix(l, "| File/Component") {
			out.add(l)
		}
	}
	return out
}

func writeList(b *strings.Builder, lines []string, empty string) {
	if len(lines) == 0 {
		if empty != "" {
			b.WriteString(empty + "\n")
		}
		return
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
