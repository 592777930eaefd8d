package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// readPath reads a file with ReadFile and returns its transcripts.
func readPath(t testing.TB, path, format string) []*transcript.Transcript {
	t.Helper()
	var out []*transcript.Transcript
	err := ReadFile(path, Options{Format: format}, func(tr *transcript.Transcript) error {
		out = append(out, tr)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return out
}

// readString writes content to a temp file named name and reads it.
func readString(t testing.TB, name, content, format string) []*transcript.Transcript {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return readPath(t, p, format)
}

// corpusFiles lists the files under dir whose names end in one of exts.
func corpusFiles(t testing.TB, dir string, exts ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no %v files under %s", exts, dir)
	}
	return out
}

// textLines counts the text lines of data: its newlines, plus a last line
// that has none.
func textLines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// checkAccounting checks what every reader owes every transcript, whatever
// the unit of its format: each record is exactly one of parsed, ignored or
// bad (three counts made apart, so the sum can fail), the ignored records
// add up per type, each bad record is a problem, and every message and
// compaction points at a line of the file (which has lines text lines).
func checkAccounting(tr *transcript.Transcript, lines int) error {
	s := &tr.Stats
	if s.ParsedLines < 0 || s.IgnoredLines < 0 || s.BadLines < 0 || s.ParsedLines+s.IgnoredLines+s.BadLines != s.Lines {
		return fmt.Errorf("%s: parsed %d + ignored %d + bad %d != lines %d", tr.ID, s.ParsedLines, s.IgnoredLines, s.BadLines, s.Lines)
	}
	byType := 0
	for _, n := range s.IgnoredByType {
		byType += n
	}
	if byType != s.IgnoredLines {
		return fmt.Errorf("%s: ignored %d, but %d per type (%v)", tr.ID, s.IgnoredLines, byType, s.IgnoredByType)
	}
	if len(tr.Problems)+s.ProblemsUnlisted < s.BadLines {
		return fmt.Errorf("%s: %d bad records but %d problems", tr.ID, s.BadLines, len(tr.Problems)+s.ProblemsUnlisted)
	}
	if len(tr.Messages) > 0 && s.ParsedLines == 0 {
		return fmt.Errorf("%s: %d messages but no parsed record", tr.ID, len(tr.Messages))
	}
	for i, m := range tr.Messages {
		if m.Line < 1 || m.Line > lines {
			return fmt.Errorf("%s: message %d at line %d, the file has %d", tr.ID, i, m.Line, lines)
		}
	}
	for i, c := range tr.Compactions {
		if c.Line < 1 || c.Line > lines {
			return fmt.Errorf("%s: compaction %d at line %d, the file has %d", tr.ID, i, c.Line, lines)
		}
	}
	return nil
}
