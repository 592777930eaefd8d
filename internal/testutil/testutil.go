// Package testutil holds what the tests of several packages share: finding
// the repository root and the real corpus beside it, and measuring CPU
// time in benchmarks. Only tests import it.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot walks up from the working directory to the directory holding
// go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// RealCorpus returns ../shared/real-corpus (or a folder of it) beside the
// repository root, and skips the test with a message when it is absent: the
// real sessions are never copied into the repository.
func RealCorpus(tb testing.TB, sub ...string) string {
	tb.Helper()
	dir := filepath.Join(append([]string{RepoRoot(tb), "..", "shared", "real-corpus"}, sub...)...)
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("real corpus not found at %s (it sits beside the repository as ../shared/real-corpus); skipping", dir)
	}
	return dir
}
