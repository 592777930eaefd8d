package anchors

import (
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// SummaryStyle selects which seed's weighted-outcome summary to render.
type SummaryStyle uint8

// Summary styles.
const (
	// StyleFSpec is seed 000's format: context lines with "None" /
	// "Continue conversation" fallbacks, anchor responses cut to 500
	// characters, first sentences cut to 150.
	StyleFSpec SummaryStyle = iota
	// StyleCodelet is seed 001's format: empty lists left empty, anchor
	// responses and first sentences uncut.
	StyleCodelet
)

// WeightedSummary renders the seeds' generate_weighted_summary for the turns
// to summarize: the context lines, a blank line, "Key outcomes:" and one
// TurnOutcome line per turn.
func WeightedSummary(turns []transcript.Turn, anchors []Anchor, ctx *PreservationContext, style SummaryStyle) string {
	var b strings.Builder
	if style == StyleCodelet {
		b.WriteString(ctx.FormatCodelet())
	} else {
		b.WriteString(ctx.Format())
	}
	b.WriteString("\n\nKey outcomes:\n")
	for i := range turns {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(TurnOutcome(&turns[i], anchors, style))
	}
	return b.String()
}

// TurnOutcome renders one turn of a weighted summary (turn_to_outcome):
//
//   - a turn is an anchor when some anchor's Timestamp equals the turn's
//     (the seeds match by timestamp, a known fragility: equal timestamps
//     collide, and the synthetic anchor, stamped "now" in the seed, never
//     matches); it renders as "[ANCHOR] " + the assistant response;
//   - otherwise "✓ " when any tool result succeeded, else "✗ " (a turn
//     without tool results is ✗), then "Modified f1, f2: " for the files of
//     its Edit, Write and Read calls (Read included, as in the seed), then the
//     response up to its first '.'.
func TurnOutcome(t *transcript.Turn, anchors []Anchor, style SummaryStyle) string {
	for i := range anchors {
		if !anchors[i].Synthetic && anchors[i].Timestamp == t.Timestamp {
			resp := t.AssistantResponse
			if style == StyleFSpec {
				resp = transcript.FirstRunes(resp, 500)
			}
			return "[ANCHOR] " + resp
		}
	}
	mark := "✗"
	for i := range t.ToolResults {
		if t.ToolResults[i].Success {
			mark = "✓"
			break
		}
	}
	var files []string
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		if (c.Name == "Edit" || c.Name == "Write" || c.Name == "Read") && callFile(c) != "" {
			files = append(files, callFile(c))
		}
	}
	info := ""
	if len(files) > 0 {
		info = "Modified " + strings.Join(files, ", ") + ": "
	}
	first, _, _ := strings.Cut(t.AssistantResponse, ".")
	if style == StyleFSpec {
		first = transcript.FirstRunes(first, 150)
	}
	return mark + " " + info + first
}
