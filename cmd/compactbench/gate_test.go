package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
)

// gateFiles writes a baseline summary (a run over the seeds) and a
// regressed copy: structured loses 0.1 of need recall, window gains an
// orphan result.
func gateFiles(t *testing.T) (dir, baseline, regressed string) {
	t.Helper()
	dir = t.TempDir()
	run := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "run", "-q", "--window", reportWindow, "--format", "json", "-o", run, seeds); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	baseline = filepath.Join(run, "summary.json")
	data, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	st := m["strategies"].(map[string]any)
	s := st["structured"].(map[string]any)
	s["need_recall"] = s["need_recall"].(float64) - 0.1
	st["window"].(map[string]any)["orphan_results"] = 1.0
	out, _ := json.MarshalIndent(m, "", "  ")
	regressed = filepath.Join(dir, "regressed.json")
	if err := os.WriteFile(regressed, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, baseline, regressed
}

// TestGateExitCodes: 0 without regression, 1 on one, 2 on unusable input.
func TestGateExitCodes(t *testing.T) {
	dir, base, bad := gateFiles(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	notJSON := write("broken.json", "{")
	otherSchema := write("schema.json", `{"schema_version": 99, "meta": {"tool": "compactbench"}}`)
	notOurs := write("other.json", `{"name": "x"}`)
	tolBad := write("tol.yaml", "need_recall: 0.05\nneed_recal: 0.1\n")
	tolLoose := write("loose.yaml", "need_recall: 0.2\nstrategies:\n  window: {orphan_results: 1}\n")
	tests := []struct {
		args []string
		code int
		msg  string // in stdout for 0 and 1, in stderr for 2
	}{
		{[]string{"--baseline", base, "--current", base}, 0, "✓ no regression"},
		{[]string{"--baseline", base, "--current", bad}, 1, "✗ 2 of"},
		{[]string{"--baseline", base, "--current", bad, "--tolerances", tolLoose}, 0, "✓ no regression"},
		{[]string{"--baseline", base, "--current", bad, "-t", "need_recall=0.2", "-t", "window.orphan_results=off"}, 0, "✓ no regression"},
		{[]string{"--baseline", base, "--current", bad, "-t", "need_recall=0.2"}, 1, "orphan_results of window (+1)"},
		{[]string{"--current", base}, 2, "--baseline FILE is required"},
		{[]string{"--baseline", filepath.Join(dir, "nope.json"), "--current", base}, 2, "no such file"},
		{[]string{"--baseline", base, "--current", filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{[]string{"--baseline", notJSON, "--current", base}, 2, "not a summary.json"},
		{[]string{"--baseline", notOurs, "--current", base}, 2, "not a compactbench summary.json"},
		{[]string{"--baseline", base, "--current", otherSchema}, 2, "schema_version 99"},
		{[]string{"--baseline", base, "--current", base, "--tolerances", tolBad}, 2, "tol.yaml:2: need_recal"},
		{[]string{"--baseline", base, "--current", base, "-t", "bogus=1"}, 2, "unknown figure"},
		{[]string{"--baseline", base, "--current", base, "-t", "need_recall"}, 2, "want FIGURE=VALUE"},
		{[]string{"--baseline", base, "--current", base, "extra"}, 2, "no arguments"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"gate"}, tc.args...)...)
		out := stdout
		if tc.code == 2 {
			out = stderr
		}
		if code != tc.code || !strings.Contains(out, tc.msg) {
			t.Errorf("gate %v: exit %d, want %d with %q\nstdout: %.300s\nstderr: %s", tc.args, code, tc.code, tc.msg, stdout, stderr)
		}
	}
}

// TestGateGolden: the Markdown of a regression, byte for byte (paths are
// replaced so the file does not depend on the temporary directory).
func TestGateGolden(t *testing.T) {
	dir, base, bad := gateFiles(t)
	code, stdout, _ := runCLI(t, "gate", "--baseline", base, "--current", bad)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "gate/regression.md", []byte(strings.ReplaceAll(stdout, dir, "DIR")))
}

// TestBaselineIsCurrent: results/baseline.json passes the gate against a
// fresh main job on corpora/ (what .ci/run does); when it fails, the
// baseline is stale: make baseline refreshes it.
func TestBaselineIsCurrent(t *testing.T) {
	root := testutil.RepoRoot(t)
	base := filepath.Join(root, "results", "baseline.json")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "json", "-o", out, filepath.Join(root, "corpora")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "gate", "--baseline", base, "--current", filepath.Join(out, "summary.json"))
	if code != 0 {
		t.Fatalf("gate exit %d (make baseline refreshes results/baseline.json):\n%s%s", code, stdout, stderr)
	}
}
