package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStrategiesCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "strategies")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "strategies/stdout.txt", []byte(stdout))
	// The listing is a strategies file: it reads back.
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "strategies", "--config", path); code != 0 {
		t.Errorf("the listing does not read back as a config: %s", stderr)
	}
}

// TestRunReplayGolden: once mode compacts every fixture at its end, so the
// runs and events tables have rows for every strategy that can compact.
func TestRunReplayGolden(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "run", "-q", "--mode", "once", "-o", dir, fixtures)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"runs.csv", "events.csv"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "replay/"+name, data)
	}
}

func TestRunReplayFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	os.WriteFile(cfg, []byte("params:\n  window:\n    keep: 3\n"), 0o644)
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", "--strategies", "window,nope", fixtures}, 2, `unknown strategy "nope"`},
		{[]string{"run", "--set", "mask.keep", fixtures}, 2, "want STRATEGY.PARAM=VALUE"},
		{[]string{"run", "--set", "mask.kep=3", fixtures}, 2, `no parameter "kep"`},
		{[]string{"run", "--mode", "twice", fixtures}, 2, "want replay or once"},
		{[]string{"run", "--config", cfg, fixtures}, 2, "params.window (from line 3)"},
		{[]string{"run", "--config", filepath.Join(dir, "missing.yaml"), fixtures}, 2, "missing.yaml"},
		{[]string{"run", "-q", "-o", filepath.Join(dir, "out"), "--strategies", "window,mask", "--set", "mask.keep=2", "--window", "50000", fixtures}, 0, ""},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	runs, _ := os.ReadFile(filepath.Join(dir, "out", "runs.csv"))
	if n := strings.Count(string(runs), ",mask,") + strings.Count(string(runs), ",window,"); n == 0 || strings.Contains(string(runs), ",codelet,") {
		t.Errorf("--strategies window,mask: runs.csv =\n%s", runs)
	}
}
