package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/gen"
	"github.com/compactbench/compactbench/internal/testutil"
)

// manifests regenerates, in memory, the sessions a gen run wrote.
func manifests(t *testing.T, seed uint64, n int) []*gen.Manifest {
	t.Helper()
	discard := func(string) (io.Writer, error) { return io.Discard, nil }
	var out []*gen.Manifest
	for i := 0; i < n; i++ {
		m, err := gen.Generate(gen.SpecAt(seed, gen.Scenarios, i), discard)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestGenThenRun: every generated file loads with zero problems, and the
// transcripts table says exactly what the generator says it wrote.
func TestGenThenRun(t *testing.T) {
	dir := t.TempDir()
	corpus, out := filepath.Join(dir, "corpus"), filepath.Join(dir, "out")
	const sessions, seed = 21, 3
	if code, _, errs := runCLI(t, "gen", "--sessions", strconv.Itoa(sessions), "--seed", strconv.Itoa(seed), "-j", "2", "--quiet", corpus); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "run", corpus, "--out", out, "--format", "csv", "--quiet", "--no-progress", "--strict"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	rows := map[string]map[string]string{}
	for _, r := range readCSV(t, filepath.Join(out, "transcripts.csv")) {
		rows[r["path"]] = r
	}
	if probs := readCSV(t, filepath.Join(out, "problems.csv")); len(probs) != 0 {
		t.Errorf("%d problems, first: %v", len(probs), probs[0])
	}

	files, labels := 0, 0
	for _, m := range manifests(t, seed, sessions) {
		labels += len(m.Labels)
		for _, e := range m.Files {
			files++
			row := rows[filepath.ToSlash(filepath.Join(corpus, e.Path))]
			if row == nil {
				t.Errorf("%s: not in the transcripts table", e.Path)
				continue
			}
			want := map[string]string{
				"transcript_id": e.ID, "kind": e.Kind, "parent_id": e.ParentID, "session_id": e.SessionID, "model": e.Model,
				"format": "claude-code", "bad_lines": "0", "problems": "0",
				"lines": itoa(e.Lines), "ignored_lines": itoa(e.IgnoredLines), "messages": itoa(e.Messages), "turns": itoa(e.Turns),
				"api_calls": itoa(e.APICalls), "tool_calls": itoa(e.ToolCalls), "tool_errors": itoa(e.ToolErrors),
				"compact_boundaries": itoa(e.CompactBoundaries), "peak_context_real": itoa(e.PeakContext),
			}
			for col, v := range want {
				if row[col] != v {
					t.Errorf("%s: %s = %q in the table, generator wrote %q", e.Path, col, row[col], v)
				}
			}
		}
	}
	if len(rows) != files {
		t.Errorf("table has %d transcripts, generator wrote %d files", len(rows), files)
	}

	// labels.jsonl: one line per label, each naming a file that exists.
	f, err := os.Open(filepath.Join(corpus, "labels.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var l gen.Label
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("labels.jsonl line %d: %v", n+1, err)
		}
		if _, err := os.Stat(filepath.Join(corpus, filepath.FromSlash(l.Transcript))); err != nil {
			t.Errorf("label names a missing file: %v", err)
		}
	}
	if n != labels {
		t.Errorf("labels.jsonl has %d lines, generator made %d labels", n, labels)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// tree returns every file under dir with its content, and every directory
// (its path with a trailing slash, no content).
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() { // a directory is an entry too: an empty one must match
			if p != dir {
				rel, _ := filepath.Rel(dir, p)
				out[filepath.ToSlash(rel)+"/"] = nil
			}
			return nil
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, a, b map[string][]byte, what string) {
	t.Helper()
	for p, data := range a {
		if other, ok := b[p]; !ok {
			t.Errorf("%s: %s only on one side", what, p)
		} else if !bytes.Equal(data, other) {
			t.Errorf("%s: %s differs", what, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			t.Errorf("%s: %s only on the other side", what, p)
		}
	}
}

// TestGenDeterministic: -j does not change a byte, and --bytes keeps the
// first sessions whose files reach the size.
func TestGenDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, j := range []string{"1", "2"} {
		if code, _, errs := runCLI(t, "gen", "--bytes", "600KiB", "--seed", "9", "-j", j, "--quiet", filepath.Join(dir, j)); code != 0 {
			t.Fatalf("gen -j %s: exit %d: %s", j, code, errs)
		}
	}
	one, two := tree(t, filepath.Join(dir, "1")), tree(t, filepath.Join(dir, "2"))
	sameTree(t, one, two, "-j 1 vs -j 2")

	var total, last int64
	for p, data := range one {
		if p != "labels.jsonl" {
			total += int64(len(data))
		}
	}
	ms := manifests(t, 9, 40)
	var sum int64
	n := 0
	for sum < 600<<10 {
		last = ms[n].Bytes()
		sum += last
		n++
	}
	if total != sum || total-last >= 600<<10 {
		t.Errorf("--bytes 600KiB wrote %d bytes; the first %d sessions make %d (last %d)", total, n, sum, last)
	}
}

// TestGenUsage: bad flags are usage errors (exit 2).
func TestGenUsage(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"gen", filepath.Join(dir, "a")},                                                  // neither size
		{"gen", "--sessions", "2", "--bytes", "1MiB", filepath.Join(dir, "b")},            // both
		{"gen", "--sessions", "2", "--scenarios", "bugfix,nope", filepath.Join(dir, "c")}, // unknown scenario
		{"gen", "--bytes", "lots", filepath.Join(dir, "d")},                               // bad size
		{"gen", "--sessions", "2", full},                                                  // not empty
		{"gen", "--sessions", "2"},                                                        // no OUT_DIR
	} {
		if code, _, _ := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", args, code, exitBadInput)
		}
	}
	if code, _, errs := runCLI(t, "gen", "--sessions", "2", "--scenarios", "qa", "--force", "--quiet", full); code != 0 {
		t.Errorf("--force into a non-empty dir: exit %d: %s", code, errs)
	}
}

// TestCorpusUpToDate: corpora/generated is exactly what `make corpus`
// writes, with the flags the Makefile gives (CORPUS_GEN).
func TestCorpusUpToDate(t *testing.T) {
	root := testutil.RepoRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CORPUS_GEN\s*:?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile has no CORPUS_GEN line")
	}
	out := filepath.Join(t.TempDir(), "generated")
	args := append(append([]string{"gen"}, strings.Fields(string(m[1]))...), "--quiet", out)
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	committed := tree(t, filepath.Join(root, "corpora", "generated"))
	if len(committed) == 0 {
		t.Fatal("corpora/generated is missing: run make corpus")
	}
	sameTree(t, tree(t, out), committed, "fresh generation vs corpora/generated (run make corpus)")

	// The shipped corpus must exercise a recorded compaction and subagents.
	boundaries, subagents := 0, 0
	for p, data := range committed {
		boundaries += bytes.Count(data, []byte(`"subtype":"compact_boundary"`))
		if strings.Contains(p, "/subagents/agent-") {
			subagents++
		}
	}
	if boundaries == 0 || subagents == 0 {
		t.Errorf("corpora/generated has %d compactions and %d subagent files; pick a CORPUS_GEN seed with both", boundaries, subagents)
	}
}
