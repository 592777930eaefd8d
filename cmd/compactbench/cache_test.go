package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/testutil"
)

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameOutputs fails unless two output directories hold the same files with
// the same bytes.
func sameOutputs(t *testing.T, a, b string) {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				rel, _ := filepath.Rel(dir, p)
				out[rel] = data
			}
			return err
		})
		return out
	}
	fa, fb := read(a), read(b)
	if len(fa) == 0 {
		t.Fatalf("%s: no outputs", a)
	}
	for name, data := range fa {
		if other, ok := fb[name]; !ok {
			t.Errorf("%s is in %s only", name, a)
		} else if !bytes.Equal(data, other) {
			t.Errorf("%s differs between %s and %s", name, a, b)
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			t.Errorf("%s is in %s only", name, b)
		}
	}
}

var cacheLine = regexp.MustCompile(`cache .*: (\d+) files reused, (\d+) analysed`)

// cachedRun runs the run command with a cache and returns how many files it
// reused and analysed.
func cachedRun(t *testing.T, cache, out string, args ...string) (reused, analysed int) {
	t.Helper()
	reused, analysed, corrupt := cachedRunCorrupt(t, cache, out, args...)
	if corrupt != 0 {
		t.Errorf("%d corrupt cache entries", corrupt)
	}
	return reused, analysed
}

var corruptLine = regexp.MustCompile(`warning: cache .*: (\d+) corrupt entries ignored`)

// cachedRunCorrupt is cachedRun that also returns how many corrupt entries
// the run warned about.
func cachedRunCorrupt(t *testing.T, cache, out string, args ...string) (reused, analysed, corrupt int) {
	t.Helper()
	code, _, stderr := runCLI(t, append([]string{"run", "--no-progress", "--format", "all", "--cache", cache, "-o", out}, args...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	m := cacheLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no cache line in %q", stderr)
	}
	reused, _ = strconv.Atoi(m[1])
	analysed, _ = strconv.Atoi(m[2])
	if m := corruptLine.FindStringSubmatch(stderr); m != nil {
		corrupt, _ = strconv.Atoi(m[1])
	}
	return reused, analysed, corrupt
}

func plainRun(t *testing.T, out string, args ...string) {
	t.Helper()
	code, _, stderr := runCLI(t, append([]string{"run", "--no-progress", "--format", "all", "-q", "-o", out}, args...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
}

// TestRunCache: a warm run reuses every file and writes what a cold run
// writes; a changed file, a new file and a corrupt entry are analysed again
// and only they; the outputs always equal a run without the cache.
func TestRunCache(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	copyTree(t, "../../corpora", corpus)
	cache := filepath.Join(dir, "cache")
	nfiles := countInputs(t, corpus)

	plainRun(t, filepath.Join(dir, "plain"), corpus)
	if r, a := cachedRun(t, cache, filepath.Join(dir, "cold"), corpus); r != 0 || a != nfiles {
		t.Fatalf("cold run: %d reused, %d analysed; want 0, %d", r, a, nfiles)
	}
	if r, a := cachedRun(t, cache, filepath.Join(dir, "warm"), corpus); r != nfiles || a != 0 {
		t.Fatalf("warm run: %d reused, %d analysed; want %d, 0", r, a, nfiles)
	}
	sameOutputs(t, filepath.Join(dir, "plain"), filepath.Join(dir, "cold"))
	sameOutputs(t, filepath.Join(dir, "plain"), filepath.Join(dir, "warm"))

	// Change one session (drop its last line), add another.
	changed := firstSession(t, corpus)
	data, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	if err := os.WriteFile(changed, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(changed), "added-copy.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	plainRun(t, filepath.Join(dir, "plain2"), corpus)
	if r, a := cachedRun(t, cache, filepath.Join(dir, "grown"), corpus); r != nfiles-1 || a != 2 {
		t.Fatalf("after changing one file and adding one: %d reused, %d analysed; want %d, 2", r, a, nfiles-1)
	}
	sameOutputs(t, filepath.Join(dir, "plain2"), filepath.Join(dir, "grown"))

	// Corrupt every entry in a different way: each is ignored, never read.
	entries, _ := filepath.Glob(filepath.Join(cache, "*", "*.bin"))
	if len(entries) < 3 {
		t.Fatalf("cache holds %d entries", len(entries))
	}
	for i, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0: // a flipped digit in the payload (the checksum catches it)
			if k := bytes.IndexAny(data[bytes.IndexByte(data, '\n'):], "123456789"); k >= 0 {
				data[bytes.IndexByte(data, '\n')+k] ^= 1
			}
		case 1: // truncated
			data = data[:len(data)/2]
		case 2: // another file's entry under this key
			other, _ := os.ReadFile(entries[(i+1)%len(entries)])
			data = other
		}
		if err := os.WriteFile(e, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r, a, c := cachedRunCorrupt(t, cache, filepath.Join(dir, "corrupt"), corpus); r != 0 || a != nfiles+1 || c != nfiles+1 {
		t.Fatalf("with every entry corrupt: %d reused, %d analysed, %d corrupt warned; want 0, %d, %d", r, a, c, nfiles+1, nfiles+1)
	}
	if r, a := cachedRun(t, cache, filepath.Join(dir, "rewritten"), corpus); r != nfiles+1 || a != 0 {
		t.Fatalf("after the corrupt entries were rewritten: %d reused, %d analysed; want %d, 0", r, a, nfiles+1)
	}
	sameOutputs(t, filepath.Join(dir, "plain2"), filepath.Join(dir, "corrupt"))

	// Another configuration does not read this one's entries.
	if r, _ := cachedRun(t, cache, filepath.Join(dir, "w60k"), "--window", "60000", corpus); r != 0 {
		t.Fatalf("--window 60000 reused %d entries of the default configuration", r)
	}
}

// TestRunCacheStale: entries of another compactbench version or build are
// never read (every file is analysed again, and no entry counts as corrupt),
// and they do not disturb the entries of the current one.
func TestRunCacheStale(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "seeds")
	copyTree(t, "../../corpora/seeds", corpus)
	nfiles := countInputs(t, corpus)
	cache := filepath.Join(dir, "cache")
	if _, a := cachedRun(t, cache, filepath.Join(dir, "cold"), corpus); a != nfiles {
		t.Fatalf("cold run analysed %d of %d files", a, nfiles)
	}
	build, err := buildID()
	if err != nil {
		t.Fatal(err)
	}
	savedVersion := version
	t.Cleanup(func() { version, buildHash = savedVersion, build })
	for _, tc := range []struct {
		name           string
		version, build string
	}{
		{"other version", "v0.0.0-other", build},
		{"other build", savedVersion, "0000other"},
	} {
		version, buildHash = tc.version, tc.build
		if r, a := cachedRun(t, cache, filepath.Join(dir, "stale"), corpus); r != 0 || a != nfiles {
			t.Errorf("%s: %d reused, %d analysed; want 0, %d", tc.name, r, a, nfiles)
		}
	}
	version, buildHash = savedVersion, build
	if r, a := cachedRun(t, cache, filepath.Join(dir, "warm"), corpus); r != nfiles || a != 0 {
		t.Fatalf("back on this build: %d reused, %d analysed; want %d, 0", r, a, nfiles)
	}
	sameOutputs(t, filepath.Join(dir, "cold"), filepath.Join(dir, "warm"))
}

// TestRunCacheRealCorpus: warm == cold on the shared corpus of real sessions.
func TestRunCacheRealCorpus(t *testing.T) {
	corpus := testutil.RealCorpus(t)
	if testing.Short() {
		t.Skip("three runs of the real corpus")
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	plainRun(t, filepath.Join(dir, "plain"), corpus)
	cachedRun(t, cache, filepath.Join(dir, "cold"), corpus)
	if r, a := cachedRun(t, cache, filepath.Join(dir, "warm"), corpus); a != 0 || r == 0 {
		t.Fatalf("warm run: %d reused, %d analysed", r, a)
	}
	sameOutputs(t, filepath.Join(dir, "plain"), filepath.Join(dir, "cold"))
	sameOutputs(t, filepath.Join(dir, "plain"), filepath.Join(dir, "warm"))
}

func countInputs(t *testing.T, dir string) int {
	t.Helper()
	var n int
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "labels.jsonl") &&
			(strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".traj")) {
			n++
		}
		return err
	})
	return n
}

// firstSession is the first .jsonl transcript (not a label file) under dir.
func firstSession(t *testing.T, dir string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && found == "" && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.HasSuffix(p, "labels.jsonl") {
			found = p
		}
		return err
	})
	if found == "" {
		t.Fatal("no session under " + dir)
	}
	return found
}

// BenchmarkRunWarm is a warm `run --cache` (-j 1) over a generated corpus
// (COMPACTBENCH_WARM_BYTES, 32MiB by default; made in a temporary
// directory) next to a cold run without a cache: cpu-ms/op is the warm
// run's process CPU time, and the cold run's is reported as cold-cpu-ms,
// so warm/cold reads directly. In a -cpuprofile the warm runs carry the
// label run=warm (pprof -tagfocus run=warm).
func BenchmarkRunWarm(b *testing.B) {
	size := os.Getenv("COMPACTBENCH_WARM_BYTES")
	if size == "" {
		size = "32MiB"
	}
	dir := b.TempDir()
	corpus, cache := filepath.Join(dir, "corpus"), filepath.Join(dir, "cache")
	if code, _, errs := runCLI(b, "gen", "--bytes", size, "--quiet", corpus); code != 0 {
		b.Fatalf("gen: exit %d: %s", code, errs)
	}
	run := func(args ...string) {
		b.Helper()
		args = append([]string{"run", "-q", "--no-progress", "-j", "1", "-o", filepath.Join(dir, "out")}, args...)
		if code, _, errs := runCLI(b, append(args, corpus)...); code != 0 {
			b.Fatalf("exit %d: %s", code, errs)
		}
	}
	cpu := testutil.CPUTime()
	run()
	cold := testutil.CPUTime() - cpu
	run("--cache", cache)
	b.ReportAllocs()
	b.ResetTimer()
	cpu = testutil.CPUTime()
	pprof.Do(context.Background(), pprof.Labels("run", "warm"), func(context.Context) {
		for i := 0; i < b.N; i++ {
			run("--cache", cache)
		}
	})
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(cold)/1e6, "cold-cpu-ms")
}

// TestRunCacheStatIndex: a warm run takes unchanged inputs' content hashes
// from the stat index without reading them; a file rewritten with the same
// size and its old modification time is read again (its status-change time
// moved) and only it is analysed; a damaged index costs hashing, never a
// wrong result; files written just before they are hashed are not recorded.
func TestRunCacheStatIndex(t *testing.T) {
	if _, ok := statOf(mustStat(t, "cache_test.go")); !ok {
		t.Skip("no stat index on this platform")
	}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "seeds")
	copyTree(t, "../../corpora/seeds", corpus)
	nfiles := countInputs(t, corpus)
	cache := filepath.Join(dir, "cache")

	// Freshly written files are racy: hashed every time, never recorded.
	cachedRun(t, cache, filepath.Join(dir, "racy"), corpus)
	if n := len(openStatIndex(cache).m); n != 0 {
		t.Fatalf("%d files written within the racy window were recorded", n)
	}

	saved := racyWindow
	t.Cleanup(func() { racyWindow = saved })
	racyWindow = 0
	time.Sleep(50 * time.Millisecond) // past the files' timestamp tick
	plainRun(t, filepath.Join(dir, "plain"), corpus)
	cachedRun(t, cache, filepath.Join(dir, "cold"), corpus)
	if n := len(openStatIndex(cache).m); n < nfiles {
		t.Fatalf("the index holds %d of %d inputs", n, nfiles)
	}
	hashed := filesHashed.Load()
	if r, a := cachedRun(t, cache, filepath.Join(dir, "warm"), corpus); r != nfiles || a != 0 {
		t.Fatalf("warm run: %d reused, %d analysed; want %d, 0", r, a, nfiles)
	}
	if n := filesHashed.Load() - hashed; n != 0 {
		t.Errorf("the warm run hashed %d unchanged files", n)
	}
	sameOutputs(t, filepath.Join(dir, "plain"), filepath.Join(dir, "warm"))

	// Same size, same modification time, other content.
	changed := firstSession(t, corpus)
	fi := mustStat(t, changed)
	data, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("Please"))
	if i < 0 {
		t.Fatalf("%s: no \"Please\"", changed)
	}
	copy(data[i:], "PLEASE")
	time.Sleep(50 * time.Millisecond)
	if err := os.WriteFile(changed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(changed, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after := mustStat(t, changed); after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the rewrite changed the size or the modification time")
	}
	plainRun(t, filepath.Join(dir, "plain2"), corpus)
	hashed = filesHashed.Load()
	if r, a := cachedRun(t, cache, filepath.Join(dir, "rewritten"), corpus); r != nfiles-1 || a != 1 {
		t.Fatalf("after a same-size rewrite: %d reused, %d analysed; want %d, 1", r, a, nfiles-1)
	}
	if n := filesHashed.Load() - hashed; n != 1 {
		t.Errorf("hashed %d files, want the rewritten one", n)
	}
	sameOutputs(t, filepath.Join(dir, "plain2"), filepath.Join(dir, "rewritten"))

	// A damaged index: cut in the middle of a record, then garbage.
	ixPath := filepath.Join(cache, statIndexName)
	ix, err := os.ReadFile(ixPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{ix[:len(ix)/2], append(bytes.Clone(ix[:len(ix)/3]), "\xff\xff\xff\xff garbage"...)} {
		if err := os.WriteFile(ixPath, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if r, a := cachedRun(t, cache, filepath.Join(dir, "damaged"), corpus); r != nfiles || a != 0 {
			t.Fatalf("damaged index: %d reused, %d analysed; want %d, 0", r, a, nfiles)
		}
		sameOutputs(t, filepath.Join(dir, "plain2"), filepath.Join(dir, "damaged"))
		// The damaged run rewrote the log from what it could read and
		// recorded the rest again, so the next warm run hashes nothing
		// (before, records appended after a damaged one were never read).
		if n := len(openStatIndex(cache).m); n < nfiles {
			t.Fatalf("after a damaged index: %d files recorded, want %d", n, nfiles)
		}
		before := filesHashed.Load()
		if r, a := cachedRun(t, cache, filepath.Join(dir, "recovered"), corpus); r != nfiles || a != 0 {
			t.Fatalf("recovered index: %d reused, %d analysed; want %d, 0", r, a, nfiles)
		}
		if n := filesHashed.Load() - before; n != 0 {
			t.Fatalf("recovered index: hashed %d files, want 0", n)
		}
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
