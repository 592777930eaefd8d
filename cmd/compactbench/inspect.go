package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/transcript"
)

func newInspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show one transcript's turns and the anchors each rule set detects",
		ArgsUsage: "FILE",
		Description: "Prints the transcript's turns as a table: index, head of the user message, tools\n" +
			"called, results (✓ ok / ✗ failed), tokens, previous_error, evidence labels and,\n" +
			"per rule set, the anchor detected (rule and confidence). --explain adds, per turn\n" +
			"and rule, every condition with ✓/✗ and what was found, so you can see why a turn\n" +
			"was or was not an anchor.",
		Flags: []cli.Flag{
			rulesFlag,
			&cli.BoolFlag{Name: "explain", Usage: "explain every rule on every turn (or on --turn)"},
			&cli.BoolFlag{Name: "digest", Usage: "per turn, what a labeller decides from: prompt, files changed, commands with ✓/✗, git milestones, the reply's last lines, the next prompt (no rule output)"},
			&cli.IntFlag{Name: "turn", Value: -1, Usage: "only this turn (0-based) in --explain"},
			inputFormatFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("inspect: give one transcript file")
			}
			sets, err := plan.RuleSets(c.StringSlice("rules"))
			if err != nil {
				return err
			}
			opts := inspectOptions{Sets: sets, Explain: c.Bool("explain"), Digest: c.Bool("digest"), Turn: c.Int("turn")}
			return inspectFile(c.Args().First(), c.String("input-format"), opts, c.App.Writer)
		},
	}
}

type inspectOptions struct {
	Sets    []*anchors.RuleSet
	Explain bool
	// Digest prints the labeller's view of each turn instead of the table.
	Digest bool
	// Turn restricts --explain and --digest to one turn; -1 is every turn.
	Turn int
}

func inspectFile(path, format string, opts inspectOptions, w io.Writer) error {
	if err := plan.InputFormat(format); err != nil {
		return err
	}
	n := 0
	err := loader.ReadFile(path, loader.Options{Format: format}, func(t *transcript.Transcript) error {
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		return inspect(t, opts, w)
	})
	return err
}

// inspect prints one transcript: its header, the turn table and, with
// --explain, every rule on every turn (or --digest's labeller view).
func inspect(t *transcript.Transcript, opts inspectOptions, w io.Writer) error {
	turns := t.Turns()
	if opts.Digest {
		return digest(t, turns, opts.Turn, w)
	}
	inspectHeader(w, t, len(turns), opts.Sets)
	if len(turns) == 0 {
		return nil
	}
	if err := report.RenderLeft(w, turnHeader(opts.Sets), turnRows(t, turns, opts.Sets), 0); err != nil {
		return err
	}
	fmt.Fprintln(w, "~tok: characters/4 of the turn's messages; ctx: real context of the turn's last API call (usage).")
	if !opts.Explain {
		return nil
	}
	explainTurns(w, turns, opts)
	if opts.Turn >= len(turns) {
		return usageErr("--turn %d: the transcript has %d turns", opts.Turn, len(turns))
	}
	return nil
}

// inspectHeader prints the transcript's line, its problems and the rule
// sets.
func inspectHeader(w io.Writer, t *transcript.Transcript, turns int, sets []*anchors.RuleSet) {
	fmt.Fprintf(w, "%s  (%s, %s, id %s): %d messages, %d turns, %d problems\n",
		t.Path, t.Format, t.Kind, t.ID, len(t.Messages), turns, len(t.Problems))
	for _, p := range t.Problems {
		fmt.Fprintf(w, "  problem: line %d: %s\n", p.Line, p.Reason)
	}
	var names []string
	for _, s := range sets {
		syn := "no fallback"
		if s.Synthetic != nil {
			syn = "fallback " + string(s.Synthetic.Type)
		}
		names = append(names, fmt.Sprintf("%s (%s, threshold %v, %s)", s.Name, s.Origin, s.Threshold, syn))
	}
	fmt.Fprintf(w, "rule sets: %s\n", strings.Join(names, "; "))
}

// turnHeader is the turn table's columns: one per rule set after the
// turn's own.
func turnHeader(sets []*anchors.RuleSet) []string {
	header := []string{"turn", "user", "tools", "results", "~tok", "ctx", "prev err", "evidence"}
	for _, s := range sets {
		header = append(header, s.Name)
	}
	return header
}

// turnRows is the turn table: per turn its message head, tools, results,
// tokens, evidence and each rule set's anchor.
func turnRows(t *transcript.Transcript, turns []transcript.Turn, sets []*anchors.RuleSet) [][]string {
	anchorAt := make([][]string, len(sets))
	for k, e := range anchors.NewSuite(sets...).Evaluate(turns) {
		anchorAt[k] = make([]string, len(turns))
		for _, a := range e.Detect(0, len(turns)).Anchors {
			anchorAt[k][a.Turn] = fmt.Sprintf("%s (%v)", a.Rule, a.Confidence)
		}
	}
	evidence := map[int][]string{}
	for _, e := range anchors.DeriveEvidence(t, turns, anchors.EvidenceKinds) {
		evidence[e.Turn] = append(evidence[e.Turn], string(e.Kind))
	}
	var rows [][]string
	for i := range turns {
		tr := &turns[i]
		prev := ""
		if tr.PreviousError {
			prev = "✗"
		}
		row := []string{strconv.Itoa(i), head(tr.UserMessage, 40), wrapList(anchors.ToolCounts(tr), 28), results(tr),
			approxTokens(t.Messages[tr.Start:tr.End]), contextAt(t.Messages[tr.Start:tr.End]), prev,
			strings.Join(evidence[i], " ")}
		for k := range sets {
			row = append(row, anchorAt[k][i])
		}
		rows = append(rows, row)
	}
	return rows
}

// explainTurns prints, per turn (or --turn), every rule's conditions.
func explainTurns(w io.Writer, turns []transcript.Turn, opts inspectOptions) {
	for i := range turns {
		if opts.Turn >= 0 && i != opts.Turn {
			continue
		}
		tr := &turns[i]
		fmt.Fprintf(w, "\nturn %d  user: %q  previous_error: %v  tools: %s\n", i, head(tr.UserMessage, 60), tr.PreviousError, anchors.ToolCounts(tr))
		for _, s := range opts.Sets {
			fmt.Fprintf(w, "  %s (threshold %v)\n", s.Name, s.Threshold)
			for _, ex := range s.Explain(turns, i) {
				writeExplanation(w, s, &ex)
			}
		}
	}
}

func writeExplanation(w io.Writer, s *anchors.RuleSet, ex *anchors.Explanation) {
	r := ex.Rule
	verdict := "no match"
	switch {
	case ex.Fired:
		verdict = fmt.Sprintf("FIRES: %s anchor, weight %v, confidence %v", r.Type, r.Weight, r.Confidence)
	case ex.Matched && ex.BelowThreshold:
		verdict = fmt.Sprintf("matches, but confidence %v < threshold %v: cannot fire", r.Confidence, s.Threshold)
	case ex.Matched:
		verdict = "matches, but " + ex.Shadowed + " fired first"
	case ex.BelowThreshold:
		verdict += fmt.Sprintf(" (and confidence %v < threshold %v)", r.Confidence, s.Threshold)
	}
	fmt.Fprintf(w, "    %s %s — %s\n", mark(ex.Matched), r.Name, verdict)
	for i := range ex.Conds {
		writeCond(w, &ex.Conds[i], 3)
	}
}

func writeCond(w io.Writer, c *anchors.CondExplanation, depth int) {
	detail := ""
	if c.Detail != "" {
		detail = " — " + c.Detail
	}
	fmt.Fprintf(w, "%s%s %s%s\n", strings.Repeat("  ", depth), mark(c.Held), c.Text, detail)
	for i := range c.Kids {
		writeCond(w, &c.Kids[i], depth+1)
	}
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// head returns the first n code points of s on one line.
func head(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// wrapList breaks a comma-separated list into lines of about width runes.
func wrapList(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, part := range strings.Split(s, ", ") {
		if i > 0 {
			if line+len(part)+2 > width {
				b.WriteString(",\n")
				line = 0
			} else {
				b.WriteString(", ")
				line += 2
			}
		}
		b.WriteString(part)
		line += len([]rune(part))
	}
	return b.String()
}

func results(t *transcript.Turn) string {
	ok, bad := 0, 0
	for _, r := range t.ToolResults {
		if r.Success {
			ok++
		} else {
			bad++
		}
	}
	var parts []string
	if ok > 0 {
		parts = append(parts, strconv.Itoa(ok)+"✓")
	}
	if bad > 0 {
		parts = append(parts, strconv.Itoa(bad)+"✗")
	}
	return strings.Join(parts, " ")
}

// approxTokens is characters/4 of the messages' visible content.
func approxTokens(msgs []transcript.Message) string {
	n := 0
	for i := range msgs {
		for _, b := range msgs[i].Blocks {
			n += len([]rune(b.Text)) + len(b.Input)
		}
	}
	return compact(int64((n + 3) / 4))
}

// contextAt is the real context size of the last API call among msgs.
func contextAt(msgs []transcript.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u := msgs[i].Usage; u != nil {
			return compact(u.Context())
		}
	}
	return ""
}

func compact(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
