package analysis

import (
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func TestAnalyzeTranscriptRow(t *testing.T) {
	tr := &transcript.Transcript{
		ID: "s1", Path: "p/s1.jsonl", Format: "claude-code", Kind: transcript.KindSession, Model: "m",
		Messages: []transcript.Message{
			{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "hi"}}},
			{Role: transcript.RoleAssistant, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "yo"}}},
			{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "again"}}},
		},
		Problems: []transcript.Problem{{Line: 4, Reason: "malformed JSON"}},
		Stats: transcript.Stats{Lines: 5, ParsedLines: 3, IgnoredLines: 1, BadLines: 1,
			IgnoredByType: map[string]int{"progress": 1}, APICalls: 1, ToolCalls: 2, ToolErrors: 1, PeakContextReal: 99},
	}
	r := Analyze(tr, &Config{})
	row := r.Transcript
	if row.Turns != 2 || row.Messages != 3 || row.Lines != 5 || row.ParsedLines != 3 || row.Problems != 1 ||
		len(row.IgnoredTypes) != 1 || row.IgnoredTypes[0] != (Count{"progress", 1}) || row.PeakContextReal != 99 || row.ToolErrors != 1 {
		t.Errorf("row = %+v", row)
	}
	if len(r.Problems) != 1 || r.Problems[0] != (ProblemRow{Path: "p/s1.jsonl", TranscriptID: "s1", Line: 4, Reason: "malformed JSON"}) {
		t.Errorf("problems = %+v", r.Problems)
	}
}

func TestFormatCounts(t *testing.T) {
	if got := FormatCounts(map[string]int{"b": 2, "a": 1, "system:api_error": 3}); got != "a=1;b=2;system:api_error=3" {
		t.Errorf("got %q", got)
	}
	if got := FormatCounts(nil); got != "" {
		t.Errorf("got %q", got)
	}
}
