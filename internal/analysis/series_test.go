package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/transcript"
)

// TestSeriesFollowsRunsAndEvents: the series has the recording's contexts
// (-1 for a call without usage) and, per strategy in runs order, one prompt
// per call whose maximum is the run's peak and whose compaction calls are
// the events' call indices.
func TestSeriesFollowsRunsAndEvents(t *testing.T) {
	text := func(role transcript.Role, s string) transcript.Message {
		return transcript.Message{Role: role, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: s}}}
	}
	tr := &transcript.Transcript{ID: "s", Path: "s.jsonl", Kind: transcript.KindSession, Model: "claude-x"}
	for i := 0; i < 6; i++ {
		tr.Messages = append(tr.Messages, text(transcript.RoleUser, strings.Repeat("question ", 300)))
		a := text(transcript.RoleAssistant, strings.Repeat("answer ", 200))
		if i != 2 {
			a.Usage = &transcript.Usage{Input: int64(1000 * (i + 1)), CacheRead: 5}
		}
		tr.Messages = append(tr.Messages, a)
	}
	cc := compaction.DefaultConfig()
	cc.Window = 2500
	cc.Strategies = []string{"truncate", "codex"}
	r := Analyze(tr, &Config{Compaction: cc})
	s := r.Series
	if s == nil || s.Calls() != 6 || s.TranscriptID != "s" {
		t.Fatalf("series %+v", s)
	}
	if s.Real[0] != 1005 || s.Real[2] != -1 || s.Real[5] != 6005 {
		t.Errorf("real %v", s.Real)
	}
	if len(s.Strategies) != len(r.Runs) {
		t.Fatalf("%d strategy series for %d runs", len(s.Strategies), len(r.Runs))
	}
	events := 0
	for i, ss := range s.Strategies {
		run := r.Runs[i]
		if ss.Strategy != run.Strategy || ss.Window != 2500 || len(ss.Prompt) != 6 {
			t.Fatalf("series %d: %+v for run %+v", i, ss, run)
		}
		peak := int64(0)
		for _, p := range ss.Prompt {
			peak = max(peak, p)
		}
		if peak != run.PeakContext {
			t.Errorf("%s: peak %d, run %d", ss.Strategy, peak, run.PeakContext)
		}
		var calls []int64
		for _, e := range r.Events {
			if e.Strategy == ss.Strategy && (len(calls) == 0 || calls[len(calls)-1] != e.CallIndex) {
				calls = append(calls, e.CallIndex)
			}
		}
		events += len(calls)
		if !slices.Equal(calls, ss.Compactions) {
			t.Errorf("%s: compactions %v, events at %v", ss.Strategy, ss.Compactions, calls)
		}
	}
	if events == 0 {
		t.Fatal("no strategy compacted: the window is too large for the test")
	}
	notReplayed := &transcript.Transcript{ID: "c", Kind: transcript.KindCompactionCall, Messages: tr.Messages}
	if r := Analyze(notReplayed, &Config{Compaction: cc}); r.Series != nil {
		t.Errorf("a compaction call is not replayed, got a series")
	}
}

// TestReplaysResolvedStrategies: a replay runs the strategies the config
// lists, resolved, with their parameters and rule set names as given.
func TestReplaysResolvedStrategies(t *testing.T) {
	tr := &transcript.Transcript{ID: "s", Path: "s.jsonl", Kind: transcript.KindSession, Model: "claude-x"}
	for i := 0; i < 3; i++ {
		tr.Messages = append(tr.Messages,
			transcript.Message{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: strings.Repeat("question ", 300)}}},
			transcript.Message{Role: transcript.RoleAssistant, Usage: &transcript.Usage{Input: int64(1000 * (i + 1))},
				Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "answer"}}})
	}
	cc := compaction.DefaultConfig()
	cc.Window = 1000
	all := ResolveStrategies(cc)
	if len(all) != len(compaction.Specs()) {
		t.Fatalf("%d strategies resolved, want every one (%d)", len(all), len(compaction.Specs()))
	}
	var mask Strategy
	for _, s := range all {
		if s.Spec.ID == "mask" {
			mask = s
		}
	}
	mask.RuleSet = "as-resolved"
	r := Analyze(tr, &Config{Compaction: cc, Strategies: []Strategy{mask}})
	if len(r.Runs) != 1 || r.Runs[0].Strategy != "mask" || r.Runs[0].RuleSet != "as-resolved" {
		t.Errorf("runs %+v, want one mask run with the resolved rule set name", r.Runs)
	}
}
