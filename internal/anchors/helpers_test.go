package anchors

import (
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// tb builds a hand-made turn.
type tb struct{ t transcript.Turn }

func turn(user string) *tb { return &tb{t: transcript.Turn{UserMessage: user}} }

// call adds a tool call; for Bash the arg is the command, otherwise the path.
func (b *tb) call(name, arg string) *tb {
	id := "t" + string(rune('a'+len(b.t.ToolCalls)))
	c := transcript.ToolCall{ID: id, Name: name}
	if name == "Bash" || name == "bash" {
		c.Command = arg
		c.Input = `{"command":"` + arg + `"}`
	} else {
		c.Path = arg
		c.Input = `{"file_path":"` + arg + `"}`
	}
	b.t.ToolCalls = append(b.t.ToolCalls, c)
	return b
}

// result adds the result of the last call.
func (b *tb) result(ok bool, out string) *tb {
	c := b.t.ToolCalls[len(b.t.ToolCalls)-1]
	b.t.ToolResults = append(b.t.ToolResults, transcript.ToolResult{ID: c.ID, Name: c.Name, Success: ok, Output: out})
	return b
}

// run adds a call and its result.
func (b *tb) run(name, arg string, ok bool, out string) *tb { return b.call(name, arg).result(ok, out) }

func (b *tb) say(resp string) *tb { b.t.AssistantResponse = resp; return b }
func (b *tb) prevErr() *tb        { b.t.PreviousError = true; return b }
func (b *tb) at(ts string) *tb    { b.t.Timestamp = ts; return b }
func one(b *tb) []transcript.Turn { return []transcript.Turn{b.t} }
func turns(bs ...*tb) []transcript.Turn {
	out := make([]transcript.Turn, len(bs))
	for i, b := range bs {
		out[i] = b.t
		out[i].Index = i
	}
	return out
}

func mustBuiltin(t testing.TB, name string) *RuleSet {
	t.Helper()
	s, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withThreshold returns a copy of a built-in set with another threshold, as
// a user gets by editing a copy of its file.
func withThreshold(t testing.TB, name string, th float64) *RuleSet {
	t.Helper()
	s := mustBuiltin(t, name)
	return &RuleSet{Name: s.Name + "-lowered", Threshold: th, Synthetic: s.Synthetic, Rules: s.Rules, Source: s.Source}
}
