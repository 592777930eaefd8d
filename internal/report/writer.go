package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

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
	// Settings describe the run in report.md and report.html.
	Settings []Setting
	// ReportTranscript names the transcript (id or path) whose context
	// series report.html draws; empty: the one with the most calls.
	ReportTranscript string
	// Summaries writes the summaries table (a model summarizer is set).
	Summaries bool
}

// sink is one table fed from analysis results.
type sink interface {
	add(r *analysis.Result) error
	Close() error
	Abort()
}

type tableSink[T any] struct {
	*Table[T]
	rows  func(r *analysis.Result) []T
	stamp stamper[T]
}

func (s tableSink[T]) add(r *analysis.Result) error {
	rows := s.rows(r)
	s.stamp.rows(rows)
	return s.Write(rows...)
}

// stamper sets the RunID and ConfigHash fields of rows of type T that have
// them; the fields are looked up once per table, not per row.
type stamper[T any] struct {
	meta      Meta
	run, hash []int // field indices; nil when T has no such string field
}

func newStamper[T any](m Meta) stamper[T] {
	s := stamper[T]{meta: m}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return s
	}
	if f, ok := t.FieldByName("RunID"); ok && f.Type.Kind() == reflect.String {
		s.run = f.Index
	}
	if f, ok := t.FieldByName("ConfigHash"); ok && f.Type.Kind() == reflect.String {
		s.hash = f.Index
	}
	return s
}

func (s *stamper[T]) rows(rows []T) {
	if s.run == nil && s.hash == nil {
		return
	}
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		if s.run != nil {
			v.FieldByIndex(s.run).SetString(s.meta.RunID)
		}
		if s.hash != nil {
			v.FieldByIndex(s.hash).SetString(s.meta.ConfigHash)
		}
	}
}

// table opens a table whose rows are taken from each result by rows.
func table[T any](name string, rows func(r *analysis.Result) []T) func(Options, *Summary) (sink, error) {
	return func(o Options, _ *Summary) (sink, error) {
		t, err := NewTable[T](o.Dir, name, o.Formats)
		if err != nil {
			return nil, err
		}
		return tableSink[T]{t, rows, newStamper[T](o.Meta)}, nil
	}
}

// tables lists every exported table: its name and where its rows come from.
// Adding a table is one entry here plus its row type in internal/analysis.
// An opener is given the run's summary, which aggregates every result.
var tables = []func(Options, *Summary) (sink, error){
	table("transcripts", func(r *analysis.Result) []analysis.TranscriptRow { return []analysis.TranscriptRow{r.Transcript} }),
	table("problems", func(r *analysis.Result) []analysis.ProblemRow { return r.Problems }),
	table("calls", func(r *analysis.Result) []analysis.CallRow { return r.Calls }),
	table("compact_boundaries", func(r *analysis.Result) []analysis.BoundaryRow { return r.Boundaries }),
	table("runs", func(r *analysis.Result) []analysis.RunRow { return r.Runs }),
	table("events", func(r *analysis.Result) []analysis.EventRow { return r.Events }),
	table("rereads", func(r *analysis.Result) []analysis.RereadRow { return r.Rereads }),
	table("anchors", func(r *analysis.Result) []analysis.AnchorRow { return r.Anchors }),
	table("labels", func(r *analysis.Result) []analysis.LabelRow { return r.Labels }),
	openRules,
	openSummaries,
}

// Writer receives the results of a run, file by file in output order, and
// writes every table and summary.json. It is used from one goroutine.
//
// The output set is all or nothing: every file is written into a temporary
// directory beside Options.Dir, which Close swaps in for the previous set
// (whose files the new run does not write are gone with it); Abort, or a
// failure, removes the temporary directory and leaves the previous set as
// it was.
type Writer struct {
	// final is Options.Dir; dir the temporary directory written to.
	final   string
	dir     string
	formats Formats
	sinks   []sink
	sum     Summary
	// data gathers what report.md and report.html need (nil when neither
	// is written).
	data *ReportData
}

// NewWriter opens the tables in a temporary directory beside opts.Dir. It
// refuses a Dir that holds anything but an earlier output set (see
// CheckOutputDir), since Close replaces the directory whole.
func NewWriter(opts Options) (*Writer, error) {
	if err := CheckOutputDir(opts.Dir); err != nil {
		return nil, err
	}
	final := filepath.Clean(opts.Dir)
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(final)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("output directory: %w", err)
	}
	w := &Writer{final: final, dir: tmp, formats: opts.Formats, sum: *NewSummary(opts.Meta)}
	opts.Dir = tmp
	if opts.Formats.Markdown || opts.Formats.HTML {
		w.data = NewReportData(opts.ReportTranscript, opts.Settings)
	}
	for _, open := range tables {
		s, err := open(opts, &w.sum)
		if err != nil {
			w.Abort()
			return nil, err
		}
		w.sinks = append(w.sinks, s)
	}
	return w, nil
}

// AddFile writes the results of one input file (one per transcript in it).
func (w *Writer) AddFile(results []*analysis.Result) error {
	w.sum.Corpus.Files++
	for _, r := range results {
		w.sum.Add(r)
		if w.data != nil {
			w.data.Add(r)
		}
		for _, s := range w.sinks {
			if err := s.add(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddProblems writes problem rows that belong to no transcript (a label
// file's bad lines); they count in the corpus's problems.
func (w *Writer) AddProblems(rows []analysis.ProblemRow) error {
	w.sum.Corpus.Problems += int64(len(rows))
	for _, s := range w.sinks {
		if ts, ok := s.(tableSink[analysis.ProblemRow]); ok {
			ts.stamp.rows(rows) // run_id and config_hash, as on every row
			if err := ts.Write(rows...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dir is the temporary directory the output set is written to until Close
// swaps it in: a file the caller adds there is part of the set.
func (w *Writer) Dir() string { return w.dir }

// Summary is the aggregate so far.
func (w *Writer) Summary() *Summary { return &w.sum }

// Close finishes every table and writes summary.json, report.md and
// report.html as selected.
func (w *Writer) Close() (*Summary, error) {
	sum, err := w.close()
	if err != nil {
		os.RemoveAll(w.dir)
	}
	return sum, err
}

func (w *Writer) close() (*Summary, error) {
	// The tables are finished on goroutines of their own (closeAll) while
	// the summary is computed and the reports rendered: each writes only
	// its own files, so the bytes are those of doing one after the other. The
	// rules table reads the anchor tally the summary reads too, so it is
	// finished first, here.
	var tables, rules []sink
	for _, s := range w.sinks {
		if _, ok := s.(*rulesSink); ok {
			rules = append(rules, s)
		} else {
			tables = append(tables, s)
		}
	}
	if err := closeSinks(rules); err != nil {
		for _, s := range tables {
			s.Abort()
		}
		return nil, err
	}
	tablesDone := make(chan error, 1)
	go func() { tablesDone <- closeAll(tables) }()
	err := w.writeSummary()
	if terr := <-tablesDone; terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, err
	}
	if err := swapDir(w.dir, w.final); err != nil {
		return nil, err
	}
	return &w.sum, nil
}

// closeAll closes the sinks at once, each on a goroutine of its own (each
// writes only its own files, and the Parquet pages' zstd encoders come
// from a pool, so the bytes are those of closing them one after the other;
// the largest tables no longer wait behind each other). The first error in
// the sinks' order is returned, after every other sink was closed or
// aborted.
func closeAll(sinks []sink) error {
	errs := make([]error, len(sinks))
	var wg sync.WaitGroup
	for i, s := range sinks {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return firstErr(errs)
}

// closeSinks closes the sinks in order; after a failure it aborts the
// rest.
func closeSinks(sinks []sink) error {
	for i, s := range sinks {
		if err := s.Close(); err != nil {
			for _, rest := range sinks[i+1:] {
				rest.Abort()
			}
			return err
		}
	}
	return nil
}

// writeSummary finishes the summary and writes summary.json, report.md and
// report.html as selected, the three at once (each only reads the finished
// summary); the first error in that order is returned.
func (w *Writer) writeSummary() error {
	// report.html's context chart reads only the report data: it is drawn
	// while the summary is finished (which fits the calibration).
	var chart chan []byte
	if w.formats.HTML {
		chart = make(chan []byte, 1)
		go func() { chart <- contextChartHTML(w.data) }()
	}
	w.sum.Finish()
	if err := cmp.Or(w.sum.Rulers.Err(), w.sum.Strategies.Err()); err != nil {
		if chart != nil {
			<-chart
		}
		return err
	}
	var errs [3]error
	var wg sync.WaitGroup
	if w.formats.Markdown {
		wg.Go(func() {
			errs[1] = writeReport(w.dir, "report.md", func(b io.Writer) error { return WriteMarkdown(b, &w.sum, w.data) })
		})
	}
	if w.formats.HTML {
		wg.Go(func() {
			errs[2] = writeReport(w.dir, "report.html", func(b io.Writer) error { return writeHTML(b, &w.sum, w.data, <-chart) })
		})
	}
	if w.formats.JSON {
		data, err := json.MarshalIndent(&w.sum, "", "  ")
		if err != nil {
			errs[0] = fmt.Errorf("summary.json: %w", err)
		} else {
			errs[0] = WriteFileAtomic(w.dir, "summary.json", append(data, '\n'))
		}
	}
	wg.Wait()
	return firstErr(append(errs[:], w.sum.Strategies.Err())) // report.html's histograms read the values again
}

// firstErr is the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// swapDir puts the directory tmp in place of final: final is renamed
// aside, tmp renamed to final, and the old one removed. Between the two
// renames (microseconds) final is missing; a crash there leaves the old set
// in .NAME.old-* beside it.
func swapDir(tmp, final string) error {
	old := ""
	if _, err := os.Lstat(final); err == nil {
		dir, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".old-")
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		old = filepath.Join(dir, "set")
		if err := os.Rename(final, old); err != nil {
			os.Remove(dir)
			return fmt.Errorf("output directory: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	if err := os.Rename(tmp, final); err != nil {
		if old != "" {
			os.Rename(old, final) // put the previous set back
		}
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// outputExts are the extensions of the files an output set holds.
var outputExts = []string{".csv", ".parquet", ".json", ".md", ".html", ".zst"}

// CheckOutputDir reports whether dir may be replaced by an output set: it
// does not exist, or is an empty directory, or holds only files an output
// set has (CSV, Parquet, JSON, Markdown and HTML files, and the .zst
// results run --shard keeps for merge, with their temporary names), so
// that -o pointed at a directory of other files never deletes them.
func CheckOutputDir(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("output directory %s: not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if i := strings.Index(name, ".tmp-"); i > 0 {
			name = name[:i]
		}
		if !e.Type().IsRegular() || !slices.Contains(outputExts, filepath.Ext(name)) {
			return fmt.Errorf("output directory %s holds %s, which no output set has: the run replaces the directory whole, so give an empty or new one", dir, e.Name())
		}
	}
	return nil
}

// writeReport writes a report atomically: render writes it to the
// temporary file (each report is rendered in memory and written at once,
// so the file gets the string itself, not a copy of it).
func writeReport(dir, name string, render func(io.Writer) error) error {
	p, err := create(dir, name)
	if err != nil {
		return err
	}
	if err := render(p.f); err != nil {
		p.abort()
		return fmt.Errorf("writing %s: %w", p.final, err)
	}
	return p.commit()
}

// Abort removes every temporary file, leaving the previous output set as
// it was.
func (w *Writer) Abort() {
	for _, s := range w.sinks {
		s.Abort()
	}
	os.RemoveAll(w.dir)
}
