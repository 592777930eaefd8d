package analysis

import (
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

func read(id, path string) transcript.Message {
	return transcript.Message{Role: transcript.RoleAssistant, Blocks: []transcript.Block{
		{Kind: transcript.BlockToolUse, ToolName: "Read", ToolID: id, Path: path}}}
}

// TestRereadRows: files read before a recorded compaction and read again
// within the watched calls, split by whether the summary names them.
func TestRereadRows(t *testing.T) {
	msgs := []transcript.Message{
		{Role: transcript.RoleUser, Blocks: []transcript.Block{{Kind: transcript.BlockText, Text: "go"}}},
		read("1", "/p/a.go"), read("2", "/p/b.go"), read("3", "/p/c.go"), read("4", "/p/a.go"),
		// the compaction happens here (MessageIndex 5)
		read("5", "/p/b.go"), read("6", "/p/c.go"), read("7", "/p/d.go"),
	}
	for range RereadCalls {
		msgs = append(msgs, transcript.Message{Role: transcript.RoleAssistant})
	}
	msgs = append(msgs, read("8", "/p/a.go")) // past the watched calls
	tr := &transcript.Transcript{ID: "t", Path: "t.jsonl", Messages: msgs, Compactions: []transcript.Compaction{
		{Kind: transcript.CompactMicro, MessageIndex: 2},
		{Kind: transcript.CompactFull, MessageIndex: 5, Line: 9, Summary: "We edited b.go and looked at /p/a.go."},
	}}
	half := 0.5
	rows := rereadRows(tr, []*float64{&half})
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.EventIndex != 1 || r.FilesRead != 3 || r.Reread != 2 || r.SummaryKept != 2 || r.RereadKept != 1 ||
		r.RereadLost != 1 || r.CallsAfter != RereadCalls || *r.RereadRate != 2.0/3 || *r.NeedRecall != 0.5 {
		t.Errorf("row %+v", r)
	}
	if len(r.RereadPaths) != 2 || r.RereadPaths[0] != "/p/b.go" || r.RereadPaths[1] != "/p/c.go" {
		t.Errorf("reread paths %v", r.RereadPaths)
	}
}
