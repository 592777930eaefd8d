package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/compactbench/compactbench/internal/aggregate"
)

// topProblems is how many problem classes the reports list.
const topProblems = 10

// WriteMarkdown writes report.md: run metadata, corpus totals, the
// per-strategy, per-rule-set and ruler tables, the most frequent input
// problems and the caveats. It is GitHub-flavoured Markdown without HTML, fit
// for a CI step summary, and depends only on its arguments (no clock).
func WriteMarkdown(w io.Writer, s *Summary, d *ReportData) error {
	b := &strings.Builder{}
	b.WriteString("# compactbench report\n\n")
	mdVerdict(b, s.Verdict)
	mdRunAndCorpus(b, s, d)
	mdStrategies(b, s)
	summarizerMarkdown(b, s.Summarizer)
	mdAnchorsAndRulers(b, s)
	mdProblems(b, s, d)
	b.WriteString("\n## Caveats\n\n")
	for _, c := range caveats(s, d) {
		b.WriteString("- " + mdText(c) + "\n") // they may name a transcript
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdVerdict writes the verdict section (nothing without strategies).
func mdVerdict(b *strings.Builder, v Verdict) {
	if len(v.Ranked)+len(v.Others) == 0 {
		return
	}
	b.WriteString("## Verdict\n\n")
	if v.Note != "" {
		fmt.Fprintf(b, "%s Fit every session: %s.\n", v.Note, strings.Join(lineIDs(v.Ranked), ", "))
	} else if len(v.Ranked) == 0 {
		b.WriteString("No strategy kept every session inside its window.\n")
	} else {
		b.WriteString("Kept every session inside its window, best first:\n\n")
		for _, l := range v.Ranked {
			fmt.Fprintf(b, "%d. **%s**: %s\n", l.Rank, l.Strategy, l.Why)
		}
	}
	if len(v.Others) > 0 {
		b.WriteString("\nDid not:\n\n")
		for _, l := range v.Others {
			fmt.Fprintf(b, "- **%s**: %s\n", l.Strategy, l.Why)
		}
	}
	b.WriteString("\n" + RankingRule + "\n")
}

// mdRunAndCorpus writes the run's settings and the corpus totals.
func mdRunAndCorpus(b *strings.Builder, s *Summary, d *ReportData) {
	b.WriteString("\n## Run\n\n")
	meta := runMeta(s, d, mdCode)
	for _, r := range meta[3:] { // settings: rule files and labels are named by the user
		r[1] = mdText(r[1])
	}
	mdTable(b, []string{"run", ""}, meta, "ll")

	b.WriteString("\n## Corpus\n\n")
	h, rows := corpusGrid(s)
	mdTable(b, h, rows, "")
	fmt.Fprintf(b, "\n%d files read; %s.\n", s.Corpus.Files, formatsLine(s))
}

// mdStrategies writes the strategy table with its legend and the
// behaviour at recorded compactions.
func mdStrategies(b *strings.Builder, s *Summary) {
	h, rows := strategyGrid(s)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Strategies\n\n")
	mdTable(b, h, rows, "")
	b.WriteString("\n" + strategyLegend() + "\n")
	if line := rereadLine(s); line != "" {
		b.WriteString("\n" + line + "\n")
	}
}

// mdAnchorsAndRulers writes the rule-set table and the ruler tables.
func mdAnchorsAndRulers(b *strings.Builder, s *Summary) {
	if len(s.Anchors) > 0 {
		b.WriteString("\n## Anchor rule sets\n\n")
		h, rows := anchorsGrid(s)
		mdTable(b, h, rows, "")
		b.WriteString("\n" + anchorsLegend + "\n")
	}
	if h, rows := rulerGrid(s); len(rows) > 0 {
		b.WriteString("\n## Token rulers\n\n")
		mdTable(b, h, rows, "")
		b.WriteString("\n" + rulersLegend + "\n")
	}
	if h, rows := breakdownGrid(s); len(rows) > 0 {
		b.WriteString("\n### Ruler error by tokenizer, model family and content\n\n")
		mdTable(b, h, rows, "")
		b.WriteString("\n" + breakdownLegend + "\n")
	}
}

// mdProblems writes the most frequent input problems.
func mdProblems(b *strings.Builder, s *Summary, d *ReportData) {
	b.WriteString("\n## Input problems\n\n")
	if s.Corpus.Problems == 0 {
		b.WriteString("None: every line was read or ignored by type.\n")
		return
	}
	fmt.Fprintf(b, "%d problems (each is a row of `problems`, with file and line); the most frequent kinds:\n\n", s.Corpus.Problems)
	h, rows := problemsGrid(d)
	for _, r := range rows {
		r[1], r[2] = mdText(r[1]), mdText(r[2]) // input text: reasons and paths
	}
	mdTable(b, h, rows, "rll")
}

const (
	anchorsLegend = "A detected anchor matches a label on the same turn of the same transcript. Gold labels are written by " +
		"hand; evidence labels are derived from what the session did (todo items completed, commits, fixed tests, " +
		"compactions) and are a sanity check, not ground truth. Synthetic rate: transcripts given the fallback anchor."
	rulersLegend = "|err| = |estimate − real| / real context tokens per recorded API call; complete calls are those no " +
		"load problem precedes; preTokens compares with Claude Code's own count at its compactions."
)

// runMeta is the report's metadata rows; code marks literal text up.
func runMeta(s *Summary, d *ReportData, code func(string) string) [][]string {
	m := s.Meta
	inputs := make([]string, len(m.Inputs))
	for i, in := range m.Inputs {
		inputs[i] = code(in)
	}
	rows := [][]string{
		{"tool", strings.TrimSpace(m.Tool + " " + m.Version)},
		{"config hash", code(m.ConfigHash)},
		{"inputs", strings.Join(inputs, ", ")},
	}
	for _, st := range d.Settings {
		rows = append(rows, []string{st.Name, st.Value})
	}
	return rows
}

// formatsLine lists the transcripts per input format.
func formatsLine(s *Summary) string {
	keys := sortedKeys(s.Corpus.ByFormat)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", s.Corpus.ByFormat[k], k)
	}
	if len(parts) == 0 {
		return "no transcripts"
	}
	return "transcripts by format: " + strings.Join(parts, ", ")
}

// caveats say what the numbers are not: the replay is open-loop, and
// several inputs are estimates.
func caveats(s *Summary, d *ReportData) []string {
	metric := settingValue(d, "metric ruler")
	out := []string{
		"Open-loop replay: the future is the recording's. The agent never reacts to what a strategy dropped, so the " +
			"figures say what each strategy keeps and loses at each point of the recorded session, not how the session " +
			"would have gone with it.",
		"The fixed overhead (system prompt and tools) is estimated per transcript: the first call's real context minus " +
			"the metric count of the messages before it.",
	}
	tok := "Token counts of simulated contexts come from the metric ruler"
	if metric != "" {
		tok += " (" + metric + ")"
		if e := aggregate.RulerMedian(s, metric); e != nil {
			tok += ", whose median error against the API's own counts is " + pct(e) + " on this corpus"
		}
	}
	out = append(out, tok+"; the API's tokenizer is not available offline.",
		"Cost is a model: list prices per model, cache reads at 0.1× and writes at 1.25× the input price, a compaction "+
			"rewrites the cached prefix, and each summary is billed as one summarizer call; real bills differ.",
		"Summaries are written by a deterministic summarizer from the transcript, not by a model, so summary sizes and "+
			"the need recall of summarizing strategies are those of that summarizer.",
		"Compaction-summarizer calls and side questions repeat their parent's records and are not replayed.")
	if n, first := s.Overfull(); n > 0 {
		out = append(out, fmt.Sprintf("%d transcripts have a fixed overhead at or above the window (the first is %s): "+
			"each of their calls compacts a context with little left to compress, which pulls the compression medians "+
			"down (runs.overhead names them).", n, first))
	}
	if s.Corpus.Problems > 0 {
		out = append(out, fmt.Sprintf("%d input problems (unreadable lines, broken links between records, tool calls "+
			"and results missing their other half): what an unreadable line held is not in the analysis (see Input problems).", s.Corpus.Problems))
	}
	return out
}

func settingValue(d *ReportData, name string) string {
	for _, st := range d.Settings {
		if st.Name == name {
			return st.Value
		}
	}
	return ""
}

// mdTable writes a GitHub table; cells are escaped. align has an l, c or r
// per column; "" means the first column left and the others right.
func mdTable(b *strings.Builder, header []string, rows [][]string, align string) {
	b.WriteString("|")
	for _, h := range header {
		b.WriteString(" " + mdCell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range header {
		a := byte('r')
		if i == 0 {
			a = 'l'
		}
		if i < len(align) {
			a = align[i]
		}
		switch a {
		case 'l':
			b.WriteString("---|")
		case 'c':
			b.WriteString(":-:|")
		default:
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteString("\n")
	}
}

// mdCell escapes a table cell: pipes, and line breaks that would end the row.
// mdText makes text from the inputs (file names, problem reasons,
// transcript ids) inert in Markdown: HTML tags and entities, links and code
// spans cannot start in it.
func mdText(s string) string {
	return mdInert.Replace(s)
}

var mdInert = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "`", "\\`")

// mdCode renders literal text as a code span, or as inert text when it
// holds a backtick (which would end the span).
func mdCode(s string) string {
	if strings.Contains(s, "`") {
		return mdText(s)
	}
	return "`" + s + "`"
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
