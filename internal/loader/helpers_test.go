package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// readPath reads a file with ReadFile and returns its transcripts.
func readPath(t testing.TB, path, format string) []*transcript.Transcript {
	t.Helper()
	var out []*transcript.Transcript
	err := ReadFile(path, Options{Format: format}, func(tr *transcript.Transcript) error {
		out = append(out, tr)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return out
}

// readString writes content to a temp file named name and reads it.
func readString(t testing.TB, name, content, format string) []*transcript.Transcript {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return readPath(t, p, format)
}

// one reads content and requires exactly one transcript.
func one(t testing.TB, name, content, format string) *transcript.Transcript {
	t.Helper()
	ts := readString(t, name, content, format)
	if len(ts) != 1 {
		t.Fatalf("got %d transcripts, want 1", len(ts))
	}
	return ts[0]
}

// realCorpus returns the real corpus folder (../shared/real-corpus from the
// repository root) or skips the test when it is absent.
func realCorpus(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root (go.mod) not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "real-corpus", sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real corpus folder %s is absent; skipping", p)
	}
	return p
}

// corpusFiles lists the files under dir whose names end in one of exts.
func corpusFiles(t testing.TB, dir string, exts ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no %v files under %s", exts, dir)
	}
	return out
}
