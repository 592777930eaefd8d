package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestShardsMerge: for N = 2, 3 and 4 (3 only under the race detector) the shards of a corpus are disjoint
// and together hold every file; their own row tables together hold the
// rows of one unsharded run, each once (the problem rows of unusable label
// lines in shard 1's); and merge writes what the unsharded run writes, byte
// for byte, including the calibrated ruler refitted on every shard's calls
// (the shipped corpora, the seeds with an unusable label line, and the real
// corpus when present).
func TestShardsMerge(t *testing.T) {
	for _, name := range []string{"corpora", "bad-labels", "real-corpus"} {
		t.Run(name, func(t *testing.T) {
			corpus := "../../corpora"
			switch name {
			case "bad-labels":
				corpus = filepath.Join(t.TempDir(), "seeds")
				copyTree(t, "../../corpora/seeds", corpus)
				bad := "{\"transcript\": \"000-ex1-auth-bug.jsonl\", \"turn\": 1, \"type\": \"no-such-type\"}\nnot json\n"
				if err := os.WriteFile(filepath.Join(corpus, "extra.labels.jsonl"), []byte(bad), 0o644); err != nil {
					t.Fatal(err)
				}
			case "real-corpus":
				if testing.Short() {
					t.Skip("ten runs of the real corpus")
				}
				corpus = testutil.RealCorpus(t)
			}
			in, err := loader.Walk([]string{corpus})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			whole := filepath.Join(dir, "whole")
			runOK(t, "run", "-q", "--no-progress", "--format", "all", "-o", whole, corpus)
			wholeCal := calibratedCalls(t, whole)
			if name != "bad-labels" && wholeCal == 0 {
				t.Fatalf("%s: no calibration figures in summary.json: the test would not see them", corpus)
			}
			if name == "bad-labels" && !slices.ContainsFunc(csvRows(t, filepath.Join(whole, "problems.csv")), func(r string) bool {
				return strings.Contains(r, "extra.labels.jsonl")
			}) {
				t.Fatal("no problem row for the unusable label lines: the test would not see them")
			}
			_, wantStdout, _ := runCLI(t, "run", "--no-progress", "--format", "table", "-o", filepath.Join(dir, "table"), corpus)
			ns := []int{2, 3, 4}
			if raceBuild {
				ns = []int{3} // the race detector makes each run several times slower
			}
			for _, n := range ns {
				t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
					checkShards(t, corpus, in.Files, n, filepath.Join(dir, strconv.Itoa(n)), whole, wholeCal, wantStdout)
				})
			}
		})
	}
}

// checkShards runs the n shards of a corpus, checks them against the
// unsharded run's outputs in whole, merges them and compares.
func checkShards(t *testing.T, corpus string, files []loader.File, n int, dir, whole string, wholeCal int, wantStdout string) {
	seen := map[string]int{}
	for k := 1; k <= n; k++ {
		for _, i := range (shard{k, n}).pick([]string{corpus}, files) {
			seen[files[i].Path]++
		}
	}
	for _, f := range files {
		if seen[f.Path] != 1 {
			t.Errorf("%s is in %d shards", f.Path, seen[f.Path])
		}
	}
	var shards []string
	for k := 1; k <= n; k++ {
		out := filepath.Join(dir, fmt.Sprintf("shard%d", k))
		shards = append(shards, out)
		runOK(t, "run", "-q", "--no-progress", "--format", "all", "--shard", fmt.Sprintf("%d/%d", k, n), "-o", out, corpus)
		// A shard's own summary refits on its own calls only.
		if c := calibratedCalls(t, out); wholeCal > 0 && c >= wholeCal {
			t.Errorf("shard %d/%d's calibration kept %d calls, the whole run's %d", k, n, c, wholeCal)
		}
	}
	// Tables of rows per transcript (rules sums over the corpus).
	for _, table := range []string{"transcripts", "problems", "calls", "compact_boundaries", "runs", "events", "anchors", "labels", "rereads"} {
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
	if stdout != wantStdout {
		t.Errorf("merge printed\n%s\nthe run printed\n%s", stdout, wantStdout)
	}
	sameOutputs(t, whole, merged)

	// A missing or repeated shard is refused.
	if code, _, stderr := runCLI(t, append([]string{"merge", "-o", filepath.Join(dir, "bad")}, shards[1:]...)...); code != 2 || !strings.Contains(stderr, "missing") {
		t.Errorf("merge of %d of %d shards: exit %d, %s", n-1, n, code, stderr)
	}
	if code, _, stderr := runCLI(t, append([]string{"merge", "-o", filepath.Join(dir, "bad")}, append(shards, shards[0])...)...); code != 2 || !strings.Contains(stderr, "both shard") {
		t.Errorf("merge with a shard twice: exit %d, %s", code, stderr)
	}
}

// calibratedCalls is how many calls the calibrated ruler's refit in an
// output directory's summary.json kept (0 without one).
func calibratedCalls(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Rulers *struct {
			Calibration *struct {
				Calls int `json:"calls"`
			} `json:"calibration"`
		} `json:"rulers"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Rulers == nil || s.Rulers.Calibration == nil {
		return 0
	}
	return s.Rulers.Calibration.Calls
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

// TestShardCacheRefuseModelSummarizer: --cache and --shard are refused with
// a model summarizer, and the message says why.
func TestShardCacheRefuseModelSummarizer(t *testing.T) {
	dir := t.TempDir()
	for _, extra := range [][]string{{"--cache", filepath.Join(dir, "cache")}, {"--shard", "1/2"}} {
		args := append([]string{"run", "-q", "--no-progress", "--summarizer", "cache", "--llm-cache", filepath.Join(dir, "llm"),
			"-o", filepath.Join(dir, "out"), "../../corpora/seeds"}, extra...)
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "model summarizer") || !strings.Contains(stderr, "counted over the whole run") {
			t.Errorf("%v: exit %d, %s", extra, code, stderr)
		}
	}
}
