package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/plan"
)

// readTranscriptsCSV runs the run command over paths and returns the
// transcripts table as maps keyed by column.
func readTranscriptsCSV(t *testing.T, inputFormat string, paths ...string) []map[string]string {
	t.Helper()
	out := t.TempDir()
	opts := testRunOptions(t, paths, out, func(in *plan.Input) {
		in.Jobs, in.InputFormat, in.Format = 2, inputFormat, "csv"
	})
	if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	return readCSV(t, filepath.Join(out, "transcripts.csv"))
}

// TestRunFormatsColumn runs the command over the loader's fixtures: one
// transcripts row per transcript (a file may hold several), and the format
// column names the reader that read each.
func TestRunFormatsColumn(t *testing.T) {
	rows := readTranscriptsCSV(t, "", "../../internal/loader/testdata")
	perFormat := map[string]int{}
	perFile := map[string]int{}
	for _, r := range rows {
		if strings.Contains(r["path"], "/conformance/") {
			continue // the loader's conformance cases grow one file at a time
		}
		perFormat[r["format"]]++
		perFile[filepath.Base(r["path"])]++
	}
	want := map[string]int{"claude-ai": 6, "claude-code": 11, "codex": 2, "openai-chat": 8, "swe-agent": 3, "openhands": 1}
	for f, n := range want {
		if perFormat[f] != n {
			t.Errorf("%d %s rows, want %d (all: %v)", perFormat[f], f, n, perFormat)
		}
	}
	if len(perFormat) != len(want) {
		t.Errorf("formats %v, want %v", perFormat, want)
	}
	if perFile["conversations.json"] != 6 || perFile["rows.jsonl"] != 7 {
		t.Errorf("rows per file %v", perFile)
	}
}

// TestRunInputFormat checks that --input-format forces the reader.
func TestRunInputFormat(t *testing.T) {
	rows := readTranscriptsCSV(t, "openai-chat", "../../internal/loader/testdata/chat/bare.json")
	if len(rows) != 1 || rows[0]["format"] != "openai-chat" || rows[0]["messages"] != "3" {
		t.Fatalf("rows %v", rows)
	}
	rows = readTranscriptsCSV(t, "codex", "../../internal/loader/testdata/chat/bare.json")
	if len(rows) != 1 || rows[0]["format"] != "codex" || rows[0]["problems"] == "0" {
		t.Fatalf("forcing codex on a chat log must report problems, got %v", rows)
	}
}
