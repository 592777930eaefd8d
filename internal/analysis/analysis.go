// Package analysis computes, for one transcript, every row compactbench
// exports: it is where the pure packages (transcript, tokens, anchors,
// compaction) meet. It does no I/O; internal/aggregate aggregates its
// results, internal/report writes them, and cmd/compactbench wires it to the
// loader.
package analysis

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// Config is everything that shapes an analysis. Its canonical JSON form is
// hashed into summary.json, so two runs with equal configs are comparable.
type Config struct {
	// RulerNames, Ruler, Calibration and Overhead are the ruler flags as
	// resolved (the measured rulers in tokens.Names order, the metric
	// ruler, the calibration factors, "first" or "segments"). They are
	// hashed and shown in reports; the analysis counts with Rulers, the
	// same choices as values.
	RulerNames  []string          `json:"rulers,omitempty"`
	Ruler       string            `json:"ruler,omitempty"`
	Calibration *tokens.FactorSet `json:"calibration,omitempty"`
	Overhead    string            `json:"overhead,omitempty"`
	// Rulers are the run's rulers resolved per tokenizer generation on
	// Models (internal/plan builds them from the fields above); nil is
	// tokens.DefaultRulerSet(), right only with the shipped model table.
	Rulers *tokens.RulerSet `json:"-"`
	// Anchors configures anchor detection and scoring; nil skips it.
	Anchors *AnchorConfig `json:"anchors,omitempty"`
	// Models is the model table (windows, tokenizer generations, prices,
	// thinking rule); nil is the shipped one.
	Models *tokens.Models `json:"models,omitempty"`
	// Compaction selects and configures the strategies (nil: defaults).
	Compaction *compaction.Config `json:"compaction,omitempty"`
	// RuleSets are the rule sets the strategies name in their `rules`
	// parameter, resolved by the caller (internal/plan) and keyed by name;
	// a replay looks a strategy's rule set up here (then in Anchors.Sets).
	// Not hashed: the names are, in Compaction.
	RuleSets map[string]*anchors.RuleSet `json:"-"`
	// Strategies are the strategies Compaction enables, resolved by the
	// caller (internal/plan, ResolveStrategies); nil resolves them from
	// Compaction for each transcript. Not hashed: Compaction is.
	Strategies []Strategy `json:"-"`
	// Summarizer writes the strategies' summaries (nil: the extractive
	// summaries); SummarizerID says what shapes its answers (provider,
	// model, prompts) and is hashed with the rest ("" for extractive, so
	// extractive runs keep their hash).
	Summarizer   compaction.Summarizer `json:"-"`
	SummarizerID string                `json:"summarizer,omitempty"`
	// Context, when set, stops Analyze early once cancelled (between its
	// phases, and before each call of a replay): the result is then
	// incomplete and meant to be dropped.
	Context context.Context `json:"-"`
}

// cancelled reports whether the configuration's context is done.
func (c *Config) cancelled() bool { return c.Context != nil && c.Context.Err() != nil }

// Result is everything one transcript contributes to the outputs.
type Result struct {
	Transcript TranscriptRow
	Problems   []ProblemRow
	// IgnoredByType is the transcript's ignored-line count per record type.
	IgnoredByType map[string]int
	// Calls are the transcript's recorded API calls measured by each ruler;
	// Boundaries its recorded compactions with the rulers' estimates.
	Calls      []CallRow
	Boundaries []BoundaryRow
	// Sample is the transcript's calls reduced to what fitting the
	// calibrated ruler needs (summary.json's in-sample and cross-validated
	// figures); nil when no call recorded usage.
	Sample *tokens.Sample
	// Classes names, per measured call of Sample (tokens.SampleClasses),
	// the content class that grew the prompt most since its anchor.
	Classes []string
	// Runs and Events are the strategies' replays of the transcript.
	Runs   []RunRow
	Events []EventRow
	// Summaries describe the events whose summary a model was asked for
	// (empty with the extractive summarizer).
	Summaries []SummaryRow
	// Rereads check need recall against behaviour at each recorded
	// compaction (rereads table).
	Rereads []RereadRow
	// Series is the per-call prompt of the recording and of each strategy
	// (nil when the transcript is not replayed); reports draw it.
	Series *ContextSeries
	// Anchors are the detected anchors, per rule set (anchors table).
	Anchors []AnchorRow
	// Labels are the gold and evidence labels (labels table).
	Labels []LabelRow
	// AnchorCounts are the per-rule-set counts the rules table and
	// summary.json sum.
	AnchorCounts []anchors.SetCounts
}

// OverheadFillsWindow reports whether the transcript was replayed with a
// fixed overhead at or above the window: every call of it compacts.
func (r *Result) OverheadFillsWindow() bool {
	return len(r.Runs) > 0 && r.Runs[0].Window > 0 && r.Runs[0].Overhead >= r.Runs[0].Window
}

// TranscriptRow is a row of the transcripts table: one per transcript read.
type TranscriptRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	Format       string `parquet:"format" json:"format"`
	Kind         string `parquet:"kind" json:"kind"`
	ParentID     string `parquet:"parent_id" json:"parent_id"`
	SessionID    string `parquet:"session_id" json:"session_id"`
	Model        string `parquet:"model" json:"model"`
	Lines        int64  `parquet:"lines" json:"lines"`
	ParsedLines  int64  `parquet:"parsed_lines" json:"parsed_lines"`
	BadLines     int64  `parquet:"bad_lines" json:"bad_lines"`
	IgnoredLines int64  `parquet:"ignored_lines" json:"ignored_lines"`
	// IgnoredTypes lists ignored lines per record type, by type: a list of
	// {key, n} (a JSON array in CSV).
	IgnoredTypes           []Count `parquet:"ignored_types,list" json:"ignored_types"`
	Messages               int64   `parquet:"messages" json:"messages"`
	Turns                  int64   `parquet:"turns" json:"turns"`
	APICalls               int64   `parquet:"api_calls" json:"api_calls"`
	ToolCalls              int64   `parquet:"tool_calls" json:"tool_calls"`
	ToolErrors             int64   `parquet:"tool_errors" json:"tool_errors"`
	CompactBoundaries      int64   `parquet:"compact_boundaries" json:"compact_boundaries"`
	MicrocompactBoundaries int64   `parquet:"microcompact_boundaries" json:"microcompact_boundaries"`
	PeakContextReal        int64   `parquet:"peak_context_real" json:"peak_context_real"`
	Problems               int64   `parquet:"problems" json:"problems"`
	// UnknownTypes and UnknownKeys count records of a type the reader does
	// not know and unknown keys on known records: format drift at a glance.
	UnknownTypes int64 `parquet:"unknown_types" json:"unknown_types"`
	UnknownKeys  int64 `parquet:"unknown_keys" json:"unknown_keys"`
	// OffPath lists the conversation records left off the active path, per
	// reason (branch, duplicate_uuid, synthetic): a list of {key, n}.
	OffPath []Count `parquet:"off_path,list" json:"off_path"`
	// Window is the effective context window (the model table's, raised
	// when the recording exceeds it, or --window); WindowSource says which:
	// table, inferred or flag. Tokenizer is the model's tokenizer generation.
	Window       int64  `parquet:"window" json:"window"`
	WindowSource string `parquet:"window_source" json:"window_source"`
	Tokenizer    string `parquet:"tokenizer" json:"tokenizer"`
	// ContextDrops counts the calls whose real context fell with no
	// compaction recorded (tokens.IsDrop): server-side clearing the
	// transcript does not show.
	ContextDrops int64 `parquet:"context_drops" json:"context_drops"`
}

// ProblemRow is a row of the problems table.
type ProblemRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	Line         int64  `parquet:"line" json:"line"`
	Reason       string `parquet:"reason" json:"reason"`
}

// Analyze computes the result of one transcript.
func Analyze(t *transcript.Transcript, cfg *Config) *Result {
	turns := t.Turns()
	s := &t.Stats
	r := &Result{Transcript: TranscriptRow{
		Path: t.Path, TranscriptID: t.ID, Format: t.Format, Kind: string(t.Kind),
		ParentID: t.ParentID, SessionID: t.SessionID, Model: t.Model,
		Lines: int64(s.Lines), ParsedLines: int64(s.ParsedLines), BadLines: int64(s.BadLines), IgnoredLines: int64(s.IgnoredLines),
		IgnoredTypes: Counts(s.IgnoredByType),
		Messages:     int64(len(t.Messages)), Turns: int64(len(turns)),
		APICalls: int64(s.APICalls), ToolCalls: int64(s.ToolCalls), ToolErrors: int64(s.ToolErrors),
		CompactBoundaries: int64(s.CompactBoundaries), MicrocompactBoundaries: int64(s.MicrocompactBoundaries),
		PeakContextReal: s.PeakContextReal, Problems: int64(len(t.Problems) + s.ProblemsUnlisted),
		UnknownTypes: int64(s.UnknownTypes), UnknownKeys: int64(s.UnknownKeys), OffPath: Counts(s.OffPath),
	}}
	win, src := cfg.Models.WindowOf(t, cfg.compaction().Window)
	r.Transcript.Window, r.Transcript.WindowSource = int64(win), src
	gr := cfg.rulers().ForModel(t.Model)
	r.Transcript.Tokenizer = gr.Name
	r.IgnoredByType = s.IgnoredByType
	for _, p := range t.Problems {
		r.Problems = append(r.Problems, ProblemRow{Path: t.Path, TranscriptID: t.ID, Line: int64(p.Line), Reason: p.Reason})
	}
	if cfg.cancelled() {
		return r
	}
	r.Calls, r.Boundaries = callRows(t, cfg, gr)
	if len(r.Calls) > 0 {
		smp := tokens.Collect(t, cfg.rulers().Overhead(), cfg.Models)
		r.Sample = &smp
		r.Classes = tokens.SampleClasses(&smp, gr.Factors)
	}
	for i := range r.Calls {
		if r.Calls[i].Drop {
			r.Transcript.ContextDrops++
		}
	}
	if cfg.cancelled() {
		return r
	}
	// The anchors are evaluated once: the strategies that select with a
	// rule set of the suite read its evaluation.
	var evs []*anchors.Evaluation
	if cfg.Anchors != nil {
		evs = cfg.Anchors.suite.Evaluate(turns)
	}
	r.Runs, r.Events, r.Summaries, r.Series = replayRows(t, turns, evs, cfg, gr)
	var recorded []*float64
	for i := range r.Events {
		if e := &r.Events[i]; e.Strategy == "recorded" && e.Action == "recorded" {
			recorded = append(recorded, e.NeedRecall)
		}
	}
	r.Rereads = rereadRows(t, recorded)
	if cfg.Anchors != nil && !cfg.cancelled() {
		analyzeAnchors(t, turns, evs, cfg.Anchors, r)
	}
	return r
}

// Count is one entry of a list-valued count column.
type Count struct {
	Key string `parquet:"key" json:"key"`
	N   int64  `parquet:"n" json:"n"`
}

// Counts lists a count map, keys sorted (an empty list for none).
func Counts(m map[string]int) []Count {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Count, 0, len(keys))
	for _, k := range keys {
		out = append(out, Count{Key: k, N: int64(m[k])})
	}
	return out
}

// FormatCounts renders a count map as "key=n;key=n", keys sorted.
func FormatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(m[k]))
	}
	return b.String()
}
