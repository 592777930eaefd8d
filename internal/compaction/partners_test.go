package compaction

import (
	"reflect"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// refToolPartners is toolPartners as first written: a stack of open calls
// per tool id, each message's list grown by append.
func refToolPartners(msgs []transcript.Message) [][]toolPartner {
	out := make([][]toolPartner, len(msgs))
	type ref struct{ msg, k int }
	open := map[string][]ref{}
	for i := range msgs {
		for _, b := range msgs[i].Blocks {
			switch b.Kind {
			case transcript.BlockToolUse:
				open[b.ToolID] = append(open[b.ToolID], ref{i, len(out[i])})
				out[i] = append(out[i], toolPartner{id: b.ToolID, partner: -1})
			case transcript.BlockToolResult:
				tp := toolPartner{id: b.ToolID, result: true, partner: -1}
				if calls := open[b.ToolID]; len(calls) > 0 {
					c := calls[len(calls)-1]
					open[b.ToolID] = calls[:len(calls)-1]
					tp.partner = c.msg
					out[c.msg][c.k].partner = i
				}
				out[i] = append(out[i], tp)
			}
		}
	}
	return out
}

// TestToolPartnersMatchesReference checks the one-array pairing against
// the per-id stacks on reused ids (last in, first out), results without a
// call, calls without a result, a pair inside one message, and on every
// transcript of the real corpus when it is present.
func TestToolPartnersMatchesReference(t *testing.T) {
	use := func(id string) transcript.Block { return transcript.Block{Kind: transcript.BlockToolUse, ToolID: id} }
	res := func(id string) transcript.Block {
		return transcript.Block{Kind: transcript.BlockToolResult, ToolID: id}
	}
	text := transcript.Block{Kind: transcript.BlockText, Text: "x"}
	cases := [][][]transcript.Block{
		nil,
		{{text}, {text}},
		{{use("a"), use("b")}, {res("b"), res("a")}},
		{{use("a")}, {use("a")}, {res("a")}, {res("a")}, {res("a")}}, // reused id: the newest call answers first; one result left over
		{{res("x")}, {use("y"), text}, {use("a"), res("a")}, {use("a")}, {text, res("a"), res("a")}},
		{{use("a")}, {res("a")}, {use("a")}, {res("a")}, {use("a"), use("a")}, {res("a")}},
	}
	for n, blocks := range cases {
		msgs := make([]transcript.Message, len(blocks))
		for i, bs := range blocks {
			msgs[i].Blocks = bs
		}
		if got, want := toolPartners(msgs), refToolPartners(msgs); !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: got %v, want %v", n, got, want)
		}
	}
	t.Run("real corpus", func(t *testing.T) {
		for _, tr := range realTranscripts(t, false) {
			if got, want := toolPartners(tr.Messages), refToolPartners(tr.Messages); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: pairs differ from the reference", tr.Path)
			}
		}
	})
}
