package loader

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/transcript"
)

// codexRollout renders a rollout of user prompts: e is an event_msg
// user_message, r a response_item user message, a an assistant message;
// each followed by its text.
func codexRollout(steps ...string) string {
	var b strings.Builder
	b.WriteString(`{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}` + "\n")
	for _, s := range steps {
		text := s[1:]
		switch s[0] {
		case 'e':
			fmt.Fprintf(&b, `{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":%q}}`+"\n", text)
		case 'r':
			fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}}`+"\n", text)
		case 'a':
			fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q}]}}`+"\n", text)
		}
	}
	return b.String()
}

// readCodex reads a rollout held in memory.
func readCodex(t testing.TB, data string) *transcript.Transcript {
	t.Helper()
	f, err := Lookup(CodexFormat)
	if err != nil {
		t.Fatal(err)
	}
	var out []*transcript.Transcript
	src := &Source{Path: "x/rollout-s.jsonl", R: bufio.NewReaderSize(bytes.NewReader([]byte(data)), sniffSize)}
	if err := readSource(src, f, func(tr *transcript.Transcript) error { out = append(out, tr); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d transcripts, want 1", len(out))
	}
	return out[0]
}

// TestCodexPromptPairs checks how a prompt recorded twice (event_msg and
// response_item) becomes one message: a response item takes the place of
// the oldest event of the same text not taken yet, since the last
// assistant message; an event repeating a prompt already there is dropped.
func TestCodexPromptPairs(t *testing.T) {
	tests := []struct {
		name  string
		steps []string
		want  string // message lines, role:text
	}{
		{"pair", []string{"ea", "ra"}, "user:a@3"},
		{"response first", []string{"ra", "ea"}, "user:a@2"},
		{"two events one text", []string{"ea", "eb", "ea", "ra", "ra", "rb"}, "user:a@5 user:b@7 user:a@6"},
		{"after an answer", []string{"ea", "aok", "ea", "ra"}, "user:a@2 assistant:ok@3 user:a@5"},
		{"unpaired", []string{"ra", "rb", "eb", "ec"}, "user:a@2 user:b@3 user:c@5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := readCodex(t, codexRollout(tc.steps...))
			var got []string
			for _, m := range tr.Messages {
				got = append(got, fmt.Sprintf("%s:%s@%d", m.Role, m.Text(), m.Line))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("messages %s, want %s", g, tc.want)
			}
		})
	}
}

// TestCodexPromptBurstLinear reads a burst of distinct prompts, events
// then response items, with no answer between: each prompt used to be
// compared with every earlier one, quadratic in the burst (15 000 prompts:
// seconds). It must cost no more than twice a rollout of as many
// prompts each answered, where the prompts are forgotten at each answer
// (best of three readings each, so that a loaded machine slows both).
func TestCodexPromptBurstLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("timings under the race detector compare nothing")
	}
	const n = 15_000
	var burst, answered []string
	for i := 0; i < n; i++ {
		burst = append(burst, fmt.Sprintf("eprompt %d", i))
		answered = append(answered, fmt.Sprintf("eprompt %d", i), fmt.Sprintf("rprompt %d", i), "aok")
	}
	for i := 0; i < n; i++ {
		burst = append(burst, fmt.Sprintf("rprompt %d", i))
	}
	cost := func(data string, want int) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			tr := readCodex(t, data)
			best = min(best, time.Since(start))
			if len(tr.Messages) != want {
				t.Fatalf("%d messages, want %d", len(tr.Messages), want)
			}
		}
		return best
	}
	base, b := cost(codexRollout(answered...), 2*n), cost(codexRollout(burst...), n)
	if b > 2*base {
		t.Errorf("a burst of %d prompts took %v, as many prompts answered %v: the burst is not linear", n, b, base)
	}
	t.Logf("burst %v, answered %v", b, base)
}
