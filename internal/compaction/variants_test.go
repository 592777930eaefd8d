package compaction

import (
	"fmt"
	"strings"
	"testing"
)

// longTurnSession is three short turns, then one long turn of tool calls
// (a Claude Code session is mostly that).
func longTurnSession() *builder {
	b := &builder{}
	b.user("Fix the login bug in auth.go.")
	b.say("", "Read:e0:/p/auth.go").result("e0", false, "package auth")
	b.say("Fixed.")
	b.user("Check the config loader.")
	b.say("It reads config.yaml.")
	b.user("Explain main.go.")
	b.say("It wires the server.")
	b.user("Now refactor every handler under /p/handlers.")
	for i := range 30 {
		id := fmt.Sprintf("r%d", i)
		b.say("", fmt.Sprintf("Read:%s:/p/handlers/h%d.go", id, i)).result(id, false, strings.Repeat(fmt.Sprintf("line %d of handler %d\n", i, i), 40))
	}
	b.say("Done.")
	return b
}

func TestAnchorVariants(t *testing.T) {
	tr := longTurnSession().transcript()
	cases := []struct {
		id string
		// wantFire: the trigger fires; wantKeptAll: some compaction kept
		// every recorded message; wantOverflow: the window overflowed.
		wantFire, wantKeptAll, wantOverflow bool
	}{
		{"codelet", false, false, true},
		{"codelet-raw", true, true, true},
		{"codelet-budget", true, false, false},
		{"fspec-raw", true, true, true},
		{"fspec-budget", true, false, false},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			spec, err := SpecByID(c.id)
			if err != nil {
				t.Fatal(err)
			}
			run, events, sim := replay(t, tr, c.id, spec.New(spec.Params()), options(t, 4000))
			if (len(events) > 0) != c.wantFire || (run.KeptEverything > 0) != c.wantKeptAll || (run.Overflows > 0) != c.wantOverflow {
				t.Errorf("%d events, %d kept everything, %d overflows", len(events), run.KeptEverything, run.Overflows)
			}
			kept := 0
			for _, e := range events {
				if e.KeptEverything {
					kept++
					if e.SummarizedTurns != 0 {
						t.Errorf("round %d kept everything but summarized %d turns", e.Round, e.SummarizedTurns)
					}
				}
				if e.OrphanResults+e.DanglingCalls != 0 {
					t.Errorf("round %d: %d orphans, %d dangling", e.Round, e.OrphanResults, e.DanglingCalls)
				}
				if e.TriggerReason == "" || e.Timestamp == "" {
					t.Errorf("round %d: reason %q, timestamp %q", e.Round, e.TriggerReason, e.Timestamp)
				}
			}
			if kept != run.KeptEverything {
				t.Errorf("run counts %d compactions that kept everything, events %d", run.KeptEverything, kept)
			}
			if strings.HasSuffix(c.id, "-budget") {
				// The kept tail fits 25 % of the window (1,000 tokens)
				// after the last compaction: everything but the summary.
				tail := 0
				for i := range sim.Ctx {
					if sim.Ctx[i].Orig >= 0 {
						tail += sim.ItemTokens(i)
					}
				}
				if last := events[len(events)-1]; last.TokensAfter-last.SummaryTokens > 1000+sim.Metric.MessageOverhead() {
					t.Errorf("after the last compaction %d tokens, summary %d: tail over the budget", last.TokensAfter, last.SummaryTokens)
				}
				if tail == 0 {
					t.Error("nothing recorded kept")
				}
			}
		})
	}
}

func TestTriggerReasonAndPeak(t *testing.T) {
	tr := longTurnSession().transcript()
	spec, _ := SpecByID("codelet")
	run, _, _ := replay(t, tr, "codelet", spec.New(spec.Params()), options(t, 4000))
	if run.TriggerLimit != 3600 || run.PeakTrigger <= 0 || run.PeakTrigger >= run.TriggerLimit {
		t.Errorf("peak trigger %d, limit %d: want a peak below the limit of 3600", run.PeakTrigger, run.TriggerLimit)
	}
	spec, _ = SpecByID("truncate")
	_, events, _ := replay(t, tr, "truncate", spec.New(spec.Params()), options(t, 4000))
	if len(events) == 0 || !strings.HasPrefix(events[0].TriggerReason, "prompt ") || !strings.HasSuffix(events[0].TriggerReason, "limit 3600") {
		t.Errorf("events %d, reason %q", len(events), events[0].TriggerReason)
	}
}
