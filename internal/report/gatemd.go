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
	gateHeadline(&b, g)
	fmt.Fprintf(&b, "Baseline `%s` (%s, config %s); current `%s` (%s, config %s).\n\n",
		baselineName, versionOf(baseline), baseline.Meta.ConfigHash, currentName, versionOf(current), current.Meta.ConfigHash)
	var rows [][]string
	for i := range g.Checks {
		rows = append(rows, gateRow(&g.Checks[i]))
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

// gateHeadline writes the gate's heading: how many figures regressed and
// which, or that none did.
func gateHeadline(b *bytes.Buffer, g *GateResult) {
	n := g.Failures()
	if n == 0 {
		fmt.Fprintf(b, "## compactbench gate: ✓ no regression in %d figures\n\n", len(g.Checks))
		return
	}
	fmt.Fprintf(b, "## compactbench gate: ✗ %d of %d figures regressed\n\n", n, len(g.Checks))
	var failed []string
	for i := range g.Checks {
		if c := &g.Checks[i]; !c.Pass {
			failed = append(failed, c.Figure.Name+ofWhat(c)+" ("+gateChange(c)+")")
		}
	}
	b.WriteString("Regressed: " + strings.Join(failed, "; ") + ".\n\n")
}

// ofWhat names the check's subject (" of codelet"), "" for a corpus figure.
func ofWhat(c *GateCheck) string {
	if c.Of == "" {
		return ""
	}
	return " of " + c.Of
}

// gateChange is the check's signed change, or its note when a side has no
// value.
func gateChange(c *GateCheck) string {
	if c.Worsening() == nil {
		return c.Note
	}
	return signed(*c.Current-*c.Baseline, c.Figure.Count)
}

// gateRow is one check's table row: mark, figure, subject, both values,
// the change and what was allowed.
func gateRow(c *GateCheck) []string {
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
	return []string{mark, c.Figure.Name, c.Of, gateValue(c.Baseline, c.Figure.Count), gateValue(c.Current, c.Figure.Count), gateChange(c), allowed}
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
