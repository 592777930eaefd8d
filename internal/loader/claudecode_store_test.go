package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNodeList adds and drops nodes across chunk boundaries: indices keep
// their nodes, and past the first chunk (which grows as a slice) a node's
// address never moves.
func TestNodeList(t *testing.T) {
	var l nodeList
	var addrs []*node
	for i := range 3*nodeChunk + 5 {
		nd := l.add(nodeUser)
		nd.line = i
		addrs = append(addrs, nd)
		if i%7 == 0 { // a bad record: added, then dropped
			l.drop()
			nd = l.add(nodeAssistant)
			nd.line = i
			addrs[i] = nd
		}
	}
	if l.len() != len(addrs) {
		t.Fatalf("len = %d, want %d", l.len(), len(addrs))
	}
	for i, want := range addrs {
		if got := l.at(i); got.line != i || (i >= nodeChunk && got != want) {
			t.Fatalf("node %d: %p line %d, want %p line %d", i, got, got.line, want, i)
		}
		if wantKind := nodeUser; i%7 == 0 && l.at(i).kind != nodeAssistant || i%7 != 0 && l.at(i).kind != wantKind {
			t.Fatalf("node %d: kind %d", i, l.at(i).kind)
		}
	}
}

// TestRecordStrings: flush sets every field added, texts and short strings
// alike, from bytes that may be overwritten afterwards; reset sets none.
func TestRecordStrings(t *testing.T) {
	var a recordStrings
	fields := make([]string, 6)
	buf := []byte("uuid-1|some text|Bash|")
	a.add(&fields[0], buf[0:6])
	a.addText(&fields[1], buf[7:16])
	a.add(&fields[2], buf[17:21])
	a.add(&fields[3], nil)
	start := len(a.scratch)
	a.scratch = strconv.AppendQuote(a.scratch, "input")
	a.addText(&fields[4], a.scratch[start:])
	a.flush()
	copy(buf, "XXXXXXXXXXXXXXXXXXXXXX") // the parser's bytes are reused
	want := []string{"uuid-1", "some text", "Bash", "", `"input"`, ""}
	for i := range want {
		if fields[i] != want[i] {
			t.Errorf("field %d = %q, want %q", i, fields[i], want[i])
		}
	}
	a.add(&fields[5], []byte("dropped"))
	a.reset()
	a.flush()
	if fields[5] != "" {
		t.Errorf("a reset field was set: %q", fields[5])
	}
}

// TestResultJoin: a tool_result's content list becomes its texts joined
// by newlines, a newline before each text unless the text so far is empty.
func TestResultJoin(t *testing.T) {
	tests := []struct {
		parts string
		want  string
	}{
		{`"a"`, "a"},
		{`"", "b"`, "b"},
		{`"a", ""`, "a\n"},
		{`"a", "b", "c"`, "a\nb\nc"},
		{`"a", "", "b"`, "a\n\nb"},
		{`"", "", "b", "c"`, "b\nc"},
		{`{"type":"image","source":{"data":""}}, "x"`, "x"},
		{`{"type":"text","text":"t"}, {"type":"document","source":{"type":"text","data":"d"}}`, "t\nd"},
		{``, ""},
	}
	for _, tt := range tests {
		line := `{"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","message":{"id":"m","role":"assistant","model":"x","content":[` +
			`{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}` + "\n" +
			`{"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[` +
			`{"type":"tool_result","tool_use_id":"t1","content":[` + tt.parts + `]}]}}` + "\n"
		tr := readString(t, "join.jsonl", line, "")[0]
		if len(tr.Messages) != 2 {
			t.Fatalf("%s: %d messages, problems %v", tt.parts, len(tr.Messages), tr.Problems)
		}
		if got := tr.Messages[1].Blocks[0].Text; got != tt.want {
			t.Errorf("%s: text %q, want %q", tt.parts, got, tt.want)
		}
	}
}

// bigClaudeCode writes a Claude Code file of n exchanges (an assistant
// tool use, its result, an error every third one, a sidechain record every
// fifth), enough to fill several node chunks and grow every scratch map.
func bigClaudeCode(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	parent := "null"
	for i := range n {
		side := "false"
		if i%5 == 4 {
			side = "true"
		}
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","parentUuid":%s,"isSidechain":%s,"sessionId":"s","timestamp":"2025-01-01T00:00:00Z","message":{"id":"msg_%d","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"tu_%d","name":"Bash","input":{"command":"ls %d"}}],"usage":{"input_tokens":%d,"output_tokens":3}}}`+"\n",
			i, parent, side, i, i, i, 100+i)
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","parentUuid":"a%d","isSidechain":%s,"sessionId":"s","timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_%d","is_error":%t,"content":"out %d"}]}}`+"\n",
			i, i, side, i, i%3 == 0, i)
		parent = fmt.Sprintf(`"u%d"`, i)
	}
	p := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNodeListReuse: a file read with the node list another file left
// (larger or smaller, in either order) gives the transcript it gives when
// read with a new one, and a kept list holds nothing of the file read.
func TestNodeListReuse(t *testing.T) {
	files := append(ccFixtures(t), bigClaudeCode(t, 3*nodeChunk+10), bigClaudeCode(t, 5))
	drain := func() {
		for len(ccNodes) > 0 {
			<-ccNodes
		}
	}
	fresh := map[string]string{}
	for _, p := range files {
		drain()
		fresh[p] = dump(readOne(t, p))
	}
	backward := slices.Clone(files)
	slices.Reverse(backward)
	for _, order := range [][]string{files, backward} {
		drain()
		for _, p := range order {
			if got := dump(readOne(t, p)); got != fresh[p] {
				t.Errorf("%s read after other files:\n%s\nwant (read alone):\n%s", p, got, fresh[p])
			}
		}
	}
	if len(ccNodes) == 0 {
		t.Fatal("no node list kept")
	}
	for len(ccNodes) > 0 {
		l := <-ccNodes
		if l.len() != 0 {
			t.Fatalf("kept node list not emptied: %d nodes", l.len())
		}
		if len(l.chunks) > ccNodeChunksKept {
			t.Fatalf("kept %d node chunks, want at most %d", len(l.chunks), ccNodeChunksKept)
		}
		for _, c := range l.chunks {
			for _, nd := range c[:cap(c)] {
				if nd.uuid != "" || nd.line != 0 || nd.blocks != nil || nd.compaction != nil || nd.msgID != "" {
					t.Fatalf("kept node chunk still holds a node of the file read: %+v", nd)
				}
			}
		}
	}
}
