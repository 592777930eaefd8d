package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadFlagValues: every numeric or config flag given a nonsense value
// is a usage error (exit 2) whose message names the flag.
func TestBadFlagValues(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"run", "-j", "0"}, "--jobs"},
		{[]string{"run", "-j", "-3"}, "--jobs"},
		{[]string{"run", "--jobs", "x"}, "jobs"},
		{[]string{"run", "--set", "codelet.rules=nosuchset"}, "codelet.rules"},
		{[]string{"run", "--set", "nosuch.x=1"}, `"nosuch"`},
		{[]string{"run", "--set", "window=-5"}, "window"},
		{[]string{"run", "--set", "mask.keep=-1"}, "mask.keep"},
		{[]string{"run", "--set", "codelet.keep_turns=-2"}, "codelet.keep_turns"},
		{[]string{"run", "--set", "truncate.target_fraction=1.5"}, "truncate.target_fraction"},
		{[]string{"run", "--set", "codelet.threshold=.nan"}, "codelet.threshold"},
		{[]string{"run", "--window", "-1"}, "--window"},
		{[]string{"run", "--max-line", "0"}, "--max-line"},
		{[]string{"run", "--max-line", "lots"}, "--max-line"},
		{[]string{"run", "--max-line", "3GiB"}, "--max-line"},
		{[]string{"run", "--max-depth", "0"}, "--max-depth"},
		{[]string{"run", "--max-depth", "400"}, "--max-depth"},
		{[]string{"run", "--max-problems", "0"}, "--max-problems"},
		{[]string{"run", "--max-decompressed", "-1"}, "--max-decompressed"},
		{[]string{"run", "--no-such-flag"}, "no-such-flag"},
		{[]string{"nosuchcmd"}, `unknown command "nosuchcmd"`},
		{[]string{"tune", "-j", "0", "--set", "mask.keep=1,2"}, "--jobs"},
		{[]string{"tune", "--set", "codelet.rules=nosuchset"}, "codelet.rules"},
		{[]string{"tune", "--set", "anchors.nosuch.threshold=0.5,0.6"}, "anchors.nosuch.threshold"},
		{[]string{"tune", "--ruler", "yardstick"}, "--ruler"},
		{[]string{"tune", "--cv", "1", "--rules", "codelet"}, "--cv"},
		{[]string{"run", "--set", "anchors.x=1"}, "anchors.x"},
		{[]string{"run", "--rules", "nosuchset"}, "--rules"},
		{[]string{"run", "--evidence", "hunch"}, "--evidence"},
		{[]string{"run", "--format", "pdf"}, "--format"},
		{[]string{"run", "--rulers", "yardstick"}, "--rulers"},
		{[]string{"run", "--ruler", "yardstick"}, "--ruler"},
		{[]string{"run", "--set", "window.ruler=yardstick"}, "window.ruler"},
		{[]string{"run", "--calibration", "/nonexistent/factors.json"}, "--calibration"},
		{[]string{"run", "--overhead", "middle"}, "--overhead"},
		{[]string{"run", "--models", "/nonexistent/models.yaml"}, "--models"},
		{[]string{"run", "--summarizer", "nosuch"}, "--summarizer"},
		{[]string{"calibrate", "-j", "-1", "-o", filepath.Join(out, "f.json")}, "--jobs"},
		{[]string{"gen", "-j", "0", "--sessions", "1", filepath.Join(out, "gen")}, "--jobs"},
		{[]string{"gen", "--sessions", "-4", filepath.Join(out, "gen")}, "--sessions"},
	} {
		args := append(c.args, "-o", out, fixtures)
		if c.args[0] == "gen" || c.args[0] == "calibrate" {
			args = c.args
			if c.args[0] == "calibrate" {
				args = append(args, fixtures)
			}
		}
		code, _, stderr := runCLI(t, args...)
		if code != exitBadInput || !strings.Contains(stderr, c.flag) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", c.args, code, stderr, c.flag)
		}
	}
	if _, err := os.Stat(out); err == nil {
		entries, _ := os.ReadDir(out)
		t.Errorf("a rejected command wrote outputs: %v", entries)
	}
}

// TestPanicOnOneFile: a panic while reading one file is a problem row for
// that file and a note on stderr; the run completes with the other files.
// A panic outside the work on one file is an internal error: exit 3.
func TestPanicOnOneFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	t.Cleanup(func() { testHook.Store(nil) })
	setHook(func(stage, path string) {
		if stage == "file" && strings.HasSuffix(path, "merge_usage.jsonl") {
			panic("boom")
		}
	})
	code, _, stderr := runCLI(t, "run", "-q", "-j", "2", "-o", out, "--format", "csv,json", fixtures)
	if code != exitOK || !strings.Contains(stderr, "please report") || !strings.Contains(stderr, "merge_usage.jsonl") {
		t.Fatalf("exit %d, stderr %q; want 0 and a note naming the file", code, stderr)
	}
	found, others := false, 0
	for _, row := range readCSV(t, filepath.Join(out, "problems.csv")) {
		if strings.HasSuffix(row["path"], "merge_usage.jsonl") && strings.Contains(row["reason"], "internal error") {
			found = true
		}
	}
	for _, row := range readCSV(t, filepath.Join(out, "transcripts.csv")) {
		if row["format"] == "claude-code" {
			others++
		}
	}
	if !found || others < 3 {
		t.Errorf("problem row found %v, %d other transcripts read", found, others)
	}

	setHook(func(stage, path string) {
		if stage == "emit" {
			panic("boom in the writer")
		}
	})
	before := listDir(t, out)
	code, _, stderr = runCLI(t, "run", "-q", "-o", out, fixtures)
	if code != exitInternal || !strings.Contains(stderr, "internal error") {
		t.Errorf("panic outside a file: exit %d, stderr %.200q; want 3", code, stderr)
	}
	if after := listDir(t, out); after != before {
		t.Errorf("the previous output set changed:\n%s\n%s", before, after)
	}
	checkNoTemp(t, filepath.Dir(out))
}

// setHook sets testHook.
func setHook(h func(stage, path string)) { testHook.Store(&h) }

// listDir renders a directory's files and sizes and modification times.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, _ := e.Info()
		fmt.Fprintf(&b, "%s %d %v\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return b.String()
}

// checkNoTemp fails when a temporary output directory or file is left in
// dir.
func checkNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), ".old-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// bigSession writes a Claude Code session of about size bytes: user
// messages, and with calls, each answered by an assistant message with
// usage (an API call every strategy replays).
func bigSession(t *testing.T, path string, size int, calls ...bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	text := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	parent := "null"
	for i, n := 0, 0; n < size; i++ {
		line := fmt.Sprintf(`{"type":"user","uuid":"u%d","parentUuid":%s,"sessionId":"big","message":{"role":"user","content":"%s"}}`+"\n", i, parent, text)
		parent = fmt.Sprintf(`"u%d"`, i)
		if len(calls) > 0 && calls[0] {
			line += fmt.Sprintf(`{"type":"assistant","uuid":"a%d","parentUuid":"u%d","sessionId":"big","message":{"id":"m%d","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"%s"}],"usage":{"input_tokens":%d,"output_tokens":50}}}`+"\n", i, i, i, text, 1000+10*i)
			parent = fmt.Sprintf(`"a%d"`, i)
		}
		w.WriteString(line)
		n += len(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestCancelInsideOneFile: cancelling the run's context stops it within a
// second even in the middle of one large transcript, exits 130, leaves no
// temporary file, and leaves the previous output set as it was.
func TestCancelInsideOneFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "run", "-q", "-o", out, "--format", "csv,json", fixtures); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	before := listDir(t, out)
	bigSession(t, filepath.Join(in, "big.jsonl"), 300<<20)

	runCancelled(t, "file", 300*time.Millisecond, "run", "-q", "-o", out, in)
	if after := listDir(t, out); after != before {
		t.Errorf("the previous output set changed:\n%s\n%s", before, after)
	}
	checkNoTemp(t, dir)
}

// TestCancelInsideAnalysis: a cancel while one long transcript is being
// replayed stops the run within a second too.
func TestCancelInsideAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a long session")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	bigSession(t, filepath.Join(in, "calls.jsonl"), 100<<20, true)
	out := filepath.Join(dir, "out")
	runCancelled(t, "analyze", 500*time.Millisecond, "run", "-q", "-o", out, in)
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted first run left an output directory")
	}
	checkNoTemp(t, dir)
}

// runCancelled runs the command under a context cancelled delay after the
// test hook first reports stage, and checks that it exits 130 within
// stopWithin of the cancel.
func runCancelled(t *testing.T, stage string, delay time.Duration, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reached := make(chan struct{})
	t.Cleanup(func() { testHook.Store(nil) })
	setHook(func(s, path string) {
		if s == stage {
			close(reached)
		}
	})
	var cancelled time.Time
	go func() {
		<-reached
		time.Sleep(delay)
		cancelled = time.Now()
		cancel()
	}()
	var outb, errb strings.Builder
	code := MainContext(ctx, append([]string{"compactbench"}, args...), &outb, &errb)
	took := time.Since(cancelled)
	if code != 130 {
		t.Errorf("exit %d, stderr %q; want 130", code, errb.String())
	}
	if took > stopWithin {
		t.Errorf("stopped %v after the cancel, want under %v", took, stopWithin)
	}
}

// TestSignal runs the command in a subprocess (this test binary) and
// sends it SIGTERM while it reads: exit 143, previous outputs untouched,
// nothing temporary left.
func TestSignal(t *testing.T) {
	if os.Getenv("COMPACTBENCH_SIGNAL_CHILD") != "" {
		os.Exit(Main(strings.Split(os.Getenv("COMPACTBENCH_SIGNAL_CHILD"), "\x1f"), os.Stdout, os.Stderr))
	}
	if testing.Short() {
		t.Skip("writes a 300 MB file")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "run", "-q", "-o", out, "--format", "csv", fixtures); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	before := listDir(t, out)
	bigSession(t, filepath.Join(in, "big.jsonl"), 300<<20)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSignal$")
		cmd.Env = append(os.Environ(), "COMPACTBENCH_SIGNAL_CHILD="+strings.Join([]string{"compactbench", "run", "-q", "-o", out, in}, "\x1f"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child is writing its output set (its signal
		// handler is installed by then), then let it read a while.
		for start := time.Now(); time.Since(start) < 60*time.Second; time.Sleep(20 * time.Millisecond) {
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.tmp-*")); len(m) > 0 {
				break
			}
		}
		time.Sleep(300 * time.Millisecond)
		sent := time.Now()
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		took := time.Since(sent)
		code := cmd.ProcessState.ExitCode()
		if code != 128+int(sig) {
			t.Errorf("%v: exit %d (%v), stderr %q; want %d", sig, code, err, stderr.String(), 128+int(sig))
		}
		if took > stopWithin {
			t.Errorf("%v: exited %v after the signal, want under %v", sig, took, stopWithin)
		}
		if after := listDir(t, out); after != before {
			t.Errorf("%v: the previous output set changed", sig)
		}
		checkNoTemp(t, dir)
	}
}

// TestOutputSetSwap: the output set is replaced whole (a run with fewer
// formats leaves no stale file), -o inside the input directory is not read
// back, and a directory of other files is refused.
func TestOutputSetSwap(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.CopyFS(in, os.DirFS(fixtures)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(in, "results")
	code, _, stderr := runCLI(t, "run", "-q", "-o", out, "--format", "csv,json,md", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first := readCSV(t, filepath.Join(out, "transcripts.csv"))
	code, _, stderr = runCLI(t, "run", "-q", "-o", out, "--format", "json", in)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "summary.json" {
		t.Errorf("after a json-only run the set holds %v, want only summary.json", entries)
	}
	// A copy of an output set elsewhere in the input is not read either.
	os.CopyFS(filepath.Join(in, "old-results"), os.DirFS(out))
	code, _, _ = runCLI(t, "run", "-q", "-o", out, "--format", "csv", in)
	if code != 0 {
		t.Fatal(code)
	}
	if again := readCSV(t, filepath.Join(out, "transcripts.csv")); len(again) != len(first) {
		t.Errorf("%d transcripts read with outputs inside the input, want %d (outputs read back as input?)", len(again), len(first))
	}
	checkNoTemp(t, in)

	other := filepath.Join(dir, "mine")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("keep me"), 0o644)
	code, _, stderr = runCLI(t, "run", "-q", "-o", other, fixtures)
	if code != exitBadInput || !strings.Contains(stderr, "notes.txt") {
		t.Errorf("-o on a directory of other files: exit %d, %q; want 2", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(other, "notes.txt")); string(data) != "keep me" {
		t.Error("a file in -o was lost")
	}
}

// TestWalkHostile: symlinks are followed (a loop once), a FIFO in a
// directory is a problem row and never opened, a FIFO named on the command
// line is exit 2, and subagent .meta.json sidecars are no problem.
func TestWalkHostile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(filepath.Join(in, "proj", "subagents"), 0o755)
	data, err := os.ReadFile(filepath.Join(fixtures, "merge_usage.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "elsewhere.jsonl"), data, 0o644)
	os.Symlink(filepath.Join(dir, "elsewhere.jsonl"), filepath.Join(in, "linked.jsonl"))
	os.Mkdir(filepath.Join(dir, "ext"), 0o755)
	os.WriteFile(filepath.Join(dir, "ext", "s.jsonl"), data, 0o644)
	os.Symlink(filepath.Join(dir, "ext"), filepath.Join(in, "extlink"))
	os.Symlink(in, filepath.Join(in, "proj", "loop"))
	os.WriteFile(filepath.Join(in, "proj", "subagents", "agent-a1.meta.json"), []byte(`{"agentType":"Explore"}`), 0o644)
	fifo := filepath.Join(in, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	out := filepath.Join(dir, "out")
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		defer close(done)
		code, _, stderr = runCLI(t, "run", "-q", "-o", out, "--format", "csv", in)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run hangs (a FIFO opened?)")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	paths := map[string]string{}
	for _, row := range readCSV(t, filepath.Join(out, "transcripts.csv")) {
		paths[filepath.Base(row["path"])] = row["format"]
	}
	if paths["linked.jsonl"] != "claude-code" || paths["s.jsonl"] != "claude-code" || len(paths) != 3 {
		t.Errorf("transcripts %v; want linked.jsonl and extlink/s.jsonl read once each, and the FIFO", paths)
	}
	var reasons []string
	for _, row := range readCSV(t, filepath.Join(out, "problems.csv")) {
		reasons = append(reasons, filepath.Base(row["path"])+": "+row["reason"])
	}
	joined := strings.Join(reasons, "\n")
	if !strings.Contains(joined, "pipe.jsonl: not a regular file (a FIFO)") || strings.Contains(joined, "meta.json") {
		t.Errorf("problems:\n%s", joined)
	}

	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		code, _, stderr = runCLI(t, "run", "-q", "-o", out, fifo)
	}()
	select {
	case <-done2:
	case <-time.After(30 * time.Second):
		t.Fatal("a FIFO named on the command line hangs the run")
	}
	if code != exitBadInput || !strings.Contains(stderr, "FIFO") {
		t.Errorf("FIFO on the command line: exit %d, %q; want 2", code, stderr)
	}
}

// TestReportEscapesInputs: file names and problem reasons from the inputs
// reach report.md and report.html as inert text, and reasons quote input
// as a short excerpt.
func TestReportEscapesInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	name := "<img src=x onerror=alert(1)>[x](javascript:alert(2))`.jsonl"
	evil := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
		`<script>alert(3)</script>` + strings.Repeat("A", 5000) + "\n" +
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":"<b>many</b>"}}}` + "\n"
	if err := os.WriteFile(filepath.Join(in, name), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "run", "-q", "-o", out, "--format", "csv,md,html", in); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"report.md", "report.html"} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		bads := []string{"<script>alert", "<img src", "<b>many"}
		if f == "report.md" {
			bads = append(bads, "[x](javascript:") // a link in Markdown, text in HTML
		}
		for _, bad := range bads {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s holds %q from the inputs unescaped", f, bad)
			}
		}
	}
	for _, row := range readCSV(t, filepath.Join(out, "problems.csv")) {
		if len(row["reason"]) > 300 {
			t.Errorf("reason of %d bytes quotes too much input: %.100s", len(row["reason"]), row["reason"])
		}
	}
}
