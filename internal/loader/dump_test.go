package loader

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// dump renders everything a reader produced, one fact per line, for golden
// files a person can review.
func dump(t *transcript.Transcript) string {
	var b strings.Builder
	s := &t.Stats
	fmt.Fprintf(&b, "transcript id=%s format=%s kind=%s session=%s parent=%s model=%s\n",
		t.ID, t.Format, t.Kind, t.SessionID, t.ParentID, t.Model)
	fmt.Fprintf(&b, "lines=%d parsed=%d ignored=%d bad=%d ignored_types=%s\n",
		s.Lines, s.ParsedLines, s.IgnoredLines, s.BadLines, analysis.FormatCounts(s.IgnoredByType))
	fmt.Fprintf(&b, "api_calls=%d tool_calls=%d tool_errors=%d compact=%d micro=%d peak=%d\n",
		s.APICalls, s.ToolCalls, s.ToolErrors, s.CompactBoundaries, s.MicrocompactBoundaries, s.PeakContextReal)
	if s.UnknownTypes > 0 || s.UnknownKeys > 0 || len(s.OffPath) > 0 {
		fmt.Fprintf(&b, "unknown_types=%d unknown_keys=%d off_path=%s\n", s.UnknownTypes, s.UnknownKeys, analysis.FormatCounts(s.OffPath))
	}
	ci := 0
	for i := range t.Messages {
		for ci < len(t.Compactions) && t.Compactions[ci].MessageIndex == i {
			dumpCompaction(&b, &t.Compactions[ci])
			ci++
		}
		m := &t.Messages[i]
		flags := ""
		if m.IsPrompt() {
			flags += " prompt"
		}
		if m.IsMeta {
			flags += " meta"
		}
		if m.IsSidechain {
			flags += " sidechain"
		}
		fmt.Fprintf(&b, "msg %d line=%d %s%s", i, m.Line, m.Role, flags)
		if m.ID != "" {
			fmt.Fprintf(&b, " id=%s", m.ID)
		}
		if m.Usage != nil {
			u := m.Usage
			fmt.Fprintf(&b, " usage(in=%d cr=%d cc=%d out=%d ctx=%d)", u.Input, u.CacheRead, u.CacheCreation, u.Output, u.Context())
		}
		b.WriteByte('\n')
		for _, bl := range m.Blocks {
			fmt.Fprintf(&b, "  %s", bl.Kind)
			switch bl.Kind {
			case transcript.BlockThinking:
				fmt.Fprintf(&b, " sig=%d", bl.SignatureLen)
			case transcript.BlockToolUse:
				fmt.Fprintf(&b, " id=%s name=%s path=%q cmd=%q input=%s", bl.ToolID, bl.ToolName, bl.Path, bl.Command, head(bl.Input, 60))
			case transcript.BlockToolResult:
				fmt.Fprintf(&b, " id=%s error=%v", bl.ToolID, bl.IsError)
			case transcript.BlockImage:
				fmt.Fprintf(&b, " media=%s", bl.MediaType)
			case transcript.BlockInjected:
				fmt.Fprintf(&b, " kind=%s", bl.InjectedKind)
			}
			if bl.Images > 0 {
				fmt.Fprintf(&b, " images=%d bytes=%d", bl.Images, bl.ImageBytes)
			}
			if bl.SizedImages > 0 {
				fmt.Fprintf(&b, " sized=%d pixels=%d image_tokens=%d", bl.SizedImages, bl.ImagePixels, bl.ImageTokens)
			}
			if len(bl.ToolRefs) > 0 {
				fmt.Fprintf(&b, " tool_refs=%s", strings.Join(bl.ToolRefs, ","))
			}
			if bl.Text != "" {
				fmt.Fprintf(&b, " text=%q", head(bl.Text, 70))
			}
			b.WriteByte('\n')
		}
	}
	for ; ci < len(t.Compactions); ci++ {
		dumpCompaction(&b, &t.Compactions[ci])
	}
	for _, tr := range t.Turns() {
		fmt.Fprintf(&b, "turn %d msgs=[%d,%d) previous_error=%v user=%q response=%q\n",
			tr.Index, tr.Start, tr.End, tr.PreviousError, head(tr.UserMessage, 40), head(tr.AssistantResponse, 40))
		for _, c := range tr.ToolCalls {
			fmt.Fprintf(&b, "  call %s %s\n", c.ID, c.Name)
		}
		for _, r := range tr.ToolResults {
			fmt.Fprintf(&b, "  result %s %s success=%v\n", r.ID, r.Name, r.Success)
		}
	}
	for _, p := range t.Problems {
		fmt.Fprintf(&b, "problem line %d: %s\n", p.Line, p.Reason)
	}
	return b.String()
}

func dumpCompaction(b *strings.Builder, c *transcript.Compaction) {
	post := ""
	if c.PostTokens > 0 {
		post = fmt.Sprintf(" post=%d", c.PostTokens)
	}
	fmt.Fprintf(b, "compaction %s line=%d trigger=%s pre=%d%s saved=%d tools=%v at=%d summary=%q\n",
		c.Kind, c.Line, c.Trigger, c.PreTokens, post, c.TokensSaved, c.CompactedToolIDs, c.MessageIndex, head(c.Summary, 50))
}

func head(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// golden compares got with the golden file, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// readOne reads a file that holds exactly one transcript.
func readOne(t *testing.T, path string) *transcript.Transcript {
	t.Helper()
	var got []*transcript.Transcript
	if err := ReadFile(path, Options{}, func(tr *transcript.Transcript) error {
		got = append(got, tr)
		return nil
	}); err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	if len(got) != 1 {
		t.Fatalf("ReadFile(%s) gave %d transcripts, want 1", path, len(got))
	}
	return got[0]
}

// readAs reads a file that holds exactly one transcript, which detection
// must give to the reader of format.
func readAs(t *testing.T, path, format string) *transcript.Transcript {
	t.Helper()
	tr := readOne(t, path)
	if tr.Format != format {
		t.Fatalf("%s read as %s, want %s", path, tr.Format, format)
	}
	return tr
}
