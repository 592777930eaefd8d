package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/tokens"
)

func TestRunCallsTable(t *testing.T) {
	var first map[string][]byte
	for _, j := range []string{"1", "4"} {
		dir := t.TempDir()
		if code, out := runCLIJoined(t, "run", "-q", "--rulers", "all", "-j", j, "-o", dir, "testdata/rulers"); code != 0 {
			t.Fatalf("run exit %d: %s", code, out)
		}
		files := map[string][]byte{}
		for _, name := range []string{"calls.csv", "compact_boundaries.csv", "summary.json"} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
		if first == nil {
			first = files
			golden(t, "rulers/golden/"+"calls.csv", files["calls.csv"])
			golden(t, "rulers/golden/"+"compact_boundaries.csv", files["compact_boundaries.csv"])
			continue
		}
		for name, data := range files {
			if !bytes.Equal(data, first[name]) {
				t.Errorf("%s differs between -j 1 and -j %s", name, j)
			}
		}
	}
	// A hand count (chars4, ceil(UTF-16 length/4) per block): call 0's prompt
	// is the 40-char prompt (10), so the overhead is 20003 − 10; call 1 adds
	// thinking (37 chars: 10), the Bash call (4 + 42 chars: 12) and its
	// result (20 chars: 5): 19993 + 37 = 20030.
	if !bytes.Contains(first["calls.csv"], []byte(",msg_2,4,claude-opus-4-6,claude-3,20096,false,false,true,20030,")) {
		t.Errorf("call 1 chars4 estimate is not the hand count 20030:\n%s", first["calls.csv"])
	}
	var sum struct {
		Rulers struct {
			Overhead string
			Errors   map[string]struct {
				Calls    tokens.ErrStats `json:"calls"`
				Complete tokens.ErrStats `json:"complete_calls"`
				Pre      tokens.ErrStats `json:"pre_tokens"`
			}
		}
	}
	if err := json.Unmarshal(first["summary.json"], &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Rulers.Overhead != "segments" || len(sum.Rulers.Errors) != len(tokens.Names()) {
		t.Fatalf("summary rulers: %+v", sum.Rulers)
	}
	// 5 calls, 2 anchors: 3 measured, 2 of them complete (the last follows a
	// malformed line); 1 compaction with preTokens.
	for name, e := range sum.Rulers.Errors {
		if e.Calls.N != 3 || e.Complete.N != 2 || e.Pre.N != 1 {
			t.Errorf("%s: counts %d/%d/%d, want 3/2/1", name, e.Calls.N, e.Complete.N, e.Pre.N)
		}
	}
}

func TestRunRulerSubsetLeavesColumnsEmpty(t *testing.T) {
	dir := t.TempDir()
	if code, out := runCLIJoined(t, "run", "-q", "--rulers", "chars4", "-o", dir, "testdata/rulers"); code != 0 {
		t.Fatalf("run exit %d: %s", code, out)
	}
	rows, err := parquet.ReadFile[analysis.CallRow](filepath.Join(dir, "calls.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d parquet rows, want 5", len(rows))
	}
	for _, r := range rows {
		if r.EstChars4 == nil || r.EstCalibrated != nil || r.ErrO200k != nil {
			t.Errorf("row %d: chars4 %v calibrated %v o200k %v", r.CallIndex, r.EstChars4, r.EstCalibrated, r.ErrO200k)
		}
		if (r.ErrChars4 == nil) != r.Anchor {
			t.Errorf("row %d: err present %v on anchor %v", r.CallIndex, r.ErrChars4 != nil, r.Anchor)
		}
	}
}

func TestRunRulerFlagErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"prose": -1}`), 0o644)
	for _, args := range [][]string{
		{"--rulers", "chars5"},
		{"--ruler", "nope"},
		{"--overhead", "middle"},
		{"--calibration", filepath.Join(dir, "missing.json")},
		{"--calibration", bad},
	} {
		code, out := runCLIJoined(t, append(append([]string{"run", "-q", "-o", dir}, args...), "testdata/rulers")...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitBadInput, out)
		}
	}
}

// writeSessions writes n small Claude Code sessions whose real usage follows
// known per-byte rates, so that calibrate has something to fit.
func writeSessions(t *testing.T, dir string, n int) {
	for s := 0; s < n; s++ {
		var b strings.Builder
		parent := "null"
		ctx := 10000
		line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
		for k := 0; k < 30; k++ {
			u := fmt.Sprintf(`"u%d"`, k)
			prompt := strings.Repeat("word ", 3+(k*7+s)%40)
			if k == 0 || k%5 == 0 {
				line(`{"type":"user","uuid":%s,"parentUuid":%s,"sessionId":"s%d","message":{"role":"user","content":%q}}`, u, parent, s, prompt)
				parent = u
				ctx += len(prompt)/3 + 4
			}
			out := strings.Repeat("x = f(y)\n", 1+(k*13+s*5)%60)
			a := fmt.Sprintf(`"a%d"`, k)
			line(`{"type":"assistant","uuid":%s,"parentUuid":%s,"sessionId":"s%d","message":{"id":"m%d","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"cat f%d"}}],"usage":{"input_tokens":1,"cache_read_input_tokens":%d}}}`,
				a, parent, s, k, k, k, ctx-1)
			ctx += 30 + 4 + len(`Bash{"command":"cat f`)/3
			r := fmt.Sprintf(`"r%d"`, k)
			line(`{"type":"user","uuid":%s,"parentUuid":%s,"sessionId":"s%d","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}}`, r, a, s, k, out)
			parent = r
			ctx += len(out)/3 + 4
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", s)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCalibrateThenRun(t *testing.T) {
	corpus := t.TempDir()
	writeSessions(t, corpus, 4)
	out := filepath.Join(t.TempDir(), "f.json")
	code, text := runCLIJoined(t, "calibrate", "--min-support", "5", "-o", out, corpus)
	if code != 0 {
		t.Fatalf("calibrate exit %d: %s", code, text)
	}
	if !strings.Contains(text, "folder-out median") || !strings.Contains(text, "tool_output") ||
		!strings.Contains(text, "claude-4.7: no calls of this tokenizer") || !strings.Contains(text, "tokenizer claude-3") {
		t.Errorf("calibrate report lacks its tables:\n%s", text)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tokens.ParseFactors(data)
	if err != nil {
		t.Fatal(err)
	}
	f := set.Generations[tokens.GenClaude3]
	if f == nil || f.Fit == nil || len(f.Fit.Fitted) == 0 || f.Fit.Transcripts != 4 || f.Source != "fitted" {
		t.Fatalf("fit record: %+v", f)
	}
	if d := set.Generations[tokens.GenClaude47]; d == nil || d.Source != "derived" {
		t.Fatalf("claude-4.7 without calls: %+v", d)
	}
	dir := t.TempDir()
	if code, text := runCLIJoined(t, "run", "-q", "--calibration", out, "-o", dir, corpus); code != 0 {
		t.Fatalf("run --calibration exit %d: %s", code, text)
	}
	dirDefault := t.TempDir()
	runCLIJoined(t, "run", "-q", "-o", dirDefault, corpus)
	a, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	b, _ := os.ReadFile(filepath.Join(dirDefault, "summary.json"))
	var sa, sb struct {
		Meta struct {
			ConfigHash string `json:"config_hash"`
		}
	}
	json.Unmarshal(a, &sa)
	json.Unmarshal(b, &sb)
	if sa.Meta.ConfigHash == "" || sa.Meta.ConfigHash == sb.Meta.ConfigHash {
		t.Errorf("config hash does not reflect the calibration file: %q vs %q", sa.Meta.ConfigHash, sb.Meta.ConfigHash)
	}
	if code, _ := runCLIJoined(t, "calibrate", "-o", out); code != exitBadInput {
		t.Errorf("calibrate without paths: exit %d", code)
	}
	if code, text := runCLIJoined(t, "calibrate", "--input-format", "nope", "-o", out, corpus); code != exitBadInput || !strings.Contains(text, "--input-format") {
		t.Errorf("calibrate --input-format nope: exit %d: %s", code, text)
	}
}

// runCLIJoined runs the command line and returns stdout and stderr together.
func runCLIJoined(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errs := runCLI(t, args...)
	return code, out + errs
}
