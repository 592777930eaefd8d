package compaction

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// StructuredParams configure the structured strategy (seed 003, after
// pi-mono).
type StructuredParams struct {
	// Reserve: compaction triggers when the prompt exceeds window − Reserve
	// (pi-mono's reserveTokens).
	Reserve int `yaml:"reserve"`
	// KeepRecent tokens of the newest messages stay verbatim, cut at a
	// valid point (never at a tool result). Seed 003 keeps none ("Keeping
	// recent messages" is out of its scope); pi-mono keeps 20,000.
	KeepRecent int `yaml:"keep_recent"`
	// Rules is the rule set whose anchors become Done items.
	Rules string `yaml:"rules"`
}

func init() {
	register(Spec{
		ID: "structured", Source: "seed 003",
		Doc:    "Goal/Constraints/Progress/Decisions/Next/Critical sections, <read-files>/<modified-files> tracked from tool calls, iterative merge with the previous summary",
		Params: func() any { return &StructuredParams{Reserve: 16_384, KeepRecent: 0, Rules: "tuned"} },
		New:    func(p any) Strategy { return &structured{p: *p.(*StructuredParams)} },
	})
}

// structured keeps its previous summary and cumulative file lists across
// rounds (seed 003 phase 2's CompactionState).
type structured struct {
	p        StructuredParams
	previous string
	reads    orderedSet
	modified orderedSet
}

const (
	structuredPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	structuredSuffix = "\n</summary>"
)

func (st *structured) Trigger(s *Sim) (bool, int) {
	return s.Prompt() > s.Window-st.p.Reserve, s.Prompt()
}

// Compact summarizes everything before the cut and keeps the rest.
func (st *structured) Compact(s *Sim) Outcome {
	cut := len(s.Ctx)
	if st.p.KeepRecent > 0 {
		kept := 0
		for cut > 0 && kept < st.p.KeepRecent {
			cut--
			kept += s.ItemTokens(cut)
		}
		for cut > 0 && s.Ctx[cut].Msg.Role == transcript.RoleTool {
			cut-- // never start the kept part at a tool result
		}
	}
	if cut == 0 {
		return Outcome{Skip: true}
	}
	old := s.Ctx[:cut]
	var msgs []Item
	for _, it := range old {
		if !strings.HasPrefix(it.Msg.Text(), structuredPrefix) { // the previous summary goes in as <previous-summary>
			msgs = append(msgs, it)
		}
	}
	sp := gather(s.Shared, msgs)
	// File operations accumulate across rounds (union); previous modified
	// files count as written.
	for _, p := range sp.reads.list {
		st.reads.add(p)
	}
	for _, p := range sp.modified() {
		st.modified.add(p)
	}
	done := st.doneItems(s, msgs, sp)
	prompt := "structured"
	if st.previous != "" {
		prompt = "structured-update" // merges the previous summary
	}
	prev := st.previous
	req := &SummaryRequest{Strategy: "structured", Round: s.Round + 1, PromptName: prompt, Previous: prev,
		Input:         func() string { return plainText(msgs) },
		Deterministic: func() string { return structuredSummary(sp, done, prev) }}
	body := s.summarize(req)
	st.previous = body
	summary := body + st.fileOps()
	ctx := make([]Item, 0, len(s.Ctx)-cut+1)
	ctx = append(ctx, s.Synthetic(transcript.RoleUser, structuredPrefix+summary+structuredSuffix))
	ctx = append(ctx, s.Ctx[cut:]...)
	in := 0
	for i := 0; i < cut; i++ {
		in += s.ItemTokens(i)
	}
	return Outcome{Ctx: ctx, Action: "compact", Summary: summary, SummarizerInput: in}
}

// fileOps is seed 003's formatFileOperations over the cumulative lists:
// modified = edited ∪ written; read-only = read − modified; both sorted.
func (st *structured) fileOps() string {
	var b strings.Builder
	var readOnly []string
	for _, p := range st.reads.list {
		if !st.modified.has(p) {
			readOnly = append(readOnly, p)
		}
	}
	if len(readOnly) > 0 {
		b.WriteString("\n\n<read-files>\n" + strings.Join(sortedCopy(readOnly), "\n") + "\n</read-files>")
	}
	if len(st.modified.list) > 0 {
		b.WriteString("\n\n<modified-files>\n" + strings.Join(sortedCopy(st.modified.list), "\n") + "\n</modified-files>")
	}
	return b.String()
}

// doneItems are the completed TodoWrite items and, when the rule set is
// available, the descriptions of the anchors among the summarized turns.
func (st *structured) doneItems(s *Sim, msgs []Item, sp *span) []string {
	var done orderedSet
	for _, t := range sp.doneTodos() {
		done.add(t)
	}
	for _, d := range anchorDescriptions(s, st.p.Rules, msgs) {
		done.add(d)
	}
	return done.list
}

// structuredSummary fills seed 003's exact format from the summarized span,
// merging the previous summary as its UPDATE prompt asks: previous items are
// preserved, in-progress items that are now done move to Done.
func structuredSummary(sp *span, done []string, previous string) string {
	prev := parseStructured(previous)
	var sec structuredSections
	sec.addGoal(sp, prev)
	sec.addProgress(sp, done, prev)
	sec.addContext(sp, prev)
	return sec.render()
}

// structuredSections are the items of each section of a structured summary,
// in order, without repeats.
type structuredSections struct {
	goal, constraints, done, inProgress, blocked, decisions, next, critical orderedSet
}

// addGoal fills Goal (the first sentence of each prompt) and Constraints &
// Preferences, after the previous summary's items.
func (sec *structuredSections) addGoal(sp *span, prev map[string][]string) {
	for _, l := range prev["Goal"] {
		sec.goal.add(l)
	}
	for _, p := range sp.prompts {
		if g := firstSentence(p, 150); g != "" {
			sec.goal.add("- " + g)
		}
	}
	for _, l := range prev["Constraints & Preferences"] {
		sec.constraints.add(l)
	}
	for _, c := range sp.constraints {
		sec.constraints.add("- " + c)
	}
}

// addProgress fills Done (previous items, previous in-progress items now
// done, and what is done now), In Progress (open todos, else the last
// prompt) and Blocked (the last error).
func (sec *structuredSections) addProgress(sp *span, done []string, prev map[string][]string) {
	doneNow := map[string]bool{}
	for _, d := range done {
		doneNow[d] = true
	}
	for _, l := range prev["Done"] {
		sec.done.add(l)
	}
	for _, l := range prev["In Progress"] {
		item := strings.TrimPrefix(l, "- [ ] ")
		if doneNow[item] {
			sec.done.add("- [x] " + item)
		} else {
			sec.inProgress.add(l)
		}
	}
	for _, d := range done {
		sec.done.add("- [x] " + d)
	}
	for _, t := range sp.openTodos() {
		sec.inProgress.add("- [ ] " + t.Content)
	}
	if len(sp.todos) == 0 && len(sp.prompts) > 0 {
		sec.inProgress.add("- [ ] " + firstSentence(sp.prompts[len(sp.prompts)-1], 150))
	}
	if sp.lastError != "" {
		sec.blocked.add("- " + sp.lastError)
	}
}

// addContext fills Key Decisions, Next Steps (open todos, else continue
// the last prompt) and Critical Context (errors and identifiers).
func (sec *structuredSections) addContext(sp *span, prev map[string][]string) {
	for _, l := range prev["Key Decisions"] {
		sec.decisions.add(l)
	}
	for _, d := range sp.decisions.list {
		sec.decisions.add("- **" + d + "**")
	}
	for i, t := range sp.openTodos() {
		sec.next.add(fmt.Sprintf("%d. %s", i+1, t.Content))
	}
	if len(sec.next.list) == 0 && len(sp.prompts) > 0 {
		sec.next.add("1. Continue: " + firstSentence(sp.prompts[len(sp.prompts)-1], 150))
	}
	for _, l := range prev["Critical Context"] {
		sec.critical.add(l)
	}
	for _, e := range sp.errors.list {
		sec.critical.add("- Error: " + e)
	}
	for _, id := range sp.identifiers(15) {
		sec.critical.add("- `" + id + "`")
	}
}

// render writes the sections in seed 003's order and headings.
func (sec *structuredSections) render() string {
	var b strings.Builder
	section := func(title string, items *orderedSet, empty string) {
		b.WriteString(title + "\n")
		writeList(&b, items.list, empty)
		b.WriteString("\n")
	}
	section("## Goal", &sec.goal, "- (none)")
	section("## Constraints & Preferences", &sec.constraints, "- (none)")
	b.WriteString("## Progress\n")
	section("### Done", &sec.done, "- (none)")
	section("### In Progress", &sec.inProgress, "- (none)")
	section("### Blocked", &sec.blocked, "- (none)")
	section("## Key Decisions", &sec.decisions, "- (none)")
	section("## Next Steps", &sec.next, "1. (none)")
	section("## Critical Context", &sec.critical, "- (none)")
	return strings.TrimRight(b.String(), "\n")
}

// parseStructured reads the items of a previous structured summary, by
// section title ("Goal", "Done", ...).
func parseStructured(s string) map[string][]string {
	out := map[string][]string{}
	title := ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "### "):
			title = strings.TrimPrefix(t, "### ")
		case strings.HasPrefix(t, "## "):
			title = strings.TrimPrefix(t, "## ")
		case strings.HasPrefix(t, "<"):
			title = ""
		case title != "" && t != "" && !strings.Contains(t, "(none)"):
			out[title] = append(out[title], t)
		}
	}
	return out
}
