package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Tests that need a program beside Go (Chromium, Node.js with DuckDB) skip
// when it is missing, unless COMPACTBENCH_REQUIRE_TOOLS is set (CI sets it
// after installing them), in which case they fail: a green CI run then
// means they ran.

// needTool skips or fails the test for a missing tool.
func needTool(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("COMPACTBENCH_REQUIRE_TOOLS") != "" {
		t.Fatalf("COMPACTBENCH_REQUIRE_TOOLS is set but "+format, args...)
	}
	t.Skipf(format, args...)
}

// chromium returns the path of a Chromium binary: $CHROMIUM, or chromium /
// chromium-browser on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	needTool(t, "Chromium is not installed (apt-get install chromium, or set CHROMIUM)")
	return ""
}

// runChromium runs headless Chromium with the flags that work on a machine
// without network or display, and returns its standard output.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr)
	}
	return out
}
