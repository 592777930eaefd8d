package anchors

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// Explanation says why one rule did or did not fire on one turn.
type Explanation struct {
	Rule *Rule
	// Matched: every condition held.
	Matched bool
	// Fired: the rule produced the turn's anchor.
	Fired bool
	// BelowThreshold: the rule's confidence is under the set's threshold.
	BelowThreshold bool
	// Shadowed names the earlier rule that fired on the turn, when this one
	// matched too.
	Shadowed string
	Conds    []CondExplanation
}

// CondExplanation is one condition's verdict on a turn.
type CondExplanation struct {
	// Text renders the condition ("call tool in [Edit, Write]").
	Text string
	Held bool
	// Detail says what was found ("2 of 7 calls match; tools: Bash×5, Read×2").
	Detail string
	Kids   []CondExplanation
}

// Explain evaluates every rule of the set on turn i of turns, keeping each
// condition's verdict. It gives the same verdicts as Evaluate.
func (s *RuleSet) Explain(turns []transcript.Turn, i int) []Explanation {
	p := s.program()
	// the previous turn for passes_again, the next for next_user
	from := max(i-1, 0)
	facts, fs := p.facts(turns[from:min(i+2, len(turns))])
	defer fs.release()
	f := &facts[i-from]
	cs := p.sets[0]
	var out []Explanation
	fired := ""
	for r, conds := range cs.rules {
		rule := s.Rules[r]
		ex := Explanation{Rule: rule, Matched: true, BelowThreshold: rule.BelowThreshold(s)}
		for _, c := range inFileOrder(conds) {
			ce := p.explain(c, f, turns, i)
			ex.Matched = ex.Matched && ce.Held
			ex.Conds = append(ex.Conds, ce)
		}
		switch {
		case ex.Matched && fired != "":
			ex.Shadowed = fired
		case ex.Matched && !ex.BelowThreshold:
			ex.Fired, fired = true, rule.Name
		}
		out = append(out, ex)
	}
	return out
}

func (p *program) explain(n *cnode, f *turnFacts, turns []transcript.Turn, i int) CondExplanation {
	t := &turns[i]
	ce := CondExplanation{Text: CondString(n.src), Held: p.holds(n, f)}
	switch n.kind {
	case CondAll, CondAny, CondNot:
		for _, k := range inFileOrder(n.kids) {
			ce.Kids = append(ce.Kids, p.explain(k, f, turns, i))
		}
	case CondPreviousError:
		ce.Detail = "previous_error is " + strconv.FormatBool(f.prevErr)
	case CondCall:
		hit, tool := 0, 0
		for i := range f.calls {
			if n.tools.match(f.calls[i].name) {
				tool++
			}
			if p.callMatches(n, &f.calls[i]) {
				hit++
			}
		}
		ce.Detail = fmt.Sprintf("%d of %d calls match", hit, len(f.calls))
		if n.min > 1 {
			ce.Detail += fmt.Sprintf(", %d needed", n.min)
		}
		if !n.tools.empty() && (n.command != nil || n.path != nil || n.input != nil) {
			ce.Detail += fmt.Sprintf(" (%d by tool)", tool)
		}
		if len(f.calls) > 0 {
			ce.Detail += "; tools: " + ToolCounts(t)
		}
	case CondResult:
		rs := f.results
		if n.last && len(rs) > 0 {
			rs = rs[len(rs)-1:]
		}
		var tool, succ, out, cmd, hit int
		for i := range rs {
			r := &rs[i]
			if n.tools.match(r.name) {
				tool++
			}
			if n.success >= 0 && r.success == (n.success == 1) {
				succ++
			}
			if n.output != nil && p.match(n.output, &r.output) {
				out++
			}
			if n.command != nil && p.match(n.command, &r.command) {
				cmd++
			}
			if p.resultMatches(n, r) {
				hit++
			}
		}
		what := "results"
		if n.last {
			what = "last result"
		}
		ce.Detail = fmt.Sprintf("%d of %d %s match", hit, len(rs), what)
		if n.min > 1 {
			ce.Detail += fmt.Sprintf(", %d needed", n.min)
		}
		var parts []string
		if !n.tools.empty() {
			parts = append(parts, fmt.Sprintf("tool %d", tool))
		}
		if n.success >= 0 {
			parts = append(parts, fmt.Sprintf("success=%v %d", n.success == 1, succ))
		}
		if n.command != nil {
			parts = append(parts, fmt.Sprintf("command %d", cmd))
		}
		if n.output != nil {
			parts = append(parts, fmt.Sprintf("output %d", out))
		}
		if len(parts) > 1 {
			ce.Detail += " (each alone: " + strings.Join(parts, ", ") + ")"
		}
	case CondUser:
		ce.Detail = textHead("user message", f.user.s)
	case CondResponse:
		ce.Detail = textHead("response", f.response.s)
	case CondNextUser:
		ce.Detail = textHead("next prompt", f.next.s)
	case CondChanged:
		if files := ChangedFiles(t); len(files) > 0 {
			ce.Detail = fmt.Sprintf("%d files changed: %s", len(files), strings.Join(clip(files, 4), ", "))
		} else {
			ce.Detail = "no file changed (scratch paths under a temp dir do not count)"
		}
	case CondFailThenPass:
		ce.Detail = "a command failed and then passed: " + strconv.FormatBool(f.ftp)
	case CondChecked:
		ce.Detail = "a command that changes nothing ran after the first change: " + strconv.FormatBool(f.checked)
	case CondFixedInTurn:
		ce.Detail = "a command failed, something changed, the same command passed: " + strconv.FormatBool(f.fixed)
	case CondExercised:
		ce.Detail = "a command that runs the change (not a read-only look) passed after it: " + strconv.FormatBool(f.exercised)
	case CondPassesAgain:
		if f.again {
			ce.Detail = "failed in the previous turn, passes now: " + PassesAgain(&turns[i-1], t)
		} else {
			ce.Detail = "no program that failed in the previous turn passes in this one"
		}
	case CondGit:
		if g := GitMilestones(t); len(g) > 0 {
			ce.Detail = "shown: " + strings.Join(g, ", ")
		} else {
			ce.Detail = "no commit header, push ref update, PR URL or merge in a successful result"
		}
	}
	return ce
}

// clip keeps the first n items, noting how many more there were.
func clip(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("… %d more", len(s)-n))
}

// inFileOrder returns compiled conditions in source order (evaluation runs
// them cheapest first).
func inFileOrder(ns []*cnode) []*cnode {
	out := make([]*cnode, len(ns))
	for _, n := range ns {
		out[n.pos] = n
	}
	return out
}

func textHead(what, s string) string {
	head := strings.Join(strings.Fields(transcript.FirstRunes(s, 60)), " ")
	if len(s) > len(transcript.FirstRunes(s, 60)) {
		head += "…"
	}
	return fmt.Sprintf("%s (%d bytes): %q", what, len(s), head)
}

// ToolCounts renders the tools a turn called: "Bash×5, Edit, Read×2",
// sorted by name (explanations and inspect show it).
func ToolCounts(t *transcript.Turn) string {
	counts := map[string]int{}
	for _, c := range t.ToolCalls {
		counts[c.Name]++
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if counts[n] > 1 {
			names[i] = n + "×" + strconv.Itoa(counts[n])
		}
	}
	return strings.Join(names, ", ")
}

// CondString renders a condition on one line.
func CondString(c *Cond) string {
	switch c.Kind {
	case CondAll, CondAny:
		parts := make([]string, len(c.Kids))
		for i, k := range c.Kids {
			parts[i] = CondString(k)
		}
		return c.Kind.String() + " of [" + strings.Join(parts, "; ") + "]"
	case CondNot:
		return "not (" + CondString(c.Kids[0]) + ")"
	case CondPreviousError:
		return "previous_error: " + strconv.FormatBool(c.Bool)
	case CondCall:
		var parts []string
		if len(c.Call.Tools) > 0 {
			parts = append(parts, "tool in ["+strings.Join(c.Call.Tools, ", ")+"]")
		}
		if c.Call.Command != nil {
			parts = append(parts, "command "+TextString(c.Call.Command))
		}
		if c.Call.Path != nil {
			parts = append(parts, "path "+TextString(c.Call.Path))
		}
		if c.Call.Input != nil {
			parts = append(parts, "input "+TextString(c.Call.Input))
		}
		if c.Call.Min > 1 {
			parts = append(parts, "at least "+strconv.Itoa(c.Call.Min))
		}
		return "call: " + strings.Join(parts, ", ")
	case CondResult:
		r := c.Result
		var parts []string
		if r.Last {
			parts = append(parts, "last")
		}
		if len(r.Tools) > 0 {
			parts = append(parts, "tool in ["+strings.Join(r.Tools, ", ")+"]")
		}
		if r.Success != nil {
			parts = append(parts, "success: "+strconv.FormatBool(*r.Success))
		}
		if r.Command != nil {
			parts = append(parts, "command "+TextString(r.Command))
		}
		if r.Output != nil {
			parts = append(parts, "output "+TextString(r.Output))
		}
		if r.Min > 1 {
			parts = append(parts, "at least "+strconv.Itoa(r.Min))
		}
		return "result: " + strings.Join(parts, ", ")
	case CondUser:
		return "user " + TextString(c.Text)
	case CondResponse:
		return "response " + TextString(c.Text)
	case CondNextUser:
		return "next_user " + TextString(c.Text)
	case CondChanged:
		return "changed: " + strconv.FormatBool(c.Bool)
	case CondFailThenPass:
		return "fail_then_pass: " + strconv.FormatBool(c.Bool)
	case CondChecked:
		return "checked: " + strconv.FormatBool(c.Bool)
	case CondFixedInTurn:
		return "fixed_in_turn: " + strconv.FormatBool(c.Bool)
	case CondPassesAgain:
		return "passes_again: " + strconv.FormatBool(c.Bool)
	case CondExercised:
		return "exercised: " + strconv.FormatBool(c.Bool)
	case CondGit:
		return "git: any of [" + strings.Join(c.Git, ", ") + "]"
	}
	return "?"
}

// TextString renders a text matcher on one line.
func TextString(t *Text) string {
	cs := " (case-sensitive)"
	if t.Fold {
		cs = " (case-insensitive)"
	}
	switch t.Op {
	case TextContains:
		q := make([]string, len(t.Needles))
		for i, s := range t.Needles {
			q[i] = strconv.Quote(s)
		}
		if len(q) == 1 {
			return "contains " + q[0] + cs
		}
		return "contains any of " + strings.Join(q, " ") + cs
	case TextRegex:
		return "matches /" + t.Pattern + "/" + cs
	case TextLongerThan:
		return "longer than " + strconv.Itoa(t.N) + " bytes"
	case TextShorterThan:
		return "shorter than " + strconv.Itoa(t.N) + " bytes"
	case TextAll, TextAny:
		parts := make([]string, len(t.Kids))
		for i, k := range t.Kids {
			parts[i] = TextString(k)
		}
		return t.Op.String() + " of [" + strings.Join(parts, "; ") + "]"
	case TextNot:
		return "not " + TextString(t.Kids[0])
	case TextSays:
		return "says " + strings.Join(t.Lexicons, " or ") + " (prose, unnegated, case-insensitive)"
	}
	return "?"
}
