package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// reportInputs are the seeds' worked examples and the loader's Claude Code
// fixtures (which have problems); with a small window every strategy that
// can compacts, so every chart has data.
var reportInputs = []string{seeds, fixtures}

const reportWindow = "8000"

// checkedRuns are the run arguments of the report checks (browser, DuckDB),
// by name: the report inputs, and the real corpus when present (at a window
// where every strategy compacts).
func checkedRuns() map[string][]string {
	runs := map[string][]string{"fixtures": append([]string{"--window", reportWindow}, reportInputs...)}
	if rc := realCorpusPath(); rc != "" {
		runs["real-corpus"] = []string{"--window", "60000", rc}
	}
	return runs
}

// runReport runs the command with the report inputs and returns the output
// directory.
func runReport(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"run", "-q", "--window", reportWindow, "-o", dir}, extra...)
	if code, _, stderr := runCLI(t, append(args, reportInputs...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return dir
}

// TestReportGolden: report.md and report.html of a run, byte for byte.
func TestReportGolden(t *testing.T) {
	dir := runReport(t)
	for _, name := range []string{"report.md", "report.html"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "report/"+name, data)
	}
}

// TestReportContent checks what the report must say, independently of the
// golden files: every section, the caveats, and one chart per kind with
// data.
func TestReportContent(t *testing.T) {
	dir := runReport(t)
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"# compactbench report", "| window | 8000 tokens (override) |", "## Corpus", "## Strategies",
		"| mask |", "## Anchor rule sets", "| tuned |", "## Token rulers", "| calibrated |", "## Input problems",
		"malformed JSON", "## Caveats", "Open-loop replay", "deterministic summarizer", "Cost is a model"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "<") && strings.Contains(string(md), "</") {
		t.Errorf("report.md holds HTML")
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	html := string(page)
	for _, bad := range []string{"http://", "https://", "src=", "@import", "url("} {
		if strings.Contains(strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("report.html refers outside itself: %q", bad)
		}
	}
	figures := regexp.MustCompile(`(?s)<figure class="chart[^"]*" id="([a-z-]+)">(.*?)</figure>`).FindAllStringSubmatch(html, -1)
	var ids []string
	for _, f := range figures {
		ids = append(ids, f[1])
		if n := strings.Count(f[2], `class="mark"`); n == 0 {
			t.Errorf("chart %s has no data marks", f[1])
		}
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != "anchors-per-rule compression context ruler-errors tradeoff" {
		t.Errorf("charts %v", ids)
	}
}

// TestReportTranscript: --report-transcript picks the context chart's
// transcript; an unknown one falls back and says so.
func TestReportTranscript(t *testing.T) {
	dir := runReport(t, "--report-transcript", "b1d0e7c4-52a8-4f13-9c6e-7e4a0f2d8b95", "--format", "html")
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(page), "<code>b1d0e7c4-52a8-4f13-9c6e-7e4a0f2d8b95</code> (../../corpora/seeds/000-ex2-web-search.jsonl;") || !strings.Contains(string(page), "asked for with --report-transcript") {
		t.Errorf("the chosen transcript is not drawn")
	}
	dir = runReport(t, "--report-transcript", "no-such", "--format", "html")
	page, _ = os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(page), "--report-transcript no-such matched no replayed transcript") {
		t.Errorf("an unknown transcript is not reported")
	}
}

// TestFormatsByName: each format writes its own files and nothing else.
func TestFormatsByName(t *testing.T) {
	cases := []struct {
		format string
		want   string // sorted file names, or a pattern
		stdout bool
	}{
		{"md", "report.md", false},
		{"html", "report.html", false},
		{"json", "summary.json", false},
		{"md,json", "report.md summary.json", false},
		{"table", "", true},
	}
	for _, c := range cases {
		dir := t.TempDir()
		code, stdout, stderr := runCLI(t, append([]string{"run", "--no-progress", "--format", c.format, "-o", dir}, seeds)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.format, code, stderr)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("--format %s wrote %q, want %q", c.format, got, c.want)
		}
		if (stdout != "") != c.stdout {
			t.Errorf("--format %s: stdout %q", c.format, stdout)
		}
	}
	// csv and parquet: every table, no single file; all: everything.
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "csv,parquet", "-o", dir, seeds); code != 0 {
		t.Fatal(stderr)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".csv" && ext != ".parquet" {
			t.Errorf("csv,parquet wrote %s", e.Name())
		}
	}
	all := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "all", "-o", all, seeds); code != 0 {
		t.Fatal(stderr)
	}
	entriesAll, _ := os.ReadDir(all)
	if len(entriesAll) != len(entries)+3 {
		t.Errorf("all wrote %d files, csv,parquet %d", len(entriesAll), len(entries))
	}
	// --quiet prints nothing on success, whatever the formats.
	if code, stdout, stderr := runCLI(t, "run", "-q", "--no-progress", "-o", t.TempDir(), seeds); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("--quiet: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
