package loader

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

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

// one reads content and requires exactly one transcript.
func one(t testing.TB, name, content, format string) *transcript.Transcript {
	t.Helper()
	ts := readString(t, name, content, format)
	if len(ts) != 1 {
		t.Fatalf("got %d transcripts, want 1", len(ts))
	}
	return ts[0]
}

// dump renders a transcript as stable text for golden files.
func dump(tr *transcript.Transcript) string {
	var b strings.Builder
	fmt.Fprintf(&b, "transcript id=%q format=%s kind=%s session=%q parent=%q model=%q\n",
		tr.ID, tr.Format, tr.Kind, tr.SessionID, tr.ParentID, tr.Model)
	s := tr.Stats
	fmt.Fprintf(&b, "stats lines=%d bad=%d ignored=%d types=%v calls=%d tools=%d toolerrs=%d compacts=%d micro=%d peak=%d\n",
		s.Lines, s.BadLines, s.IgnoredLines, sortedCounts(s.IgnoredByType), s.APICalls, s.ToolCalls, s.ToolErrors,
		s.CompactBoundaries, s.MicrocompactBoundaries, s.PeakContextReal)
	ci := 0
	for i := range tr.Messages {
		for ci < len(tr.Compactions) && tr.Compactions[ci].MessageIndex == i {
			dumpCompaction(&b, &tr.Compactions[ci])
			ci++
		}
		m := &tr.Messages[i]
		fmt.Fprintf(&b, "[%d] %s", i, m.Role)
		if m.IsMeta {
			b.WriteString(" meta")
		}
		if m.ID != "" {
			fmt.Fprintf(&b, " id=%s", m.ID)
		}
		if m.UUID != "" {
			fmt.Fprintf(&b, " uuid=%s", m.UUID)
		}
		if m.Model != "" {
			fmt.Fprintf(&b, " model=%s", m.Model)
		}
		if m.Timestamp != "" {
			fmt.Fprintf(&b, " ts=%s", m.Timestamp)
		}
		if m.Line != 0 {
			fmt.Fprintf(&b, " line=%d", m.Line)
		}
		if u := m.Usage; u != nil {
			fmt.Fprintf(&b, " usage(in=%d out=%d cr=%d cw=%d)", u.Input, u.Output, u.CacheRead, u.CacheCreation)
		}
		b.WriteByte('\n')
		for j := range m.Blocks {
			bl := &m.Blocks[j]
			fmt.Fprintf(&b, "    %s", bl.Kind)
			if bl.ToolID != "" {
				fmt.Fprintf(&b, " id=%s", bl.ToolID)
			}
			if bl.ToolName != "" {
				fmt.Fprintf(&b, " name=%s", bl.ToolName)
			}
			if bl.IsError {
				b.WriteString(" error")
			}
			if bl.Path != "" {
				fmt.Fprintf(&b, " path=%q", bl.Path)
			}
			if bl.Command != "" {
				fmt.Fprintf(&b, " command=%q", clip(bl.Command, 80))
			}
			if bl.Input != "" {
				fmt.Fprintf(&b, " input=%s", clip(bl.Input, 120))
			}
			if bl.SignatureLen != 0 {
				fmt.Fprintf(&b, " sig=%d", bl.SignatureLen)
			}
			if bl.Images != 0 {
				fmt.Fprintf(&b, " images=%d bytes=%d media=%q", bl.Images, bl.ImageBytes, bl.MediaType)
			}
			if bl.InjectedKind != "" {
				fmt.Fprintf(&b, " injected=%s", bl.InjectedKind)
			}
			if bl.Text != "" {
				fmt.Fprintf(&b, " text=%q", clip(bl.Text, 100))
			}
			b.WriteByte('\n')
		}
	}
	for ; ci < len(tr.Compactions); ci++ {
		dumpCompaction(&b, &tr.Compactions[ci])
	}
	for _, p := range tr.Problems {
		fmt.Fprintf(&b, "problem line=%d %s\n", p.Line, p.Reason)
	}
	return b.String()
}

func dumpCompaction(b *strings.Builder, c *transcript.Compaction) {
	fmt.Fprintf(b, "--- compaction kind=%s at=%d trigger=%q pre=%d saved=%d line=%d summary=%q\n",
		c.Kind, c.MessageIndex, c.Trigger, c.PreTokens, c.TokensSaved, c.Line, clip(c.Summary, 100))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("…(%d chars)", len(s))
}

func sortedCounts(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sortStrings(parts)
	return strings.Join(parts, ";")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff.\n--- got:\n%s", p, got)
	}
}

// realCorpus returns the real corpus folder (../shared/real-corpus from the
// repository root) or skips the test when it is absent.
func realCorpus(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root (go.mod) not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "real-corpus", sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real corpus folder %s is absent; skipping", p)
	}
	return p
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
