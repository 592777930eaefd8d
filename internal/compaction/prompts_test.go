package compaction

import (
	"slices"
	"strings"
	"testing"
)

// TestRunPromptsByHand: the series is the prompt of each call, counted by
// hand (chars4, no overhead): 100 tokens of prompt, then 100 + 1 + 100.
func TestRunPromptsByHand(t *testing.T) {
	b := &builder{}
	b.user(strings.Repeat("a", 400))
	b.say("ok")
	b.user(strings.Repeat("b", 400))
	b.say("fine")
	run, _, _ := replay(t, b.transcript(), "none", none{}, options(t, 150))
	if !slices.Equal(run.Prompts, []int{100, 201}) {
		t.Errorf("prompts %v, want [100 201]", run.Prompts)
	}
}

// TestRunPromptsAgreeWithTheRun: for every strategy over a session that
// compacts, the series has one prompt per call, its maximum is the peak and
// its sum the tokens processed; a compaction's call sends exactly the
// compacted context (overhead 0 here). The recorded strategy applies its
// events where the recording has them, not at calls, and is left out of the
// last check.
func TestRunPromptsAgreeWithTheRun(t *testing.T) {
	tr := codingSession().transcript()
	compacted := 0
	for _, spec := range Specs() {
		run, events, _ := replay(t, tr, spec.ID, spec.New(spec.Params()), options(t, 90))
		if len(run.Prompts) != run.Calls {
			t.Fatalf("%s: %d prompts for %d calls", spec.ID, len(run.Prompts), run.Calls)
		}
		var sum int64
		for _, p := range run.Prompts {
			sum += int64(p)
		}
		if sum != run.TokensProcessed || slices.Max(run.Prompts) != run.PeakContext {
			t.Errorf("%s: sum %d max %d, run says %d and %d", spec.ID, sum, slices.Max(run.Prompts), run.TokensProcessed, run.PeakContext)
		}
		if spec.ID == "recorded" {
			continue
		}
		for i, e := range events {
			if i+1 < len(events) && events[i+1].Call == e.Call {
				continue // the last event before a call sets its prompt
			}
			compacted++
			if e.Call < len(run.Prompts) && run.Prompts[e.Call] != e.TokensAfter {
				t.Errorf("%s: call %d sent %d tokens, its compaction left %d", spec.ID, e.Call, run.Prompts[e.Call], e.TokensAfter)
			}
		}
	}
	if compacted < 5 {
		t.Fatalf("only %d compactions: the window is too large for the check", compacted)
	}
}
