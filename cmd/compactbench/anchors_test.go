package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/testutil"
)

func TestRulesShowAndList(t *testing.T) {
	for _, n := range anchors.BuiltinNames() {
		code, out, errs := runCLI(t, "rules", "show", n)
		s, _ := anchors.Builtin(n)
		if code != 0 || out != string(s.Source) {
			t.Errorf("rules show %s: exit %d, %s", n, code, errs)
		}
	}
	code, out, _ := runCLI(t, "rules", "list")
	if code != 0 {
		t.Fatal(code)
	}
	golden(t, "rules-list.golden", []byte(out))
	if code, _, errs := runCLI(t, "rules", "show", "codlet"); code != exitBadInput || !strings.Contains(errs, "unknown rule set") {
		t.Errorf("typo: exit %d %s", code, errs)
	}
}

func TestInspect(t *testing.T) {
	code, out, errs := runCLI(t, "inspect", seeds+"/000-ex3-mixed.jsonl", "--explain", "--turn", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "inspect-ex3-explain-turn1.golden", []byte(out))
	code, out, _ = runCLI(t, "inspect", seeds+"/000-ex2-web-search.jsonl", "--rules", "fspec", "--explain")
	if code != 0 || !strings.Contains(out, "✓ web-search — matches, but confidence 0.85 < threshold 0.9: cannot fire") {
		t.Errorf("fspec explain:\n%s", out)
	}
	if code, _, _ := runCLI(t, "inspect", seeds+"/000-ex2-web-search.jsonl", "--explain", "--turn", "7"); code != exitBadInput {
		t.Errorf("--turn out of range: exit %d", code)
	}
}

// TestRunSeeds runs the seeds corpus and checks the anchor tables against
// golden files, with -j 1 and -j 4 giving the same bytes.
func TestRunSeeds(t *testing.T) {
	outs := map[string]map[string][]byte{}
	for _, j := range []string{"1", "4"} {
		dir := t.TempDir()
		code, _, errs := runCLI(t, "run", seeds, "-o", dir, "-j", j, "--format", "csv,json", "-q")
		if code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, errs)
		}
		outs[j] = map[string][]byte{}
		for _, f := range []string{"anchors.csv", "labels.csv", "rules.csv", "summary.json"} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outs[j][f] = data
		}
	}
	for f, data := range outs["1"] {
		if !bytes.Equal(data, outs["4"][f]) {
			t.Errorf("%s differs between -j 1 and -j 4", f)
		}
		golden(t, "seeds-"+f+".golden", data)
	}
}

func TestRunLabelAndRuleErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.labels.jsonl")
	os.WriteFile(bad, []byte(`{"transcript": "x", "turn": 0, "type": "task-completion"}`+"\n"+`{"transcript": "x", "turn": 1, "type": "done"}`+"\n"), 0o644)
	// A bad label line is a problem row (and a warning); the run goes on.
	out := t.TempDir()
	code, _, errs := runCLI(t, "run", seeds, "-o", out, "-q", "--format", "csv", "--labels", bad)
	if code != 0 || !strings.Contains(errs, "bad.labels.jsonl:2: unknown anchor type \"done\"") {
		t.Errorf("bad labels: exit %d: %s", code, errs)
	}
	found := false
	for _, row := range readCSV(t, filepath.Join(out, "problems.csv")) {
		found = found || strings.HasSuffix(row["path"], "bad.labels.jsonl") && row["line"] == "2" && strings.Contains(row["reason"], `"done"`)
		if row["run_id"] == "" || row["config_hash"] == "" {
			t.Errorf("problem row without run_id or config_hash: %v", row) // a label file's rows too
		}
	}
	if !found {
		t.Error("bad labels: no problem row for bad.labels.jsonl:2")
	}
	rules := filepath.Join(dir, "mine.yaml")
	os.WriteFile(rules, []byte("name: mine\nthreshold: 0.9\nrules:\n  - name: r\n    type: task-completion\n    weight: 1\n    confidence: 1\n    when: {call: {tool: Edit, comand: {contains: x, case: sensitive}}}\n"), 0o644)
	code, _, errs = runCLI(t, "run", seeds, "-o", t.TempDir(), "-q", "--rules", rules)
	if code != exitBadInput || !strings.Contains(errs, "mine.yaml:8: call: unknown key \"comand\"") {
		t.Errorf("bad rules: exit %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "run", seeds, "-o", t.TempDir(), "-q", "--evidence", "todos")
	if code != exitBadInput || !strings.Contains(errs, "unknown evidence kind") {
		t.Errorf("bad evidence: exit %d: %s", code, errs)
	}
	// A label naming no transcript of the run is reported.
	stray := filepath.Join(dir, "stray.labels.jsonl")
	os.WriteFile(stray, []byte(`{"transcript": "no-such-session", "turn": 0, "type": "task-completion"}`+"\n"), 0o644)
	code, _, errs = runCLI(t, "run", seeds, "-o", t.TempDir(), "--format", "csv", "--no-progress", "--labels", stray)
	if code != 0 || !strings.Contains(errs, `1 label(s) name no transcript of this run, e.g. `) {
		t.Errorf("stray label: exit %d: %s", code, errs)
	}
}

// BenchmarkRunAnchors measures a full run of the real corpus with anchor analysis
// (default rule sets, evidence labels) and without it (--rules none); the
// difference is what rule evaluation costs.
func BenchmarkRunAnchors(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	for _, c := range []struct {
		name      string
		noAnchors bool
	}{{"anchors", false}, {"no-anchors", true}} {
		b.Run(c.name, func(b *testing.B) {
			out := b.TempDir()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				opts := testRunOptions(b, []string{corpus}, out, func(in *plan.Input) {
					in.Jobs, in.Format = 2, "csv,parquet"
					if c.noAnchors {
						in.Anchors.Rules = []string{"none"}
					}
				})
				var sink bytes.Buffer
				if err := runCommand(context.Background(), opts, &sink, &sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
