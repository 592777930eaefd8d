package anchors

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// prompted gives each turn a prompt uuid and time, as a loader does.
func prompted(ts []transcript.Turn, ids ...string) []transcript.Turn {
	for i := range ts {
		ts[i].PromptUUID = ids[i]
		ts[i].PromptTime = "2026-01-01T00:00:0" + string(rune('0'+i)) + "Z"
	}
	return ts
}

func TestParseLabelsPromptFields(t *testing.T) {
	data := `{"transcript":"s","turn":null,"prompt_uuid":"u2","timestamp":"t","prompt_head":"fix it","type":"task-completion"}
{"transcript":"s","turn":3,"prompt_head":"go","type":"user-checkpoint"}
`
	ls, err := ParseLabels([]byte(data), "x.labels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if ls[0].Turn != Unresolved || ls[0].PromptUUID != "u2" || ls[0].Timestamp != "t" || ls[0].PromptHead != "fix it" {
		t.Errorf("label 0 = %+v", ls[0])
	}
	if ls[1].Turn != 3 || ls[1].PromptHead != "go" {
		t.Errorf("label 1 = %+v", ls[1])
	}
	for _, bad := range []string{
		`{"transcript":"s","turn":null,"type":"task-completion"}`,                 // null without uuid or time
		`{"transcript":"s","turn":1,"prompt_uuid":5,"type":"task-completion"}`,    // uuid not a string
		`{"transcript":"s","turn":null,"prompt_uuid":"u","type":"none"}`,          // none must be -1
		`{"transcript":"s","turn":-1,"prompt_uuid":"u","type":"task-completion"}`, // -1 with a type
	} {
		if _, err := ParseLabels([]byte(bad), "f"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestResolveLabels(t *testing.T) {
	ts := prompted(turns(turn("first prompt"), turn("<command-args>fix the build</command-args>"), turn("looks good, push it")), "u0", "u1", "u2")
	lab := func(turn int, uuid, ts, head string) Label {
		return Label{Transcript: "s", Turn: turn, Type: TaskCompletion, PromptUUID: uuid, Timestamp: ts, PromptHead: head, File: "f", Line: 1}
	}
	cases := []struct {
		name string
		l    Label
		want int // -1: a problem
		why  string
	}{
		{"index only", lab(1, "", "", ""), 1, ""},
		{"index out of range", lab(7, "", "", ""), -1, "has 3 turns"},
		{"uuid beats a stale index", lab(0, "u2", "", "first prompt"), 2, ""},
		{"null turn by uuid", lab(Unresolved, "u1", "", ""), 1, ""},
		{"timestamp when uuid unknown", lab(Unresolved, "gone", "2026-01-01T00:00:02Z", ""), 2, ""},
		{"index with agreeing head", lab(1, "gone", "", "fix the build"), 1, ""},
		{"stale index re-resolved by head", lab(0, "gone", "", "looks good, push"), 2, ""},
		{"stale index, head nowhere", lab(0, "gone", "", "something else entirely"), -1, "does not agree"},
		{"uuid unknown, no head to check", lab(1, "gone", "", ""), -1, "no prompt_head"},
		{"null turn, nothing matches", lab(Unresolved, "gone", "never", ""), -1, "matches no turn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, bad := ResolveLabels([]Label{c.l}, ts)
			switch {
			case c.want >= 0 && (len(ok) != 1 || ok[0].Turn != c.want):
				t.Errorf("got %v, problems %v; want turn %d", ok, bad, c.want)
			case c.want < 0 && (len(bad) != 1 || !strings.Contains(bad[0].Reason, c.why)):
				t.Errorf("got %v, problems %v; want a problem saying %q", ok, bad, c.why)
			}
		})
	}
}

func TestHeadAgrees(t *testing.T) {
	for _, c := range []struct {
		head, prompt string
		want         bool
	}{
		{"fix the   build", "fix the build\nnow please", true},
		{"fix the build now please and then some more words to pass forty", "fix the build now please and then some more words to pass forty-one", true},
		{"fix the bug", "fix the build", false},
		{"可以push", "可以push了", true},
		{"", "", true},
		{"x", "", false},
	} {
		if got := HeadAgrees(c.head, c.prompt); got != c.want {
			t.Errorf("HeadAgrees(%q, %q) = %v", c.head, c.prompt, got)
		}
	}
}
