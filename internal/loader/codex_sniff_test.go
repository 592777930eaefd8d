package loader

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/testutil"
)

// oldCodexSniff is codex.Sniff as it was before it passed over the lines
// that cannot name a payload, kept as its oracle: it parses every line.
func oldCodexSniff(path string, head []byte) int {
	var p fastjson.Parser
	bonus := 0
	if strings.HasPrefix(baseName(path), "rollout-") {
		bonus = 1
	}
	legacyMeta := false
	lines := 0
	rest := head
	for n := 0; n < 32 && len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(rest[:i])
		rest = rest[i+1:]
		if len(line) == 0 {
			continue
		}
		lines++
		v, err := p.ParseBytes(line)
		if err != nil || v.Type() != fastjson.TypeObject {
			continue
		}
		typ := str(v, "type")
		switch {
		case v.Exists("payload") && codexTypes[typ]:
			return 10 + bonus
		case lines == 1 && typ == "" && v.Exists("id") && v.Exists("timestamp"):
			legacyMeta = true
		case legacyMeta && (v.Exists("record_type") || codexItemTypes[typ]):
			return 8 + bonus
		}
	}
	if lines == 0 {
		t := bytes.TrimSpace(head)
		if bytes.HasPrefix(t, []byte(`{"timestamp":`)) && bytes.Contains(t, []byte(`"type":"session_meta"`)) {
			return 8 + bonus
		}
	}
	return 0
}

// sameCodexSniff fails t when codex.Sniff and its oracle score head
// differently.
func sameCodexSniff(t testing.TB, path string, head []byte) {
	t.Helper()
	if got, want := (codex{}).Sniff(path, head), oldCodexSniff(path, head); got != want {
		t.Fatalf("%s: Sniff = %d, want %d (head %.200q)", path, got, want, head)
	}
}

func TestCodexSniffOracle(t *testing.T) {
	heads := []string{
		`{"timestamp":"t","type":"session_meta","payload":{}}` + "\n",
		`{"id":"x","timestamp":"t"}` + "\n" + `{"record_type":"state"}` + "\n",
		`{"id":"x","timestamp":"t"}` + "\n" + `{"type":"message","role":"user"}` + "\n",
		`{"type":"user","uuid":"u"}` + "\n" + `{"type":"response_item","p\u0061yload":{}}` + "\n",
		`{"type":"user","uuid":"u"}` + "\n" + `{"type":"response_item","payload":{}}` + "\n",
		`{"type":"user","uuid":"u"}` + "\n" + `{"type":"response_item","\u0070ayload":1}` + "\n",
		`{"type":"user","uuid":"u"}` + "\n" + `{"type":"x","payload":{}}` + "\n",
		"not json\n{\"type\":\"event_msg\",\"payload\":{}}\n",
	}
	for _, h := range heads {
		sameCodexSniff(t, "rollout-x.jsonl", []byte(h))
		sameCodexSniff(t, "x.jsonl", []byte(h))
	}
	for _, dir := range []string{"../../corpora", testutil.RealCorpus(t)} {
		for _, p := range corpusFiles(t, dir, ".jsonl", ".json") {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sameCodexSniff(t, p, data[:min(len(data), sniffSize)])
		}
	}
}

func FuzzCodexSniff(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"type\":\"event_msg\",\"p\\u0061yload\":{}}\n"))
	f.Add([]byte("{\"id\":\"x\",\"timestamp\":\"t\"}\n{\"type\":\"message\"}\n"))
	f.Fuzz(func(t *testing.T, head []byte) {
		sameCodexSniff(t, "rollout-1.jsonl", head)
	})
}

// BenchmarkSniffClaudeCodeHeads measures every format's Sniff on the heads
// of the real corpus's Claude Code files, as Detect runs them.
func BenchmarkSniffClaudeCodeHeads(b *testing.B) {
	paths, data, _ := claudeCodeCorpus(b)
	b.ReportAllocs()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for j, d := range data {
			Detect(paths[j], d[:min(len(d), sniffSize)])
		}
	}
	b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}
