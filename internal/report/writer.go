package report

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/compactbench/compactbench/internal/analysis"
)

// Options configure a Writer.
type Options struct {
	// Dir is the output directory; it is created if missing.
	Dir string
	// Formats selects the table file formats.
	Formats Formats
	// Meta is copied into summary.json.
	Meta Meta
}

// Writer receives the results of a run, file by file in output order, and
// writes every table and summary.json. It is used from one goroutine.
type Writer struct {
	dir         string
	transcripts *Table[analysis.TranscriptRow]
	problems    *Table[analysis.ProblemRow]
	sum         Summary
}

// NewWriter opens the tables in opts.Dir.
func NewWriter(opts Options) (*Writer, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	w := &Writer{dir: opts.Dir, sum: newSummary(opts.Meta)}
	var err error
	if w.transcripts, err = NewTable[analysis.TranscriptRow](opts.Dir, "transcripts", opts.Formats); err != nil {
		return nil, err
	}
	if w.problems, err = NewTable[analysis.ProblemRow](opts.Dir, "problems", opts.Formats); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// AddFile writes the results of one input file (one per transcript in it).
func (w *Writer) AddFile(results []*analysis.Result) error {
	w.sum.Corpus.Files++
	for _, r := range results {
		w.sum.add(r)
		if err := w.transcripts.Write(r.Transcript); err != nil {
			return err
		}
		if err := w.problems.Write(r.Problems...); err != nil {
			return err
		}
	}
	return nil
}

// Summary is the aggregate so far.
func (w *Writer) Summary() *Summary { return &w.sum }

// Close finishes every table and writes summary.json.
func (w *Writer) Close() (*Summary, error) {
	for _, c := range []interface{ Close() error }{w.transcripts, w.problems} {
		if err := c.Close(); err != nil {
			w.Abort()
			return nil, err
		}
	}
	data, err := json.MarshalIndent(&w.sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	if err := WriteFileAtomic(w.dir, "summary.json", append(data, '\n')); err != nil {
		return nil, err
	}
	return &w.sum, nil
}

// Abort removes every temporary file.
func (w *Writer) Abort() {
	if w.transcripts != nil {
		w.transcripts.Abort()
	}
	if w.problems != nil {
		w.problems.Abort()
	}
}
