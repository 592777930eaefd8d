package aggregate

import (
	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/tokens"
)

// SchemaVersion is bumped when summary.json changes incompatibly.
const SchemaVersion = 1

// Meta describes the run. It holds nothing that varies between two runs of
// the same inputs and config (no clock, no -j), so summary.json is
// byte-identical across such runs.
type Meta struct {
	Tool       string `json:"tool"`
	Version    string `json:"version"`
	ConfigHash string `json:"config_hash"`
	// RunID identifies the run's inputs and configuration (a hash of tool,
	// version, config hash and inputs): every table carries it, with the
	// config hash, so tables of several runs can be unioned.
	RunID  string   `json:"run_id"`
	Inputs []string `json:"inputs"`
	// Overhead is the calls table's overhead anchoring (tokens.Anchoring).
	Overhead string `json:"overhead,omitempty"`
	// Models is the model table the run used (nil: the shipped one); not
	// written (the config hash covers it).
	Models *tokens.Models `json:"-"`
}

// Summary is summary.json: run metadata, corpus totals and, as analyses are
// added, per-ruler, per-rule-set and per-strategy aggregates. The CI gate
// reads it.
type Summary struct {
	SchemaVersion int    `json:"schema_version"`
	Meta          Meta   `json:"meta"`
	Corpus        Corpus `json:"corpus"`
	// Rulers are the token rulers' errors against real usage.
	Rulers *Rulers `json:"rulers,omitempty"`
	// Strategies are the compaction strategies' aggregates, by id.
	Strategies Strategies `json:"strategies"`
	// Rereads total the behaviour check at recorded compactions.
	Rereads *RereadStats `json:"rereads"`
	// Verdict ranks the strategies (computeVerdict).
	Verdict Verdict `json:"verdict"`
	// Anchors are the per-rule-set anchor aggregates (rules table, set rows).
	Anchors []RuleSetSummary `json:"anchors,omitempty"`
	// Summarizer describes model-written summaries (nil: extractive).
	Summarizer  *SummarizerSummary `json:"summarizer,omitempty"`
	anchorTally anchors.Tally
	// overfull counts the replayed transcripts whose fixed overhead fills
	// the window; overfullFirst is the first in output order.
	overfull      int64
	overfullFirst string
}

// AnchorTally is the anchor counts over every result (the rules table and
// the anchors chart read it).
func (s *Summary) AnchorTally() *anchors.Tally { return &s.anchorTally }

// Overfull is how many replayed transcripts had a fixed overhead at or
// above the window (analysis.Result.OverheadFillsWindow: every call of
// theirs compacts), and the path of the first in output order.
func (s *Summary) Overfull() (n int64, first string) { return s.overfull, s.overfullFirst }

// Totals are counts summed over transcripts.
type Totals struct {
	Transcripts            int64 `json:"transcripts"`
	Lines                  int64 `json:"lines"`
	BadLines               int64 `json:"bad_lines"`
	IgnoredLines           int64 `json:"ignored_lines"`
	Messages               int64 `json:"messages"`
	Turns                  int64 `json:"turns"`
	APICalls               int64 `json:"api_calls"`
	ToolCalls              int64 `json:"tool_calls"`
	ToolErrors             int64 `json:"tool_errors"`
	CompactBoundaries      int64 `json:"compact_boundaries"`
	MicrocompactBoundaries int64 `json:"microcompact_boundaries"`
	Problems               int64 `json:"problems"`
}

func (s *Totals) add(t *analysis.TranscriptRow) {
	s.Transcripts++
	s.Lines += t.Lines
	s.BadLines += t.BadLines
	s.IgnoredLines += t.IgnoredLines
	s.Messages += t.Messages
	s.Turns += t.Turns
	s.APICalls += t.APICalls
	s.ToolCalls += t.ToolCalls
	s.ToolErrors += t.ToolErrors
	s.CompactBoundaries += t.CompactBoundaries
	s.MicrocompactBoundaries += t.MicrocompactBoundaries
	s.Problems += t.Problems
}

// Corpus totals over every transcript read.
type Corpus struct {
	Files int64 `json:"files"`
	Totals
	ByFormat      map[string]int64   `json:"by_format"`
	ByKind        map[string]*Totals `json:"by_kind"`
	IgnoredByType map[string]int64   `json:"ignored_by_type"`
}

func newSummary(m Meta) Summary {
	return Summary{SchemaVersion: SchemaVersion, Meta: m, Corpus: Corpus{
		ByFormat: map[string]int64{}, ByKind: map[string]*Totals{}, IgnoredByType: map[string]int64{},
	}, Rulers: newRulers(m.Overhead, m.Models), Strategies: Strategies{}, Rereads: &RereadStats{}}
}

func (s *Summary) add(r *analysis.Result) {
	c := &s.Corpus
	t := &r.Transcript
	c.Totals.add(t)
	c.ByFormat[t.Format]++
	k := c.ByKind[t.Kind]
	if k == nil {
		k = &Totals{}
		c.ByKind[t.Kind] = k
	}
	k.add(t)
	for typ, n := range r.IgnoredByType {
		c.IgnoredByType[typ] += int64(n)
	}
	if r.OverheadFillsWindow() {
		if s.overfull == 0 {
			s.overfullFirst = t.Path
		}
		s.overfull++
	}
	s.Rulers.add(r)
	s.Strategies.add(r)
	s.Rereads.add(r.Rereads)
	s.anchorTally.Add(r.AnchorCounts)
	s.Summarizer.add(r.Summaries)
}

// finish computes the aggregates that need every result (medians, rates).
// The rulers' figures are finished on a goroutine of their own beside the
// strategies' (each reads back only its own logs and sets only its own
// fields, so the figures are those of one after the other): the end of a
// run waits for the longer, not for both.
func (s *Summary) finish() {
	join := beside(s.Rulers.finish)
	s.Strategies.finish()
	s.Rereads.finish()
	join()
	s.Verdict = computeVerdict(s)
	s.Anchors = anchorSummaries(&s.anchorTally)
}
