package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// manifest reads MANIFEST.tsv: path -> notes, lines.
type manifestRow struct {
	kind  string
	lines int
	notes string
}

func readManifest(t *testing.T, root string) map[string]manifestRow {
	f, err := os.Open(filepath.Join(root, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("MANIFEST.tsv: %v", err)
	}
	defer f.Close()
	rows := map[string]manifestRow{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 8 {
			continue
		}
		n, _ := strconv.Atoi(c[5])
		rows[c[0]] = manifestRow{kind: c[6], lines: n, notes: c[7]}
	}
	return rows
}

// noteInt reads "key=N" or "key xN" from a manifest note.
func noteInt(notes, key string) (int, bool) {
	for _, part := range strings.Split(notes, ";") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, key+"="); ok {
			if i := strings.IndexByte(v, '('); i >= 0 {
				v = v[:i]
			}
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
		if v, ok := strings.CutPrefix(part, key+" x"); ok {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
	}
	return 0, false
}

// independent counts what the transcripts table reports, with encoding/json
// and none of the reader's code.
type independent struct {
	lines, bad, progress int
	apiCalls, toolCalls  int
	toolErrors, compacts int
	// errorLines counts error results per line, where a result repeated on
	// a resumed session's line counts again (the manifest's definition).
	errorLines int
	peak       int64
	// lostIDs are tool ids that occur on unreadable lines.
	lostIDs map[string]bool
	// inlineSidechain is set when a session file also holds sidechain
	// conversation records: the counts above are then the session's own.
	inlineSidechain bool
	// summaryRoots counts compaction summaries that open a new root
	// (older versions, no compact_boundary before them).
	summaryRoots int
}

var toolIDPattern = regexp.MustCompile(`toolu_[A-Za-z0-9]+`)

func countIndependently(t *testing.T, path string) independent {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := independent{lostIDs: map[string]bool{}}
	// Counts per scope: [0] records of the session, [1] sidechain records.
	var calls, uses, errs [2]map[string]bool
	var errorLines [2]int
	var lastUsage [2]map[string]int64
	conv := [2]bool{}
	for i := range calls {
		calls[i], uses[i], errs[i], lastUsage[i] = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]int64{}
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	c.lines = len(lines)
	for _, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Type        any     `json:"type"`
			Subtype     string  `json:"subtype"`
			IsSidechain bool    `json:"isSidechain"`
			Parent      *string `json:"parentUuid"`
			Summary     bool    `json:"isCompactSummary"`
			Message     *struct {
				ID      string          `json:"id"`
				Model   string          `json:"model"`
				Content json.RawMessage `json:"content"`
				Usage   *struct {
					In int64 `json:"input_tokens"`
					CR int64 `json:"cache_read_input_tokens"`
					CC int64 `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if !utf8.Valid(line) || json.Unmarshal(line, &rec) != nil {
			c.bad++
			for _, id := range toolIDPattern.FindAll(line, -1) {
				c.lostIDs[string(id)] = true
			}
			continue
		}
		typ, ok := rec.Type.(string)
		if !ok {
			c.bad++
			continue
		}
		switch typ {
		case "progress":
			c.progress++
		case "system":
			if rec.Subtype == "compact_boundary" {
				c.compacts++
			}
		case "user", "assistant":
			if rec.Message == nil {
				c.bad++
				continue
			}
			sc := 0
			if rec.IsSidechain {
				sc = 1
			}
			conv[sc] = true
			if typ == "user" && rec.Parent == nil && sc == 0 && (rec.Summary ||
				bytes.Contains(rec.Message.Content, []byte("This session is being continued from a previous conversation"))) {
				c.summaryRoots++
			}
			var blocks []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
			}
			json.Unmarshal(rec.Message.Content, &blocks)
			for _, b := range blocks {
				switch {
				case b.Type == "tool_use":
					uses[sc][b.ID] = true
				case b.Type == "tool_result" && b.IsError:
					errs[sc][b.ToolUseID] = true
					errorLines[sc]++
				}
			}
			if typ == "assistant" && rec.Message.ID != "" && rec.Message.Model != "<synthetic>" {
				calls[sc][rec.Message.ID] = true
				if u := rec.Message.Usage; u != nil { // the last line that carries usage
					lastUsage[sc][rec.Message.ID] = u.In + u.CR + u.CC
				}
			}
		}
	}
	// A file's own scope: the session's records when it has any, else
	// (a subagent file) the sidechain records; both when neither.
	scopes := []int{0, 1}
	switch {
	case conv[0]:
		scopes = []int{0}
		c.inlineSidechain = conv[1]
	case conv[1]:
		scopes = []int{1}
	}
	if !conv[0] {
		c.summaryRoots = 0
	}
	all := func(m [2]map[string]bool) int {
		u := map[string]bool{}
		for _, sc := range scopes {
			for k := range m[sc] {
				u[k] = true
			}
		}
		return len(u)
	}
	c.apiCalls, c.toolCalls, c.toolErrors = all(calls), all(uses), all(errs)
	for _, sc := range scopes {
		c.errorLines += errorLines[sc]
		for _, v := range lastUsage[sc] {
			c.peak = max(c.peak, v)
		}
	}
	return c
}

// TestRealCorpusClaudeCode reads every Claude Code file of the real corpus
// and checks the transcripts-table counts against an independent count and
// against MANIFEST.tsv.
func TestRealCorpusClaudeCode(t *testing.T) {
	root := testutil.RealCorpus(t)
	manifest := readManifest(t, root)
	n := 0
	for rel, row := range manifest {
		if row.kind != "claude-code" {
			continue
		}
		n++
		path := filepath.Join(root, rel)
		t.Run(rel, func(t *testing.T) {
			tr := readAs(t, path, ClaudeCodeFormat)
			s := tr.Stats
			ind := countIndependently(t, path)
			type check struct {
				name      string
				got, want int64
			}
			checks := []check{
				{"lines", int64(s.Lines), int64(ind.lines)},
				{"lines (manifest)", int64(s.Lines), int64(row.lines)},
				{"bad_lines", int64(s.BadLines), int64(ind.bad)},
				{"parsed+ignored+bad", int64(s.ParsedLines + s.IgnoredLines + s.BadLines), int64(s.Lines)},
				{"ignored progress", int64(s.IgnoredByType["progress"]), int64(ind.progress)},
				{"api_calls", int64(s.APICalls), int64(ind.apiCalls)},
				{"tool_calls", int64(s.ToolCalls), int64(ind.toolCalls)},
				{"tool_errors", int64(s.ToolErrors), int64(ind.toolErrors)},
				{"compact_boundaries", int64(s.CompactBoundaries), int64(ind.compacts)},
				{"peak_context_real", s.PeakContextReal, ind.peak},
			}
			for _, n := range []struct {
				note, name string
				got        int
			}{
				{"MALFORMED lines", "bad_lines", s.BadLines},
				{"tool errors", "tool_errors", s.ToolErrors},
				{"has compact_boundary", "compact_boundaries", s.CompactBoundaries},
			} {
				if m, ok := noteInt(row.notes, n.note); ok && !(ind.inlineSidechain && n.name == "tool_errors") {
					if n.name == "tool_errors" && m == ind.errorLines && m != ind.toolErrors {
						// The manifest counts error results per line; a
						// result repeated on resume is one error here.
						m = ind.toolErrors
					}
					checks = append(checks, check{n.name + " (manifest)", int64(n.got), int64(m)})
				}
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %d, independent count %d", c.name, c.got, c.want)
				}
			}
			// The active path must be a valid conversation: every tool result
			// answers a call made earlier on the path, unless the call's line
			// is unreadable, and then the reader reports it.
			seen := map[string]bool{}
			reported := map[int]string{}
			for _, p := range tr.Problems {
				reported[p.Line] += p.Reason
			}
			for i, m := range tr.Messages {
				for _, b := range m.Blocks {
					switch b.Kind {
					case transcript.BlockToolUse:
						seen[b.ToolID] = true
					case transcript.BlockToolResult:
						if seen[b.ToolID] {
							break
						}
						if !ind.lostIDs[b.ToolID] {
							t.Errorf("message %d (line %d): result %s has no call earlier on the path", i, m.Line, b.ToolID)
						} else if !strings.Contains(reported[m.Line], b.ToolID) {
							t.Errorf("line %d: orphan result %s not reported as a problem", m.Line, b.ToolID)
						}
					}
				}
				if len(m.Blocks) == 0 {
					t.Errorf("message %d (line %d) has no blocks", i, m.Line)
				}
			}
			if len(tr.Compactions) != s.CompactBoundaries+s.MicrocompactBoundaries+ind.summaryRoots {
				t.Errorf("%d compactions on the path, %d boundaries in the file", len(tr.Compactions), s.CompactBoundaries)
			}
		})
	}
	if n < 80 {
		t.Errorf("only %d Claude Code files in the manifest", n)
	}
}
