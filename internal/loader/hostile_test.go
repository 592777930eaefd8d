package loader

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/compactbench/compactbench/internal/transcript"
)

// peakHeap runs fn and returns the largest live heap (bytes of heap
// objects) seen while it ran, sampled every millisecond, above the heap
// before it started.
func peakHeap(fn func()) int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	runtime.GC()
	base := read()
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	if h := read(); h > peak.Load() {
		peak.Store(h)
	}
	return max(0, peak.Load()-base)
}

// writeGen writes a file by streaming gen's output through the named
// compression ("", "gz" or "zst"), so that no test holds a hostile input
// in memory.
func writeGen(t *testing.T, name, compression string, gen func(w *bufio.Writer)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var w io.WriteCloser = nopCloser{f}
	switch compression {
	case "gz":
		w, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
	case "zst":
		if w, err = zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest)); err != nil {
			t.Fatal(err)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	gen(bw)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// repeat writes s n times.
func repeat(w *bufio.Writer, s string, n int) {
	for range n {
		w.WriteString(s)
	}
}

// ccLine is a valid Claude Code user record.
func ccLine(uuid, parent, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%s,"sessionId":"s","message":{"role":"user","content":%q}}`+"\n", uuid, p, text)
}

// readCounting reads path with opts, keeping every transcript's problems
// and stats but dropping its messages (as the run command does once a
// transcript is analysed).
func readCounting(t *testing.T, path string, opts Options) []*transcript.Transcript {
	t.Helper()
	var out []*transcript.Transcript
	err := ReadFile(path, opts, func(tr *transcript.Transcript) error {
		tr.Messages = nil
		out = append(out, tr)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	return out
}

// hasProblem reports whether any transcript carries a problem containing
// want.
func hasProblem(ts []*transcript.Transcript, want string) bool {
	for _, tr := range ts {
		for _, p := range tr.Problems {
			if strings.Contains(p.Reason, want) {
				return true
			}
		}
	}
	return false
}

// TestHostileShapes reads each hostile shape, generated here, and bounds
// the peak live heap while reading it: format sniffing stays linear in the
// nesting, an over-long line or value is read past without being held, a
// decompression bomb stops at the limit, and a file of millions of bad lines
// lists a bounded number of problems. Each shape must come out as problem
// rows, never as an error, a hang or a panic.
// hangLimit is how long a hostile case may read before TestHostileShapes calls
// it a hang. It guards against a loop that never ends, not against slowness
// (benchmarks measure speed): the slowest case takes about 10 s under -race on
// an idle core, and a loaded CI machine may take several times that.
const hangLimit = 5 * time.Minute

func TestHostileShapes(t *testing.T) {
	small := Limits{MaxLine: 1 << 20, MaxDecompressed: 32 << 20}
	deep := strings.Repeat("[", 64<<10)
	cases := []struct {
		name        string
		file        string
		compression string
		opts        Options
		gen         func(w *bufio.Writer)
		maxHeap     int64
		want        string // a problem reason must contain it
		minTotal    int    // at least this many problems counted
	}{
		{name: "deep nesting, JSON lines", file: "deep.jsonl", maxHeap: 16 << 20,
			gen:  func(w *bufio.Writer) { w.WriteString(ccLine("u1", "", "hi")); w.WriteString(deep + "\n") },
			want: "nested deeper than 256 levels"},
		{name: "deep nesting, sniffed", file: "deep.json", maxHeap: 16 << 20,
			gen:  func(w *bufio.Writer) { w.WriteString(deep + "\n") },
			want: "unrecognised format"},
		{name: "deep nesting, forced export", file: "conversations.json", opts: Options{Format: "claude-ai"}, maxHeap: 16 << 20,
			gen:  func(w *bufio.Writer) { w.WriteString("[" + deep) },
			want: "nested deeper than 256 levels"},
		{name: "huge line, gzip", file: "big.jsonl.gz", compression: "gz", opts: Options{Limits: small}, maxHeap: 24 << 20,
			gen: func(w *bufio.Writer) {
				w.WriteString(ccLine("u1", "", "hi"))
				w.WriteString(`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"`)
				repeat(w, strings.Repeat("a", 1<<16), 1<<10) // 64 MiB
				w.WriteString("\"}}\n")
				w.WriteString(ccLine("u3", "u1", "after"))
			},
			want: "line longer than 1 MiB (--max-line)"},
		{name: "huge value, zstd export", file: "conversations.json.zst", compression: "zst", opts: Options{Limits: small}, maxHeap: 24 << 20,
			gen: func(w *bufio.Writer) {
				w.WriteString(`[{"uuid":"c1","name":"x","chat_messages":[{"uuid":"m1","sender":"human","text":"`)
				repeat(w, strings.Repeat(`a\"b\\`, 1<<14), 1<<8) // 20 MiB of escapes
				w.WriteString(`"}]},{"uuid":"c2","chat_messages":[{"uuid":"m2","sender":"human","text":"hi"}]}]`)
			},
			want: "value longer than 1 MiB (--max-line)"},
		{name: "gzip bomb", file: "bomb.jsonl.gz", compression: "gz", opts: Options{Limits: small}, maxHeap: 24 << 20,
			gen: func(w *bufio.Writer) {
				for i := range 1 << 15 { // 32 Ki lines of 2 KiB: 64 MiB
					fmt.Fprintf(w, `{"type":"progress","uuid":"p%07d","sessionId":"s","data":{"x":"%01950d"}}`+"\n", i, 0)
				}
			},
			want: "decompresses to more than 32 MiB (--max-decompressed)"},
		{name: "zstd bomb", file: "bomb.jsonl.zst", compression: "zst", opts: Options{Limits: small}, maxHeap: 40 << 20,
			gen: func(w *bufio.Writer) {
				w.WriteString(ccLine("u1", "", "hi"))
				for range 1 << 20 {
					w.WriteString("\n") // 1 MiB of blank lines, then zeros
				}
				repeat(w, strings.Repeat("0", 1<<16)+"\n", 1<<10)
			},
			want: "decompresses to more than 32 MiB (--max-decompressed)"},
		{name: "millions of bad lines", file: "bad.jsonl", maxHeap: 32 << 20, minTotal: 2_000_000,
			gen:  func(w *bufio.Writer) { w.WriteString(ccLine("u1", "", "hi")); repeat(w, "x\n", 2_000_000) },
			want: "2000000 problems in all; only the first 1000 are listed (--max-problems)"},
		{name: "large export", file: "conversations.json", maxHeap: 24 << 20,
			gen: func(w *bufio.Writer) {
				w.WriteString("[")
				for i := range 4000 { // 4000 conversations of 16 KiB: 64 MiB
					if i > 0 {
						w.WriteString(",")
					}
					fmt.Fprintf(w, `{"uuid":"c%d","name":"n","chat_messages":[{"uuid":"m%d","sender":"human","text":"%s"}]}`, i, i, strings.Repeat("w ", 8<<10))
				}
				w.WriteString(`,{"uuid":"bad","chat_messages":[{"uuid":"q","sender":"nobody","text":"x"}]}]`)
			},
			want: "nobody"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeGen(t, c.file, c.compression, c.gen)
			var ts []*transcript.Transcript
			done := make(chan struct{})
			var peak int64
			go func() {
				defer close(done)
				peak = peakHeap(func() { ts = readCounting(t, path, c.opts) })
			}()
			select {
			case <-done:
			case <-time.After(hangLimit):
				t.Fatalf("still reading after %v: a hang, not a slow read (a case takes ~10 s under -race)", hangLimit)
			}
			t.Logf("%s: peak live heap %.1f MiB", c.name, float64(peak)/(1<<20))
			if peak > c.maxHeap {
				t.Errorf("peak live heap %d MiB, want at most %d MiB", peak>>20, c.maxHeap>>20)
			}
			if !hasProblem(ts, c.want) {
				var got []string
				for _, tr := range ts {
					for _, p := range tr.Problems[:min(3, len(tr.Problems))] {
						got = append(got, p.Reason)
					}
				}
				t.Errorf("no problem containing %q; first problems: %q", c.want, got)
			}
			total := 0
			for _, tr := range ts {
				total += len(tr.Problems) + tr.Stats.ProblemsUnlisted
				if len(tr.Problems) > DefaultMaxProblems+1 {
					t.Errorf("%s lists %d problems, want at most %d", tr.ID, len(tr.Problems), DefaultMaxProblems+1)
				}
			}
			if total < c.minTotal {
				t.Errorf("%d problems counted, want at least %d", total, c.minTotal)
			}
			for _, tr := range ts {
				if err := checkAccounting(tr, 1<<30); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestDefaultMaxLine reads a .jsonl.gz of about 1 MB holding one 300 MiB
// line with the default limits: the line is a bad record and the lines
// around it are read, and the live heap stays near the limit, not the line.
func TestDefaultMaxLine(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 300 MiB")
	}
	path := writeGen(t, "big.jsonl.gz", "gz", func(w *bufio.Writer) {
		w.WriteString(ccLine("u1", "", "before"))
		w.WriteString(`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"`)
		repeat(w, strings.Repeat("a", 1<<16), 300<<4)
		w.WriteString("\"}}\n")
		w.WriteString(ccLine("u3", "u1", "after"))
	})
	var ts []*transcript.Transcript
	peak := peakHeap(func() { ts = readCounting(t, path, Options{}) })
	t.Logf("peak live heap %.1f MiB", float64(peak)/(1<<20))
	if peak > DefaultMaxLine+64<<20 {
		t.Errorf("peak live heap %d MiB, want at most the 256 MiB limit plus 64 MiB", peak>>20)
	}
	if len(ts) != 1 || ts[0].Stats.Lines != 3 || ts[0].Stats.BadLines != 1 || ts[0].Stats.ParsedLines != 2 {
		t.Fatalf("want one transcript of 3 lines, 2 parsed and 1 bad; got %d: %+v", len(ts), ts[0].Stats)
	}
	if p := ts[0].Problems; len(p) != 1 || p[0].Line != 2 || !strings.Contains(p[0].Reason, "longer than 256 MiB") {
		t.Errorf("problems = %+v", p)
	}
}

// TestShapeOfLinear: sniffing a head of nested brackets costs time and
// memory linear in its size.
func TestShapeOfLinear(t *testing.T) {
	head := []byte(strings.Repeat("[", sniffSize))
	allocs := testing.AllocsPerRun(3, func() { shapeOf(head) })
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	start := time.Now()
	for _, f := range FormatNames() {
		ff, _ := Lookup(f)
		ff.Sniff("x.json", head)
	}
	runtime.ReadMemStats(&ms)
	if got := ms.TotalAlloc - before; got > 8<<20 {
		t.Errorf("sniffing 64 KiB of '[' allocated %d MiB, want under 8 MiB (allocs/run %v)", got>>20, allocs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("sniffing 64 KiB of '[' took %v", d)
	}
}

// TestLimitsValidate names the flag of each bad limit.
func TestLimitsValidate(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		flag string
	}{
		{Limits{MaxLine: -1}, "--max-line"},
		{Limits{MaxDepth: MaxDepthCeiling + 1}, "--max-depth"},
		{Limits{MaxDepth: -2}, "--max-depth"},
		{Limits{MaxProblems: -1}, "--max-problems"},
		{Limits{MaxProblems: maxProblemsHeld + 1}, "--max-problems"},
		{Limits{MaxDecompressed: -5}, "--max-decompressed"},
	} {
		err := c.l.Validate()
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%+v: error %v, want one naming %s", c.l, err, c.flag)
		}
	}
	if err := DefaultLimits().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestStrictUsage: a token count must be an integer in [0, 1e9]; anything
// else is a problem on its line and the call's usage counts as missing,
// never as a negative, huge or zero number.
func TestStrictUsage(t *testing.T) {
	user := ccLine("u1", "", "hi")
	asst := func(usage string) string {
		return `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":` + usage + "}}\n"
	}
	chat := func(usage string) string {
		return `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok","usage":` + usage + `}]}` + "\n"
	}
	for _, c := range []struct {
		name, usage string
		want        string // "" when the usage is valid
		input       int64
	}{
		{"valid", `{"input_tokens":10,"output_tokens":2}`, "", 10},
		{"integral float", `{"input_tokens":12.0,"output_tokens":1e3}`, "", 12},
		{"null count", `{"input_tokens":5,"cache_read_input_tokens":null}`, "", 5},
		{"negative", `{"input_tokens":10,"output_tokens":-480000000}`, "output_tokens = -480000000, want an integer from 0 to 1000000000", 0},
		{"huge", `{"input_tokens":1e12}`, "input_tokens = 1e12, want an integer", 0},
		{"fraction", `{"input_tokens":1.5}`, "input_tokens = 1.5, want an integer", 0},
		{"string", `{"input_tokens":10,"cache_read_input_tokens":"5000"}`, `cache_read_input_tokens is a string, want a number ("\"5000\"")`, 0},
		{"NaN", `{"input_tokens":NaN}`, "input_tokens is not a finite number", 0},
		{"overflow", `{"input_tokens":1e999999}`, "input_tokens is not a finite number", 0},
		{"object", `{"input_tokens":{"n":1}}`, "input_tokens is a object, want a number", 0},
		{"duplicate key, last wins", `{"input_tokens":-1,"input_tokens":7}`, "", 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []struct{ name, content, format string }{
				{"s.jsonl", user + asst(c.usage), ""},
				{"chat.jsonl", chat(c.usage), "openai-chat"},
			} {
				ts := readString(t, f.name, f.content, f.format)
				tr := ts[0]
				var last *transcript.Message
				for i := range tr.Messages {
					if tr.Messages[i].Role == transcript.RoleAssistant {
						last = &tr.Messages[i]
					}
				}
				if last == nil {
					t.Fatalf("%s: no assistant message; problems %v", f.name, tr.Problems)
				}
				if c.want == "" {
					if last.Usage == nil || last.Usage.Input != c.input || len(tr.Problems) != 0 {
						t.Errorf("%s: usage %+v, problems %v; want input %d and no problem", f.name, last.Usage, tr.Problems, c.input)
					}
					continue
				}
				if last.Usage != nil {
					t.Errorf("%s: usage %+v, want none", f.name, *last.Usage)
				}
				if !hasProblem(ts, c.want) || !hasProblem(ts, "the call's usage counts as missing") {
					t.Errorf("%s: problems %v, want one containing %q", f.name, tr.Problems, c.want)
				}
				for _, p := range tr.Problems {
					if p.Line < 1 {
						t.Errorf("%s: problem without a line: %+v", f.name, p)
					}
				}
			}
		})
	}
}

// TestDuplicateKeys: as JSON.parse, the last of duplicate keys wins, at
// any depth and in every reader.
func TestDuplicateKeys(t *testing.T) {
	cc := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"first","content":"second"}}` + "\n" +
		`{"type":"assistant","type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"user","content":"third"}}` + "\n"
	tr := readString(t, "dup.jsonl", cc, "")[0]
	if len(tr.Messages) != 2 || tr.Messages[0].Blocks[0].Text != "second" || tr.Messages[1].Role != transcript.RoleUser {
		t.Fatalf("messages %+v, problems %v", tr.Messages, tr.Problems)
	}
	// Deep in the message (a tool call's input, a result's content) too;
	// the duplicate keys of a member never read (toolUseResult) do not matter.
	cc = `{"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","message":{"id":"m","role":"assistant","model":"x","content":[` +
		`{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","description":"d","command":"pwd"}}]}}` + "\n" +
		`{"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","toolUseResult":{"k":1,"k":2},"message":{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"t1","content":"old","content":"new"}]}}` + "\n"
	tr = readString(t, "dup2.jsonl", cc, "")[0]
	if len(tr.Messages) != 2 || tr.Messages[0].Blocks[0].Input != `{"description":"d","command":"pwd"}` ||
		tr.Messages[0].Blocks[0].Command != "pwd" || tr.Messages[1].Blocks[0].Text != "new" {
		t.Fatalf("messages %+v, problems %v", tr.Messages, tr.Problems)
	}
	export := `[{"uuid":"c1","uuid":"c2","chat_messages":[{"uuid":"m1","sender":"human","text":"a","text":"b"}]}]`
	tr = readString(t, "conversations.json", export, "")[0]
	if tr.ID != "c2" || len(tr.Messages) != 1 || tr.Messages[0].Blocks[0].Text != "b" {
		t.Fatalf("export: id %s, messages %+v, problems %v", tr.ID, tr.Messages, tr.Problems)
	}
}

// TestExcerpt: reasons quote input as a short escaped excerpt.
func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 100) + "<script>\x1b[31m"
	got := excerpt([]byte(long))
	if len(got) > 300 || strings.Contains(got, "\x1b") || strings.Contains(got, "script") || !strings.HasSuffix(got, `\u2026"`) {
		t.Errorf("excerpt = %s", got)
	}
	if got := excerpt([]byte("a\nb\x00")); got != `"a\nb\x00"` {
		t.Errorf("excerpt = %s", got)
	}
}

// FuzzReadFile: ReadFile on any bytes — sniffing, detection, compression
// and every reader under small limits — accounts for the file without an
// error or a panic, lists at most MaxProblems+1 problems per transcript,
// and keeps the record accounting.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte(ccLine("u1", "", "hi") + "x\n" + strings.Repeat("[", 40) + "\n"))
	f.Add([]byte(`[{"uuid":"c","chat_messages":[{"uuid":"m","sender":"human","text":"hi"}]}]`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x","usage":{"prompt_tokens":-1}}]}`))
	f.Add([]byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}` + "\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := Options{Limits: Limits{MaxLine: 256, MaxDepth: 8, MaxProblems: 3, MaxDecompressed: 1 << 16}}
		n := 0
		err := ReadFile(path, opts, func(tr *transcript.Transcript) error {
			n++
			if len(tr.Problems) > 4 {
				t.Fatalf("%d problems listed, want at most 4", len(tr.Problems))
			}
			if tr.Format != "unknown" {
				if err := checkAccounting(tr, 1<<30); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		})
		if err != nil || n == 0 {
			t.Fatalf("ReadFile: %v, %d transcripts", err, n)
		}
	})
}
