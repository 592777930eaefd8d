package anchors

import (
	"fmt"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// TestCommandIndex: the command a result answers is the last call with its
// id that has a command, whether the turn's calls are searched one by one
// or indexed, and one index reused over turns of both sizes forgets the
// turn before.
func TestCommandIndex(t *testing.T) {
	turnOf := func(n int) *transcript.Turn {
		tr := &transcript.Turn{}
		for i := range n {
			cmd := fmt.Sprintf("cmd %d", i)
			if i%5 == 4 {
				cmd = "" // a call without a command does not hide an earlier one
			}
			// ids repeat every 7 calls: the last one with a command wins
			tr.ToolCalls = append(tr.ToolCalls, transcript.ToolCall{ID: fmt.Sprintf("id%d", i%7), Command: cmd})
		}
		return tr
	}
	var ci commandIndex
	for _, n := range []int{0, 3, 12, maxScanCalls, maxScanCalls + 1, 100, 5} {
		tr := turnOf(n)
		want := map[string]string{}
		for _, c := range tr.ToolCalls {
			if c.Command != "" {
				want[c.ID] = c.Command
			}
		}
		ci.reset(tr)
		for k := range 9 {
			id := fmt.Sprintf("id%d", k)
			if got := ci.command(id); got != want[id] {
				t.Errorf("%d calls: command(%s) = %q, want %q", n, id, got, want[id])
			}
		}
	}
	ci.release()
	if ci.t != nil || ci.mapped {
		t.Error("release kept the turn")
	}
}
