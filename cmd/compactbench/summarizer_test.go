package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAnthropic is a real Messages API server on loopback that answers
// every summary request; it counts requests.
func fakeAnthropic(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"data":[]}`)
			return
		}
		if r.Header.Get("x-api-key") != "sk-test" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		hits.Add(1)
		fmt.Fprint(w, `{"content":[{"type":"text","text":"Model summary: the user fixed src/app.py and tests pass."}],"usage":{"input_tokens":900,"output_tokens":30}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestRunWithModelSummaries: run --summarizer anthropic against a loopback
// server writes the summaries table, the summary.json block and report.md's
// section; a second run over the same cache sends no request and writes the
// same tables.
func TestRunWithModelSummaries(t *testing.T) {
	srv, hits := fakeAnthropic(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	cache := t.TempDir()
	run := func(out string) {
		code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "--window", "3000", "--strategies", "structured,window,truncate",
			"--summarizer", "anthropic", "--llm-url", srv.URL, "--llm-cache", cache, "-o", out, seeds)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	first, second := t.TempDir(), t.TempDir()
	run(first)
	sent := hits.Load()
	if sent == 0 {
		t.Fatal("no summary was requested")
	}
	rows := readCSV(t, filepath.Join(first, "summaries.csv"))
	if len(rows) != int(sent) {
		t.Fatalf("%d summaries rows for %d requests", len(rows), sent)
	}
	for _, r := range rows {
		if r["summary_source"] != "llm" || r["llm_input_tokens"] != "900" || r["strategy"] == "truncate" {
			t.Fatalf("row %v", r)
		}
	}
	var sum struct {
		Meta struct {
			ConfigHash string `json:"config_hash"`
		}
		Summarizer struct {
			Name       string
			Requests   int64
			Strategies map[string]struct{ LLM, Cache, Fallback int64 }
		}
	}
	data, _ := os.ReadFile(filepath.Join(first, "summary.json"))
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Summarizer.Name != "anthropic" || sum.Summarizer.Requests != sent || sum.Summarizer.Strategies["structured"].LLM == 0 {
		t.Errorf("summary.json summarizer %+v", sum.Summarizer)
	}
	md, _ := os.ReadFile(filepath.Join(first, "report.md"))
	if !strings.Contains(string(md), "## Summarizer") {
		t.Error("report.md has no Summarizer section")
	}
	if strings.Contains(string(data)+string(md), "sk-test") {
		t.Error("the API key was written to an output")
	}
	run(second)
	if hits.Load() != sent {
		t.Errorf("the second run sent %d requests; the cache should answer all", hits.Load()-sent)
	}
	again := readCSV(t, filepath.Join(second, "summaries.csv"))
	for i := range again {
		if again[i]["summary_source"] != "cache" || again[i]["summary_tokens"] != rows[i]["summary_tokens"] {
			t.Fatalf("row %d: %v, first run %v", i, again[i], rows[i])
		}
	}
	// An extractive run writes no summaries table and hashes as before.
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "-o", out, seeds); code != 0 {
		t.Fatal(stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "summaries.csv")); err == nil {
		t.Error("an extractive run wrote summaries.csv")
	}
}

// TestSummarizerUsageErrors: a missing key, an unreachable server or a bad
// flag stops the run before any work, with exit 2.
func TestSummarizerUsageErrors(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	cases := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"no key", "", []string{"--summarizer", "anthropic"}, "ANTHROPIC_API_KEY"},
		{"unreachable", "k", []string{"--summarizer", "anthropic", "--llm-url", downURL}, "cannot reach"},
		{"openai without model", "k", []string{"--summarizer", "openai"}, "--llm-model"},
		{"unknown summarizer", "k", []string{"--summarizer", "gpt"}, "unknown summarizer"},
		{"bad budget", "k", []string{"--summarizer", "cache", "--llm-budget", "lots"}, "--llm-budget"},
		{"llm flag without summarizer", "k", []string{"--llm-model", "x"}, "needs --summarizer"},
		{"unknown prompt", "k", []string{"--summarizer", "cache", "--llm-prompt", "nope=x.tmpl"}, "--llm-prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANTHROPIC_API_KEY", tc.env)
			out := t.TempDir()
			args := append([]string{"run", "-q", "--no-progress", "-o", out, "--llm-cache", t.TempDir()}, tc.args...)
			if tc.name == "llm flag without summarizer" {
				args = []string{"run", "-q", "--no-progress", "-o", out, "--llm-model", "x"}
			}
			code, _, stderr := runCLI(t, append(args, seeds)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
				t.Error("work was done before the error")
			}
		})
	}
}

// TestBudgetSpentInPathOrder: at -j 1 a model budget buys summaries for the
// events of the first files in path order, whatever the files' sizes: the
// budgeted run's summaries are the first rows of the same run without a
// budget. (Starting large files first, which run does without a budget,
// spent it on other files.)
func TestBudgetSpentInPathOrder(t *testing.T) {
	srv, _ := fakeAnthropic(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	if code, _, errs := runCLI(t, "gen", "--sessions", "30", "--seed", "7", "--quiet", corpus); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	run := func(out string, budget ...string) []map[string]string {
		args := append([]string{"run", "-q", "--no-progress", "-j", "1", "--format", "csv", "--window", "20000",
			"--strategies", "structured", "--summarizer", "anthropic", "--llm-url", srv.URL, "--llm-cache", "off",
			"--llm-concurrency", "1", "-o", out}, budget...)
		if code, _, errs := runCLI(t, append(args, corpus)...); code != 0 {
			t.Fatalf("run %v: %s", budget, errs)
		}
		return readCSV(t, filepath.Join(out, "summaries.csv"))
	}
	all := run(filepath.Join(dir, "all"))
	if len(all) < 8 {
		t.Fatalf("only %d summaries without a budget; the case needs more", len(all))
	}
	// 930 tokens a reply: a budget for about half of them.
	var some []map[string]string // the events the model summarized
	for _, r := range run(filepath.Join(dir, "some"), "--llm-budget", strconv.Itoa(930*len(all)/2)) {
		if r["summary_source"] == "llm" {
			some = append(some, r)
		}
	}
	if len(some) == 0 || len(some) >= len(all) {
		t.Fatalf("%d of %d summaries under the budget", len(some), len(all))
	}
	for i, r := range some {
		if r["path"] != all[i]["path"] || r["round"] != all[i]["round"] {
			t.Fatalf("budgeted summary %d is %s round %s; in path order it is %s round %s", i,
				r["path"], r["round"], all[i]["path"], all[i]["round"])
		}
	}
}

// TestBadOutputStopsBeforeModelRequests: with a model summarizer, an output
// set that fails to open (here -o becomes a file after the flags were
// checked, and the open is slow) stops the run before any request is paid
// for; without one, the set opens beside the first files.
func TestBadOutputStopsBeforeModelRequests(t *testing.T) {
	srv, hits := fakeAnthropic(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Cleanup(func() { testHook.Store(nil) })
	out := filepath.Join(t.TempDir(), "out")
	setHook(func(stage, path string) {
		if stage == "open" {
			time.Sleep(300 * time.Millisecond) // time for the workers to ask, were they started
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				panic(err)
			}
		}
	})
	code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "-j", "1", "--window", "3000", "--strategies", "structured",
		"--summarizer", "anthropic", "--llm-url", srv.URL, "--llm-cache", "off", "-o", out, seeds)
	if code == exitOK || !strings.Contains(stderr, "not a directory") {
		t.Fatalf("output set failing to open: exit %d, stderr %.300q", code, stderr)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d model requests sent before the output error", n)
	}
}
