package analysis

import (
	"strings"

	"github.com/compactbench/compactbench/internal/transcript"
)

// RereadCalls is how many API calls after a recorded compaction the
// behaviour check watches for files read again.
const RereadCalls = 20

// RereadRow is a row of the rereads table: what the agent did after one
// compaction the harness recorded (compact_boundary). It checks need recall
// against behaviour: files read before the boundary (since the previous
// one) that the agent read again within RereadCalls calls after it, split
// by whether the harness's summary still named them.
type RereadRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	// EventIndex is the compaction's index among the transcript's recorded
	// compactions (compact_boundaries.event_index); Line its source line.
	EventIndex int64  `parquet:"event_index" json:"event_index"`
	Line       int64  `parquet:"line" json:"line"`
	Timestamp  string `parquet:"timestamp" json:"timestamp"`
	// CallsAfter are the calls watched (at most RereadCalls).
	CallsAfter int64 `parquet:"calls_after" json:"calls_after"`
	// FilesRead are the distinct files read before the boundary; Reread
	// those read again after it; RereadRate their share.
	FilesRead  int64    `parquet:"files_read" json:"files_read"`
	Reread     int64    `parquet:"reread" json:"reread"`
	RereadRate *float64 `parquet:"reread_rate,optional" json:"reread_rate"`
	// SummaryKept are the files read before that the summary names (the
	// path or its file name); RereadKept and RereadLost split Reread by it.
	SummaryKept int64 `parquet:"summary_kept" json:"summary_kept"`
	RereadKept  int64 `parquet:"reread_kept" json:"reread_kept"`
	RereadLost  int64 `parquet:"reread_lost" json:"reread_lost"`
	// NeedRecall is the recorded strategy's need recall at this
	// compaction (events table), when it was replayed.
	NeedRecall *float64 `parquet:"need_recall,optional" json:"need_recall"`
	// RereadPaths lists the files read again.
	RereadPaths []string `parquet:"reread_paths,list" json:"reread_paths"`
}

// rereadRows checks every full compaction the recording holds. needRecall
// holds the recorded strategy's need recall of each full compaction, in
// order (nil, or too short, when unknown).
func rereadRows(t *transcript.Transcript, needRecall []*float64) []RereadRow {
	var out []RereadRow
	start, k := 0, 0
	for ei := range t.Compactions {
		c := &t.Compactions[ei]
		if c.Kind != transcript.CompactFull {
			continue
		}
		before := readPaths(t.Messages[min(start, c.MessageIndex):c.MessageIndex], -1)
		start = c.MessageIndex
		row := RereadRow{Path: t.Path, TranscriptID: t.ID, EventIndex: int64(ei), Line: int64(c.Line),
			FilesRead: int64(len(before.order)), RereadPaths: []string{}}
		if k < len(needRecall) {
			row.NeedRecall = needRecall[k]
		}
		k++
		if c.MessageIndex > 0 {
			row.Timestamp = t.Messages[c.MessageIndex-1].Timestamp
		}
		after := readPaths(t.Messages[c.MessageIndex:], RereadCalls)
		row.CallsAfter = int64(after.calls)
		for _, p := range before.order {
			kept := namesPath(c.Summary, p)
			if kept {
				row.SummaryKept++
			}
			if !after.seen[p] {
				continue
			}
			row.Reread++
			row.RereadPaths = append(row.RereadPaths, p)
			if kept {
				row.RereadKept++
			} else {
				row.RereadLost++
			}
		}
		if row.FilesRead > 0 {
			v := float64(row.Reread) / float64(row.FilesRead)
			row.RereadRate = &v
		}
		out = append(out, row)
	}
	return out
}

type pathSet struct {
	seen  map[string]bool
	order []string
	calls int
}

// readPaths collects the files read by the tool calls of msgs, in order,
// over at most maxCalls assistant messages (all when maxCalls < 0).
func readPaths(msgs []transcript.Message, maxCalls int) pathSet {
	ps := pathSet{seen: map[string]bool{}}
	for i := range msgs {
		m := &msgs[i]
		if m.IsCall() {
			if maxCalls >= 0 && ps.calls == maxCalls {
				break
			}
			ps.calls++
		}
		for _, b := range m.Blocks {
			if b.Kind == transcript.BlockToolUse && b.ToolKind() == transcript.ToolRead && b.Path != "" && !ps.seen[b.Path] {
				ps.seen[b.Path] = true
				ps.order = append(ps.order, b.Path)
			}
		}
	}
	return ps
}

// namesPath reports whether text names a file: its path, or its file name
// when that has an extension.
func namesPath(text, path string) bool {
	if text == "" {
		return false
	}
	if strings.Contains(text, path) {
		return true
	}
	i := strings.LastIndexAny(path, "/\\")
	base := path[i+1:]
	return i >= 0 && strings.Contains(base, ".") && strings.Contains(text, base)
}
