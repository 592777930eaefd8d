package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteGateMarkdown writes the verdict as GitHub Markdown: a headline, the
// runs compared, one table row per figure with ✓ or ✗, and the notes.
func WriteGateMarkdown(w io.Writer, g *GateResult, baselineName, currentName string, baseline, current *Summary) error {
	var b bytes.Buffer
	if n := g.Failures(); n > 0 {
		fmt.Fprintf(&b, "## compactbench gate: ✗ %d of %d figures regressed\n\n", n, len(g.Checks))
		var failed []string
		for _, c := range g.Checks {
			if c.Pass {
				continue
			}
			what := c.Figure.Name
			if c.Of != "" {
				what += " of " + c.Of
			}
			if wv := c.Worsening(); wv != nil {
				what += " (" + signed(*c.Current-*c.Baseline, c.Figure.Count) + ")"
			} else {
				what += " (" + c.Note + ")"
			}
			failed = append(failed, what)
		}
		b.WriteString("Regressed: " + strings.Join(failed, "; ") + ".\n\n")
	} else {
		fmt.Fprintf(&b, "## compactbench gate: ✓ no regression in %d figures\n\n", len(g.Checks))
	}
	fmt.Fprintf(&b, "Baseline `%s` (%s, config %s); current `%s` (%s, config %s).\n\n",
		baselineName, versionOf(baseline), baseline.Meta.ConfigHash, currentName, versionOf(current), current.Meta.ConfigHash)
	var rows [][]string
	for _, c := range g.Checks {
		mark := "✓"
		if !c.Pass {
			mark = "✗"
		}
		allowed := "-"
		if !c.Missing {
			word := "rise"
			if c.Figure.HigherBetter {
				word = "drop"
			}
			if c.Allowed == 0 {
				allowed = "no " + word
			} else {
				allowed = word + " ≤ " + FormatFloat(c.Allowed)
			}
		}
		change := c.Note
		if wv := c.Worsening(); wv != nil {
			change = signed(*c.Current-*c.Baseline, c.Figure.Count)
		}
		rows = append(rows, []string{mark, c.Figure.Name, c.Of, gateValue(c.Baseline, c.Figure.Count), gateValue(c.Current, c.Figure.Count), change, allowed})
	}
	bb := &strings.Builder{}
	mdTable(bb, []string{"", "figure", "of", "baseline", "current", "change", "allowed"}, rows, "cllrrrl")
	b.WriteString(bb.String())
	if len(g.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range g.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func versionOf(s *Summary) string { return strings.TrimSpace(s.Meta.Tool + " " + s.Meta.Version) }

func gateValue(v *float64, count bool) string {
	if v == nil {
		return "-"
	}
	if count {
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

func signed(v float64, count bool) string {
	prec := 4
	if count {
		prec = 0
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if v > 0 || (v == 0 && !strings.HasPrefix(s, "-")) {
		s = "+" + s
	}
	if strings.Trim(s, "+-0.") == "" {
		return "0"
	}
	return s
}
