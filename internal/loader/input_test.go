package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func compress(t *testing.T, kind string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch kind {
	case "gz":
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
	case "zst":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(data)
		zw.Close()
	}
	return buf.Bytes()
}

// TestCompressedInput reads .jsonl.gz and .jsonl.zst exactly like the plain
// file, and a truncated stream yields its complete lines plus a problem.
func TestCompressedInput(t *testing.T) {
	plain := "testdata/claudecode/merge_usage.jsonl"
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	want := dump(readOne(t, plain))
	dir := t.TempDir()
	for _, kind := range []string{"gz", "zst"} {
		z := compress(t, kind, data)
		path := filepath.Join(dir, "merge_usage.jsonl."+kind)
		os.WriteFile(path, z, 0o644)
		if got := dump(readOne(t, path)); got != want {
			t.Errorf("%s: differs from the plain file:\n%s", kind, got)
		}
		cut := filepath.Join(dir, "cut.jsonl."+kind)
		os.WriteFile(cut, z[:len(z)*2/3], 0o644)
		tr := readOne(t, cut)
		if tr.Stats.Lines >= 15 {
			t.Errorf("%s truncated: read %d lines, want fewer than the 15 written", kind, tr.Stats.Lines)
		}
		found := false
		for _, p := range tr.Problems {
			found = found || strings.Contains(p.Reason, "truncated") || strings.Contains(p.Reason, "unexpected EOF")
		}
		if !found {
			t.Errorf("%s truncated: no problem reported: %+v", kind, tr.Problems)
		}
	}
}

// TestHugeLine reads a 100 MB line (real lines reach megabytes: base64 images).
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB file")
	}
	const size = 100 << 20
	var b bytes.Buffer
	b.WriteString(`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"big","message":{"role":"user","content":"Summarise this:\n`)
	chunk := strings.Repeat("all work and no play makes jack a dull boy ", 64)
	for b.Len() < size {
		b.WriteString(chunk)
	}
	b.WriteString("\"}}\n")
	b.WriteString(`{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"big","message":{"id":"m1","model":"x","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":25000000}}}` + "\n")
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := readOne(t, path)
	if len(tr.Problems) != 0 || len(tr.Messages) != 2 || len(tr.Messages[0].Blocks[0].Text) < size-1000 {
		t.Fatalf("problems %v, %d messages", tr.Problems, len(tr.Messages))
	}
	if tr.Stats.PeakContextReal != 25000000 {
		t.Errorf("peak = %d", tr.Stats.PeakContextReal)
	}
}

// TestUnknownFiles accounts for files no reader claims.
func TestUnknownFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"empty.jsonl": "",
		"notes.jsonl": "{\"event\":\"hook\",\"name\":\"x\"}\n",
		"binary.json": "\x00\x01\x02garbage",
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		tr := readOne(t, p)
		if tr.Format != "unknown" || len(tr.Problems) != 1 || tr.Problems[0].Line != 0 {
			t.Errorf("%s: format %q problems %+v, want unknown with one file-level problem", name, tr.Format, tr.Problems)
		}
	}
	tr := readOne(t, filepath.Join(dir, "missing.jsonl"))
	if !strings.Contains(tr.Problems[0].Reason, "cannot open") {
		t.Errorf("missing file: %+v", tr.Problems)
	}
}

func TestWalk(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b/s1.jsonl", "a/s2.jsonl.gz", "a/sub/s3.jsonl.zst", "a/notes.md", "a/labels.jsonl",
		"a/x.labels.jsonl", ".git/objects/o.json", ".codex/sessions/r.jsonl", "c/t.traj", "c/export.zip"} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("{}\n"), 0o644)
	}
	in, err := Walk([]string{dir, filepath.Join(dir, "a/notes.md"), filepath.Join(dir, "b")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range in.Files {
		got = append(got, strings.TrimPrefix(f.Path, filepath.ToSlash(dir)+"/"))
	}
	want := ".codex/sessions/r.jsonl a/notes.md a/s2.jsonl.gz a/sub/s3.jsonl.zst b/s1.jsonl c/export.zip c/t.traj"
	if strings.Join(got, " ") != want {
		t.Errorf("files = %v\nwant      %v", got, want)
	}
	if len(in.Labels) != 2 || !strings.HasSuffix(in.Labels[0], "a/labels.jsonl") {
		t.Errorf("labels = %v", in.Labels)
	}
	if _, err := Walk([]string{filepath.Join(dir, "nope")}); err == nil {
		t.Error("a missing input path is an error")
	}
}

// TestWalkSkipsOutputSets checks that a directory holding a compactbench
// output set (a summary.json whose meta names compactbench) is not walked,
// and that other directories, with another summary.json or none, are.
func TestWalkSkipsOutputSets(t *testing.T) {
	set := "{\n  \"schema_version\": 3,\n  \"meta\": {\n    \"tool\": \"compactbench\"\n  }\n}\n"
	cases := []struct {
		name    string
		summary string // "" writes no summary.json
		walked  bool
	}{
		{"output set", set, false},
		{"other summary", `{"tool": "something else"}`, true},
		{"summary.json as a directory", "dir", true},
		{"no summary", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sub := filepath.Join(dir, "out")
			os.MkdirAll(sub, 0o755)
			os.WriteFile(filepath.Join(sub, "s.jsonl"), []byte("{}\n"), 0o644)
			switch c.summary {
			case "":
			case "dir":
				os.MkdirAll(filepath.Join(sub, "summary.json"), 0o755)
			default:
				os.WriteFile(filepath.Join(sub, "summary.json"), []byte(c.summary), 0o644)
			}
			in, err := Walk([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			walked := slices.ContainsFunc(in.Files, func(f File) bool { return strings.HasSuffix(f.Path, "/out/s.jsonl") })
			if walked != c.walked {
				t.Errorf("files %v: walked = %v, want %v", in.Files, walked, c.walked)
			}
		})
	}
}

// TestOrdered checks emission order under random completion order, the
// bound on items in flight, and error propagation.
func TestOrdered(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		var inflight, peak atomic.Int64
		var got []int
		err := Ordered(context.Background(), 200, workers, func(ctx context.Context, i int) (int, error) {
			n := inflight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return i * i, nil
		}, func(i, r int) error {
			inflight.Add(-1)
			if r != i*i {
				t.Errorf("result %d for item %d", r, i)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("workers=%d: emitted %d at position %d", workers, v, i)
			}
		}
		if len(got) != 200 {
			t.Fatalf("emitted %d items", len(got))
		}
		// The window's items, and the one emit is writing (its slot is
		// freed before emit is called).
		if p := peak.Load(); p > int64(windowPerWorker*workers+1) {
			t.Errorf("workers=%d: %d items in flight, bound is %d", workers, p, windowPerWorker*workers+1)
		}
	}
	boom := errors.New("boom")
	err := Ordered(context.Background(), 100, 4, func(ctx context.Context, i int) (int, error) {
		if i == 37 {
			return 0, boom
		}
		return i, nil
	}, func(int, int) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("work error = %v", err)
	}
	err = Ordered(context.Background(), 100, 4, func(ctx context.Context, i int) (int, error) { return i, nil },
		func(i, _ int) error {
			if i == 10 {
				return boom
			}
			return nil
		})
	if !errors.Is(err, boom) {
		t.Errorf("emit error = %v", err)
	}
}

// TestOrderedBySize checks OrderedBySize by what can be seen from outside,
// from the start and emit events it records:
//
//   - every item starts once and is emitted once, in index order, with its
//     own result;
//   - at no moment are more than the window's items, and the one being
//     emitted, started and not yet emitted;
//   - with one worker (its start order is fixed), each start is, among the
//     window's items from the lowest one not started yet, one that no
//     unstarted item there is larger than, the lowest index among equals.
//
// The sizes are random with many ties, and a few large items that must
// jump ahead of the smaller ones below them.
func TestOrderedBySize(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		r := rand.New(rand.NewPCG(uint64(workers), 7))
		n := 400
		sizes := make([]int64, n)
		for i := range sizes {
			sizes[i] = r.Int64N(8)
		}
		sizes[40], sizes[90], sizes[91] = 1000, 1000, 1000
		window := windowPerWorker * workers

		var mu sync.Mutex
		var starts []int // in the order they were recorded
		inflight, peak := 0, 0
		started := make([]int, n)
		emitted := 0
		err := OrderedBySize(context.Background(), n, workers, func(i int) int64 { return sizes[i] },
			func(ctx context.Context, i int) (int, error) {
				mu.Lock()
				starts = append(starts, i)
				started[i]++
				inflight++
				peak = max(peak, inflight)
				mu.Unlock()
				if workers > 1 {
					time.Sleep(time.Duration(r2(i)) * time.Microsecond) // completion order varies
				}
				return -i, nil
			}, func(i, res int) error {
				mu.Lock()
				inflight--
				mu.Unlock()
				if i != emitted || res != -i {
					t.Errorf("workers=%d: emitted item %d (result %d), want item %d", workers, i, res, emitted)
				}
				emitted++
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if emitted != n {
			t.Errorf("workers=%d: emitted %d of %d", workers, emitted, n)
		}
		for i, c := range started {
			if c != 1 {
				t.Errorf("workers=%d: item %d started %d times", workers, i, c)
			}
		}
		// The window bounds the items in flight plus the one being emitted.
		if peak > window+1 {
			t.Errorf("workers=%d: %d items in flight, the bound is the window (%d) and the one being emitted", workers, peak, window)
		}
		if workers != 1 {
			continue
		}
		begun := make([]bool, n)
		low := 0
		for k, i := range starts {
			for low < n && begun[low] {
				low++
			}
			if i < low || i >= low+window {
				t.Fatalf("start %d: item %d, outside the window [%d, %d)", k, i, low, low+window)
			}
			for j := low; j < min(n, low+window); j++ {
				if !begun[j] && j != i && (sizes[j] > sizes[i] || sizes[j] == sizes[i] && j < i) {
					t.Fatalf("start %d: item %d (size %d) started before item %d (size %d) of the same window", k, i, sizes[i], j, sizes[j])
				}
			}
			begun[i] = true
		}
		for _, big := range []int{40, 90, 91} {
			if k := slices.Index(starts, big); k >= big {
				t.Errorf("the large item %d started %dth, not before the smaller items below it", big, k)
			}
		}
	}
}

// TestOrderedWorksWhileEmitting checks that a worker starts the next item
// while emit writes one: emit of item 0 waits until the item past a full
// window has started. Had the slot been freed only after emit returned, the
// window would stay full meanwhile and the run would stall.
func TestOrderedWorksWhileEmitting(t *testing.T) {
	for _, workers := range []int{1, 2} {
		window := windowPerWorker * workers
		started := make(chan struct{})
		err := Ordered(context.Background(), window+1, workers, func(ctx context.Context, i int) (int, error) {
			if i == window {
				close(started)
			}
			return i, nil
		}, func(i, _ int) error {
			if i == 0 {
				select {
				case <-started:
				case <-time.After(5 * time.Second):
					return fmt.Errorf("workers=%d: item %d did not start while item 0 was emitted", workers, window)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// r2 is a fixed pseudo-random delay for item i, in microseconds.
func r2(i int) int { return (i * 7919) % 300 }

// TestOrderedUnbounded runs Ordered over as many items as an int holds,
// stopped by emit (as gen --bytes does): nothing may be sized by n.
func TestOrderedUnbounded(t *testing.T) {
	enough := errors.New("enough")
	for _, size := range []func(int) int64{nil, func(i int) int64 { return int64(i % 5) }} {
		emitted := 0
		err := OrderedBySize(context.Background(), math.MaxInt, 2, size,
			func(ctx context.Context, i int) (int, error) { return i, nil },
			func(i, r int) error {
				if i != emitted || r != i {
					t.Errorf("emitted item %d (result %d), want %d", i, r, emitted)
				}
				emitted++
				if emitted == 1000 {
					return enough
				}
				return nil
			})
		if !errors.Is(err, enough) {
			t.Errorf("err = %v, want the emit error", err)
		}
	}
}
