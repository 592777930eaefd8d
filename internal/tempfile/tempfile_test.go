package tempfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUnlinked checks that the file is readable and writable after its
// name is gone, that the name is gone (not on Windows), and that it was
// made in TMPDIR under the prefix.
func TestUnlinked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f, err := Unlinked("compactbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if filepath.Dir(f.Name()) != dir || !strings.HasPrefix(filepath.Base(f.Name()), "compactbench-test-") {
		t.Errorf("file %s, want compactbench-test-* in %s", f.Name(), dir)
	}
	if _, err := f.WriteAt([]byte("hello"), 3); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := f.ReadAt(got, 3); err != nil || string(got) != "hello" {
		t.Errorf("read back %q, %v", got, err)
	}
	if _, err := os.Stat(f.Name()); runtime.GOOS != "windows" && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the name is still there: %v", err)
	}
}

// TestUnlinkedError: a temporary directory that does not exist is an
// error, not a panic (the logs then keep their data in memory), and Check
// reports it.
func TestUnlinkedError(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if f, err := Unlinked("x"); err == nil {
		f.Close()
		t.Error("no error for a missing temporary directory")
	}
	if err := Check(); err == nil {
		t.Error("Check: no error for a missing temporary directory")
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if err := Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if left, _ := os.ReadDir(dir); runtime.GOOS != "windows" && len(left) != 0 {
		t.Errorf("Check left %d files", len(left))
	}
}
