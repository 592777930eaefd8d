package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRunGolden(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--no-progress", "-o", dir, fixtures)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "run/stdout.txt", []byte(stdout))
	for _, name := range []string{"transcripts.csv", "problems.csv", "summary.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "run/"+name, data)
	}
	for _, name := range []string{"transcripts.parquet", "problems.parquet"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.Contains(stderr, "read 11 files") {
		t.Errorf("stderr = %q", stderr)
	}
}

// TestRunDeterministic: the same corpus gives byte-identical outputs whatever -j is.
func TestRunDeterministic(t *testing.T) {
	inputs := []string{fixtures}
	if rc := realCorpusPath(); rc != "" {
		inputs = append(inputs, rc)
	}
	var outs [2]string
	for i, j := range []int{1, 8} {
		outs[i] = t.TempDir()
		args := append([]string{"run", "-q", "-j", strconv.Itoa(j), "-o", outs[i]}, inputs...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("-j %d: exit %d: %s", j, code, stderr)
		}
	}
	entries, _ := os.ReadDir(outs[0])
	if len(entries) < 5 {
		t.Fatalf("only %d outputs", len(entries))
	}
	for _, e := range entries {
		a, _ := os.ReadFile(filepath.Join(outs[0], e.Name()))
		b, err := os.ReadFile(filepath.Join(outs[1], e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between -j 1 and -j 8", e.Name())
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, 2, "no input paths"},
		{[]string{"run", "-o", dir, "no/such/dir"}, 2, "no/such/dir"},
		{[]string{"run", "--format", "xml", fixtures}, 2, "unknown format"},
		{[]string{"run", "--input-format", "nope", fixtures}, 2, "unknown input format"},
		{[]string{"run", "--bogus", fixtures}, 2, "bogus"},
		{[]string{"run", "-q", "--strict", "-o", dir, fixtures}, 1, "--strict"},
		{[]string{"run", "-q", "-o", dir, fixtures, "-j", "3"}, 0, ""}, // flags after paths
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d stderr %q, want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "run", "--help")
	if code != 0 || !strings.Contains(stdout, "--jobs") || !strings.Contains(stdout, "PATH...") {
		t.Errorf("run --help: exit %d\n%s", code, stdout)
	}
}

// realCorpusPath returns ../shared/real-corpus from the repository root, or "".
func realCorpusPath() string {
	rc := filepath.Join("..", "..", "..", "shared", "real-corpus")
	if _, err := os.Stat(rc); err != nil {
		return ""
	}
	return rc
}

// TestRunNotesOverfullWindow: a window no larger than a transcript's fixed
// overhead makes every call compact; run says so, and only then.
func TestRunNotesOverfullWindow(t *testing.T) {
	for _, tc := range []struct {
		window string
		note   bool
	}{{"14000", true}, {"14100", false}} { // the seeds' overheads are 14,095–14,098
		code, _, stderr := runCLI(t, "run", "--format", "csv", "--window", tc.window, "-o", t.TempDir(), seeds)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := strings.Contains(stderr, "note: 3 transcripts have a fixed overhead"); got != tc.note {
			t.Errorf("--window %s: note %v, want %v; stderr:\n%s", tc.window, got, tc.note, stderr)
		}
	}
}

// TestRunWarnsWithoutTempDir: when no temporary file can be made, a run
// still succeeds and says once on stderr that its spills stay in memory;
// with a writable TMPDIR it says nothing of it.
func TestRunWarnsWithoutTempDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		warn int
	}{
		{"missing", filepath.Join(t.TempDir(), "missing"), 1},
		{"writable", t.TempDir(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir() // made in the real TMPDIR
			t.Setenv("TMPDIR", tc.dir)
			code, _, errs := runCLI(t, "run", seeds, "-o", out, "-q", "--format", "csv")
			if n := strings.Count(errs, "warning: no temporary file can be made"); code != 0 || n != tc.warn {
				t.Errorf("exit %d, %d warnings (want %d): %s", code, n, tc.warn, errs)
			}
		})
	}
}
