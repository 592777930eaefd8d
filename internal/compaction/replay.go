package compaction

import (
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

// Mode selects how a transcript is replayed.
type Mode int

// Modes.
const (
	// ModeReplay asks each strategy's trigger before every recorded call.
	ModeReplay Mode = iota
	// ModeOnce compacts the whole transcript once, at its end.
	ModeOnce
)

// ParseMode reads "replay" or "once".
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "replay", "":
		return ModeReplay, true
	case "once":
		return ModeOnce, true
	}
	return 0, false
}

func (m Mode) String() string {
	if m == ModeOnce {
		return "once"
	}
	return "replay"
}

// Options are the run-wide settings of a replay.
type Options struct {
	Mode Mode
	// Window overrides every model's context window when > 0.
	Window int
	// Metric is the ruler all metrics are counted with.
	Metric Ruler
	// Rulers gives strategies the rulers they trigger on.
	Rulers func(name string) (Ruler, error)
	// Prices are matched before the model table's (a strategies file's).
	Prices []Price
	// Models is the model table: windows, prices, thinking rule (nil: the
	// shipped one).
	Models *tokens.Models
	// SummaryPromptTokens is the fixed prompt a summarizer call adds.
	SummaryPromptTokens int
	// Summarizer writes summaries (Deterministic when nil).
	Summarizer Summarizer
	// Stop, when set, is asked before each call: true ends the replay
	// there (a cancelled run), with the run summed up so far.
	Stop func() bool
}

// Run is one strategy's replay of one transcript, summed up.
type Run struct {
	Strategy string
	Calls    int
	// Window is the model window overflows are judged against;
	// WindowSource where it comes from (tokens.WindowTable, WindowInferred
	// or WindowFlag).
	Window       int
	WindowSource string
	Overhead     int
	// Compactions counts events; Overflows counts calls whose prompt
	// exceeded the window.
	Compactions int
	Overflows   int
	// PeakContext and FinalContext are prompt sizes, overhead included:
	// the largest over the calls, and after the whole recording.
	PeakContext  int
	FinalContext int
	// TokensProcessed sums the prompts of every call.
	TokensProcessed int64
	// CostUSD is the simulated bill; CostRatio is CostUSD over the
	// no-compaction replay's (nil when that is 0).
	CostUSD   float64
	CostRatio *float64
	// BaselineUSD is the no-compaction replay's cost.
	BaselineUSD float64
	// Thrash counts compactions that freed < 10 % of the context or came
	// within 2 calls of the previous one.
	Thrash int
	// MeanCompression, SyntheticAnchorRate and MeanNeedRecall average over
	// the events (nil when no event qualifies).
	MeanCompression     *float64
	SyntheticAnchorRate *float64
	MeanNeedRecall      *float64
	// KeptEverything counts compactions that dropped no recorded message
	// (Event.KeptEverything); FreedUnder1 those that freed less than 1 % of
	// the window (or grew the context).
	KeptEverything int
	FreedUnder1    int
	// Skips counts calls where the trigger fired but the selection found
	// nothing to compact (no event).
	Skips int
	// PeakTrigger is the largest measure the trigger returned before a
	// call (replay mode), and TriggerLimit its limit at that call (0 when
	// the strategy does not state one, TriggerRuler).
	PeakTrigger  int
	TriggerLimit int
	// Prompts is the prompt each call sent (overhead included), one per
	// call: the context-size series reports draw. Its maximum is
	// PeakContext and its sum TokensProcessed.
	Prompts []int
}

// Overhead is the fixed prompt overhead of a transcript: the first recorded
// call's real context minus the metric count of the messages before it, or
// 0 when no call recorded usage (or the difference is negative).
func Overhead(sh *Shared, metric Ruler) int {
	for _, ci := range sh.Calls {
		m := &sh.T.Messages[ci]
		if !m.Measured() {
			continue
		}
		before := 0
		for i := 0; i < ci; i++ {
			before += metric.Message(&sh.T.Messages[i])
		}
		return max(0, int(m.Usage.Context())-before)
	}
	return 0
}

// Replay runs one strategy over a transcript. baselineUSD is the cost of the
// no-compaction replay (0 to leave CostRatio nil).
func Replay(sh *Shared, id string, st Strategy, opt *Options, overhead int, baselineUSD float64) (Run, []Event) {
	win, winSource := opt.Models.WindowOf(sh.T, opt.Window)
	s := &Sim{Shared: sh, Overhead: overhead, Window: win, Metric: opt.Metric, Rulers: opt.Rulers,
		Override: opt.Window, Summarizer: opt.Summarizer, strip: opt.Models.Lookup(sh.T.Model).StripsThinking, lastPrompt: -1}
	s.reuse()
	defer s.release()
	run := Run{Strategy: id, Calls: len(sh.Calls), Window: win, WindowSource: winSource, Overhead: overhead,
		Prompts: make([]int, 0, len(sh.Calls))}
	b := bill{p: PriceOf(opt.Prices, opt.Models, sh.T.Model)}
	rec, isRecorded := st.(recordedApplier)
	stripModel := sh.T.Model // the model s.strip was looked up for
	var events []Event
	comps := sh.T.Compactions

	compact := func(trig int, reason string, out Outcome, pre int64) {
		summary := s.summary
		s.summary = Summary{}
		if out.Skip {
			run.Skips++
			return
		}
		before, beforeTok := s.Ctx, s.Tokens()
		s.replace(out.Ctx)
		s.Round++
		turn := 0
		if s.Cursor > 0 {
			turn = s.TurnOf[s.Cursor-1]
		}
		ev := Event{Strategy: id, Round: s.Round, Call: s.Call, Turn: turn, Action: out.Action,
			AnchorKind: out.Anchor.Kind, AnchorType: out.Anchor.Type, AnchorRule: out.Anchor.Rule, AnchorUsed: out.Anchor.Used,
			TriggerTokens: trig, TriggerReason: reason, PreTokens: pre, SummarizerInput: out.SummarizerInput, Summary: summary}
		if s.Cursor > 0 {
			ev.Timestamp = sh.T.Messages[s.Cursor-1].Timestamp
		}
		measure(s, &ev, before, beforeTok, &out)
		if summary.Extractive != "" {
			ev.ExtractiveTokens = s.Metric.Text(summary.Extractive)
			ev.Summary.Extractive = ""
		}
		if ev.KeptEverything {
			run.KeptEverything++
		}
		if float64(ev.TokensBefore-ev.TokensAfter) < 0.01*float64(win) {
			run.FreedUnder1++
		}
		switch {
		case summary.Source == SourceLLM || summary.Source == SourceCache:
			b.usd += summary.CostUSD // the model's own usage at its price
		case out.SummarizerInput > 0:
			b.summarizer(out.SummarizerInput+opt.SummaryPromptTokens, ev.SummaryTokens)
		}
		events = append(events, ev)
	}
	// advance appends recorded messages up to index to; for the recorded
	// strategy it applies each recorded compaction where it happened
	// (before Messages[MessageIndex]).
	advance := func(to int) {
		for {
			for isRecorded && len(comps) > 0 && comps[0].MessageIndex <= s.Cursor {
				c := comps[0]
				comps = comps[1:]
				compact(int(c.PreTokens), recordedReason(&c), rec.Recorded(s, &c), c.PreTokens)
			}
			if s.Cursor >= to {
				return
			}
			s.append(s.Cursor + 1)
		}
	}

	for k, ci := range sh.Calls {
		if opt.Stop != nil && opt.Stop() {
			break
		}
		s.Call = k
		advance(ci)
		if fall, ok := sh.Drops[k]; ok && isRecorded {
			// The recording's own clearing: its content model (oldest
			// outputs cleared), then the overhead re-based on the recorded
			// usage, as the calls table re-anchors after a drop.
			compact(s.Tokens(), "unrecorded drop: the real context fell with no compaction recorded", rec.Drop(s, fall), 0)
			if u := sh.T.Messages[ci].Usage; u != nil {
				s.Overhead = max(0, int(u.Context())-s.Tokens())
			}
		}
		if m := sh.T.Messages[ci].Model; m != "" && m != stripModel {
			stripModel = m
			s.setStrip(opt.Models.Lookup(m).StripsThinking)
		}
		if opt.Mode == ModeReplay && !isRecorded {
			fire, trig := st.Trigger(s)
			if trig > run.PeakTrigger || k == 0 {
				run.PeakTrigger = trig
				if tr, ok := st.(TriggerRuler); ok {
					_, run.TriggerLimit = tr.TriggerRule(s)
				}
			}
			if fire {
				compact(trig, triggerReason(st, s, trig), st.Compact(s), 0)
			}
		}
		prompt := s.Prompt()
		run.Prompts = append(run.Prompts, prompt)
		run.TokensProcessed += int64(prompt)
		run.PeakContext = max(run.PeakContext, prompt)
		if prompt > win {
			run.Overflows++
		}
		out := 0
		if u := sh.T.Messages[ci].Usage; u != nil {
			out = int(u.Output)
		}
		b.call(prompt, s.CacheRead(), out)
		s.called()
	}
	s.Call = len(sh.Calls)
	advance(len(sh.T.Messages))
	if opt.Mode == ModeOnce && !isRecorded {
		_, trig := st.Trigger(s)
		compact(trig, "once: end of the recording", st.Compact(s), 0)
	}
	run.FinalContext = s.Prompt()
	run.CostUSD, run.BaselineUSD = b.usd, baselineUSD
	if baselineUSD > 0 {
		r := b.usd / baselineUSD
		run.CostRatio = &r
	}
	summarize(&run, events)
	return run, events
}

// summarize fills a run's aggregates from its events.
func summarize(run *Run, events []Event) {
	run.Compactions = len(events)
	var comp, recall float64
	nRecall, needAnchor, synthetic := 0, 0, 0
	for i := range events {
		ev := &events[i]
		comp += ev.CompressionRatio
		if r := ev.NeedRecall(); r != nil {
			recall += *r
			nRecall++
		}
		if ev.AnchorKind != "" {
			needAnchor++
			if ev.AnchorKind == "synthetic" {
				synthetic++
			}
		}
		if ev.CompressionRatio < 0.10 || (i > 0 && ev.Call-events[i-1].Call <= 2) {
			run.Thrash++
		}
	}
	if len(events) > 0 {
		v := comp / float64(len(events))
		run.MeanCompression = &v
	}
	run.MeanNeedRecall = ratioF(recall, nRecall)
	run.SyntheticAnchorRate = ratio(synthetic, needAnchor)
}

func ratioF(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	v := sum / float64(n)
	return &v
}

// recordedApplier is implemented by the recorded strategy: it applies the
// compactions the recording holds, where they happened.
type recordedApplier interface {
	Recorded(s *Sim, c *transcript.Compaction) Outcome
	// Drop applies an unrecorded drop of fall real tokens before a call.
	Drop(s *Sim, fall int64) Outcome
}

// none never compacts: the reference replay for cost ratios.
type none struct{}

func (none) Trigger(*Sim) (bool, int) { return false, 0 }
func (none) Compact(*Sim) Outcome     { return Outcome{Skip: true} }

// Baseline replays the transcript without compaction.
func Baseline(sh *Shared, opt *Options, overhead int) Run {
	run, _ := Replay(sh, "none", none{}, opt, overhead, 0)
	return run
}

// recordedReason says why the harness compacted: its trigger and kind.
func recordedReason(c *transcript.Compaction) string {
	kind := "compact_boundary"
	if c.Kind == transcript.CompactMicro {
		kind = "microcompact_boundary"
	}
	if c.Trigger == "" {
		return "recorded " + kind
	}
	return "recorded " + kind + " (" + c.Trigger + ")"
}
