package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/compactbench/compactbench/internal/aggregate"
	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/figures"
)

// verdictText renders the verdict as wrapped plain text lines of at most
// width columns (terminal and report.md share it).
func verdictText(s *Summary, width int) []string {
	v := s.Verdict
	var out []string
	if len(v.Ranked) == 0 && len(v.Others) == 0 {
		return nil
	}
	out = append(out, "Verdict")
	if v.Note != "" {
		out = append(out, wrap(v.Note, width, "")...)
		return append(out, wrap("Fit every session: "+strings.Join(lineIDs(v.Ranked), ", ")+".", width, "  ")...)
	}
	if len(v.Ranked) == 0 {
		out = append(out, "No strategy kept every session inside its window.")
	} else {
		out = append(out, "Kept every session inside its window, best first:")
		for _, l := range v.Ranked {
			out = append(out, wrap(fmt.Sprintf("%d. %s: %s", l.Rank, l.Strategy, l.Why), width, "   ")...)
		}
	}
	if len(v.Others) > 0 {
		out = append(out, "Did not:")
		for _, l := range v.Others {
			out = append(out, wrap(fmt.Sprintf("- %s: %s", l.Strategy, l.Why), width, "  ")...)
		}
	}
	out = append(out, wrap(RankingRule, width, "")...)
	return out
}

// wrap breaks text into lines of at most width runes at spaces; lines after
// the first start with indent.
func wrap(text string, width int, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
			if len(out) > 0 {
				line = indent + w
			}
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			out = append(out, line)
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// lineIDs are the strategies of verdict lines.
func lineIDs(ls []VerdictLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Strategy
	}
	return out
}

// rereadLine says what the behaviour check found, beside the recorded
// strategy's need recall ("" without recorded compactions).
func rereadLine(s *Summary) string {
	r := s.Rereads
	if r == nil || r.Compactions == 0 {
		return ""
	}
	line := fmt.Sprintf("At the %s the recording holds, the agent read again within %d calls %d of the %d files it had read "+
		"before (%s): %s of those the summary named, %s of those it dropped.", plural(int(r.Compactions), "compaction"),
		analysis.RereadCalls, r.Reread, r.FilesRead, pct0Or(r.RereadRate), pct0Or(r.RereadRateKept), pct0Or(r.RereadRateLost))
	if st := s.Strategies[aggregate.ReferenceStrategy]; st != nil && st.Value(figures.NeedRecall) != nil {
		line += fmt.Sprintf(" Need recall of those compactions: %s.", pctLabel(*st.Value(figures.NeedRecall)))
	}
	return line + " (rereads table, per compaction)"
}
