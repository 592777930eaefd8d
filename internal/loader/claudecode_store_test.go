package loader

import (
	"strconv"
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
