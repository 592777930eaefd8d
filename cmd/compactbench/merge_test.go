package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// writeShardFile writes a shard file holding the given lines.
func writeShardFile(t *testing.T, dir string, lines ...any) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, shardFile))
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := zstd.NewWriter(f)
	enc := json.NewEncoder(zw)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMergeUsageErrors: a merge that cannot combine its shards exits 2
// before it writes anything (the output directory is not created).
func TestMergeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	head := func(k, n int, build string) shardHeader {
		return shardHeader{Format: shardFormat, K: k, N: n, Build: build}
	}
	writeShardFile(t, filepath.Join(dir, "a1"), head(1, 2, "x"))
	writeShardFile(t, filepath.Join(dir, "a2"), head(2, 2, "x"))
	writeShardFile(t, filepath.Join(dir, "other2"), head(2, 2, "y"))
	writeShardFile(t, filepath.Join(dir, "old"), map[string]string{"format": "compactbench-shard/1"})
	writeShardFile(t, filepath.Join(dir, "empty"))
	writeShardFile(t, filepath.Join(dir, "bad-rules"), shardHeader{Format: shardFormat, K: 1, N: 1,
		RuleSets: []shardRuleSet{{Name: "r", Origin: "r.yaml", Source: []byte("rules: [")}}})
	in := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	for _, c := range []struct {
		name string
		dirs []string
		text string
		code int
	}{
		{"no directories", nil, "no shard directories", 2},
		{"not a shard directory", in("nothing"), "run --shard", 2},
		{"old format", in("old"), "not a " + shardFormat, 2},
		{"no header", in("empty"), "no header", 2},
		{"missing shard", in("a1"), "shards missing: 2/2", 2},
		{"repeated shard", in("a1", "a2", "a1"), "both shard 1/2", 2},
		{"different runs", in("a1", "other2"), "different runs", 2},
		// A rule set that no longer parses exits 1 (a failure found), as
		// before the merge command was split into steps.
		{"bad rule set", in("bad-rules"), "rule set r", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			code, stdout, stderr := runCLI(t, append([]string{"merge", "-q", "-o", out}, c.dirs...)...)
			if code != c.code || !strings.Contains(stderr, c.text) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, c.code, c.text)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("merge created its output directory (%v)", err)
			}
		})
	}
}
