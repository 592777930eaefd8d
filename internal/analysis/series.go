package analysis

import (
	"strconv"

	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/transcript"
)

// ContextSeries is the prompt size at every recorded API call of one
// replayed transcript: what the recording really sent and what each
// strategy would have sent. Reports draw it for one chosen transcript; it is
// not a table.
type ContextSeries struct {
	Path         string
	TranscriptID string
	Model        string
	// Kind is the transcript's kind (session, subagent).
	Kind string
	// PeakReal is the largest recorded context (0 without usage).
	PeakReal int64
	// Real is each call's recorded context (input + cache read + cache
	// creation), -1 where the call recorded no usage.
	Real []int64
	// Drops are the calls whose real context fell with no compaction
	// recorded (tokens.IsDrop), in order.
	Drops []int64
	// Strategies are the replays, in the order of the runs table.
	Strategies []StrategySeries
}

// StrategySeries is one strategy's simulated prompt at every call.
type StrategySeries struct {
	Strategy string
	// Window is the context window overflows were judged against.
	Window int64
	// Prompt is the prompt before each call, overhead included
	// (compaction.Run.Prompts).
	Prompt []int64
	// Compactions are the calls a compaction preceded (events table
	// call_index), in order; a call appears once however many events it had.
	Compactions []int64
	// Reasons are, per entry of Compactions, the first event's trigger
	// reason and what it did ("prompt 181000, limit 180000: 180500 → 41000").
	Reasons []string
}

// Calls is the number of recorded calls the series covers.
func (s *ContextSeries) Calls() int { return len(s.Real) }

// newSeries starts the series of a transcript with its recorded contexts.
func newSeries(t *transcript.Transcript, sh *compaction.Shared) *ContextSeries {
	s := &ContextSeries{Path: t.Path, TranscriptID: t.ID, Model: t.Model, Kind: string(t.Kind), Real: make([]int64, len(sh.Calls))}
	for k, ci := range sh.Calls {
		s.Real[k] = -1
		if u := t.Messages[ci].Usage; u != nil {
			s.Real[k] = u.Context()
			s.PeakReal = max(s.PeakReal, s.Real[k])
		}
		if _, ok := sh.Drops[k]; ok {
			s.Drops = append(s.Drops, int64(k))
		}
	}
	return s
}

// add appends one strategy's replay.
func (s *ContextSeries) add(run *compaction.Run, events []compaction.Event) {
	ss := StrategySeries{Strategy: run.Strategy, Window: int64(run.Window), Prompt: make([]int64, len(run.Prompts))}
	for i, p := range run.Prompts {
		ss.Prompt[i] = int64(p)
	}
	for i := range events {
		c := int64(events[i].Call)
		if n := len(ss.Compactions); n == 0 || ss.Compactions[n-1] != c {
			ss.Compactions = append(ss.Compactions, c)
			e := &events[i]
			// Concatenated, not formatted: mask compacts before nearly
			// every call.
			ss.Reasons = append(ss.Reasons, e.TriggerReason+": "+strconv.Itoa(e.TokensBefore)+" → "+strconv.Itoa(e.TokensAfter)+" tokens")
		}
	}
	s.Strategies = append(s.Strategies, ss)
}
