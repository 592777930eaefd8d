package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestOpenSetBesideWorkers: the output set is opened on a goroutine while
// the workers start on the first files. When opening it fails (here -o
// becomes a file after the flags were checked), the run still fails with
// that error, writes nothing and leaves no temporary directory; when it
// opens late, the results are those of opening it first.
func TestOpenSetBesideWorkers(t *testing.T) {
	t.Cleanup(func() { testHook.Store(nil) })
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	setHook(func(stage, path string) {
		if stage == "open" {
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				panic(err)
			}
		}
	})
	code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "-j", "2", "-o", out, fixtures)
	if code == exitOK || code == exitInternal || !strings.Contains(stderr, "not a directory") {
		t.Errorf("output set failing to open: exit %d, stderr %.300q; want a failure naming it", code, stderr)
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "x" {
		t.Errorf("-o after the failed run: %q, %v; want the file the hook wrote", data, err)
	}
	checkNoTemp(t, parent)

	// Opened late (after the workers made their first results), the same
	// bytes as opened at once.
	want := filepath.Join(parent, "want")
	testHook.Store(nil)
	if code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "-j", "2", "--format", "csv,json", "-o", want, fixtures); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	late := filepath.Join(parent, "late")
	analysed := make(chan struct{})
	var once sync.Once
	setHook(func(stage, path string) {
		switch stage {
		case "open":
			<-analysed
		case "analyze":
			once.Do(func() { close(analysed) })
		}
	})
	if code, _, stderr := runCLI(t, "run", "-q", "--no-progress", "-j", "2", "--format", "csv,json", "-o", late, fixtures); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(want)
	if len(entries) < 5 {
		t.Fatalf("%d files in the output set", len(entries))
	}
	for _, e := range entries {
		a, _ := os.ReadFile(filepath.Join(want, e.Name()))
		b, err := os.ReadFile(filepath.Join(late, e.Name()))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs when the set opens late (%v)", e.Name(), err)
		}
	}
}
