package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactbench/compactbench/internal/plan"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// fixtures is a small corpus of hand-written Claude Code files.
const fixtures = "../../internal/loader/testdata/claudecode"

// seeds is corpora/seeds as reached from this package's directory; outputs
// carry this relative path, so golden files do not depend on the machine.
const seeds = "../../corpora/seeds"

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// runCLI runs the command line in-process.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(append([]string{"compactbench"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// readCSV returns the rows of a CSV table as column → value maps.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, name := range recs[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// testRunOptions resolves a run as the CLI does, from plan.Defaults with
// paths, out, quiet and the changes edit makes, for tests and benchmarks
// that call runCommand directly.
func testRunOptions(t testing.TB, paths []string, out string, edit func(*plan.Input)) runOptions {
	t.Helper()
	in := plan.Defaults()
	in.Paths, in.Out, in.Quiet, in.Progress = paths, out, true, false
	if edit != nil {
		edit(&in)
	}
	p, err := plan.ForRun(in)
	if err != nil {
		t.Fatal(err)
	}
	return runOptions{Run: p}
}
