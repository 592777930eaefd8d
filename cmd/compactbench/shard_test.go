package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want shard
		ok   bool
	}{
		{"", shard{}, true},
		{"1/1", shard{1, 1}, true},
		{"2/4", shard{2, 4}, true},
		{"4/4", shard{4, 4}, true},
		{"0/4", shard{}, false},
		{"5/4", shard{}, false},
		{"1/0", shard{}, false},
		{"-1/2", shard{}, false},
		{"2", shard{}, false},
		{"a/b", shard{}, false},
	} {
		got, err := parseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseShard(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestShardKey: a file is hashed by its path relative to its argument, so
// the split does not depend on how the argument is spelt or where it is.
func TestShardKey(t *testing.T) {
	for _, tc := range []struct {
		args []string
		path string
		want string
	}{
		{[]string{"corpora/"}, "corpora/seeds/a.jsonl", "seeds/a.jsonl"},
		{[]string{"./corpora"}, "corpora/seeds/a.jsonl", "seeds/a.jsonl"},
		{[]string{"/data/corpora"}, "/data/corpora/seeds/a.jsonl", "seeds/a.jsonl"},
		{[]string{"."}, "seeds/a.jsonl", "seeds/a.jsonl"},
		{[]string{"corpora", "corpora/seeds"}, "corpora/seeds/a.jsonl", "a.jsonl"},
		{[]string{"x/a.jsonl"}, "x/a.jsonl", "a.jsonl"},
	} {
		roots := make([]string, len(tc.args))
		for i, a := range tc.args {
			roots[i] = filepath.ToSlash(filepath.Clean(a))
		}
		if got := shardKey(roots, tc.path); got != tc.want {
			t.Errorf("shardKey(%v, %q) = %q, want %q", tc.args, tc.path, got, tc.want)
		}
	}
}

// TestShardsMerge: the shards of a corpus are disjoint and together hold
// every file; their row tables together hold the rows of one unsharded run;
// and merge writes what the unsharded run writes, byte for byte (the shipped
// corpora and, when present, the real corpus).
func TestShardsMerge(t *testing.T) {
	for _, name := range []string{"corpora", "real-corpus"} {
		t.Run(name, func(t *testing.T) {
			corpus := "../../corpora"
			if name == "real-corpus" {
				if testing.Short() {
					t.Skip("four runs of the real corpus")
				}
				corpus = testutil.RealCorpus(t)
			}
			in, err := loader.Walk([]string{corpus})
			if err != nil {
				t.Fatal(err)
			}
			const n = 3
			seen := map[string]int{}
			for k := 1; k <= n; k++ {
				for _, i := range (shard{k, n}).pick([]string{corpus}, in.Files) {
					seen[in.Files[i].Path]++
				}
			}
			for _, f := range in.Files {
				if seen[f.Path] != 1 {
					t.Errorf("%s is in %d shards", f.Path, seen[f.Path])
				}
			}

			dir := t.TempDir()
			whole := filepath.Join(dir, "whole")
			runOK(t, "run", "-q", "--no-progress", "--format", "all", "-o", whole, corpus)
			var shards []string
			for k := 1; k <= n; k++ {
				out := filepath.Join(dir, fmt.Sprintf("shard%d", k))
				shards = append(shards, out)
				runOK(t, "run", "-q", "--no-progress", "--format", "all", "--shard", fmt.Sprintf("%d/%d", k, n), "-o", out, corpus)
			}
			// Tables of rows per transcript (rules sums over the corpus).
			for _, table := range []string{"transcripts", "problems", "calls", "compact_boundaries", "runs", "events", "anchors", "labels"} {
				want := csvRows(t, filepath.Join(whole, table+".csv"))
				var got []string
				for _, s := range shards {
					got = append(got, csvRows(t, filepath.Join(s, table+".csv"))...)
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s: the shards hold %d rows, the whole run %d (or they differ)", table, len(got), len(want))
				}
			}

			// Merged in any order of arguments: the unsharded run's outputs.
			merged := filepath.Join(dir, "merged")
			slices.Reverse(shards)
			code, stdout, stderr := runCLI(t, append([]string{"merge", "--format", "all", "-o", merged}, shards...)...)
			if code != 0 {
				t.Fatalf("merge exited %d: %s", code, stderr)
			}
			_, wantStdout, _ := runCLI(t, "run", "--no-progress", "--format", "table", "-o", filepath.Join(dir, "table"), corpus)
			if stdout != wantStdout {
				t.Errorf("merge printed\n%s\nthe run printed\n%s", stdout, wantStdout)
			}
			sameOutputs(t, whole, merged)

			// A missing or repeated shard is refused.
			if code, _, stderr := runCLI(t, "merge", "-o", filepath.Join(dir, "bad"), shards[0], shards[1]); code != 2 || !strings.Contains(stderr, "missing") {
				t.Errorf("merge of 2 of 3 shards: exit %d, %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "merge", "-o", filepath.Join(dir, "bad"), shards[0], shards[0], shards[1]); code != 2 || !strings.Contains(stderr, "both shard") {
				t.Errorf("merge with a shard twice: exit %d, %s", code, stderr)
			}
		})
	}
}

func runOK(t *testing.T, args ...string) {
	t.Helper()
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("%v exited %d: %s", args, code, stderr)
	}
}

// csvRows returns a CSV table's data rows, each joined into one string
// (none when the file is missing: a shard without files writes nothing).
func csvRows(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs[1:] {
		out = append(out, strings.Join(r, "\x1f"))
	}
	return out
}
