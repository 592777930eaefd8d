package loader

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// oldPullResponses is pullResponses as it was before it listed the path's
// ids only when a record off the path may be pulled: the oracle.
func oldPullResponses(w *pathWalk) {
	ids := map[string]bool{}
	for i := range w.nodes.len() {
		if nd := w.nodes.at(i); w.in[i] && nd.kind == nodeAssistant && nd.msgID != "" {
			ids[nd.msgID] = true
		}
	}
	for i := range w.nodes.len() {
		if nd := w.nodes.at(i); !w.in[i] && nd.kind == nodeAssistant && nd.sidechain == w.side && ids[nd.msgID] {
			w.in[i] = true
		}
	}
}

// oldPullResults is pullResults as it was: the oracle.
func oldPullResults(w *pathWalk) {
	calls, answered := map[string]bool{}, map[string]bool{}
	for i := range w.nodes.len() {
		if !w.in[i] {
			continue
		}
		for _, b := range w.nodes.at(i).blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				calls[b.ToolID] = true
			case transcript.BlockToolResult:
				answered[b.ToolID] = true
			}
		}
	}
	for i := range w.nodes.len() {
		nd := w.nodes.at(i)
		if w.in[i] || nd.kind != nodeUser || nd.sidechain != w.side || len(nd.blocks) == 0 {
			continue
		}
		if p, ok := w.index[nd.parent]; !ok || !w.in[p] {
			continue
		}
		pull := true
		for _, b := range nd.blocks {
			if b.Kind != transcript.BlockToolResult || !calls[b.ToolID] || answered[b.ToolID] {
				pull = false
				break
			}
		}
		if pull {
			w.in[i] = true
			for _, b := range nd.blocks {
				answered[b.ToolID] = true
			}
		}
	}
}

// branchyClaudeCode makes a Claude Code file whose records hang off random
// earlier ones, with message ids, tool uses and results shared across the
// branches: records off the walked path that pullResponses and pullResults
// may pull, or not.
func branchyClaudeCode(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		parent := "null"
		if i > 0 && r.IntN(8) > 0 {
			parent = fmt.Sprintf(`"r%d"`, max(0, i-1-r.IntN(min(i, 4))))
		}
		side := r.IntN(6) == 0
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, `{"type":"assistant","uuid":"r%d","parentUuid":%s,"isSidechain":%t,"message":{"id":"msg_%d","model":"m","content":[{"type":"tool_use","id":"t%d","name":"X","input":{}}]}}`+"\n",
				i, parent, side, r.IntN(n/3+1), r.IntN(n/2+1))
			continue
		}
		var blocks []string
		for range r.IntN(3) {
			blocks = append(blocks, fmt.Sprintf(`{"type":"tool_result","tool_use_id":"t%d","content":"x"}`, r.IntN(n/2+1)))
		}
		if r.IntN(5) == 0 {
			blocks = append(blocks, `{"type":"text","text":"hi"}`)
		}
		fmt.Fprintf(&b, `{"type":"user","uuid":"r%d","parentUuid":%s,"isSidechain":%t,"message":{"role":"user","content":[%s]}}`+"\n",
			i, parent, side, strings.Join(blocks, ","))
	}
	return b.Bytes()
}

// TestPullOracle: pullResponses and pullResults mark the same records as
// the old code did, on the fixtures and on random branching files.
func TestPullOracle(t *testing.T) {
	var inputs [][]byte
	for _, p := range ccFixtures(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	r := rand.New(rand.NewPCG(15, 3))
	for range 300 {
		inputs = append(inputs, branchyClaudeCode(r, 2+r.IntN(60)))
	}
	pulled := 0
	for k, data := range inputs {
		f := &ccFile{recorder: recorder{t: &transcript.Transcript{Path: "x.jsonl"}},
			usage: map[string]transcript.Usage{}, unknown: map[string]*unknownSeen{}}
		for i := range f.scope {
			f.scope[i] = ccScope{ignored: map[string]int{}, calls: map[string]bool{},
				toolUses: map[string]bool{}, toolErrs: map[string]bool{}}
		}
		f.takeNodes()
		f.p = ccParsers.Get()
		if _, err := eachLine(&Source{Path: "x.jsonl", R: bytes.NewReader(data)}, f.line); err != nil {
			t.Fatal(err)
		}
		ccParsers.Put(f.p)
		for _, side := range []bool{false, true} {
			w := &pathWalk{f: f, nodes: &f.nodes, side: side}
			w.indexScope()
			leaf := w.leaf()
			if leaf < 0 {
				continue
			}
			w.in = make([]bool, w.nodes.len())
			w.walk(leaf)
			walked := slices.Clone(w.in)
			w.pullResponses()
			w.pullResults()
			got := w.in
			w.in = slices.Clone(walked)
			oldPullResponses(w)
			oldPullResults(w)
			if !slices.Equal(got, w.in) {
				t.Fatalf("input %d side %v: pulled %v, want %v\n%s", k, side, got, w.in, data)
			}
			if !slices.Equal(got, walked) {
				pulled++
			}
		}
		f.keepNodes()
	}
	if pulled < 10 {
		t.Errorf("only %d inputs had a record pulled; the oracle test needs more", pulled)
	}
}
