package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// RenderTable writes a plain text table for terminals.
func RenderTable(w io.Writer, header []string, rows [][]string) error {
	return render(w, header, rows,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
}

// render writes a table with the given options.
func render(w io.Writer, header []string, rows [][]string, opts ...tablewriter.Option) error {
	t := tablewriter.NewTable(w, opts...)
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = h
	}
	t.Header(hdr...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// CorpusTable renders the corpus totals per transcript kind.
func CorpusTable(w io.Writer, s *Summary) error {
	header, rows := corpusGrid(s)
	return RenderTable(w, header, rows)
}

// corpusGrid is the corpus table's header and rows: one per transcript kind
// present, then all.
func corpusGrid(s *Summary) ([]string, [][]string) {
	header := []string{"kind", "transcripts", "lines", "bad", "ignored", "messages", "turns", "api calls", "tool calls", "tool errors", "compactions", "problems"}
	row := func(name string, t *Totals) []string {
		return []string{name, itoa(t.Transcripts), itoa(t.Lines), itoa(t.BadLines), itoa(t.IgnoredLines),
			itoa(t.Messages), itoa(t.Turns), itoa(t.APICalls), itoa(t.ToolCalls), itoa(t.ToolErrors),
			itoa(t.CompactBoundaries + t.MicrocompactBoundaries), itoa(t.Problems)}
	}
	var rows [][]string
	for _, k := range []string{"session", "subagent", "compaction-call", "side-question"} {
		if t := s.Corpus.ByKind[k]; t != nil {
			rows = append(rows, row(k, t))
		}
	}
	rows = append(rows, row("all", &s.Corpus.Totals))
	return header, rows
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// CorpusLine is the corpus in one line for the default terminal view.
func CorpusLine(s *Summary) string {
	t := &s.Corpus.Totals
	return fmt.Sprintf("corpus: %s, %s, %s, %s, %s, %s", plural(int(s.Corpus.Files), "file"), plural(int(t.Transcripts), "transcript"),
		plural(int(t.Turns), "turn"), plural(int(t.APICalls), "API call"),
		plural(int(t.CompactBoundaries+t.MicrocompactBoundaries), "recorded compaction"), plural(int(t.Problems), "problem"))
}

// RereadLine is the behaviour check of need recall, wrapped at 100 columns
// ("" without recorded compactions).
func RereadLine(s *Summary) string {
	line := rereadLine(s)
	if line == "" {
		return ""
	}
	return strings.Join(wrap(line, 100, ""), "\n")
}
